// Check ids are forever: reports, baselines and --check refer to them. The snapshot freezes
// them; renaming one is a deliberate, reviewed change of this file's snapshot. (Levels are
// not in it: a rule's level is stated once, in spec/contract/statements.yaml, and the diff of
// the generated suites/rule-levels.ts shows its change.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { AREAS, checkDefinitions } from '../suites/index.js';

it('check ids are frozen (a deliberate change: npx vitest run test/ids.test.ts -u)', () => {
  expect(checkDefinitions.map((c) => c.id)).toMatchSnapshot();
});

it('every check is well formed', () => {
  const ids = checkDefinitions.map((c) => c.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const c of checkDefinitions) {
    expect(c.id).toMatch(/^[a-z]+(\.[a-z0-9-]+)+$/);
    expect(AREAS).toContain(c.area);
    expect(['MUST', 'SHOULD', 'INFO']).toContain(c.level);
    expect(c.clause.length).toBeGreaterThan(3);
    expect(c.title.length).toBeGreaterThan(10);
  }
});

it('every check id is written out whole in the folder of suites/ named after its prefix (list.* in suites/list/)', () => {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : f.endsWith('.ts') ? [join(d, f)] : []));
  const sourceOf = (folder: string): string =>
    walk(resolve(import.meta.dirname, '../suites', folder))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
  const misplaced = checkDefinitions.filter((c) => !sourceOf(c.id.split('.')[0]!).includes(`'${c.id}'`));
  expect(misplaced.map((c) => c.id)).toEqual([]);
});
