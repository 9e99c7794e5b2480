// Sorting and filtering (spec/contract/README.md#list-endpoints: sort on created_at, updated_at,
// id; filter with ge and gt; #lists.sort-descending, #lists.total: sort=-attr descending,
// filter totals).
import { type CheckContext, expectStatus, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { CheckSkip, shown } from '../../lib/evidence/index.js';
import { comparable, describeRecords, duplicates, inWindow, missingFrom, uniqueById } from './compare.js';
import { expectRecords, type ListCheck, type WrittenListCheck } from './list-check.js';
import { FAR_FUTURE } from './meta.js';
import { metaInt, readPage, readPagesAtOnce, refusesFeature, type ListPage, type Rec } from './pages.js';
import { target } from './target.js';
import { orderOf, value, type Attr } from './collation.js';
import { expectWalked, offsetWalk, type Walk } from './walks.js';
import { expectRule, PHASE, sortRule, type Answer, type PageRule } from './answer.js';
import { tester } from './model.js';

const ATTRS: Attr[] = ['created_at', 'updated_at', 'id'];

/** The offset walk sorted by `attr`, or a skip when the target does not support that sort. */
export async function sortedWalk(ctx: CheckContext, e: Endpoint, attr: Attr): Promise<{ path: string; walk: Walk }> {
  const { path } = await target(ctx, e);
  const walk = await offsetWalk(ctx, e, path, attr);
  if (refusesFeature(walk.pages[0])) ctx.skip(`unsupported: sort=${attr} answered ${walk.pages[0]!.res.status}`);
  return { path, walk };
}

function firstInversion(records: Rec[], attr: Attr, descending: boolean): number {
  const order = orderOf(descending ? [...records].reverse() : records, attr);
  for (let i = 1; i < records.length; i++) {
    const a = value(records[i - 1]!, attr);
    const b = value(records[i]!, attr);
    if (a === undefined || b === undefined) continue;
    const c = order(b, a);
    if (descending ? c > 0 : c < 0) return i;
  }
  return -1;
}

/** A sorted page in the order asked for, and (at offset 0) the records the model has first: `id`'s rule, for the sorts it names. */
function sortPage(id: string): PageRule {
  return (a) => {
    if (a.kind === 'server-error') return a.serverErrorFor(id);
    if (a.kind !== 'page' || !a.q.sort || sortRule(a.q) !== id) return undefined;
    const out =
      a.inversion() >= 0
        ? [
            a.finding(
              `record ${a.inversion()} of the page is out of order`,
              `${a.q.sort.descending ? 'non-increasing' : 'non-decreasing'} ${a.q.sort.attr}`,
              a.describeInversion(),
              PHASE.order,
            ),
          ]
        : [];
    out.push(...a.mispredictedFor(id));
    return a.n > 1 || out.length ? out : undefined;
  };
}

/** Each page of a probe's walk held to `rule`, ids compared in the collation the walk follows. */
async function expectPages(ctx: CheckContext, e: Endpoint, path: string, walk: Walk, rule: PageRule): Promise<void> {
  const idOrder = orderOf(walk.records, 'id');
  for (const page of walk.pages) if (page.ok) await expectRule(ctx, e, path, page, rule, idOrder);
}

/** `id`: written out where the check is listed, so a search for it finds it. */
function sortCheck(id: string, attr: Attr): WrittenListCheck {
  const rule = sortPage(id);
  return {
    id,
    clause: { at: 'list-endpoints' },
    title: `sort=${attr} returns records in non-decreasing ${attr} order across all pages${attr === 'id' ? '' : ' (compared as instants)'}`,
    page: rule,
    // Two records show an order.
    fewest: 2,
    async run(ctx, e) {
      const { path, walk } = await sortedWalk(ctx, e, attr);
      expectWalked(walk, `GET ${path} sorted by ${attr}`);
      expectRecords(ctx, this, walk.records.length);
      if (walk.records.every((r) => value(r, attr) === undefined)) ctx.skip(`not testable: no record has a parseable ${attr} at ${e.record[attr]}`);
      await expectPages(ctx, e, path, walk, rule);
      // Across the pages: the first record of a page after the last of the one before.
      const i = firstInversion(walk.records, attr, false);
      if (i >= 0) {
        const page = walk.pages[Math.floor(i / 100)] ?? walk.pages[0]!;
        fail(`sort=${attr}: record ${i} comes before a smaller ${attr}`, {
          expected: `non-decreasing ${attr}`,
          actual: `record ${i - 1} ${describeRecords([walk.records[i - 1]!])} is followed by ${describeRecords([walk.records[i]!])}`,
          res: page.res,
        });
      }
    },
  };
}

/**
 * A pivot for ge/gt: a created_at that several records share (ties are where ge and gt part).
 * One record shows both rules on its own value (ge selects it, gt does not); a skip, short of
 * `check`'s fewest records with a created_at to pivot on.
 */
function pivot(ctx: CheckContext, walk: Walk, check: Pick<ListCheck, 'fewest'>): Rec {
  const inside = inWindow([walk], 'created_at');
  const ok = comparable(ctx, walk.records);
  const rs = walk.records.filter((r) => r.created !== undefined && r.createdRaw !== undefined && ok(r) && inside(r));
  expectRecords(ctx, check, rs.length, { which: 'with a parseable created_at created before the run', of: uniqueById(walk.records).size });
  const counts = new Map<string, number>();
  for (const r of rs) counts.set(r.created!, (counts.get(r.created!) ?? 0) + 1);
  // A third of the way in, but no more than 250 records from the end: the filtered listing
  // is read in full, and on a list of ten thousand records three pages show what a filter
  // does to paging as well as a hundred would.
  const middle = Math.max(Math.floor(rs.length / 3), rs.length - 250);
  const tied = rs.slice(middle).find((r) => counts.get(r.created!)! > 1);
  return tied ?? rs[middle];
}

/**
 * A filter on a value the target served itself was refused (400/422). That reads as "filters
 * unsupported" (a skip) only if the target refuses the same filter on another value too: one
 * that takes `op(attr, 9999-12-31…)` but refuses the timestamps it serves cannot be paged with
 * keyset traversal, and fails.
 */
export async function refusedOwnValue(ctx: CheckContext, e: Endpoint, path: string, op: 'ge' | 'gt', attr: Attr, refused: ListPage): Promise<never> {
  const other = `${op}(${attr},${FAR_FUTURE})`;
  const probe = await readPage(ctx, e, path, { filter: other });
  const asked = decodeURIComponent(refused.res.exchange.url.split('?')[1] ?? '');
  if (!probe.ok) return ctx.skip(`unsupported: ${asked} answered ${refused.res.status} (and filter=${other} answered ${probe.res.status})`);
  return fail(`the target refuses a filter on a value it served itself`, {
    expected: `filter=${op}(${attr},v) accepted for a value v the target served, as filter=${other} is (${probe.res.status})`,
    actual: `${asked} answered ${refused.res.status}`,
    res: refused.res,
  });
}

interface Filtered {
  path: string;
  op: 'ge' | 'gt';
  v: Rec;
  all: Walk;
  filtered: Walk;
  filter: string;
}

function filteredWalk(ctx: CheckContext, e: Endpoint, op: 'ge' | 'gt', check: Pick<ListCheck, 'fewest'>): Promise<Filtered> {
  return (async () => {
    const { path, walk: all } = await sortedWalk(ctx, e, 'created_at');
    expectWalked(all, `GET ${path} sorted by created_at`);
    const v = pivot(ctx, all, check);
    const filter = `${op}(created_at,${v.createdRaw})`;
    const filtered = await offsetWalk(ctx, e, path, 'created_at', filter);
    if (refusesFeature(filtered.pages[0])) await refusedOwnValue(ctx, e, path, op, 'created_at', filtered.pages[0]!);
    expectWalked(filtered, `GET ${path} with filter=${filter}`);
    return { path, op, v, all, filtered, filter };
  })();
}

/**
 * The records of a page that do not match term `t`. Judged on what a client sees
 * (spec/contract/README.md#lists.filter): a record shown equal to v under gt breaks it whatever
 * the cause (gt read as ge, or a store comparing finer precision than it shows): a client paging
 * with gt on the last value it was shown gets that record again.
 */
function unmatched(a: Answer, t: Answer['q']['filters'][number]): ReturnType<PageRule> & object {
  const wrong = a.wrongFor(t);
  if (!wrong.length) return [];
  const r = wrong[0]!;
  const ge = tester(a.m, { ...t, op: 'ge' });
  const equal = t.op === 'gt' && wrong.every((x) => ge(x) === true);
  return [
    a.finding(
      `records that do not match ${t.op}(${t.attr},${t.value})`,
      `only records with ${t.attr} ${t.op === 'ge' ? '≥' : '>'} ${t.value}`,
      `${wrong.length} record(s), e.g. ${r.id} with ${t.attr} ${t.attr === 'id' ? r.id : t.attr === 'created_at' ? r.createdRaw : r.updatedRaw}${equal ? ' — shown equal to the value: either gt is read as ge, or the target compares finer precision than it shows; either way a client paging with gt on the value it was shown gets these records again' : ''}`,
      PHASE.filter,
    ),
  ];
}

/** `id`: written out where the check is listed, so a search for it finds it. */
function filterCheck(id: string, op: 'ge' | 'gt'): WrittenListCheck {
  const holds = (x: string, v: string): boolean => (op === 'ge' ? x >= v : x > v);
  const sign = op === 'ge' ? '≥' : '>';
  const rule: PageRule = (a) => {
    if (a.kind === 'server-error') return a.serverErrorFor(id);
    if (a.kind !== 'page') return undefined;
    const out = a.q.filters.filter((t) => t.op === op).flatMap((t) => unmatched(a, t));
    out.push(...a.mispredictedFor(id), ...a.incompleteFor(id));
    return (a.n > 0 && a.q.filters.some((t) => t.op === op)) || out.length ? out : undefined;
  };
  return {
    id,
    clause: { at: 'list-endpoints' },
    title: `filter=${op}(created_at,v) returns every record with created_at ${sign} v and no other (v shared by tied records), each once`,
    page: rule,
    // One record, its own created_at the value: ge selects it, gt does not.
    fewest: 1,
    async run(ctx, e) {
      const f = await filteredWalk(ctx, e, op, this);
      const v = f.v.created!;
      const res = f.filtered.pages[0]!.res;
      await expectPages(ctx, e, f.path, f.filtered, rule);
      const ok = comparable(ctx, f.all.records);
      const dup = duplicates(f.filtered.records.filter(ok));
      if (dup.length)
        fail(`paging by offset under filter=${f.filter} met records twice`, {
          expected: 'every record once',
          actual: `${dup.length} record(s) twice: ${dup.slice(0, 5).join(', ')}`,
          res: f.filtered.pages.at(-1)!.res,
        });
      // What the unfiltered listing holds that the filter must select, where both were read in full.
      const inside = inWindow([f.all, f.filtered], 'created_at');
      const expected = uniqueById(f.all.records.filter((r) => r.created !== undefined && holds(r.created, v) && ok(r) && inside(r)));
      const lost = missingFrom(expected, uniqueById(f.filtered.records));
      if (lost.length) {
        fail(`filter=${f.filter} lost records that match it`, {
          expected: `every record with created_at ${sign} ${f.v.createdRaw} from the unfiltered listing (${expected.size} in the compared window)`,
          actual: `missing ${describeRecords(lost)}`,
          res,
        });
      }
    },
  };
}

export const orderChecks: WrittenListCheck[] = [
  sortCheck('list.sort.created-at', 'created_at'),
  sortCheck('list.sort.updated-at', 'updated_at'),
  sortCheck('list.sort.id', 'id'),
  {
    id: 'list.sort.descending',
    clause: { at: 'list-endpoints' },
    title: 'sort=-created_at, -updated_at and -id return records in non-increasing order',
    page: sortPage('list.sort.descending'),
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      let tried = 0;
      const pages = readPagesAtOnce(
        ctx,
        e,
        path,
        ATTRS.map((attr) => ({ sort: `-${attr}`, 'page[limit]': 100 })),
      );
      for (const [k, attr] of ATTRS.entries()) {
        const page = await pages[k]!;
        if (refusesFeature(page)) continue;
        expectStatus(page.res, 200, `GET ${path} with sort=-${attr}`);
        tried++;
        await expectRule(ctx, e, path, page, sortPage('list.sort.descending'), orderOf([...page.records].reverse(), 'id'));
      }
      if (!tried) ctx.skip('unsupported: every descending sort was refused (400/422)');
    },
  },
  filterCheck('list.filter.ge', 'ge'),
  filterCheck('list.filter.gt', 'gt'),
  {
    id: 'list.total.filtered',
    clause: { at: 'pagination-information' },
    title: 'with a filter (ge and gt), meta.results.total is the number of records the filter selects (counted by reading them all)',
    page: (a) => a.totalFor('list.total.filtered'),
    needsModel: true,
    // One record, its own created_at the value: ge counts 1, gt counts 0.
    fewest: 1,
    async run(ctx, e) {
      // Both operators: a count query that reads gt as ge (or the other way) while the data
      // query does not is wrong on one of them only. gt reuses list.filter.gt's walk.
      const ge = await filteredWalk(ctx, e, 'ge', this);
      const gt = await filteredWalk(ctx, e, 'gt', this).catch((err: unknown) => {
        if (err instanceof CheckSkip) return ctx.note(`gt not compared: ${err.message}`);
        throw err;
      });
      let compared = 0;
      for (const f of [ge, gt]) {
        if (!f) continue;
        if (!f.filtered.complete) {
          ctx.note(`filter=${f.filter} not compared: the filtered listing was ${f.filtered.stop}`);
          continue;
        }
        compared++;
        const first = f.filtered.pages[0]!;
        const said = metaInt(first, 'results.total');
        const read = uniqueById(f.filtered.records).size;
        // Records newer than the horizon, created while the listing was read, may or may not be
        // counted by the first page's total (the contract: recent timestamps may be incomplete).
        const old = comparable(ctx, f.all.records);
        const recent = uniqueById(f.filtered.records.filter((r) => !old(r))).size;
        if (said === undefined || said < read - recent || said > read) {
          fail(`meta.results.total under filter=${f.filter} is not the number of records it selects`, {
            expected: `meta.results.total ${recent ? `from ${read - recent} to ` : ''}${read} (records read under the filter${recent ? `, ${recent} of them newer than the horizon` : ''})`,
            actual: `meta.results.total ${shown(first.meta?.results?.total)}`,
            res: first.res,
          });
        }
      }
      if (!compared) ctx.skip('not testable: no filtered listing was read in full');
    },
  },
];
