// The project's modules depend on each other one way: a circle of imports, even of types only,
// means two files that cannot be read, tested or replaced apart. And the folders are layers: a
// file imports its own folder or a layer below it, never one beside or above it (LAYERS).
// TypeScript's own pre-processor reads the imports (static, `import type`, re-exports and
// dynamic import()), so a comment or a string that looks like one is not taken for one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Each file of `dir` (by name) and the files of `dir` it imports. */
export function importGraph(dir: string): Map<string, string[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(dir, file), 'utf8'), true, true);
    const local = importedFiles
      .map((i) => i.fileName)
      .filter((name) => /^\.\/[^/]+\.js$/.test(name))
      .map((name) => name.slice(2).replace(/\.js$/, '.ts'))
      .filter((name) => files.includes(name));
    graph.set(file, [...new Set(local)]);
  }
  return graph;
}

/**
 * Circles of imports, as the files along each (the first repeated at the end): a depth-first
 * walk finds at least one in every knot of files that import each other, so none are found
 * exactly when the imports point one way.
 */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found = new Map<string, string[]>();
  const path: string[] = [];
  const done = new Set<string>();
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      const circle = path.slice(at);
      // One circle has as many starting points as files: keep it under its smallest.
      const start = circle.indexOf([...circle].sort()[0]!);
      const turned = [...circle.slice(start), ...circle.slice(0, start)];
      found.set(turned.join(' '), [...turned, turned[0]!]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return [...found.values()];
}

const ROOT = resolve(import.meta.dirname, '..');

/**
 * The layers, lowest first: the core in lib/ (its folders are layers of their own: LIB_LAYERS);
 * the data checks send; the checks; beside them the renderers and the reference server, which
 * know nothing of each other or of the checks; the selftest, which drives the CLI it is handed;
 * the CLI and the benches; the library entry.
 */
export const LAYERS: Record<string, number> = { lib: 0, fixtures: 1, suites: 2, reporters: 2, server: 2, selftest: 3, cli: 4, bench: 4, 'index.ts': 5 };

/**
 * The folders of lib/, lowest first, each a layer above the one before it: the package (where it
 * lives, its version); text made safe to show; the evidence (exchanges, outcomes, secrets); the
 * contract (its clauses, the catalogue, the schemas); the configuration; the transport; the
 * checks and their run; the vitest glue, which loads vitest on import and so stands apart from
 * the runner the check catalogue loads. No two share a rank: every pair is ordered.
 */
export const LIB_LAYERS: readonly string[] = ['package', 'text', 'evidence', 'contract', 'configuration', 'transport', 'runner', 'vitest'];

/** Every source file of the project (relative to its root) and the project files it imports: those of `tops` (LAYERS by default). */
export function treeGraph(root: string, tops: readonly string[] = Object.keys(LAYERS)): Map<string, string[]> {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : f.endsWith('.ts') && !f.endsWith('.d.ts') ? [join(d, f)] : []));
  const files = tops.flatMap((top) => (top.endsWith('.ts') ? [join(root, top)] : walk(join(root, top))));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const local = importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith('.') && name.endsWith('.js'))
      .map((name) => relative(root, resolve(dirname(file), name)).replace(/\.js$/, '.ts'));
    graph.set(relative(root, file), [...new Set(local)]);
  }
  return graph;
}

/** The layer a file sits in: its top folder's (or the file's own, at the root); in lib/, its folder's (`lib/transport`), or `lib` for a file loose in lib/. */
const layerOf = (file: string): string => {
  const [top, folder, rest] = file.split('/');
  return top === 'lib' && rest !== undefined ? `lib/${folder}` : top!;
};

/** Where a layer stands: its top folder's rank, then (in lib/) its folder's; none for a file in no layer. */
const rankOf = (layer: string): [number, number] | undefined => {
  const [top, folder] = layer.split('/');
  const rank = LAYERS[top!];
  if (rank === undefined || top !== 'lib') return rank === undefined ? undefined : [rank, 0];
  const at = folder === undefined ? -1 : LIB_LAYERS.indexOf(folder);
  return at < 0 ? undefined : [rank, at];
};

/** Whether layer `from` stands above layer `to` (both in a layer). */
const above = (from: string, to: string): boolean => {
  const [a, b] = [rankOf(from), rankOf(to)];
  return a !== undefined && b !== undefined && (a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]));
};

/** Imports that go up or sideways between layers (lib/'s folders included): `from -> to`. */
export function layerBreaches(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([from, tos]) =>
    tos.filter((to) => layerOf(to) !== layerOf(from) && !above(layerOf(from), layerOf(to))).map((to) => `${from} -> ${to}`),
  );
}

/** Imports of a file of a lib/ folder from outside that folder, other than of its index.ts (its surface): `from -> to`. */
export function pastTheIndex(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([from, tos]) =>
    tos.filter((to) => layerOf(to).startsWith('lib/') && layerOf(from) !== layerOf(to) && to !== `${layerOf(to)}/index.ts`).map((to) => `${from} -> ${to}`),
  );
}

describe('layers', () => {
  it('finds an import that goes up or sideways (the detector itself)', () => {
    expect(
      layerBreaches(
        new Map([
          ['lib/runner/check.ts', ['suites/b.ts', 'lib/runner/ledger.ts']],
          ['server/x.ts', ['reporters/y.ts', 'lib/runner/index.ts']],
          ['cli/m.ts', ['server/x.ts']],
        ]),
      ),
    ).toEqual(['lib/runner/check.ts -> suites/b.ts', 'server/x.ts -> reporters/y.ts']);
  });

  it("finds an import that goes up or sideways between lib/'s folders, and a file in none of them (the detector itself)", () => {
    expect(
      layerBreaches(
        new Map([
          ['lib/transport/http.ts', ['lib/evidence/index.ts', 'lib/runner/index.ts']],
          ['lib/runner/check.ts', ['lib/transport/index.ts', 'lib/vitest/index.ts']],
          ['lib/loose.ts', ['lib/text/index.ts']],
          ['lib/text/text.ts', ['lib/elsewhere/index.ts']],
          ['suites/s.ts', ['lib/vitest/index.ts', 'lib/loose.ts']],
        ]),
      ),
    ).toEqual([
      'lib/transport/http.ts -> lib/runner/index.ts',
      'lib/runner/check.ts -> lib/vitest/index.ts',
      'lib/loose.ts -> lib/text/index.ts',
      'lib/text/text.ts -> lib/elsewhere/index.ts',
      'suites/s.ts -> lib/loose.ts',
    ]);
  });

  it('the whole tree: no import goes up a layer or across to one beside it, and no file is in no layer', () => {
    const graph = treeGraph(ROOT);
    expect(graph.size).toBeGreaterThan(80);
    expect(layerBreaches(graph)).toEqual([]);
  });

  it("lib/: every file sits in one of LIB_LAYERS' folders, and every folder of lib/ is one of them", () => {
    const entries = readdirSync(join(ROOT, 'lib'), { withFileTypes: true });
    expect(entries.filter((e) => !e.isDirectory()).map((e) => e.name)).toEqual([]);
    expect(entries.map((e) => e.name).sort()).toEqual([...LIB_LAYERS].sort());
  });

  it('the whole tree: the modules depend on each other one way', () => {
    const found = cycles(treeGraph(ROOT)).map((c) => c.join(' -> '));
    expect(found, `import circles:\n${found.join('\n')}`).toEqual([]);
  });
});

describe("a lib/ folder's index.ts is its surface", () => {
  it('finds an import of a file of a lib/ folder from outside it, past its index (the detector itself)', () => {
    expect(
      pastTheIndex(
        new Map([
          ['cli/main.ts', ['lib/configuration/index.ts', 'lib/text/text.ts']],
          ['lib/runner/check.ts', ['lib/runner/ledger.ts', 'lib/transport/http.ts', 'lib/evidence/index.ts']],
          ['test/t.test.ts', ['lib/vitest/vitest-run.ts']],
        ]),
      ),
    ).toEqual(['cli/main.ts -> lib/text/text.ts', 'lib/runner/check.ts -> lib/transport/http.ts', 'test/t.test.ts -> lib/vitest/vitest-run.ts']);
  });

  it('the whole tree and the tests: nothing outside a lib/ folder imports a file of it but its index.ts', () => {
    const graph = treeGraph(ROOT, [...Object.keys(LAYERS), 'test']);
    expect([...graph.keys()].filter((f) => f.startsWith('test/')).length).toBeGreaterThan(40);
    expect(pastTheIndex(graph)).toEqual([]);
  });
});

describe('import circles', () => {
  it('finds a circle, and only a circle (the detector itself)', () => {
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
          ['d.ts', ['a.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts', 'c.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', []],
        ]),
      ),
    ).toEqual([]);
    expect(cycles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts', 'a.ts']]);
  });

  it('reads type-only imports, re-exports and dynamic imports as imports', () => {
    const { importedFiles } = ts.preProcessFile(
      "import type { A } from './a.js';\nexport { B } from './b.js';\nconst c = await import('./c.js');\n// import { D } from './d.js'",
      true,
      true,
    );
    expect(importedFiles.map((i) => i.fileName)).toEqual(['./a.js', './b.js', './c.js']);
  });

  it('server/: the modules depend on each other one way', () => {
    const graph = importGraph(resolve(import.meta.dirname, '../server'));
    expect(graph.size).toBeGreaterThan(5);
    const found = cycles(graph).map((c) => c.join(' -> '));
    expect(found, `import circles in server/:\n${found.join('\n')}`).toEqual([]);
  });
});
