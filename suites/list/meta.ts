// The operation is there, and its pagination fields are present and integer on every list
// response, including ones with zero records (spec/contract/README.md#pagination-information:
// present even when the result is empty; #lists.meta).
import { expectErrorBody, expectStatus, fail } from '../../lib/runner/index.js';
import type { WrittenListCheck } from './list-check.js';
import { expectInvalidPagingAnswer, expectListMeta, metaInt, pagination, query, readPage, readPagesAtOnce, refusesFeature } from './pages.js';
import { answered404, defaultPageLength, resolvePath, target } from './target.js';
import { HARD_OFFSET_LIMIT } from './walks.js';
import { expectRule, findingOf, PHASE, type PageRule } from './answer.js';
import { readingsFor } from './readings.js';
import { FIXED_ILLEGAL, fixedParam, PAST_2_64, PAST_2_64_WRAPPED } from './invalid-params.js';

export const FAR_FUTURE = '9999-12-31T23:59:59.000Z';

/** A 200 answer is a list, and its pagination fields are there as integers (past an offset limit, only its being a list). */
const fields: PageRule = (a) => {
  if (a.kind === 'not-a-list')
    return [a.finding('a 200 answer that is not a list', 'a JSON object whose data is an array', a.page.res.exchange.bodyExcerpt, PHASE.answer)];
  if (!a.listed) return undefined;
  return a.kind === 'malformed' ? a.malformedFor('list.meta.fields') : [];
};

/** An empty filtered page still has its pagination fields, and counts nothing: results.total 0, page.total 0 or 1. */
const emptyFilter: PageRule = (a) => {
  if ((a.kind !== 'malformed' && a.kind !== 'page') || a.n !== 0 || !a.q.filters.length) return undefined;
  if (a.kind === 'malformed') return a.malformedFor('list.meta.empty-filter');
  const pages = a.meta.pageCount;
  if (a.offset > 0 || (a.total === 0 && (pages === 0 || pages === 1))) return [];
  return [
    a.finding(
      'zero records, but the totals count others',
      'meta.results.total 0 and meta.page.total 0 or 1',
      `meta.results.total ${a.total}, meta.page.total ${pages}`,
      PHASE.total,
    ),
  ];
};

/** Past the end: no record, the pagination fields still there. */
const pastEnd: PageRule = (a) => {
  if (a.kind === 'server-error') return a.serverErrorFor('list.meta.past-end');
  if (a.kind !== 'malformed' && a.kind !== 'page') return undefined;
  const held = a.n === 0 && a.offset > 0;
  if (a.kind === 'malformed') return held ? a.malformedFor('list.meta.past-end') : undefined;
  const broken = a.countFor('list.meta.past-end');
  return broken.length || held ? broken : undefined;
};

/** An answer to invalid paging parameters: never a 5xx; a refusal with the Error shape, or a well-formed page of at most 100 records. */
const invalid = (page: Parameters<typeof expectInvalidPagingAnswer>[0], what: string) => {
  try {
    expectInvalidPagingAnswer(page, what);
    return undefined;
  } catch (err) {
    return findingOf(err, PHASE.answer);
  }
};

export const metaChecks: WrittenListCheck[] = [
  {
    id: 'list.endpoint.present',
    clause: { at: 'list-endpoints' },
    title: 'the operation answers its collection with a list (absent operations skip unless --require-all-endpoints)',
    whole: "the operation's presence: its collection asked once, its parents resolved first",
    async run(ctx, e) {
      const r = await resolvePath(ctx, e);
      if (!r.ok) return ctx.skip(r.reason);
      const probe = await readPage(ctx, e, r.path);
      if (probe.res.status === 404) {
        if (!pagination(ctx).requireAllEndpoints) ctx.skipAbsent(`absent: ${answered404(r)}`);
        ctx.absent = true;
        fail(`${e.name} is absent`, { expected: 'the operation is served (--require-all-endpoints)', actual: answered404(r), res: probe.res });
      }
      expectStatus(probe.res, 200, `GET ${r.path}`);
      if (!probe.ok)
        fail('the answer is not a list', { expected: 'a JSON object whose data is an array', actual: probe.res.exchange.bodyExcerpt, res: probe.res });
    },
  },
  {
    id: 'list.meta.fields',
    clause: { at: 'pagination-information' },
    title: 'meta.page.limit/offset/current/total and meta.results.total are non-negative integers',
    page: fields,
    async run(ctx, e) {
      const { path, probe } = await target(ctx, e);
      expectListMeta(probe, `GET ${path}`);
      await expectRule(ctx, e, path, probe, fields);
    },
  },
  {
    id: 'list.meta.empty-filter',
    clause: { at: 'pagination-information' },
    title: 'a filter that matches nothing gets zero records with the pagination fields, results.total 0 and page.total 0 or 1',
    page: emptyFilter,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      const filter = `gt(created_at,${FAR_FUTURE})`;
      const page = await readPage(ctx, e, path, { filter });
      if (refusesFeature(page)) ctx.skip(`unsupported: filter=${filter} answered ${page.res.status}`);
      expectListMeta(page, `GET ${path} with filter=${filter}`);
      if (page.records.length > 0) ctx.skip(`not testable: filter=${filter} matched ${page.records.length} records (see list.filter.gt)`);
      // Present is not enough: the totals of nothing are nothing (results.total counts after
      // the filter; with zero results, page.total may be 0 or 1).
      await expectRule(ctx, e, path, page, emptyFilter);
    },
  },
  {
    id: 'list.meta.past-end',
    clause: { at: 'pagination-information' },
    title: 'an offset past the end gets zero records with the pagination fields',
    page: pastEnd,
    async run(ctx, e) {
      const { path, probe } = await target(ctx, e);
      const total = metaInt(probe, 'results.total');
      if (total === undefined) return ctx.skip('not testable: the first page has no meta.results.total (see list.meta.fields)');
      let offset = total + 100;
      let params: Record<string, string | number> = { 'page[offset]': offset };
      if (offset > HARD_OFFSET_LIMIT) {
        // Past the end of this list lies past 10,000, where offsets may be refused: go past
        // the end of a filtered, empty listing instead.
        offset = 100;
        params = { filter: `gt(created_at,${FAR_FUTURE})`, 'page[offset]': offset };
      }
      const page = await readPage(ctx, e, path, params);
      if (params.filter && refusesFeature(page))
        ctx.skip(`not testable: past the end of ${total} records lies past 10,000, and filter=${params.filter} answered ${page.res.status}`);
      if (page.res.status >= 400 && page.res.status < 500) {
        // spec/contract/README.md#lists.meta holds 200 answers to the fields; a refusal must still
        // be an Error.
        expectErrorBody(page.res, `GET ${path} with ${query(params)}`);
        ctx.note(`page[offset]=${offset} past the end answered ${page.res.status}`);
        return;
      }
      expectListMeta(page, `GET ${path} with ${query(params)}`);
      // Past the end of what the first page counted, whatever this page counts.
      if (page.records.length)
        fail('records served past the end', {
          expected: `0 records at offset ${offset} (results.total ${params.filter ? 0 : total})`,
          actual: `${page.records.length} records`,
          res: page.res,
        });
      await expectRule(ctx, e, path, page, pastEnd);
    },
  },
  {
    id: 'list.params.invalid',
    clause: { at: 'list-endpoints' },
    title:
      'parameters the contract does not define (page[limit]/page[offset] negative, 0 for limit, not a number, past 2^64; a sort on an unknown attribute; a filter not closed) never get a 5xx, a refusal carries the Error shape, and a page served for one is right for a reading of it',
    illegal: invalid,
    async run(ctx, e) {
      const { path, probe } = await target(ctx, e);
      // The exploration asks the same (FIXED_ILLEGAL): one exchange each, judged by both.
      const cases = FIXED_ILLEGAL.map(({ plan }) => fixedParam(plan));
      const pages = readPagesAtOnce(
        ctx,
        e,
        path,
        cases.map(([name, value]) => ({ [name]: value })),
      );
      for (const [i, [name, value]] of cases.entries()) {
        const page = await pages[i]!;
        const what = `GET ${path} with ${name}=${value}`;
        const broken = invalid(page, what);
        if (broken) fail(broken.message, { expected: broken.expected, actual: broken.actual, res: page.res });
        if (page.res.status !== 200 || value !== PAST_2_64 || (name !== 'page[limit]' && name !== 'page[offset]')) continue;
        // A page for a number past 2^64: the limit clamped to 100, the offset past the end (no
        // record), or either ignored where spec/contract/query-readings.yaml lets a parser that
        // cannot hold it ignore it; never the number read as another (wrapped).
        const ignorable = readingsFor('plain', value, name).has('ignored');
        const { value: length } = await defaultPageLength(ctx);
        if (name === 'page[offset]' && page.records.length) {
          // Ignored: meta.page.offset 0, and not the records at 5, where 2^64 + 5 wraps (compared
          // with the first page read before, not asked to be the same: a list the run writes to
          // may have moved since).
          const at = PAST_2_64_WRAPPED;
          const wrapped = probe.records.length > at && page.records.every((r, j) => r.id === probe.records[at + j]?.id);
          const asFirst = ignorable && metaInt(page, 'page.offset') === 0 && !wrapped;
          if (!asFirst)
            fail(`${what}: records served for an offset past every list's end, and not as the offset ignored`, {
              expected: `a refusal with a 4xx, or no record (past the end)${ignorable ? ', or the first page (the offset ignored: meta.page.offset 0)' : ''}`,
              actual: `${page.records.length} record(s), meta.page.offset ${String(page.meta?.page?.offset)}`,
              res: page.res,
            });
        }
        const limit = metaInt(page, 'page.limit');
        if (name === 'page[limit]' && limit !== 100 && !(ignorable && limit === length))
          fail(`${what}: the limit read as another number`, {
            expected: `a refusal with a 4xx, or meta.page.limit 100 (clamped)${ignorable ? ` or ${length} (the default)` : ''}`,
            actual: `meta.page.limit ${limit}`,
            res: page.res,
          });
      }
    },
  },
];
