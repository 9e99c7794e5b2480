// The model of a list and the exploration of its query space (suites/list/model.ts,
// explore.ts): what the judge holds an answer to, what it leaves open, how a live list is
// read, and the exploration end to end against the reference server (in-process; the selftest
// runs the same mutants through the CLI).
import { createServer, request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { HttpResponse } from '../lib/transport/index.js';
import { FAULTS, VARIANTS } from '../server/index.js';
import { drawsPerPath, isoAt } from '../suites/list/explore.js';
import { predict, queryOfUrl, type ListModel, type ListQuery } from '../suites/list/model.js';
import { judge } from '../suites/list/judge.js';
import { instantKey, type ListPage, type Rec } from '../suites/list/pages.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { cli, endpoints, listening, listModelOf, paginationSettings, runChecks, runListChecks } from './support.js';

// --- A small model, by hand ------------------------------------------------------------

const at = (s: string): string => instantKey(s)!;
const rec = (id: string, created: string, updated = created): Rec => ({
  id,
  createdRaw: created,
  updatedRaw: updated,
  created: at(created),
  updated: at(updated),
});

/** Six records; b and c tie on created_at. */
const RECORDS = [
  rec('a', '2026-01-01T00:00:01.000Z'),
  rec('b', '2026-01-01T00:00:02.000Z'),
  rec('c', '2026-01-01T00:00:02.000Z'),
  rec('d', '2026-01-01T00:00:03.000Z'),
  rec('e', '2026-01-01T00:00:04.000Z'),
  rec('f', '2026-01-01T00:00:05.000Z'),
];

function model(over: Partial<ListModel> = {}): ListModel {
  return listModelOf(RECORDS, over);
}

/** A 200 list page as pages.ts reads one. */
function page(records: Rec[], meta: { limit: number; offset: number; current: number; total: number; results: number }, status = 200): ListPage {
  const res = { status, exchange: { bodyExcerpt: '{}' } } as unknown as HttpResponse;
  return {
    res,
    ok: status === 200,
    records,
    meta: { page: { limit: meta.limit, offset: meta.offset, current: meta.current, total: meta.total }, results: { total: meta.results } },
    violations: [],
  };
}

const byId = (...ids: string[]): Rec[] => ids.map((id) => RECORDS.find((r) => r.id === id)!);
const rules = (m: ListModel, q: ListQuery, p: ListPage): string[] => judge(m, q, p).map((d) => d.checkId);

describe('the judge', () => {
  it('agrees with an answer that is right, whichever order tied records come in', () => {
    const q: ListQuery = { sort: { attr: 'created_at', descending: false }, filters: [], limit: 2, offset: 1 };
    expect(rules(model(), q, page(byId('b', 'c'), { limit: 2, offset: 1, current: 1, total: 3, results: 6 }))).toEqual([]);
    expect(rules(model(), q, page(byId('c', 'b'), { limit: 2, offset: 1, current: 2, total: 3, results: 6 }))).toEqual([]);
  });

  it('holds every member: the records at the offset, results.total, offset, current, total and the count', () => {
    const q: ListQuery = { sort: { attr: 'created_at', descending: false }, filters: [], limit: 2, offset: 2 };
    const right = { limit: 2, offset: 2, current: 2, total: 3, results: 6 };
    expect(rules(model(), q, page(byId('c', 'd'), right))).toEqual([]);
    expect(rules(model(), q, page(byId('d', 'e'), right))).toEqual(['list.offset.records']);
    expect(rules(model(), q, page(byId('c', 'd'), { ...right, results: 7 }))).toContain('list.total.unfiltered');
    expect(rules(model(), q, page(byId('c', 'd'), { ...right, offset: 0 }))).toEqual(['list.page.arithmetic']);
    expect(rules(model(), q, page(byId('c', 'd'), { ...right, current: 3 }))).toEqual(['list.page.arithmetic']);
    expect(rules(model(), q, page(byId('c', 'd'), { ...right, total: 6 }))).toEqual(['list.page.arithmetic']);
    expect(rules(model(), q, page(byId('c'), right))).toEqual(['list.limit.exact']);
    expect(rules(model(), q, page(byId('d', 'c'), right))).toContain('list.sort.created-at');
  });

  it('between multiples of the limit, current may be the floor or the ceiling; with no result, 0 or 1', () => {
    const q: ListQuery = { sort: { attr: 'created_at', descending: false }, filters: [], limit: 4, offset: 3 };
    for (const current of [1, 2]) expect(rules(model(), q, page(byId('d', 'e', 'f'), { limit: 4, offset: 3, current, total: 2, results: 6 }))).toEqual([]);
    expect(rules(model(), q, page(byId('d', 'e', 'f'), { limit: 4, offset: 3, current: 4, total: 2, results: 6 }))).toEqual(['list.page.arithmetic']);
    const none: ListQuery = { filters: [{ op: 'gt', attr: 'created_at', value: '2030-01-01T00:00:00Z' }], limit: 4, offset: 8 };
    for (const n of [0, 1]) expect(rules(model(), none, page([], { limit: 4, offset: 8, current: n, total: n, results: 0 }))).toEqual([]);
  });

  it('compares filter values as instants, whatever their spelling, and names the operator broken', () => {
    const between: ListQuery = { filters: [{ op: 'ge', attr: 'created_at', value: '2026-01-01T05:30:02.500+05:30' }] };
    expect(
      predict(model(), between)
        .selected.map((r) => r.id)
        .sort(),
    ).toEqual(['d', 'e', 'f']);
    expect(rules(model(), between, page(byId('d', 'e', 'f'), { limit: 25, offset: 0, current: 1, total: 1, results: 3 }))).toEqual([]);
    // A target that cut the value to the second returns b and c, shown earlier than it.
    expect(rules(model(), between, page(byId('b', 'c', 'd', 'e', 'f'), { limit: 25, offset: 0, current: 1, total: 1, results: 5 }))).toEqual(
      expect.arrayContaining(['list.filter.ge', 'list.total.filtered']),
    );
    // One page holds the whole result: a record it lacks is one the filter lost.
    expect(rules(model(), between, page(byId('d', 'e'), { limit: 25, offset: 0, current: 1, total: 1, results: 2 }))).toEqual(
      expect.arrayContaining(['list.total.filtered', 'list.filter.ge']),
    );
  });

  it('judges a refusal of a legal request not at all, and a 5xx as a failure of what was asked', () => {
    const q: ListQuery = { sort: { attr: 'updated_at', descending: true }, filters: [] };
    expect(rules(model(), q, page([], { limit: 0, offset: 0, current: 0, total: 0, results: 0 }, 400))).toEqual([]);
    expect(rules(model(), q, page([], { limit: 0, offset: 0, current: 0, total: 0, results: 0 }, 503))).toEqual(['list.sort.descending']);
  });

  it('past the hard offset limit: no record, whatever else, and a refusal (the SHOULD); past the soft one: only the page size', () => {
    const q: ListQuery = { filters: [], limit: 5, offset: 10_001 };
    const meta = { limit: 5, offset: 10_001, current: 2001, total: 2, results: 6 };
    expect(rules(model({ hardOffsetLimit: true }), q, page(byId('a'), meta))).toEqual(['list.offset.hard-limit', 'list.offset.hard-limit-error']);
    // An empty page keeps the MUST; only a refusal keeps the SHOULD.
    expect(rules(model({ hardOffsetLimit: true }), q, page([], meta))).toEqual(['list.offset.hard-limit-error']);
    expect(rules(model(), q, page(byId('a'), meta))).toEqual([]);
  });

  it('a live list: a record the model never read withdraws what rests on the records read', () => {
    const q: ListQuery = { sort: { attr: 'created_at', descending: false }, filters: [], limit: 3, offset: 4 };
    const g = rec('g', '2026-11-24T10:00:00.000Z');
    // e, f and a record created since: results.total 7, not the model's 6; nothing else wrong.
    expect(rules(model(), q, page([...byId('e', 'f'), g], { limit: 3, offset: 4, current: 2, total: 3, results: 7 }))).toEqual([]);
    // Still held: the order, the filter, the page's own numbers.
    expect(rules(model(), q, page([g, ...byId('e', 'f')], { limit: 3, offset: 4, current: 2, total: 3, results: 7 }))).toEqual(['list.sort.created-at']);
  });

  it('records newer than the horizon widen what results.total may be, instead of failing', () => {
    const m = model({ fresh: new Set(['f']) });
    const q: ListQuery = { filters: [{ op: 'gt', attr: 'created_at', value: '2026-01-01T00:00:03Z' }] };
    // f may not be visible to the filter yet (eventual consistency): 1 or 2 both pass.
    expect(predict(m, q)).toMatchObject({ low: 1, high: 2 });
    expect(rules(m, q, page(byId('e'), { limit: 25, offset: 0, current: 1, total: 1, results: 1 }))).toEqual([]);
    expect(rules(m, q, page(byId('e', 'f'), { limit: 25, offset: 0, current: 1, total: 1, results: 2 }))).toEqual([]);
    expect(rules(m, q, page(byId('e', 'f'), { limit: 25, offset: 0, current: 1, total: 1, results: 3 }))).toContain('list.total.filtered');
  });

  it('a window of a list too large to read: positions past what was read are not predicted', () => {
    const m = model({ complete: false, total: 1000, known: { created_at: at('2026-01-01T00:00:04.000Z'), updated_at: null, id: null } });
    const q: ListQuery = { sort: { attr: 'created_at', descending: false }, filters: [], limit: 5, offset: 3 };
    const p = predict(m, q);
    expect(p.exact).toBe(4);
    expect([p.low, p.high]).toEqual([6, 1000]);
    // Position 3 is d; what follows is not known.
    expect(
      rules(
        m,
        q,
        page([...byId('d', 'e', 'f'), rec('x', '2026-01-01T00:00:09Z'), rec('y', '2026-01-01T00:00:09Z')], {
          limit: 5,
          offset: 3,
          current: 1,
          total: 200,
          results: 1000,
        }),
      ),
    ).toEqual([]);
  });
});

describe('--explore-only', () => {
  it('proves nothing alone: not with --certify, not with --explore 0, one line and exit 2 each', async () => {
    const certify = await cli(['--explore-only', '--certify', 'bundle']);
    expect(certify.code).toBe(2);
    expect(certify.stderr.split('\n')[0]).toBe("conformance: --explore-only turns the list checks' fixed probes off: it does not go with --certify");
    const none = await cli(['--explore-only', '--explore', '0']);
    expect(none.code).toBe(2);
    expect(none.stderr.split('\n')[0]).toBe('conformance: --explore-only needs drawn requests, and --explore is 0');
  });

  it('a list check whose rule no drawn answer broke skips: it was not proved', async () => {
    const { results } = await runListChecks({}, endpoints(['accounts']), { exploreOnly: true }, { explore: 8 });
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(r.outcome, r.id).toBe('skip');
      expect(r.reason).toMatch(/^explore only: no drawn answer broke this rule/);
    }
  });
});

describe('a traversal page read back as a request', () => {
  it('gives the query the model judges it by, or nothing when it lies outside that space', () => {
    expect(
      queryOfUrl('http://t/v2/orders?sort=-updated_at&filter=ge(created_at%2C2026-01-01T00:00:00%2B05:30):gt(id,abc)&page[limit]=100&page[offset]=200'),
    ).toEqual({
      sort: { attr: 'updated_at', descending: true },
      filters: [
        { op: 'ge', attr: 'created_at', value: '2026-01-01T00:00:00+05:30' },
        { op: 'gt', attr: 'id', value: 'abc' },
      ],
      limit: 100,
      offset: 200,
    });
    expect(queryOfUrl('http://t/v2/orders')).toEqual({ filters: [] });
    for (const url of ['http://t/x?sort=name', 'http://t/x?filter=eq(id,1)', 'http://t/x?page[limit]=abc', 'http://t/x?include=all'])
      expect(queryOfUrl(url), url).toBeUndefined();
  });
});

describe('filter values', () => {
  it('are written as the instants they are, in UTC or at an offset, with as many fraction digits as needed', () => {
    const ps = BigInt(Date.parse('2026-03-04T05:06:07.000Z')) * 10n ** 9n + 123_456_000n;
    expect(isoAt(ps, 3)).toBe('2026-03-04T05:06:07.000123456Z');
    expect(isoAt(ps - 123_456_000n, 0)).toBe('2026-03-04T05:06:07Z');
    expect(isoAt(ps - 123_456_000n, 3, 330)).toBe('2026-03-04T10:36:07.000+05:30');
    for (const [digits, offset] of [
      [0, undefined],
      [3, -300],
      [6, 545],
      [9, 0],
    ] as const) {
      expect(instantKey(isoAt(ps, digits, offset))).toBe(instantKey('2026-03-04T05:06:07.000123456Z'));
    }
  });
});

describe('the draws of an operation', () => {
  it('are --explore N per operation, shared by its paths, each path at least one, whatever the run selects', () => {
    const all = endpoints();
    const hierarchies = all.filter((e) => e.operation === 'hierarchy-nodes');
    expect(hierarchies.length).toBe(2);
    for (const e of hierarchies) {
      expect(e.paths).toBe(2);
      expect(drawsPerPath(20, e)).toBe(10);
      expect(drawsPerPath(1, e)).toBe(1);
    }
    expect(
      drawsPerPath(
        20,
        all.find((e) => e.key === 'accounts')!,
      ),
    ).toBe(20);
    expect(drawsPerPath(0, hierarchies[0]!)).toBe(0);
    // One path selected alone still draws its share, so a replay of it asks the same questions.
    expect(endpoints(['hierarchy-nodes@by-release'])[0]!.paths).toBe(2);
  });
});

// --- End to end, in-process --------------------------------------------------------------

const OPS = ['accounts', 'hierarchy-nodes@by-release'];
/** What failed, but for the warnings the variants named declare (server/variants.ts, `warns`): the one place that says what a variant may show. */
const failed = (results: CheckResult[], variants: readonly string[] = []): string[] => {
  const warns = new Set(VARIANTS.filter((v) => variants.includes(v.name)).flatMap((v) => v.warns));
  return results
    .filter((r) => (r.outcome === 'fail' || r.outcome === 'error') && !(r.outcome === 'fail' && r.level !== 'MUST' && warns.has(r.id)))
    .map((r) => `${r.id} [${r.operation}]: ${r.reason}`);
};

describe('the exploration against the reference server', () => {
  it('finds nothing on the conforming server and on the variants it must allow, and says what it drew', async () => {
    for (const variants of [
      [],
      ['current-rounds-up'],
      ['filter-values-own-spelling'],
      ['timestamps-mixed-offsets'],
      ['list-ids-numeric-as-string'],
      ['first-parent-empty'],
      ['lenient-parameters'],
    ]) {
      const { results } = await runListChecks({ variants }, endpoints(OPS), {}, { explore: 48 });
      expect(failed(results, variants), variants.join()).toEqual([]);
      const note = results.find((r) => r.id === 'list.sort.id' && r.operation === 'accounts')!.notes!.find((n) => n.startsWith('explored: '));
      // Every pair of conditions covered, 48 legal and 34 illegal draws, and tie walks.
      expect(note, variants.join()).toMatch(
        /^explored: \d+ request\(s\) \(a covering array of \d+ requests \((\d+) of \1 pairs of conditions covered\), 48 legal and 34 illegal draw\(s\), [1-9]\d* tie walk\(s\)\)/,
      );
    }
  });

  // With the fixed probes too, each of these mutants is caught by a check it names in
  // mutants.test.ts (every mutant, through the CLI): here the exploration alone, one test each.
  const written = FAULTS.filter((f) => f.explored && f.caughtBy.some((id) => id.startsWith('list.')));
  it('has the mutants written for it', () => expect(written.length).toBeGreaterThanOrEqual(8));

  it.each(written.map((f) => [f.name, f] as const))('catches %s alone, with the shrunk request as evidence', async (_, f) => {
    const { results } = await runListChecks({ faults: [f.name] }, endpoints([...OPS, ...(f.operations ?? [])]), { exploreOnly: true }, { explore: 48 });
    const hit = results.filter((r) => r.outcome === 'fail' && f.caughtBy.includes(r.id));
    expect(hit.length, `${f.name} (explore only): ${failed(results).join('; ')}`).toBeGreaterThan(0);
    const found = hit.find((r) => r.reason?.includes('found by '));
    expect(found, f.name).toBeTruthy();
    expect(found!.evidence!.request).toMatch(/^curl -i -X GET '/);
    expect(found!.evidence!.expected).toBeTruthy();
    expect(found!.evidence!.actual).toBeTruthy();
  });

  it('draws the same requests and shrinks to the same one for the same seed', async () => {
    const one = await runListChecks({ faults: ['filter-value-to-second'] }, endpoints(['accounts']), { exploreOnly: true }, { explore: 48 });
    const two = await runListChecks({ faults: ['filter-value-to-second'] }, endpoints(['accounts']), { exploreOnly: true }, { explore: 48 });
    // Each run has a server of its own: its port aside, and its clock (the reference server dates
    // its records from the moment it starts, to the second: two servers a second apart differ).
    const clockless = (s: string | undefined) =>
      s?.replace(/127\.0\.0\.1:\d+/, 'HOST').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, 'TIME');
    const shown = (rs: CheckResult[]) => rs.map((r) => [r.id, r.outcome, clockless(r.reason), clockless(r.evidence?.request), r.notes?.map(clockless)]);
    const a = shown(one.results);
    const b = shown(two.results);
    for (const [i, x] of a.entries()) expect(b[i], String(x[0])).toEqual(x);
  });

  it('--explore 0: the list checks are what they were, and say the exploration is off', async () => {
    const { results } = await runListChecks({ faults: ['filter-value-to-second'] }, endpoints(['accounts']), {}, { explore: 0 });
    expect(failed(results)).toEqual([]);
    expect(results.every((r) => !r.notes?.some((n) => n.startsWith('explored')))).toBe(true);
  });

  it('a live list: records created while the run reads never raise a false alarm', async () => {
    // A front of the reference server that, from its 60th request on, shows one record more on
    // /v2/accounts: created now, last in every ascending order, counted in results.total, shown
    // on the last page; descending and filtered reads do not show it yet (eventual consistency).
    await withLiveFront(async (url) => {
      const eps = endpoints(['accounts']);
      const { results } = await runChecks(url, expandListChecks(listChecks, eps), { explore: 96, pagination: paginationSettings(eps, { exploreOnly: true }) });
      expect(failed(results)).toEqual([]);
      expect(results.some((r) => r.notes?.some((n) => /^explored: \d+ request\(s\) \(.*, 96 legal and 63 illegal draw\(s\)/.test(n)))).toBe(true);
    });
  });
});

/** The reference server behind a front that makes /v2/accounts live (see the test above). */
async function withLiveFront(work: (url: string) => Promise<void>): Promise<void> {
  const { startReferenceServer } = await import('../server/index.js');
  const { TOKEN } = await import('./support.js');
  const upstream = await startReferenceServer({ token: TOKEN, seed: 3 });
  let seen = 0;
  const now = new Date().toISOString();
  const born = {
    id: 'ffffffff-ffff-4fff-8fff-ffffffffffff',
    type: 'accounts',
    name: 'New',
    slug: 'new',
    meta: { timestamps: { created_at: now, updated_at: now } },
  };
  const front = createServer((req, res) => {
    seen++;
    const up = httpRequest(`${upstream.url}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        let body = Buffer.concat(chunks).toString();
        const u = new URL(req.url!, 'http://x');
        const sort = u.searchParams.get('sort') ?? '';
        if (seen > 60 && u.pathname === '/v2/accounts' && r.statusCode === 200 && !u.searchParams.has('filter') && !sort.startsWith('-')) {
          const j = JSON.parse(body) as { data: unknown[]; meta: { page: { limit: number; offset: number; total: number }; results: { total: number } } };
          const { limit, offset } = j.meta.page;
          const total = j.meta.results.total + 1;
          if (offset + j.data.length === total - 1 && j.data.length < limit) j.data.push(born);
          j.meta.results.total = total;
          j.meta.page.total = Math.ceil(total / limit);
          body = JSON.stringify(j);
        }
        res.writeHead(r.statusCode!, { 'content-type': r.headers['content-type'] ?? 'application/json' });
        res.end(body);
      });
    });
    req.pipe(up);
  });
  const l = await listening(front);
  try {
    await work(l.url);
  } finally {
    await l.close();
    await upstream.close();
  }
}
