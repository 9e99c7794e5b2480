// Where the package lives on disk, whether run from the source tree (tests, via vitest)
// or from dist/ (the CLI, possibly installed under someone's node_modules).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'conformance') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`conformance: cannot find the package root above ${start}`);
    dir = parent;
  }
}

export const packageRoot: string = findRoot(dirname(fileURLToPath(import.meta.url)));

/** The `version` of the package.json at `root` (a copy of the package, in tests). */
export function readPackageVersion(root: string): string {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof version !== 'string' || !version) throw new Error(`conformance: ${join(root, 'package.json')} has no version`);
  return version;
}

export const packageVersion: string = readPackageVersion(packageRoot);
