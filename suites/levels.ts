// A check's level is its rule's: spec/contract/statements.yaml states each rule's level once,
// and names the checks that enforce it. suites/rule-levels.ts is generated from it (so that
// listing the checks reads no YAML); the catalogue (suites/index.ts) gives every check its
// level from there, and refuses a check no rule names.
import { clauseLink, clauseText, type Clause } from '../lib/contract/index.js';
import type { Level } from '../lib/evidence/index.js';
import type { Statement, ServerErrorRule } from '../lib/runner/index.js';
import { RULE_LEVELS, RUN_RULE_LEVELS } from './rule-levels.js';

/**
 * Each check's level, from the statements that name it: what suites/rule-levels.ts holds. A check
 * whose rules differ in level is refused: a check has one level.
 */
export function ruleLevels(statements: readonly Statement[]): Record<string, Level> {
  const out: Record<string, Level> = {};
  for (const s of statements) {
    if (s.level === '-') continue;
    for (const id of s.checks ?? []) {
      if (out[id] !== undefined && out[id] !== s.level)
        throw new Error(`check ${id}: the rules that name it differ in level (${out[id]}, ${s.level}): a check has one level`);
      out[id] = s.level;
    }
  }
  return out;
}

/** suites/rule-levels.ts as generated from the statements (npx vitest run test/rule-levels.test.ts -u writes it). */
export function renderRuleLevels(statements: readonly Statement[]): string {
  const levels = ruleLevels(statements);
  const rows = Object.keys(levels)
    .sort()
    .map((id) => `  '${id}': '${levels[id]}',`);
  const judged = RUN_RULES.map((id) => {
    const s = statements.find((r) => r.id === id);
    if (!s || s.level === '-') throw new Error(`rule ${id}: the run holds every check to it, so spec/contract/statements.yaml must state it with a level`);
    return `  '${id}': '${s.level}',`;
  });
  return [
    '// Generated from spec/contract/statements.yaml: each check with the level of the rules that name',
    '// it (suites/levels.ts). Do not edit: change the statement, then run `npm run generate`.',
    "import type { Level } from '../lib/evidence/index.js';",
    '',
    'export const RULE_LEVELS: Readonly<Record<string, Level>> = {',
    ...rows,
    '};',
    '',
    '/** The levels of the rules every check of a run is held to, besides its own (suites/levels.ts, RUN_RULES). */',
    'export const RUN_RULE_LEVELS: Readonly<Record<string, Level>> = {',
    ...judged,
    '};',
    '',
  ].join('\n');
}

/**
 * Rules a run holds every check to, besides the rule it enforces: errors.no-5xx, as any 5xx
 * seen fails the check that provoked it (spec/contract/README.md#errors.no-5xx;
 * lib/runner/check.ts, runCheck). Their levels are generated into suites/rule-levels.ts with the
 * checks'.
 */
const RUN_RULES = ['errors.no-5xx'] as const;

/** errors.no-5xx as runCheck takes it: its id, and its level as the statements give it. */
export const NO_5XX: ServerErrorRule = { id: RUN_RULES[0], level: RUN_RULE_LEVELS[RUN_RULES[0]]! };

/**
 * `checks` as the catalogue holds them: each with its rule's level (a check no rule names is
 * refused) and its clause as text and link (lib/contract/clauses.ts).
 */
export function leveled<T extends { id: string; clause: Clause }>(
  checks: readonly T[],
  levels: Readonly<Record<string, Level>> = RULE_LEVELS,
): Array<Omit<T, 'clause'> & { level: Level; clause: string; clauseLink: string }> {
  return checks.map((c) => {
    const level = levels[c.id];
    if (level === undefined)
      throw new Error(
        `check ${c.id}: no rule of spec/contract/statements.yaml names it, so it has no level (name it under the rule it enforces, then run npm run generate)`,
      );
    return { ...c, level, clause: clauseText(c.clause), clauseLink: clauseLink(c.clause) };
  });
}
