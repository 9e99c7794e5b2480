// Keyset-style traversals of a whole collection (spec/contract/README.md#keyset-traversal):
// sorted by an attribute, each page asked for with a filter from the last record read. Bounded
// by a share of the operation's request budget (cap), as the offset walks are (walks.ts).
import type { CheckContext } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { SuiteError } from '../../lib/evidence/index.js';
import { orderOf, plainOrder, raw, value, type Attr } from './collation.js';
import { BudgetSpent, readPage, refusesFeature, type ListPage, type Params, type Rec } from './pages.js';
import { cap, firstPageAcrossTie, offsetWalk, PAGE, walkHead, walkProgress, type Walk } from './walks.js';

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
 * contract's rule), until a page's last value is `past` the segment's end (a record at or past
 * the next cursor), or an empty page shows. It reads on from where `run` stopped: at most
 * `allowed` pages, and no more than the walk has left.
 */
async function keysetSegment(
  ctx: CheckContext,
  e: Endpoint,
  path: string,
  attr: Attr,
  run: SegmentRun,
  past: (v: Value) => boolean | Promise<boolean>,
  pagesLeft: { n: number },
  allowed = Infinity,
): Promise<Segment> {
  const { seg, seen } = run;
  let params = run.params;
  for (let n = 0; ; n++) {
    run.params = params;
    if (pagesLeft.n <= 0 || n >= allowed) return seg;
    pagesLeft.n--;
    let page: ListPage;
    try {
      page = await readPage(ctx, e, path, params, 'walks');
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
      return Object.assign(seg, {
        ended: 'untestable',
        message: `not testable: record ${last.id} has no parseable ${attr} at ${attr === 'id' ? e.record.id : e.record[attr]} to continue the keyset traversal from (set operations.${e.operation}.record in conformance.config.yaml)`,
      });
    }
    if (fresh.length === 0) {
      const withinValue = typeof params['page[offset]'] === 'number';
      const allTied = page.records.every((r) => value(r, attr) === lastValue);
      if (attr === 'id' || withinValue || !allTied) {
        return Object.assign(seg, {
          ended: 'broken',
          message: `the keyset page does not advance: all ${page.records.length} record(s) were read before: ${page.records
            .slice(0, 5)
            .map((r) => r.id)
            .join(', ')}`,
        });
      }
    }
    if (await past(lastValue)) return Object.assign(seg, { ended: 'reached' });
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

function newRun(params: Params): SegmentRun {
  return { seg: { records: [], pages: [], ended: 'cut' }, seen: new Map(), params };
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
  for (let start = startOf(firstPage - 1); ;) {
    let j = start + PAGE - 1;
    if (attr !== 'id') while (j < sorted.length && v(j) === v(start)) j++;
    // The rest fits in one page: the last segment reads it to the end.
    if (j >= sorted.length - 1 || v(j) === undefined) return cursors;
    cursors.push(sorted[j]!);
    start = startOf(j);
  }
}

/**
 * Why a keyset walk does not follow `byOffset` (the checks that compare them skip there, and a
 * walk that starts before the offset walk ends must send nothing more), or undefined.
 */
function notFollowed(byOffset: Walk, attr: Attr): string | undefined {
  const first = byOffset.pages[0];
  if (!byOffset.complete && byOffset.records.length === 0) return `the offset traversal it follows read no record (${byOffset.stop})`;
  if (refusesFeature(first)) return `sort=${attr} answered ${first!.res.status}`;
  if (byOffset.broken) return `the offset traversal it follows failed (${byOffset.broken.message})`;
  if (byOffset.records.length && byOffset.records.every((r) => value(r, attr) === undefined)) return `no record has a parseable ${attr}`;
  return undefined;
}

/** The offset walk's first page can start segment 0: a list of records sorted by `attr`, some with a value. */
function startsOn(head: ListPage | undefined, attr: Attr): head is ListPage {
  return head !== undefined && head.ok && !refusesFeature(head) && head.records.some((r) => value(r, attr) !== undefined);
}

/**
 * Keyset traversal by `attr`: the first page with sort=attr, then filter=gt(id,last) for ids
 * and filter=ge(attr,last) for timestamps (the boundary records come again and are dropped);
 * when a whole page shares one timestamp, page[offset] within that value (the contract's rule).
 *
 * It runs as segments side by side. Cursors taken from the offset walk sorted by `attr`
 * (offsetWalk) start them: segment k asks for gt(id,c) or ge(attr,c) and reads until a record at
 * or past the next cursor shows, so the segments join end to end and together still prove the
 * traversal complete; each cursor is one more starting point tested. A segment that meets an
 * empty page before its cursor ends the traversal there, as it would a client's. Records past a
 * segment's cursor belong to the next one and are left to it. Where the offset walk stopped
 * before the end for the budget, the last segment reads to its last value: a window of the list;
 * where it stopped at an offset limit (Walk.limited), the last segment reads on to the end.
 *
 * Segment 0 needs only the offset walk's first page (its length ends inside the first tie,
 * firstPageAcrossTie), so its first page is asked for as soon as that page is in, beside the
 * offset walk's others: a round trip less in sequence. Whether it ends there is judged once the
 * offset walk has ended; if the walk's records put the first page's end elsewhere (a target
 * whose pages disagree), that start is dropped and segment 0 starts again as the walk says.
 */
export function keysetWalk(ctx: CheckContext, e: Endpoint, path: string, attr: Attr): Promise<Walk> {
  return ctx.shared(`walk keyset ${path} ${attr}`, async () => {
    const pagesLeft = { n: cap(ctx) };
    const walked = offsetWalk(ctx, e, path, attr);
    const head = await walkHead(ctx, e, path, attr);
    // Where each segment ends, set once the offset walk has ended and the others are under way;
    // left unset, the early start of segment 0 stops at its page.
    let ends: ((k: number, v: Value) => boolean) | undefined;
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const headEnd = startsOn(head, attr) ? firstPageAcrossTie(head.records, attr) : undefined;
    const early = headEnd === undefined ? undefined : { firstPage: headEnd, run: newRun({ sort: attr, 'page[limit]': headEnd }), kept: false };
    const earlyDone = early
      ? keysetSegment(
          ctx,
          e,
          path,
          attr,
          early.run,
          async (v) => {
            await open;
            return !ends || !early?.kept || ends(0, v);
          },
          pagesLeft,
          1,
        )
      : undefined;
    const filterOn = (c: Rec): string => `${attr === 'id' ? 'gt' : 'ge'}(${attr},${raw(c, attr)})`;
    // Segment k > 0 opens as soon as the offset walk's records show its cursor: the cursors of a
    // prefix of the records are a prefix of the walk's own (keysetCursors), once the prefix
    // holds past the first page, which sets where segment 0's first page ends.
    const ahead: Array<{ cursor: Rec; run: SegmentRun; done: Promise<Segment> }> = [];
    const progress = walkProgress(ctx, path, attr);
    for (let firstEnd: number | undefined; !progress.ended;) {
      await progress.next();
      if (progress.ended || (firstEnd === undefined && progress.records.length <= PAGE)) continue;
      firstEnd ??= firstPageAcrossTie(progress.records, attr);
      for (const cursor of keysetCursors(progress.records, attr, firstEnd).slice(ahead.length)) {
        const k = ahead.length + 1;
        const run = newRun({ sort: attr, filter: filterOn(cursor), 'page[limit]': PAGE });
        const done = keysetSegment(
          ctx,
          e,
          path,
          attr,
          run,
          async (v) => {
            await open;
            return !ends || ends(k, v);
          },
          pagesLeft,
          1,
        );
        ahead.push({ cursor, run, done });
      }
    }
    const byOffset = await walked;
    const why = notFollowed(byOffset, attr);
    if (why !== undefined) {
      opened();
      await Promise.all([earlyDone, ...ahead.map((a) => a.done)]);
      return { records: [], pages: [], complete: false, stop: `not started: ${why}` };
    }
    const sorted = byOffset.records;
    const firstPage = firstPageAcrossTie(sorted, attr);
    const order = attr === 'id' ? orderOf(sorted, 'id') : plainOrder;
    const cursors = keysetCursors(sorted, attr, firstPage);
    if (ahead.some((a, k) => a.cursor !== cursors[k]))
      throw new SuiteError('SUITE_BUG', `keyset cursors of ${path} by ${attr} moved as the offset walk went on`);
    // Past an offset limit only keyset traversal reads on: then it reads to the end.
    const windowEnd = byOffset.complete || byOffset.limited || sorted.length === 0 ? undefined : value(sorted.at(-1)!, attr);
    const starts: Params[] = [{ sort: attr, 'page[limit]': firstPage }, ...cursors.map((c) => ({ sort: attr, filter: filterOn(c), 'page[limit]': PAGE }))];
    const reaches = [...cursors.map((c) => value(c, attr)), windowEnd];
    const past = (k: number, v: Value): boolean => reaches[k] !== undefined && order(v, reaches[k]) >= 0;
    // The early start stands where the walk puts segment 0's first page's end there too; else
    // it stops, and its page is not counted against the walk.
    const kept = early?.firstPage === firstPage ? early.run : undefined;
    if (kept) early!.kept = true;
    else if (early) pagesLeft.n++;
    ends = past;
    // First every segment's opening pages side by side (the walk's own first two for segment 0),
    // then whatever a segment still needs, in cursor order: where the budget runs out, the
    // window compared is the stretch from the start, as a walk page by page would have read.
    const runs: SegmentRun[] = starts.map((params, k) => (k === 0 && kept ? kept : (ahead[k - 1]?.run ?? newRun(params))));
    const opening = runs.map((run, k) =>
      run === kept ? undefined : (ahead[k - 1]?.done ?? keysetSegment(ctx, e, path, attr, run, (v) => past(k, v), pagesLeft, k === 0 ? 2 : 1)),
    );
    opened();
    // Segment 0's second opening page, after the others' first as before.
    if ((await earlyDone)?.ended === 'cut' && kept) await keysetSegment(ctx, e, path, attr, kept, (v) => past(0, v), pagesLeft, 1);
    await Promise.all(opening);
    for (const [k, run] of runs.entries()) {
      if (run.seg.ended !== 'cut') {
        if (run.seg.ended === 'reached') continue;
        break;
      }
      await keysetSegment(ctx, e, path, attr, run, (v) => past(k, v), pagesLeft);
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
        walk.records.push(
          ...seg.records.filter((r) => {
            const x = value(r, attr);
            return x === undefined || (attr === 'id' ? order(x, reach) <= 0 : order(x, reach) < 0);
          }),
        );
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
