// Page length and offsets (spec/contract/README.md#pagination-information and #limits: default
// 25, maximum 100, offsets counted in records from zero, the hard offset limit on /v2/orders and
// /v2/files; #list-endpoints).
import { type CheckContext, expectErrorBody, expectStatus, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { expectRecords, type WrittenListCheck } from './list-check.js';
import { expectListMeta, metaInt, pageNumbersAllowed, readPage, readPagesAtOnce, refusesFeature, type ListPage, type Params } from './pages.js';
import { defaultPageLength, target } from './target.js';
import { HARD_OFFSET_LIMIT, PAGE } from './walks.js';
import { expectRule, findingOf, PHASE, type PageRule } from './answer.js';

/** results.total of the first page; skips when it is missing (list.meta.fields fails then). */
async function totalOf(ctx: CheckContext, e: Endpoint): Promise<{ path: string; total: number }> {
  const { path, probe } = await target(ctx, e);
  const total = metaInt(probe, 'results.total');
  if (total === undefined) return ctx.skip('not testable: the first page has no integer meta.results.total (see list.meta.fields)');
  return { path, total };
}

function expectCount(page: ListPage, expected: number, what: string): void {
  if (page.records.length !== expected) {
    fail(`${what}: ${page.records.length} records`, { expected: `${expected} records`, actual: `${page.records.length} records`, res: page.res });
  }
}

/** The page answered beyond the hard offset limit (shared by the MUST and the SHOULD). */
function beyondHardLimit(ctx: CheckContext, e: Endpoint, path: string): Promise<ListPage> {
  return readPage(ctx, e, path, { 'page[limit]': 1, 'page[offset]': HARD_OFFSET_LIMIT + 1 });
}

/**
 * The page at `offset` holds the records at those positions of the listing read from 0 (both read
 * at once, sorted by id where the target supports it), under `filter` if given. A listing whose
 * results.total moved between the two reads (a record created or deleted meanwhile) is noted,
 * not judged; a filter the target refuses, too.
 */
async function expectOffsetCounts(ctx: CheckContext, e: Endpoint, path: string, at: { offset: number; limit: number; filter?: string }): Promise<void> {
  const { offset, limit } = at;
  const base: Params = at.filter === undefined ? {} : { filter: at.filter };
  const under = at.filter === undefined ? '' : ` under filter=${at.filter}`;
  // A unique sort key gives a deterministic order when the target supports it.
  // Both sorted pages are asked for at once; the unsorted ones only where sort=id is refused.
  // The listing from 0 is a traversal's first page (PAGE records): unfiltered, the one the walk
  // sorted by id reads too, one exchange.
  const [sorted, sortedNarrow] = readPagesAtOnce(ctx, e, path, [
    { ...base, sort: 'id', 'page[limit]': PAGE },
    { ...base, sort: 'id', 'page[limit]': limit, 'page[offset]': offset },
  ]);
  const bySort = (await sorted!).res.status === 200;
  const [wide, narrow] = bySort
    ? [await sorted!, await sortedNarrow!]
    : await Promise.all(
        readPagesAtOnce(ctx, e, path, [
          { ...base, 'page[limit]': PAGE },
          { ...base, 'page[limit]': limit, 'page[offset]': offset },
        ]),
      );
  if (at.filter !== undefined && refusesFeature(wide)) return ctx.note(`offsets${under} not probed: it answered ${wide.res.status}`);
  expectStatus(wide.res, 200, `GET ${path} with page[limit]=${PAGE}${under}`);
  expectStatus(narrow.res, 200, `GET ${path} with page[limit]=${limit}&page[offset]=${offset}${under}`);
  const [before, after] = [metaInt(wide, 'results.total'), metaInt(narrow, 'results.total')];
  if (before !== after) return ctx.note(`offsets${under} not judged: results.total moved from ${before} to ${after} between the reads`);
  const which = limit === 1 ? `record ${offset}` : `records ${offset}..${offset + limit - 1}`;
  const want = wide.records.slice(offset, offset + limit).map((r) => r.id);
  const got = narrow.records.map((r) => r.id);
  if (want.join() !== got.join()) {
    const from = wide.records.findIndex((r) => r.id === got[0]);
    fail(`the page at offset ${offset}${under} is not ${which}`, {
      expected: `${which} of the listing from offset 0${under} (results.total ${before}): ${want.join(', ')}`,
      actual: `${got.length ? got.join(', ') : 'no record'}${from >= 0 ? ` (the listing from 0 has the first of them at position ${from})` : ''}`,
      res: narrow.res,
    });
  }
}

/** Never more than 100 records; over 100 asked, meta.page.limit clamped to 1..100 and the records it says. */
const max: PageRule = (a) => {
  if (a.kind === 'server-error') return a.serverErrorFor('list.limit.max');
  if (!a.listed) return undefined;
  const out = [];
  if (a.kind !== 'past-hard' && a.n > 100) out.push(a.finding('more than 100 records', 'at most 100 records', `${a.n} records`, PHASE.length));
  if (a.kind === 'page' && a.q.limit !== undefined && a.q.limit > 100) {
    const limit = a.meta.limit ?? 100;
    if (limit > 100 || limit < 1)
      out.push(
        a.finding('meta.page.limit is not clamped', 'meta.page.limit from 1 to 100 (the limit clamped)', `meta.page.limit ${a.meta.limit}`, PHASE.limit),
      );
    out.push(...a.countFor('list.limit.max'));
  }
  return out;
};

/** Without page[limit]: meta.page.limit is the default page length, and the page holds min(default, results.total - offset) records. */
const defaultLength: PageRule = (a) => {
  if (a.kind === 'server-error') return a.serverErrorFor('list.limit.default');
  if (a.kind !== 'page' || a.q.limit !== undefined) return undefined;
  const out = a.countFor('list.limit.default');
  if (a.meta.limit !== a.limit)
    out.unshift(a.finding('meta.page.limit is not the default page length', `meta.page.limit ${a.limit}`, `meta.page.limit ${a.meta.limit}`, PHASE.limit));
  return out;
};

/** page[limit]=n (1 to 100): the page holds min(n, results.total - offset) records. */
const exact: PageRule = (a) => {
  if (a.kind === 'server-error') return a.serverErrorFor('list.limit.exact');
  if (a.kind !== 'page' || a.q.limit === undefined || a.q.limit > 100) return undefined;
  return a.countFor('list.limit.exact');
};

/** meta.page.limit is the limit asked for, offset echoes the offset, current and total are the page numbers of spec/contract/README.md#pagination-information. */
const arithmetic: PageRule = (a) => {
  if (a.kind !== 'page') return undefined;
  const { meta, offset, limit, total } = a;
  const out = [];
  if (a.q.limit !== undefined && a.q.limit <= 100 && meta.limit !== limit)
    out.push(a.finding('meta.page.limit is not the limit asked for', `meta.page.limit ${limit}`, `meta.page.limit ${meta.limit}`, PHASE.limit));
  if (meta.offset !== offset)
    out.push(a.finding('meta.page.offset does not echo the offset', `meta.page.offset ${offset}`, `meta.page.offset ${meta.offset}`, PHASE.numbers));
  const allowed = pageNumbersAllowed(limit, offset, total);
  if (meta.current === undefined || !allowed.current.includes(meta.current))
    out.push(
      a.finding(
        'meta.page.current is not the page the offset falls in',
        `meta.page.current ${allowed.current.join(' or ')} (offset ${offset}, limit ${limit}, results.total ${total})`,
        `meta.page.current ${meta.current}`,
        PHASE.numbers,
      ),
    );
  if (meta.pageCount === undefined || !allowed.pages.includes(meta.pageCount))
    out.push(
      a.finding(
        'meta.page.total is not the number of pages',
        `meta.page.total ${allowed.pages.join(' or ')} (ceil(${total} / ${limit}))`,
        `meta.page.total ${meta.pageCount}`,
        PHASE.numbers,
      ),
    );
  return out;
};

/** Sorted, at an offset: the records are those the model has at those positions. */
const records: PageRule = (a) => {
  const broken = a.mispredictedFor('list.offset.records');
  return broken.length ? broken : undefined;
};

/** Past the hard offset limit: no record (a refusal, or an empty page), never a 5xx. */
const hardLimit: PageRule = (a) => {
  if (!a.pastHard) return undefined;
  if (a.kind === 'server-error') return [a.serverError()];
  if (a.kind === 'past-hard' && a.n > 0)
    return [a.finding('records served beyond the hard offset limit', 'no record (a 4xx, or an empty page)', `${a.n} record(s)`, PHASE.answer)];
  return [];
};

/** Past the hard offset limit: a refusal, a 4xx with the Error shape. */
const hardLimitError: PageRule = (a) => {
  if (!a.pastHard) return undefined;
  if (a.status >= 400 && a.status < 500) {
    try {
      expectErrorBody(a.page.res, `${a.asked}: the refusal`);
      return [];
    } catch (err) {
      return [findingOf(err, PHASE.answer)];
    }
  }
  return [a.finding('not refused past the hard offset limit', 'a 4xx with the Error shape', `status ${a.status}`, PHASE.answer)];
};

/** Past the soft offset limit: anything but a 5xx. */
const softLimit: PageRule = (a) => {
  if (!a.pastSoft) return undefined;
  return a.kind === 'server-error' ? [a.serverError()] : [];
};

export const limitChecks: WrittenListCheck[] = [
  {
    id: 'list.limit.max',
    clause: { at: 'limits' },
    title: 'page[limit]=101 never gets more than 100 records: clamped (meta.page.limit ≤ 100) or refused with 4xx',
    page: max,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const page = await readPage(ctx, e, path, { 'page[limit]': 101 });
      const what = `GET ${path} with page[limit]=101`;
      if (page.res.status >= 400 && page.res.status < 500) return expectErrorBody(page.res, what);
      expectListMeta(page, what);
      await expectRule(ctx, e, path, page, max);
      if (total < 101) ctx.note(`only the clamped meta.page.limit is observable: needs 101 records, found ${total}`);
    },
  },
  {
    id: 'list.limit.default',
    clause: { at: 'limits', detail: 'Default page length' },
    title: 'without page[limit], a page holds min(default, results.total) records and meta.page.limit is the default',
    page: defaultLength,
    async run(ctx, e) {
      const { path } = await totalOf(ctx, e);
      const { probe } = await target(ctx, e);
      const d = await defaultPageLength(ctx);
      // The page length a malformed page states is still held to the default (list.meta.fields names the rest).
      const limit = probe.meta?.page?.limit;
      if (limit !== d.value)
        fail(`meta.page.limit is not the default page length`, {
          expected: `meta.page.limit ${d.value} (${d.source})`,
          actual: `meta.page.limit ${JSON.stringify(limit)}`,
          res: probe.res,
        });
      await expectRule(ctx, e, path, probe, defaultLength);
    },
  },
  {
    id: 'list.limit.exact',
    clause: { at: 'pagination-information' },
    title: 'page[limit]=n returns min(n, results.total - offset) records (n = 1, 7, 100, and 7 near the end)',
    page: exact,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      // Near the end, where min(n, total - offset) bites; past 10,000 even the soft limit may
      // refuse, so a larger list is not probed there.
      const offset = total - 3;
      const nearEnd = offset > 0 && offset <= HARD_OFFSET_LIMIT;
      const sizes = [1, 7, 100];
      const pages = readPagesAtOnce(ctx, e, path, [
        ...sizes.map((n) => ({ 'page[limit]': n })),
        ...(nearEnd ? [{ 'page[limit]': 7, 'page[offset]': offset }] : []),
      ]);
      for (const [i, n] of sizes.entries()) {
        const page = await pages[i]!;
        expectStatus(page.res, 200, `GET ${path} with page[limit]=${n}`);
        expectCount(page, Math.min(n, total), `GET ${path} with page[limit]=${n} (results.total ${total})`);
        await expectRule(ctx, e, path, page, exact);
      }
      if (offset > HARD_OFFSET_LIMIT) ctx.note(`the end of the list (offset ${offset}) lies past 10,000: not probed`);
      if (nearEnd) {
        const page = await pages[sizes.length]!;
        expectStatus(page.res, 200, `GET ${path} with page[limit]=7&page[offset]=${offset}`);
        expectCount(page, 3, `GET ${path} with page[limit]=7&page[offset]=${offset} (results.total ${total})`);
        await expectRule(ctx, e, path, page, exact);
      }
    },
  },
  {
    id: 'list.page.arithmetic',
    clause: { at: 'pagination-information' },
    title: 'meta.page.offset echoes the offset, current = offset/limit + 1, total = ceil(results.total / limit) pages',
    page: arithmetic,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const limit = 7;
      const offsets = total >= 15 ? [0, 14] : [0, 7];
      const pages = readPagesAtOnce(
        ctx,
        e,
        path,
        offsets.map((offset) => ({ 'page[limit]': limit, ...(offset ? { 'page[offset]': offset } : {}) })),
      );
      for (const [i, offset] of offsets.entries()) {
        const page = await pages[i]!;
        const what = `GET ${path} with page[limit]=${limit}${offset ? `&page[offset]=${offset}` : ''}`;
        expectListMeta(page, what);
        await expectRule(ctx, e, path, page, arithmetic);
      }
    },
  },
  {
    id: 'list.offset.records',
    clause: { at: 'pagination-information' },
    title: 'page[offset] counts records from zero: the page at offset 5 is records 5..9 of the listing read from 0',
    page: records,
    needsModel: true,
    fewest: 2,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      expectRecords(ctx, this, total);
      // Five records from offset 5 where the list holds ten; on a smaller list the second record
      // alone, which an offset read as offset ± 1 misses as surely.
      await expectOffsetCounts(ctx, e, path, total >= 10 ? { offset: 5, limit: 5 } : { offset: 1, limit: 1 });
      if (total < 10) return;
      // A store may serve a small result another way than a big one (from memory, a cache): the
      // second record of the newest few, selected with ge on the created_at of the fifth newest.
      const from = total - 5;
      if (from > HARD_OFFSET_LIMIT) return ctx.note(`offsets on a small result not probed: the newest records lie past offset ${HARD_OFFSET_LIMIT}`);
      const newest = await readPage(ctx, e, path, { sort: 'created_at', 'page[limit]': 5, 'page[offset]': from });
      const v = newest.ok ? newest.records[0]?.createdRaw : undefined;
      if (v === undefined) return ctx.note(`offsets on a small result not probed: GET ${path}?sort=created_at at offset ${from} gave no created_at`);
      await expectOffsetCounts(ctx, e, path, { offset: 1, limit: 1, filter: `ge(created_at,${v})` });
    },
  },
  {
    id: 'list.offset.hard-limit',
    clause: { at: 'limits', detail: 'Hard offset limit' },
    title: 'no record is served for page[offset] > 10,000 on /v2/orders and /v2/files',
    appliesTo: (e) => e.hardOffsetLimit,
    page: hardLimit,
    // A record past offset 10,000 to be withheld: records 0 to 10,001.
    fewest: HARD_OFFSET_LIMIT + 2,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      await expectRule(ctx, e, path, page, hardLimit);
      if (page.res.status >= 400) return;
      expectRecords(ctx, this, total);
    },
  },
  {
    id: 'list.offset.hard-limit-error',
    clause: { at: 'limits', detail: 'Hard offset limit' },
    title: 'page[offset] > 10,000 on /v2/orders and /v2/files is refused with 4xx and the Error shape',
    appliesTo: (e) => e.hardOffsetLimit,
    page: hardLimitError,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      await expectRule(ctx, e, path, await beyondHardLimit(ctx, e, path), hardLimitError);
    },
  },
  {
    id: 'list.offset.soft-limit-5xx',
    clause: { at: 'limits', detail: 'Soft offset limit' },
    title: 'page[offset] > 10,000 on the other lists never gets a 5xx (what it gets otherwise is open)',
    appliesTo: (e) => !e.hardOffsetLimit,
    page: softLimit,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      await expectRule(ctx, e, path, await beyondHardLimit(ctx, e, path), softLimit);
    },
  },
  {
    id: 'list.offset.soft-limit',
    clause: { at: 'limits', detail: 'Soft offset limit' },
    title: 'what page[offset] > 10,000 gets on the other lists (the contract does not say; a 5xx is noted here and fails list.offset.soft-limit-5xx)',
    appliesTo: (e) => !e.hardOffsetLimit,
    page: softLimit,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      await expectRule(ctx, e, path, page, softLimit);
      ctx.note(`page[offset]=${HARD_OFFSET_LIMIT + 1} answered ${page.res.status} with ${page.records.length} record(s)`);
    },
  },
];
