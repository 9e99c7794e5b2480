// The same request in other spellings, and id filter values over the whole domain of ids
// (suites/list/spellings.ts, explore.ts): spelled requests are sent exactly as written and judged
// as the literal one; values no record has are judged only where every allowed collation agrees;
// the two mutants that break them (raw-query-match, id-filter-cursor) are caught, and servers that
// read a query in the ways mainstream parsers do pass.
import { createServer, request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HttpResponse } from '../lib/transport/index.js';
import { Secrets } from '../lib/evidence/index.js';
import type { Observed } from '../lib/runner/index.js';
import { judgeTraffic } from '../suites/observed.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { judge } from '../suites/list/judge.js';
import { paramsOf, predict, queryOfUrl, type ListModel, type ListQuery } from '../suites/list/model.js';
import { idOrdersFollowed, stepId } from '../suites/list/collation.js';
import { spell, spelledQuery, type Spelling } from '../suites/list/spellings.js';
import { instantKey, type ListPage, type Rec } from '../suites/list/pages.js';
import { endpoints, listening, listModelOf, paginationSettings, runChecks, runListChecks, withServer } from './support.js';

const OPS = ['accounts'];

const Q: ListQuery = {
  sort: { attr: 'created_at', descending: true },
  filters: [
    { op: 'ge', attr: 'created_at', value: '2026-01-01T00:00:00.5+05:30' },
    { op: 'gt', attr: 'id', value: 'rec_0001' },
  ],
  limit: 5,
  offset: 10,
};

describe('a request in another spelling', () => {
  const spellings: Spelling[] = [
    { brackets: 'upper', punctuation: 'raw', order: 0 },
    { brackets: 'lower', punctuation: 'lower', order: 1 },
    { brackets: 'raw', punctuation: 'upper', space: '+', order: 2 },
    { brackets: 'upper', punctuation: 'lower', space: '%20', order: 3 },
  ];

  it('is written as client libraries write it', () => {
    expect(spell(Q, spellings[0]!)).toBe(
      'sort=-created_at&filter=ge(created_at,2026-01-01T00:00:00.5%2B05:30):gt(id,rec_0001)&page%5Blimit%5D=5&page%5Boffset%5D=10',
    );
    expect(spell(Q, spellings[1]!)).toBe(
      'filter=ge%28created_at%2c2026-01-01T00%3a00%3a00.5%2B05%3a30%29%3agt%28id%2crec_0001%29&page%5blimit%5d=5&page%5boffset%5d=10&sort=-created_at',
    );
    const spaced = spelledQuery(Q, spellings[2]!);
    expect(spaced.filters.map((t) => t.value)).toEqual(['2026-01-01 00:00:00.5+05:30', 'rec_0001']);
    expect(spell(spaced, spellings[2]!)).toBe(
      'page[limit]=5&page[offset]=10&sort=-created_at&filter=ge%28created_at%2C2026-01-01+00%3A00%3A00.5%2B05%3A30%29%3Agt%28id%2Crec_0001%29',
    );
  });

  it('reads back as the literal request, as a mainstream parser and the judge of traffic read it', () => {
    for (const s of spellings) {
      const literal = spelledQuery(Q, s);
      const sent = spell(literal, s);
      expect(Object.fromEntries(new URLSearchParams(sent))).toEqual(Object.fromEntries(Object.entries(paramsOf(literal)).map(([k, v]) => [k, String(v)])));
      expect(queryOfUrl(`http://t/v2/accounts?${sent}`), sent).toEqual(literal);
      // The T written as a space names the same instant.
      expect(literal.filters.map((t) => (t.attr === 'id' ? t.value : instantKey(t.value)))).toEqual(
        Q.filters.map((t) => (t.attr === 'id' ? t.value : instantKey(t.value))),
      );
    }
  });
});

describe('an observed request with encoded brackets (conformance proxy, judge)', () => {
  const observed = (query: string, records: number): Observed => {
    const data = Array.from({ length: records }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      meta: { timestamps: { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' } },
    }));
    const body = JSON.stringify({ data, meta: { page: { limit: records, offset: 0, current: 1, total: Math.ceil(40 / records) }, results: { total: 40 } } });
    return {
      method: 'GET',
      url: `http://t.example/v2/accounts?${query}`,
      requestHeaders: { authorization: 'Bearer t' },
      status: 200,
      responseHeaders: { 'content-type': 'application/json' },
      responseBody: body,
      bodyBytes: body.length,
      startedAt: Date.parse('2026-11-24T12:00:00.000Z'),
      durationMs: 2,
    };
  };
  const failing = (x: Observed): string[] =>
    judgeTraffic([x], { endpoints: endpoints(OPS) }, new Secrets())
      .results.filter((r) => r.outcome === 'fail')
      .map((r) => r.id);

  it('is judged as the literal one: page%5Blimit%5D=5 answered with 25 records fails as page[limit]=5 does', () => {
    for (const q of ['page[limit]=5', 'page%5Blimit%5D=5', 'page%5blimit%5d=5']) {
      expect(failing(observed(q, 5)), q).toEqual([]);
      expect(failing(observed(q, 25)), q).toContain('list.limit.exact');
    }
  });
});

// --- Ids no record has ----------------------------------------------------------------

const rec = (id: string, day: number): Rec => {
  const raw = `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
  return { id, createdRaw: raw, updatedRaw: raw, created: instantKey(raw), updated: instantKey(raw) };
};

function model(records: Rec[]): ListModel {
  const orders = idOrdersFollowed(records);
  return listModelOf(records, { idOrder: orders[0]!, idOrders: orders });
}

function page(records: Rec[], total = records.length): ListPage {
  const res = { status: 200, exchange: { bodyExcerpt: '{}' } } as unknown as HttpResponse;
  return { res, ok: true, records, meta: { page: { limit: 25, offset: 0, current: 1, total: total ? 1 : 0 }, results: { total } }, violations: [] };
}

describe('id filter values over the whole domain', () => {
  it('steps an id within its own kind of characters, hex ids staying hex', () => {
    expect(stepId('0f3a-ff', 1, true)).toBe('0f3b-00');
    expect(stepId('0f3a-00', -1, true)).toBe('0f39-ff');
    expect(stepId('rec_0009zz', 1, false)).toBe('rec_0010aa');
    expect(stepId('99', 1, false)).toBe('100');
    expect(stepId('0', -1, false)).toBeUndefined();
    expect(stepId('ffff', 1, true)).toBeUndefined();
    expect(stepId('0F39-FF', 1, true)).toBe('0F3A-00');
  });

  it('judges a value between two records, and past the last, as every collation allowed does', () => {
    const rs = [rec('a1', 1), rec('a3', 2), rec('b1', 3)];
    const m = model(rs);
    const gt: ListQuery = { filters: [{ op: 'gt', attr: 'id', value: 'a2' }] };
    expect(predict(m, gt).selected.map((r) => r.id)).toEqual(['a3', 'b1']);
    expect(judge(m, gt, page(rs.slice(1)))).toEqual([]);
    // A store that looks the value up as a cursor and, not finding it, matches everything.
    expect(judge(m, gt, page(rs)).map((d) => d.checkId)).toContain('list.filter.gt');
    const past: ListQuery = { filters: [{ op: 'ge', attr: 'id', value: 'b2' }] };
    expect(judge(m, past, page([], 0))).toEqual([]);
    expect(judge(m, past, page(rs)).map((d) => d.checkId)).toContain('list.filter.ge');
  });

  it('judges an id the allowed collations place apart only where they agree: no false alarm on either', () => {
    // Sorted a, B, c: case-insensitive and locale collations both allowed, code units not.
    const rs = [rec('a', 1), rec('B', 2), rec('c', 3)];
    const m = model(rs);
    expect(m.idOrders!.length).toBe(2);
    // `_b`: before every record case-insensitively, between a and B where punctuation is ignored.
    const q: ListQuery = { filters: [{ op: 'ge', attr: 'id', value: '_b' }] };
    expect(predict(m, q).opaque).toBe(true);
    expect(judge(m, q, page(rs))).toEqual([]);
    expect(judge(m, q, page(rs.slice(1)))).toEqual([]);
  });
});

// --- Against servers -------------------------------------------------------------------

/**
 * A front of the reference server that records each request target as it came, and hands it on
 * with its query as `reread` reads it (undefined: as it came).
 */
async function front(upstream: string, reread?: (search: string) => string): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const target = req.url ?? '/';
    seen.push(target);
    const at = target.indexOf('?');
    const path = at < 0 || !reread ? target : `${target.slice(0, at)}?${reread(target.slice(at + 1))}`;
    const out = httpRequest(`${upstream}${path}`, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(out);
  });
  const l = await listening(server);
  return { ...l, seen };
}

/** A query written again with literal brackets after reading it as `decode` does. */
const rewritten = (decode: (s: string) => string) => (search: string) =>
  search
    .split('&')
    .map((p) => {
      const eq = p.indexOf('=');
      return `${decode(p.slice(0, eq))}=${encodeURIComponent(decode(p.slice(eq + 1)))}`;
    })
    .join('&');

async function explored(reread?: (search: string) => string) {
  return withServer({ seed: 3 }, async (server) => {
    const f = await front(server.url, reread);
    try {
      const eps = endpoints(OPS);
      const { results } = await runChecks(f.url, expandListChecks(listChecks, eps), { explore: 48, pagination: paginationSettings(eps) });
      return { results, seen: f.seen };
    } finally {
      await f.close();
    }
  });
}

const failed = (results: ReadonlyArray<{ id: string; outcome: string; reason?: string }>) =>
  results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.reason ?? ''}`);

describe('spellings and ids against servers', () => {
  it('sends each spelling exactly as written, and a server that reads it as the literal passes', async () => {
    const { results, seen } = await explored();
    expect(failed(results)).toEqual([]);
    expect(seen.some((t) => t.includes('page%5Blimit%5D='))).toBe(true);
    expect(seen.some((t) => /page%5b(limit|offset)%5d=/.test(t))).toBe(true);
    expect(seen.some((t) => /filter=ge%28|filter=gt%28/i.test(t))).toBe(true);
    expect(results.some((r) => r.notes?.some((n) => /48 legal and \d+ illegal draw.*; 12 of the legal draws sent in other spellings/.test(n)))).toBe(true);
  }, 60_000);

  it('passes a server that reads + as a plus (refusing the timestamp it then cannot read) and one that decodes as URLSearchParams does', async () => {
    const plus = await explored(rewritten((s) => decodeURIComponent(s)));
    expect(plus.seen.some((t) => /\d{4}-\d\d-\d\d\+\d\d(%3A|:)/i.test(t))).toBe(true);
    expect(failed(plus.results)).toEqual([]);
    const decoding = await explored((s) => new URLSearchParams(s).toString().replace(/%5B/g, '[').replace(/%5D/g, ']'));
    expect(failed(decoding.results)).toEqual([]);
  }, 120_000);

  it('catches raw-query-match by a spelled request, shown exactly as sent, and id-filter-cursor by ids no record has', async () => {
    const raw = await runListChecks({ faults: ['raw-query-match'] }, endpoints(OPS), { exploreOnly: true }, { explore: 48 });
    const hit = raw.results.find((r) => r.outcome === 'fail' && r.reason?.includes('found by drawn requests in other spellings'));
    expect(hit, failed(raw.results).join('; ')).toBeTruthy();
    expect(hit!.evidence!.request).toMatch(/%5B|%5b|%28|%3A/i);
    expect(hit!.reason).toMatch(/sent spelled \?/);
    const cursor = await runListChecks({ faults: ['id-filter-cursor'] }, endpoints(OPS), { exploreOnly: true }, { explore: 48 });
    expect(cursor.results.filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^list\.filter\.g[et]$/)]),
    );
  }, 120_000);
});
