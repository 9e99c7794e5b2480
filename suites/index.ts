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
import { settingsChecks } from './list/settings.js';
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

/**
 * Checks that change the store's settings (--change-settings: suites/list/settings.ts): they run
 * once every other check is done (suites/register.ts), so that no other check reads a list while
 * the store's page length is changed.
 */
export const CHANGES_STORE: ReadonlySet<string> = new Set(settingsChecks.map((c) => c.id));

/** Checks run once per run, each with its rule's level (suites/levels.ts). */
export const staticChecks: readonly Check[] = leveled([...deleteChecks, ...createChecks, ...errorChecks, ...stateChecks]);

/**
 * Checks of the pagination area run once per run, not per operation: they change the store's
 * page length (CHANGES_STORE), and read the lists the run's list checks found.
 */
export const storeChecks: readonly Check[] = leveled(settingsChecks);

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
  ...[...staticChecks, ...storeChecks].map((c) => ({
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
  // The pagination area: the list checks, once per operation; then its checks run once per run (suites/list/settings.ts).
  if (area === PAGINATION) return pagination ? [...expandListChecks(listChecks, pagination.endpoints), ...storeChecks] : [];
  return staticChecks.filter((c) => c.area === area);
}

/** Every check as it runs. */
export function expandChecks(pagination: PaginationSettings | undefined): Check[] {
  return AREAS.flatMap((a) => checksOf(a, pagination));
}
