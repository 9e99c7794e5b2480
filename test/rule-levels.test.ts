// A check's level is its rule's (suites/levels.ts). This file imports no check, so that
// `npx vitest run test/rule-levels.test.ts -u` (the first step of `npm run generate`) regenerates suites/rule-levels.ts even when the
// catalogue refuses to load for want of a level (a new check, a renamed one).
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { loadStatements, type Statement } from '../lib/runner/index.js';
import { leveled, renderRuleLevels, ruleLevels } from '../suites/levels.js';

it('a check takes its level from the rules that name it: none, or rules that differ, is refused', () => {
  const statement = (id: string, level: Statement['level'], checks: string[]): Statement => ({ id, at: ['limits'], level, text: 't', checks });
  const rules = [statement('r.must', 'MUST', ['a']), statement('r.should', 'SHOULD', ['c']), statement('r.open', '-', ['c'])];
  const clause = { at: 'limits' } as const;
  expect(
    leveled(
      [
        { id: 'a', clause },
        { id: 'c', clause },
      ],
      ruleLevels(rules),
    ).map((c) => `${c.id} ${c.level} ${c.clause} ${c.clauseLink}`),
  ).toEqual(['a MUST Limits spec/contract/README.md#limits', 'c SHOULD Limits spec/contract/README.md#limits']);
  expect(() => ruleLevels([...rules, statement('r.other', 'INFO', ['a'])])).toThrow(/check a: the rules that name it differ in level \(MUST, INFO\)/);
  expect(() => leveled([{ id: 'z', clause }], ruleLevels(rules))).toThrow(/check z: no rule of spec\/contract\/statements.yaml names it/);
});

it('suites/rule-levels.ts is what statements.yaml says (npm run generate rewrites it)', async () => {
  await expect(renderRuleLevels(loadStatements())).toMatchFileSnapshot(resolve(import.meta.dirname, '../suites/rule-levels.ts'));
});
