// The reference server's modules depend on each other one way (issue 10, item 8): a circle of
// imports, even of types only, means two files that cannot be read, tested or replaced apart.
// TypeScript's own pre-processor reads the imports (static, `import type`, re-exports and
// dynamic import()), so a comment or a string that looks like one is not taken for one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

describe('import circles', () => {
  it('finds a circle, and only a circle (the detector itself)', () => {
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    expect(cycles(new Map([['a.ts', ['b.ts', 'c.ts']], ['b.ts', ['c.ts']], ['c.ts', []]]))).toEqual([]);
    expect(cycles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts', 'a.ts']]);
  });

  it('reads type-only imports, re-exports and dynamic imports as imports', () => {
    const { importedFiles } = ts.preProcessFile("import type { A } from './a.js';\nexport { B } from './b.js';\nconst c = await import('./c.js');\n// import { D } from './d.js'", true, true);
    expect(importedFiles.map((i) => i.fileName)).toEqual(['./a.js', './b.js', './c.js']);
  });

  it('server/: the modules depend on each other one way', () => {
    const graph = importGraph(resolve(import.meta.dirname, '../server'));
    expect(graph.size).toBeGreaterThan(5);
    const found = cycles(graph).map((c) => c.join(' -> '));
    expect(found, `import circles in server/:\n${found.join('\n')}`).toEqual([]);
  });
});
