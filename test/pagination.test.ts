// The pagination suite passes the reference server on every operation, names the records a
// traversal lost or repeated, and stays bounded on any target. (Mutants and variants:
// test/mutants.test.ts.)
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createReferenceHandler } from '../server/index.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { WAIVED } from '../suites/list/compare.js';
import { endpoints, paginationSettings, runChecks, runListChecks, TOKEN } from './support.js';

describe('against the reference server', () => {
  it('every list check passes on every operation, skipping only where the data cannot show the rule', async () => {
    const all = endpoints();
    const { results } = await runListChecks({}, all);
    expect(results).toHaveLength(expandListChecks(listChecks, all).length);
    expect(results.filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    const skips = results.filter((r) => r.outcome === 'skip');
    // The empty list skips what needs records; orders skip "past the end" (beyond the hard limit).
    for (const s of skips)
      expect(`${s.operation}: ${s.reason}`).toMatch(/^(catalog-rules|application-keys|custom-apis): (needs|not testable)|^orders: not testable: past the end/);
    expect(results.filter((r) => r.operation === 'accounts').every((r) => r.outcome === 'pass')).toBe(true);
  });
});

describe('evidence names the records', () => {
  it('names the records a keyset walk lost when ge behaves as gt', async () => {
    const { results } = await runListChecks({ faults: ['ge-as-gt'] }, endpoints(['accounts']));
    const r = results.find((x) => x.id === 'list.keyset.created-at')!;
    expect(r.outcome).toBe('fail');
    expect(r.evidence!.actual).toMatch(/keyset lost \d+ record\(s\): [0-9a-f-]{36} \(created_at /);
  });

  it('names the duplicated records when gt behaves as ge', async () => {
    const { results } = await runListChecks({ faults: ['gt-as-ge'] }, endpoints(['accounts']));
    const r = results.find((x) => x.id === 'list.keyset.id')!;
    expect(r.outcome).toBe('fail');
    expect(r.evidence!.actual).toMatch(/record\(s\) (read twice|were read before): [0-9a-f-]{36}/);
  });
});

/** A reference server that counts the requests each path (without its query) receives. */
async function countingServer(options: Parameters<typeof createReferenceHandler>[0]) {
  const { handler } = createReferenceHandler(options);
  const counts = new Map<string, number>();
  const urls: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    urls.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    urls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('choices the contract leaves open, on a list past 10,000 records', () => {
  it('a target refusing offsets over 10,000 on every list fails no MUST check', async () => {
    const { results } = await runListChecks({ variants: ['soft-limit-enforced'], records: 10_200 }, endpoints(['accounts']));
    expect(results.filter((r) => (r.level === 'MUST' && r.outcome === 'fail') || r.outcome === 'error').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
    const soft = results.find((r) => r.id === 'list.offset.soft-limit')!;
    expect(soft.notes?.join(' ')).toMatch(/answered 400/);
    // Offset walks stop at the limit; keyset traversal reads on, and counts the records.
    const total = results.find((r) => r.id === 'list.total.unfiltered')!;
    expect(total.outcome).toBe('pass');
    expect(total.notes?.join(' ')).toMatch(/counted by keyset traversal by id, offset traversal having stopped at an offset limit/);
    expect(results.find((r) => r.id === 'list.keyset.id')!.outcome).toBe('pass');
  });

  it('a list with the hard offset limit and more than 10,000 records is counted whole: its MUST checks pass, none skipped', async () => {
    const { results } = await runListChecks({ records: 10_200 }, endpoints(['orders']));
    expect(results.filter((r) => r.level === 'MUST' && r.outcome !== 'pass').map((r) => `${r.id}: ${r.outcome} ${r.reason}`)).toEqual([]);
  });
});

describe('bounded on any target', () => {
  it('never sends an operation more requests than its budget, and says how far a cut traversal got', async () => {
    const srv = await countingServer({ token: TOKEN, seed: 3 });
    try {
      const eps = endpoints(['orders', 'accounts']);
      const budget = 40;
      const { results } = await runChecks(srv.url, expandListChecks(listChecks, eps), { pagination: paginationSettings(eps, { budget }) });
      expect(srv.counts.get('/v2/orders')).toBeLessThanOrEqual(budget);
      expect(srv.counts.get('/v2/accounts')).toBeLessThanOrEqual(budget);
      expect(results.filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
      const cut = results.filter((r) => r.operation === 'orders' && /budget/.test(`${r.reason ?? ''} ${(r.notes ?? []).join(' ')}`));
      expect(cut.length).toBeGreaterThan(0);
    } finally {
      await srv.close();
    }
  });

  it('stops a traversal at the first page that does not advance', async () => {
    const srv = await countingServer({ token: TOKEN, seed: 3, faults: ['offset-ignored'] });
    try {
      const eps = endpoints(['accounts']);
      const { results } = await runChecks(srv.url, expandListChecks(listChecks, eps), { pagination: paginationSettings(eps) });
      const r = results.find((x) => x.id === 'list.offset.traversal')!;
      expect(r.outcome).toBe('fail');
      expect(r.reason).toMatch(/does not advance/);
      // Each offset walk asked for offset 100 once, then stopped.
      const second = srv.urls.filter((u) => /page\[offset\]=100(&|$)/.test(u) && !/filter=/.test(u));
      expect(second.length).toBeLessThanOrEqual(4);
    } finally {
      await srv.close();
    }
  });
});

describe('absent operations and parents', () => {
  it('skips an absent operation with the reason, and fails it under --require-all-endpoints', async () => {
    const eps = endpoints(['orders']);
    const absent = { behaviour: { absentPaths: ['/v2/orders'] } };
    const { results } = await runListChecks(absent, eps);
    expect(results.every((r) => r.outcome === 'skip' && r.reason === 'absent: GET /v2/orders answered 404')).toBe(true);
    const strict = await runListChecks(absent, eps, { requireAllEndpoints: true });
    expect(strict.results.find((r) => r.id === 'list.endpoint.present')!.outcome).toBe('fail');
  });

  it('skips a nested operation whose parent list gives no id, saying which', async () => {
    const { results } = await runListChecks({ behaviour: { absentPaths: ['/v2/flows'] } }, endpoints(['entries']));
    expect(new Set(results.map((r) => r.outcome))).toEqual(new Set(['skip']));
    expect(results[0]!.reason).toMatch(/no parent id for \{flowSlug\}: GET \/v2\/flows answered 404; set parents\.flowSlug/);
  });

  it('leaves records newer than the time buffer out of comparisons', async () => {
    // A two-year buffer leaves out half the records: the comparisons still run, on the rest.
    const { results } = await runListChecks({}, endpoints(['accounts']), { timeBufferMs: 183 * 24 * 3600 * 1000 });
    const keyset = results.filter((r) => r.id.startsWith('list.keyset.'));
    expect(keyset.map((r) => r.outcome)).toEqual(['pass', 'pass', 'pass']);
    expect(keyset.flatMap((r) => r.notes ?? [])).not.toContain(WAIVED);
  });

  it('on a store seeded just now, compares the records created before the run, and still catches lost ties', async () => {
    const eps = endpoints(['accounts']);
    const fresh = await runListChecks({ recentRecords: true }, eps);
    expect(fresh.results.filter((r) => r.outcome !== 'pass').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
    expect(fresh.results.find((r) => r.id === 'list.keyset.created-at')!.notes).toContain(WAIVED);
    const broken = await runListChecks({ recentRecords: true, faults: ['ge-as-gt'] }, eps);
    expect(broken.results.find((r) => r.id === 'list.keyset.created-at')!.outcome).toBe('fail');
    expect(broken.results.find((r) => r.id === 'list.filter.ge')!.outcome).toBe('fail');
  });
});
