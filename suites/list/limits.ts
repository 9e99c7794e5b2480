// Page length and offsets (spec/contract/README.md#pagination-information and #limits: default
// 25, maximum 100, offsets counted in records from zero, the hard offset limit on /v2/orders and
// /v2/files; #list-endpoints).
import { type CheckContext, expectErrorBody, expectStatus, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import type { WrittenListCheck } from './list-check.js';
import { expectListMeta, metaInt, pageNumbersAllowed, readPage, readPagesAtOnce, type ListPage } from './pages.js';
import { defaultPageLength, target } from './target.js';
import { HARD_OFFSET_LIMIT } from './walks.js';

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

/** The values each meta.page field may take for a page of `limit` at `offset` over `results` records. */
function pageNumbers(limit: number, offset: number, results: number): Record<'limit' | 'offset' | 'current' | 'total', number[]> {
  const { current, pages } = pageNumbersAllowed(limit, offset, results);
  return { limit: [limit], offset: [offset], current, total: pages };
}

/** The page answered beyond the hard offset limit (shared by the MUST and the SHOULD). */
function beyondHardLimit(ctx: CheckContext, e: Endpoint, path: string): Promise<ListPage> {
  return readPage(ctx, e, path, { 'page[limit]': 1, 'page[offset]': HARD_OFFSET_LIMIT + 1 });
}

export const limitChecks: WrittenListCheck[] = [
  {
    id: 'list.limit.max',
    clause: { at: 'limits' },
    title: 'page[limit]=101 never gets more than 100 records: clamped (meta.page.limit ≤ 100) or refused with 4xx',
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const page = await readPage(ctx, e, path, { 'page[limit]': 101 });
      const what = `GET ${path} with page[limit]=101`;
      if (page.res.status >= 400 && page.res.status < 500) return expectErrorBody(page.res, what);
      expectListMeta(page, what);
      if (page.records.length > 100)
        fail(`${what}: ${page.records.length} records`, { expected: 'at most 100 records', actual: `${page.records.length} records`, res: page.res });
      const limit = metaInt(page, 'page.limit')!;
      if (limit > 100)
        fail(`${what}: meta.page.limit is ${limit}`, {
          expected: 'meta.page.limit ≤ 100 (the limit clamped)',
          actual: `meta.page.limit ${limit}`,
          res: page.res,
        });
      if (total < 101) ctx.note(`only the clamped meta.page.limit is observable: needs 101 records, found ${total}`);
    },
  },
  {
    id: 'list.limit.default',
    clause: { at: 'limits', detail: 'Default page length' },
    title: 'without page[limit], a page holds min(default, results.total) records and meta.page.limit is the default',
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const { probe } = await target(ctx, e);
      const d = await defaultPageLength(ctx);
      const expected = Math.min(d.value, total);
      expectCount(probe, expected, `GET ${path} (default ${d.value}, from ${d.source}; results.total ${total})`);
      const limit = metaInt(probe, 'page.limit');
      if (limit !== d.value)
        fail(`meta.page.limit is not the default page length`, {
          expected: `meta.page.limit ${d.value} (${d.source})`,
          actual: `meta.page.limit ${JSON.stringify(probe.meta?.page?.limit)}`,
          res: probe.res,
        });
    },
  },
  {
    id: 'list.limit.exact',
    clause: { at: 'pagination-information' },
    title: 'page[limit]=n returns min(n, results.total - offset) records (n = 1, 7, 100, and 7 near the end)',
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
      }
      if (offset > HARD_OFFSET_LIMIT) ctx.note(`the end of the list (offset ${offset}) lies past 10,000: not probed`);
      if (nearEnd) {
        const page = await pages[sizes.length]!;
        expectStatus(page.res, 200, `GET ${path} with page[limit]=7&page[offset]=${offset}`);
        expectCount(page, 3, `GET ${path} with page[limit]=7&page[offset]=${offset} (results.total ${total})`);
      }
    },
  },
  {
    id: 'list.page.arithmetic',
    clause: { at: 'pagination-information' },
    title: 'meta.page.offset echoes the offset, current = offset/limit + 1, total = ceil(results.total / limit) pages',
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
        const results = metaInt(page, 'results.total')!;
        const got = {
          limit: metaInt(page, 'page.limit')!,
          offset: metaInt(page, 'page.offset')!,
          current: metaInt(page, 'page.current')!,
          total: metaInt(page, 'page.total')!,
        };
        // spec/contract/README.md#pagination-information: current = offset/limit + 1 and total = ceil(results/limit); with zero
        // results, current and total may also be 0 or 1 (the formula's own value stays allowed).
        const allowed = pageNumbers(limit, offset, results);
        const bad = (Object.keys(allowed) as Array<keyof typeof allowed>).filter((k) => !allowed[k].includes(got[k]));
        if (bad.length) {
          fail(`${what}: meta.page ${bad.join(', ')} wrong`, {
            expected: `for results.total ${results}: ${bad.map((k) => `meta.page.${k} ${allowed[k].join(' or ')}`).join('; ')}`,
            actual: bad.map((k) => `meta.page.${k} ${got[k]}`).join('; '),
            res: page.res,
          });
        }
      }
    },
  },
  {
    id: 'list.offset.records',
    clause: { at: 'pagination-information' },
    title: 'page[offset] counts records from zero: the page at offset 5 is records 5..9 of the listing read from 0',
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      if (total < 10) ctx.skipForRecords(`needs 10 records, found ${total}`, total);
      // A unique sort key gives a deterministic order when the target supports it.
      // Both sorted pages are asked for at once; the unsorted ones only where sort=id is refused.
      const [sorted, sortedNarrow] = readPagesAtOnce(ctx, e, path, [
        { sort: 'id', 'page[limit]': 20 },
        { sort: 'id', 'page[limit]': 5, 'page[offset]': 5 },
      ]);
      const bySort = (await sorted!).res.status === 200;
      const [wide, narrow] = bySort
        ? [await sorted!, await sortedNarrow!]
        : await Promise.all(readPagesAtOnce(ctx, e, path, [{ 'page[limit]': 20 }, { 'page[limit]': 5, 'page[offset]': 5 }]));
      expectStatus(wide.res, 200, `GET ${path} with page[limit]=20`);
      expectStatus(narrow.res, 200, `GET ${path} with page[limit]=5&page[offset]=5`);
      const want = wide.records.slice(5, 10).map((r) => r.id);
      const got = narrow.records.map((r) => r.id);
      if (want.join() !== got.join()) {
        const at = wide.records.findIndex((r) => r.id === got[0]);
        fail('the page at offset 5 is not records 5..9', {
          expected: `records 5..9 of the listing from offset 0: ${want.join(', ')}`,
          actual: `${got.join(', ')}${at >= 0 ? ` (the listing from 0 has the first of them at position ${at})` : ''}`,
          res: narrow.res,
        });
      }
    },
  },
  {
    id: 'list.offset.hard-limit',
    clause: { at: 'limits', detail: 'Hard offset limit' },
    title: 'no record is served for page[offset] > 10,000 on /v2/orders and /v2/files',
    appliesTo: (e) => e.hardOffsetLimit,
    async run(ctx, e) {
      const { path, total } = await totalOf(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      const what = `GET ${path} with page[offset]=${HARD_OFFSET_LIMIT + 1}`;
      if (page.res.status >= 500) fail(`${what}: a server error`, { expected: '4xx, or no records', actual: `status ${page.res.status}`, res: page.res });
      if (page.res.status >= 400) return;
      if (page.records.length > 0)
        fail(`${what}: records served beyond the hard offset limit`, {
          expected: 'no record (4xx, or an empty page)',
          actual: `${page.records.length} record(s)`,
          res: page.res,
        });
      if (total <= HARD_OFFSET_LIMIT + 1) ctx.skipForRecords(`needs ${HARD_OFFSET_LIMIT + 2} records, found ${total}`, total);
    },
  },
  {
    id: 'list.offset.hard-limit-error',
    clause: { at: 'limits', detail: 'Hard offset limit' },
    title: 'page[offset] > 10,000 on /v2/orders and /v2/files is refused with 4xx and the Error shape',
    appliesTo: (e) => e.hardOffsetLimit,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      expectStatus(page.res, { range: '4xx' }, `GET ${path} with page[offset]=${HARD_OFFSET_LIMIT + 1}`);
      expectErrorBody(page.res, 'the refusal');
    },
  },
  {
    id: 'list.offset.soft-limit-5xx',
    clause: { at: 'limits', detail: 'Soft offset limit' },
    title: 'page[offset] > 10,000 on the other lists never gets a 5xx (what it gets otherwise is open)',
    appliesTo: (e) => !e.hardOffsetLimit,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      if (page.res.status >= 500)
        fail(`GET ${path} with page[offset]=${HARD_OFFSET_LIMIT + 1}: a server error past the soft offset limit`, {
          expected: 'a list page, or a refusal with a 4xx',
          actual: `status ${page.res.status}`,
          res: page.res,
        });
    },
  },
  {
    id: 'list.offset.soft-limit',
    clause: { at: 'limits', detail: 'Soft offset limit' },
    title: 'what page[offset] > 10,000 gets on the other lists (the contract does not say; a 5xx is noted here and fails list.offset.soft-limit-5xx)',
    appliesTo: (e) => !e.hardOffsetLimit,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      const page = await beyondHardLimit(ctx, e, path);
      if (page.res.status >= 500) fail('a server error past the soft offset limit', { expected: 'no 5xx', actual: `status ${page.res.status}`, res: page.res });
      ctx.note(`page[offset]=${HARD_OFFSET_LIMIT + 1} answered ${page.res.status} with ${page.records.length} record(s)`);
    },
  },
];
