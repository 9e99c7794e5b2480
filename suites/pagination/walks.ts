// Traversals of a whole collection: by offset (page[offset] in steps of 100) and keyset-style
// (contract, "Keyset-style traversal"). Each is bounded by a share of the operation's request
// budget, stops at once on a page that does not advance, and says how far it got.
import type { CheckContext } from '../../lib/check.js';
import type { Endpoint } from '../../lib/catalog.js';
import { fail } from '../../lib/expect.js';
import { CheckSkip } from '../../lib/outcome.js';
import { BudgetSpent, metaInt, pagination, readPage, readPagesAtOnce, type ListPage, type Params, type Rec } from './pages.js';

export const PAGE = 100;
export const HARD_OFFSET_LIMIT = 10_000;
export type Attr = 'id' | 'created_at' | 'updated_at';

export interface Walk {
  /** Records in the order read, duplicates included. */
  records: Rec[];
  pages: ListPage[];
  /** The traversal reached its end (an empty or short page). */
  complete: boolean;
  /** Why it stopped. */
  stop: string;
  /** The traversal failed: a page that was not a list, or a page that did not advance. */
  broken?: { message: string; page: ListPage };
  /** The traversal could not go on for a reason that is not the target's fault (a skip). */
  untestable?: string;
}

function cap(ctx: CheckContext): number {
  // Seven traversals share an operation's budget; keep room for the single requests.
  return Math.max(2, Math.floor(pagination(ctx).budget / 8));
}

export type Comparator = (a: string | number, b: string | number) => number;

/** Timestamps as instants (numbers), ids as strings. */
export const plainOrder: Comparator = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Ids made only of digits, as numbers. */
export const numericOrder: Comparator = (a, b) =>
  typeof a === 'string' && typeof b === 'string' && /^\d+$/.test(a) && /^\d+$/.test(b) ? a.length - b.length || plainOrder(a, b) : plainOrder(a, b);

/** Ignoring case, as case-insensitive collations do (MySQL's default, SQL Server's). */
const caseInsensitiveOrder: Comparator = (a, b) => plainOrder(String(a).toLowerCase(), String(b).toLowerCase()) || plainOrder(a, b);

/** Letters and digits first, case and punctuation after, as glibc and ICU locale collations do (PostgreSQL's en_US). */
const localeOrder: Comparator = (a, b) => {
  const key = (x: string | number): string => String(x).toLowerCase().replace(/[^a-z0-9]/g, '');
  return plainOrder(key(a), key(b)) || caseInsensitiveOrder(a, b);
};

/**
 * The order a server uses for `attr`. Timestamps compare as instants. Ids compare as the
 * server's database collates them: "sort by id" names no collation, so the records it sent
 * sorted by id are read in the first of these orders they follow: code units, numbers (for
 * ids made of digits), case-insensitive, locale (punctuation ignored). An order that fits none
 * of them (the insertion order of random ids, a descending one) is judged in code units.
 */
export function orderOf(records: readonly Rec[], attr: Attr): Comparator {
  if (attr !== 'id') return plainOrder;
  const digits = records.every((r) => /^\d+$/.test(r.id));
  const candidates = digits ? [plainOrder, numericOrder] : [plainOrder, caseInsensitiveOrder, localeOrder];
  const follows = (order: Comparator): boolean => records.every((r, i) => i === 0 || order(records[i - 1]!.id, r.id) <= 0);
  return candidates.find(follows) ?? plainOrder;
}

export function value(r: Rec, attr: Attr): string | number | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.created : r.updated;
}

function raw(r: Rec, attr: Attr): string | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw;
}

/**
 * Offset traversal, `sort` or the default order, optionally filtered. The second page starts
 * inside the first run of records tied on the sorted timestamp (created_at when the order is
 * not by a timestamp) that the first page shows, so a page boundary splits a tie on a list of
 * any size and wherever its ties sit: where a target orders tied records differently from one
 * request to the next, or a filter loses the offset, records repeat or go missing there.
 *
 * The first page's meta.results.total says where every later page starts, so those pages are
 * asked for at once (the HTTP client bounds how many are in flight) and read in order, as a
 * client paging one at a time would: the walk takes two round trips, not one per page. Past
 * the total it goes on a page at a time until the end shows, so a total that is too small
 * costs time, never records.
 */
export function offsetWalk(ctx: CheckContext, e: Endpoint, path: string, sort?: string, filter?: string): Promise<Walk> {
  return ctx.shared(`walk offset ${path} sort=${sort ?? ''} filter=${filter ?? ''}`, async () => {
    const walk: Walk = { records: [], pages: [], complete: false, stop: '' };
    const seen = new Set<string>();
    const base: Params = { ...(sort ? { sort } : {}), ...(filter ? { filter } : {}) };
    const tieAttr: Attr = sort === 'updated_at' ? 'updated_at' : 'created_at';
    const limit = cap(ctx);
    const at = (offset: number): Params => ({ ...base, 'page[limit]': PAGE, ...(offset ? { 'page[offset]': offset } : {}) });
    const read = (offset: number): Promise<ListPage> => readPage(ctx, e, path, at(offset));
    const cutShort = (): Walk => {
      walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${walk.records.length} records)`;
      return walk;
    };
    /** Takes the page at `offset` into the walk; the next offset, or undefined when the walk ended. */
    const take = (page: ListPage, offset: number): number | undefined => {
      walk.pages.push(page);
      // On a list with the hard limit, a page that would reach past record 10,000 may be refused
      // too (a store that bounds offset + limit, as search engines do): the limit is stated in
      // records, and what a target answers at its edge is not.
      const atLimit = offset > HARD_OFFSET_LIMIT || (e.hardOffsetLimit && offset + PAGE > HARD_OFFSET_LIMIT);
      if (!page.ok && atLimit && page.res.status >= 400 && page.res.status < 500) {
        // Past the soft offset limit the contract does not say what happens: a refusal there
        // ends the walk, unfinished, and is no failure.
        walk.stop = `stopped past the soft offset limit: offset ${offset} answered ${page.res.status} after ${walk.records.length} records`;
        return undefined;
      }
      if (!page.ok) {
        walk.broken = { message: `page at offset ${offset} answered ${page.res.status} without a list`, page };
        walk.stop = walk.broken.message;
        return undefined;
      }
      if (page.records.length > 0 && page.records.every((r) => seen.has(r.id))) {
        walk.broken = { message: `the page at offset ${offset} does not advance: all ${page.records.length} of its records were on earlier pages (${page.records.slice(0, 3).map((r) => r.id).join(', ')}…)`, page };
        walk.stop = walk.broken.message;
        return undefined;
      }
      // On a list with the hard offset limit, offsets stay multiples of 100 so that the last
      // page the limit allows (offset 10,000) is still read; keyset walks split ties there.
      const split = offset === 0 && !e.hardOffsetLimit ? firstPageAcrossTie(page.records, tieAttr) : PAGE;
      const taken = split < page.records.length ? page.records.slice(0, split) : page.records;
      for (const r of taken) seen.add(r.id);
      walk.records.push(...taken);
      if (taken.length === page.records.length && page.records.length < PAGE) {
        walk.complete = true;
        walk.stop = `reached the end after ${walk.pages.length} pages (${walk.records.length} records)`;
        return undefined;
      }
      return offset + taken.length;
    };
    const pastHardLimit = (offset: number): boolean => e.hardOffsetLimit && offset > HARD_OFFSET_LIMIT;

    let first: ListPage;
    try {
      first = await read(0);
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      return cutShort();
    }
    let offset = take(first, 0);
    if (offset === undefined) return walk;

    // The pages the total announces, and the one that shows the end when the last is full.
    const total = metaInt(first, 'results.total');
    const planned: number[] = [];
    if (total !== undefined) {
      // Offsets up to the total: the page at the total itself only when the one before is full.
      for (let o = offset; o <= total && planned.length + walk.pages.length < limit && !pastHardLimit(o); o += PAGE) planned.push(o);
    }
    // Read in order below; one the walk never reaches rejects into the void.
    const ahead = readPagesAtOnce(ctx, e, path, planned.map(at));

    for (let i = 0; ; i++) {
      if (pastHardLimit(offset)) {
        walk.stop = `stopped at the hard offset limit (${HARD_OFFSET_LIMIT}) after ${walk.records.length} records`;
        return walk;
      }
      if (walk.pages.length >= limit) return cutShort();
      let page: ListPage;
      try {
        // A page asked for ahead serves only if the walk arrived at its offset.
        page = i < ahead.length && planned[i] === offset ? await ahead[i]! : await read(offset);
      } catch (err) {
        if (!(err instanceof BudgetSpent)) throw err;
        return cutShort();
      }
      const next = take(page, offset);
      if (next === undefined) return walk;
      offset = next;
    }
  });
}

/**
 * The length of a keyset walk's first page that ends inside the first run of records tied on
 * `attr` in `sorted` (records sorted by it): a tie then straddles a page boundary however
 * small the list, which is where a target that reads ge as gt loses records.
 */
export function firstPageAcrossTie(sorted: readonly Rec[], attr: Attr): number {
  const i = sorted.findIndex((r, k) => k + 1 < sorted.length && value(r, attr) !== undefined && value(r, attr) === value(sorted[k + 1]!, attr));
  return i >= 0 && i + 1 <= PAGE ? i + 1 : PAGE;
}

type Value = string | number;

/** How one segment of a keyset walk ended. */
interface Segment {
  records: Rec[];
  pages: ListPage[];
  /**
   * reached: read up to the next segment's cursor (or the window's end); end: an empty page;
   * cut: not finished (it stopped at the pages it was allowed, or the walk's budget ran out).
   */
  ended: 'reached' | 'end' | 'broken' | 'untestable' | 'cut';
  message?: string;
}

/** A segment under way: what it read, and where it goes on from. */
interface SegmentRun {
  seg: Segment;
  /** Each record met, by id: the value of the walk's attribute it had then. */
  seen: Map<string, string | number | undefined>;
  /** The next page to ask for. */
  params: Params;
}

/**
 * One stretch of a keyset walk, page after page, each page's filter taken from the last record
 * of the page before (gt(id,last) for ids; ge(attr,last) for timestamps, the boundary records
 * coming again; page[offset] within the value when a whole page shares one timestamp, the
 * contract's rule), until a record at or past `reach` shows, or an empty page does when `reach`
 * is undefined. It reads on from where `run` stopped: at most `allowed` pages, and no more
 * than the walk has left.
 */
async function keysetSegment(ctx: CheckContext, e: Endpoint, path: string, attr: Attr, run: SegmentRun, reach: Value | undefined, order: Comparator, pagesLeft: { n: number }, allowed = Infinity): Promise<Segment> {
  const { seg, seen } = run;
  let params = run.params;
  for (let n = 0; ; n++) {
    run.params = params;
    if (pagesLeft.n <= 0 || n >= allowed) return seg;
    pagesLeft.n--;
    let page: ListPage;
    try {
      page = await readPage(ctx, e, path, params);
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      return seg;
    }
    seg.pages.push(page);
    if (!page.ok) return Object.assign(seg, { ended: 'broken', message: `a keyset page answered ${page.res.status} without a list` });
    if (page.records.length === 0) return Object.assign(seg, { ended: 'end' });
    // A record met again with another value was changed meanwhile (by updated_at, the contract
    // says a record can come twice so): it is news, not a page that does not advance.
    const fresh = page.records.filter((r) => !seen.has(r.id) || seen.get(r.id) !== value(r, attr));
    seg.records.push(...page.records);
    for (const r of fresh) seen.set(r.id, value(r, attr));
    const last = page.records.at(-1)!;
    const lastRaw = raw(last, attr);
    const lastValue = value(last, attr);
    if (lastRaw === undefined || lastValue === undefined) {
      // Where the catalog says the value lives, this record has none (or no date): the
      // target may keep it elsewhere (a catalog override says where). Not testable, as the
      // sort and filter checks say in the same situation.
      return Object.assign(seg, { ended: 'untestable', message: `not testable: record ${last.id} has no parseable ${attr} at ${attr === 'id' ? e.record.id : e.record[attr]} to continue the keyset traversal from (set operations.${e.operation}.record in conformance.config.yaml)` });
    }
    if (fresh.length === 0) {
      const withinValue = typeof params['page[offset]'] === 'number';
      const allTied = page.records.every((r) => value(r, attr) === lastValue);
      if (attr === 'id' || withinValue || !allTied) {
        return Object.assign(seg, { ended: 'broken', message: `the keyset page does not advance: all ${page.records.length} record(s) were read before: ${page.records.slice(0, 5).map((r) => r.id).join(', ')}` });
      }
    }
    if (reach !== undefined && order(lastValue, reach) >= 0) return Object.assign(seg, { ended: 'reached' });
    if (attr === 'id') {
      params = { sort: attr, filter: `gt(id,${lastRaw})`, 'page[limit]': PAGE };
    } else {
      // A page that is one tie group: go on by offset within that value.
      const allTied = value(page.records[0]!, attr) === lastValue;
      const tiedSeen = new Set(seg.records.filter((r) => value(r, attr) === lastValue).map((r) => r.id)).size;
      params = { sort: attr, filter: `ge(${attr},${lastRaw})`, 'page[limit]': PAGE, ...(allTied ? { 'page[offset]': tiedSeen } : {}) };
    }
  }
}

/**
 * Where the segments of a keyset walk start: records of the offset walk sorted by `attr`,
 * spaced so that each segment's first page (100 records from its cursor) ends at the next
 * cursor. Segment 0 is the walk's own beginning: a first page of `firstPage` records, then a
 * page from its last value.
 */
export function keysetCursors(sorted: readonly Rec[], attr: Attr, firstPage: number): Rec[] {
  const v = (i: number): Value | undefined => value(sorted[i]!, attr);
  // Where a page filtered on the value at i starts: after it for gt (ids), at its first tie for ge.
  const startOf = (i: number): number => {
    if (attr === 'id') return i + 1;
    while (i > 0 && v(i - 1) === v(i)) i--;
    return i;
  };
  const cursors: Rec[] = [];
  if (sorted.length < firstPage || v(firstPage - 1) === undefined) return cursors;
  for (let start = startOf(firstPage - 1); ; ) {
    let j = start + PAGE - 1;
    if (attr !== 'id') while (j < sorted.length && v(j) === v(start)) j++;
    // The rest fits in one page: the last segment reads it to the end.
    if (j >= sorted.length - 1 || v(j) === undefined) return cursors;
    cursors.push(sorted[j]!);
    start = startOf(j);
  }
}

/**
 * Keyset traversal by `attr`: the first page with sort=attr, then filter=gt(id,last) for ids
 * and filter=ge(attr,last) for timestamps (the boundary records come again and are dropped);
 * when a whole page shares one timestamp, page[offset] within that value (the contract's rule).
 *
 * It runs as segments side by side. Cursors taken from `byOffset` (the offset walk sorted by
 * `attr`) start them: segment k asks for gt(id,c) or ge(attr,c) and reads until a record at or
 * past the next cursor shows, so the segments join end to end and together still prove the
 * traversal complete; each cursor is one more starting point tested. A segment that meets an
 * empty page before its cursor ends the traversal there, as it would a client's. Records past a
 * segment's cursor belong to the next one and are left to it. Where `byOffset` stopped before the
 * end (the budget), the last segment reads to its last value: a window of the list.
 */
export function keysetWalk(ctx: CheckContext, e: Endpoint, path: string, attr: Attr, byOffset: Walk): Promise<Walk> {
  return ctx.shared(`walk keyset ${path} ${attr}`, async () => {
    const sorted = byOffset.records;
    if (!byOffset.complete && sorted.length === 0) return { records: [], pages: [], complete: false, stop: `not started: the offset traversal it follows read no record (${byOffset.stop})` };
    const firstPage = firstPageAcrossTie(sorted, attr);
    const order = attr === 'id' ? orderOf(sorted, 'id') : plainOrder;
    const cursors = keysetCursors(sorted, attr, firstPage);
    const windowEnd = byOffset.complete || sorted.length === 0 ? undefined : value(sorted.at(-1)!, attr);
    const pagesLeft = { n: cap(ctx) };
    const filterOn = (c: Rec): string => `${attr === 'id' ? 'gt' : 'ge'}(${attr},${raw(c, attr)})`;
    const starts: Params[] = [{ sort: attr, 'page[limit]': firstPage }, ...cursors.map((c) => ({ sort: attr, filter: filterOn(c), 'page[limit]': PAGE }))];
    const reaches = [...cursors.map((c) => value(c, attr)), windowEnd];
    // First every segment's opening pages side by side (the walk's own first two for segment 0),
    // then whatever a segment still needs, in cursor order: where the budget runs out, the
    // window compared is the stretch from the start, as a walk page by page would have read.
    const runs: SegmentRun[] = starts.map((params) => ({ seg: { records: [], pages: [], ended: 'cut' }, seen: new Map(), params }));
    await Promise.all(runs.map((run, k) => keysetSegment(ctx, e, path, attr, run, reaches[k], order, pagesLeft, k === 0 ? 2 : 1)));
    for (const [k, run] of runs.entries()) {
      if (run.seg.ended !== 'cut') {
        if (run.seg.ended === 'reached') continue;
        break;
      }
      await keysetSegment(ctx, e, path, attr, run, reaches[k], order, pagesLeft);
      if ((run.seg.ended as Segment['ended']) !== 'reached') break;
    }
    const segments = runs.map((r) => r.seg);

    const walk: Walk = { records: [], pages: [], complete: false, stop: '' };
    const read = (): string => `${walk.pages.length} pages (${new Set(walk.records.map((r) => r.id)).size} records)`;
    for (const [k, seg] of segments.entries()) {
      walk.pages.push(...seg.pages);
      const reach = reaches[k];
      if (seg.ended === 'reached' && reach !== undefined && k < cursors.length) {
        // Up to the next cursor: ids up to it (the next segment starts after it), timestamps
        // below it (the next segment starts at its first tie).
        walk.records.push(...seg.records.filter((r) => {
          const x = value(r, attr);
          return x === undefined || (attr === 'id' ? order(x, reach) <= 0 : order(x, reach) < 0);
        }));
        continue;
      }
      walk.records.push(...seg.records);
      if (seg.ended === 'broken') {
        walk.broken = { message: seg.message!, page: seg.pages.at(-1)! };
        walk.stop = seg.message!;
      } else if (seg.ended === 'untestable') {
        walk.untestable = seg.message!;
        walk.stop = seg.message!;
      } else if (seg.ended === 'end') {
        walk.complete = true;
        walk.stop = `reached an empty page after ${read()}${k < cursors.length ? `, before the cursor segment ${k} was to reach` : ''}`;
      } else if (seg.ended === 'reached') {
        walk.stop = `stopped at the end of the window offset traversal read, after ${read()}`;
      } else {
        walk.stop = `cut short by the request budget after ${read()} in order (${segments.reduce((n, x) => n + x.pages.length, 0)} pages read in all)`;
      }
      return walk;
    }
    throw new Error('unreachable: the last segment always ends the walk');
  });
}

/**
 * Fails the check when a walk broke, with the page that broke it as evidence; skips it when the
 * walk read no page at all (the budget was spent before it started).
 */
export function expectWalked(walk: Walk, what: string): void {
  if (walk.pages.length === 0) throw new CheckSkip(`not testable: ${what} read no page (${walk.stop})`);
  if (walk.broken) {
    fail(`${what}: ${walk.broken.message}`, { expected: 'every page a list that moves past the records already read', actual: walk.broken.message, res: walk.broken.page.res });
  }
}
