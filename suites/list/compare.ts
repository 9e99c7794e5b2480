// Comparing what two traversals reached. Only records older than the run's start minus the
// time buffer take part (contract: "timestamps close to the present may be incomplete"), and
// where a traversal was cut short, only the part both sides read in full.
import type { CheckContext } from '../../lib/runner/index.js';
import { instantKey, pagination, type Rec } from './pages.js';
import { orderOf, value, type Attr } from './collation.js';
import type { Walk } from './walks.js';

/** Old enough: created (and, for updated_at traversals, updated) before `before`. */
function olderThan(beforeMs: number, attr?: Attr): (r: Rec) => boolean {
  const before = instantKey(new Date(beforeMs).toISOString())!;
  return (r) => (r.created === undefined || r.created < before) && (attr !== 'updated_at' || r.updated === undefined || r.updated < before);
}

export const WAIVED =
  'time buffer waived: fewer than 3 records are older than it (a store seeded just now?); compared the records created before the run started';

/**
 * Which of these records take part in a comparison: those created (and, for updated_at,
 * updated) before the run's start minus the time buffer, as the contract advises. When that
 * leaves fewer than 3, as on a server that seeded its data at start-up, a comparison of
 * nothing would let every traversal bug pass: the records created before the run started
 * are compared instead, and the check says so in a note.
 */
export function comparable(ctx: CheckContext, records: readonly Rec[], attr?: Attr): (r: Rec) => boolean {
  const { old, waived } = horizon(ctx, records, attr);
  if (waived && !ctx.notes.includes(WAIVED)) ctx.note(WAIVED);
  return old;
}

/** comparable's rule without its note: which records are older than the horizon, and whether the buffer was waived. */
export function horizon(ctx: CheckContext, records: readonly Rec[], attr?: Attr): { old: (r: Rec) => boolean; waived: boolean } {
  const { startedAt, timeBufferMs } = pagination(ctx);
  const buffered = olderThan(startedAt - timeBufferMs, attr);
  if (timeBufferMs === 0 || atLeast(records, buffered, 3)) return { old: buffered, waived: false };
  return { old: olderThan(startedAt, attr), waived: true };
}

/** Whether at least `n` of the records pass `test` (read only as far as it takes). */
function atLeast(records: readonly Rec[], test: (r: Rec) => boolean, n: number): boolean {
  let found = 0;
  for (const r of records) if (test(r) && ++found >= n) return true;
  return found >= n;
}

/**
 * The records of a walk sorted by `attr` that lie in the window every given walk read in full:
 * all of them when every walk is complete, else those strictly below the smallest last value.
 */
export function inWindow(walks: Walk[], attr: Attr): (r: Rec) => boolean {
  // An unfinished walk that read nothing read nothing in full: the window is empty.
  if (walks.some((w) => !w.complete && w.records.length === 0)) return () => false;
  const bounds = walks.filter((w) => !w.complete).map((w) => value(w.records.at(-1)!, attr));
  if (bounds.some((b) => b === undefined)) return () => false;
  if (bounds.length === 0) return () => true;
  // Compared in the order the server sorted by (digit-only ids may be numeric).
  const order = orderOf(walks[0]?.records ?? [], attr);
  const upper = bounds.reduce((a, b) => (order(b!, a!) < 0 ? b : a))!;
  return (r) => {
    const v = value(r, attr);
    return v !== undefined && order(v, upper) < 0;
  };
}

export function uniqueById(records: Rec[]): Map<string, Rec> {
  const m = new Map<string, Rec>();
  for (const r of records) if (!m.has(r.id)) m.set(r.id, r);
  return m;
}

export function duplicates(records: Rec[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const r of records) (seen.has(r.id) ? dup : seen).add(r.id);
  return [...dup];
}

/** Records of `a` missing from `b`. */
export function missingFrom(a: Map<string, Rec>, b: Map<string, Rec>): Rec[] {
  return [...a.values()].filter((r) => !b.has(r.id));
}

/** A few records named with their timestamps, for evidence. */
export function describeRecords(rs: Rec[], max = 5): string {
  const shown = rs.slice(0, max).map((r) => `${r.id} (created_at ${r.createdRaw ?? '?'}, updated_at ${r.updatedRaw ?? '?'})`);
  return `${rs.length} record(s): ${shown.join('; ')}${rs.length > max ? `; and ${rs.length - max} more` : ''}`;
}
