// The catalogue of every check, by area. Importing it has no side effects and does not load
// vitest, so the CLI can list and select checks without starting a run.
import type { Check, CheckHeader } from '../lib/runner/index.js';
import type { PaginationSettings } from '../lib/contract/index.js';
import { createChecks } from './create/checks.js';
import { deleteChecks } from './delete/checks.js';
import { errorChecks } from './errors/checks.js';
import { listChecks as writtenListChecks } from './list/checks.js';
import { AREA as PAGINATION, type ListCheck } from './list/list-check.js';
import { expandListChecks } from './list/expand.js';
import { leveled } from './levels.js';
import { OBSERVED_LIST_CHECKS } from './list/judge.js';
// States and transitions: sequences across operations held to a model.
import { stateChecks } from './state/checks.js';

/** Areas in the order they are reported; each is one folder. They run side by side (suites/run.suite.ts). */
export const AREAS = ['delete-custom-api', 'create-application-key', 'errors', 'pagination', 'state'] as const;
export type Area = (typeof AREAS)[number];

/**
 * The lists the suite itself writes to, each with the area whose checks create and delete their
 * records. Their list checks wait for the writing checks (suites/register.ts), and a shard keeps
 * them in the same part as that area (cli/run.ts shardChecks): apart, a shard would list them
 * without the records the run creates, and skip what an unsharded run checks.
 */
export const WRITTEN_LISTS: ReadonlyMap<string, Area> = new Map<string, Area>([
  ['application-keys', 'create-application-key'],
  ['custom-apis', 'delete-custom-api'],
]);

/** Checks run once per run, each with its rule's level (suites/levels.ts). */
export const staticChecks: readonly Check[] = leveled([...deleteChecks, ...createChecks, ...errorChecks, ...stateChecks]);

/** Checks run once per list operation, each with its rule's level. */
export const listChecks: readonly ListCheck[] = leveled(writtenListChecks);

export interface CheckDefinition extends CheckHeader {
  /** Run once per list operation. */
  perOperation: boolean;
  /** Also judges exchanges it did not send (conformance proxy, judge: suites/observed.ts). */
  observed: boolean;
}

/** Whether a check can judge traffic it did not send (suites/observed.ts): what --list marks. */
export function judgesTraffic(check: { id: string; observe?: unknown }): boolean {
  return check.observe !== undefined || OBSERVED_LIST_CHECKS.has(check.id);
}

/** Every check as data (what --list shows and the id snapshot freezes). */
export const checkDefinitions: readonly CheckDefinition[] = [
  ...staticChecks.map((c) => ({
    id: c.id,
    area: c.area,
    clause: c.clause,
    clauseLink: c.clauseLink,
    level: c.level,
    title: c.title,
    perOperation: false,
    observed: judgesTraffic(c),
  })),
  ...listChecks.map((c) => ({
    id: c.id,
    area: PAGINATION,
    clause: c.clause,
    clauseLink: c.clauseLink,
    level: c.level,
    title: c.title,
    perOperation: true,
    observed: judgesTraffic(c),
  })),
];

/** The checks of one area, as they run: list checks expanded over the operations. */
export function checksOf(area: string, pagination: PaginationSettings | undefined): Check[] {
  if (area === PAGINATION) return pagination ? expandListChecks(listChecks, pagination.endpoints) : [];
  return staticChecks.filter((c) => c.area === area);
}

/** Every check as it runs. */
export function expandChecks(pagination: PaginationSettings | undefined): Check[] {
  return AREAS.flatMap((a) => checksOf(a, pagination));
}
