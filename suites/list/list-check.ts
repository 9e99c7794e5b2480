// What a pagination check is, as it is written (expand.ts runs it once per list operation).
import type { CheckContext, CheckHeader, Written } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import type { IllegalRule, PageRule } from './answer.js';

/**
 * A check of the pagination area: its area is AREA, so the header names it no more. Its rule is
 * judged on every answer the suite sees, by whoever asked: each check carries the rule for one
 * answer (`page`, or `illegal` for invalid paging parameters), which its own probes call too
 * (judge.ts holds the exploration's and the observed traffic's answers to it), or says why no
 * single answer shows its rule (`whole`). test/list-rules.test.ts holds every check to one of them.
 */
export interface ListCheck extends Omit<CheckHeader, 'area'> {
  appliesTo?: (e: Endpoint) => boolean;
  run(ctx: CheckContext, e: Endpoint): Promise<void>;
  page?: PageRule;
  /** Its page rule rests on a model of the list's records: observed traffic, which builds none, does not show it. */
  needsModel?: true;
  illegal?: IllegalRule;
  whole?: string;
  /**
   * The fewest records the list must hold for the check's probes to show its rule: they choose
   * their requests by the records there are, and below this it skips (expectRecords), naming it.
   */
  fewest?: number;
}

/**
 * Skips `check` unless the list shows at least its `fewest` records: `found` of them (`such`:
 * counting only those of a kind, of the records the list showed).
 */
export function expectRecords(ctx: CheckContext, check: Pick<ListCheck, 'fewest'>, found: number, such?: { which: string; of: number }): void {
  const need = check.fewest ?? 1;
  if (found < need) ctx.skipForRecords(need, found, such);
}

/** A list check as it is written: its level is its rule's, its clause a reference (Written in lib/runner/check.ts). */
export type WrittenListCheck = Written<ListCheck>;

export const AREA = 'pagination';
