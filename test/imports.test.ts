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
 * The layers, lowest first: the core (HTTP, evidence, secrets, the contract's statements and
 * schemas, the vitest glue) in lib/; the data checks send; the checks; beside them the
 * renderers and the reference server, which know nothing of each other or of the checks; the
 * selftest, which drives the CLI it is handed; the CLI and the benches; the library entry.
 */
export const LAYERS: Record<string, number> = { lib: 0, fixtures: 1, suites: 2, reporters: 2, server: 2, selftest: 3, cli: 4, bench: 4, 'index.ts': 5 };

/** Every source file of the project (relative to its root) and the project files it imports. */
export function treeGraph(root: string): Map<string, string[]> {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : f.endsWith('.ts') && !f.endsWith('.d.ts') ? [join(d, f)] : []));
  const files = Object.keys(LAYERS).flatMap((top) => (top.endsWith('.ts') ? [join(root, top)] : walk(join(root, top))));
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

/** The layer a file sits in: its top folder's (or the file's own, at the root). */
const layerOf = (file: string): string => file.split('/')[0]!;

/** Imports that go up or sideways between layers: `from -> to`. */
export function layerBreaches(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([from, tos]) =>
    tos.filter((to) => layerOf(to) !== layerOf(from) && !((LAYERS[layerOf(from)] ?? -1) > (LAYERS[layerOf(to)] ?? Infinity))).map((to) => `${from} -> ${to}`),
  );
}

describe('layers', () => {
  it('finds an import that goes up or sideways (the detector itself)', () => {
    expect(
      layerBreaches(
        new Map([
          ['lib/a.ts', ['suites/b.ts', 'lib/c.ts']],
          ['server/x.ts', ['reporters/y.ts', 'lib/a.ts']],
          ['cli/m.ts', ['server/x.ts']],
        ]),
      ),
    ).toEqual(['lib/a.ts -> suites/b.ts', 'server/x.ts -> reporters/y.ts']);
  });

  it('the whole tree: no import goes up a layer or across to one beside it, and no file is in no layer', () => {
    const graph = treeGraph(ROOT);
    expect(graph.size).toBeGreaterThan(80);
    expect(layerBreaches(graph)).toEqual([]);
  });

  it('the whole tree: the modules depend on each other one way', () => {
    const found = cycles(treeGraph(ROOT)).map((c) => c.join(' -> '));
    expect(found, `import circles:\n${found.join('\n')}`).toEqual([]);
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
