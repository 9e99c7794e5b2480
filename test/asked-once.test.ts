// Each question asked once: a list request the run already sent is not sent again, a fixed
// probe's request that the exploration asks too is one exchange, and an operation read at several
// paths is one covering array, its rows shared out over the paths.
import { describe, expect, it, vi } from 'vitest';
import { HttpClient } from '../lib/transport/index.js';
import { startReferenceServer } from '../server/index.js';
import { coveringPlans } from '../suites/list/explore.js';
import { FIXED_ILLEGAL, fixedParam } from '../suites/list/invalid-params.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import type { CheckResult } from '../lib/runner/index.js';
import { endpoints, listModelOf, paginationSettings, runChecks, TOKEN } from './support.js';
import type { Rec } from '../suites/list/pages.js';

/**
 * The requests a run of list checks asks the HTTP client for, as it would send them: method, URL
 * and credential (a request the transport sends again after a lost answer is one request).
 */
async function sentBy(run: (url: string) => Promise<unknown>): Promise<string[]> {
  const server = await startReferenceServer({ token: TOKEN, seed: 3 });
  const sent: string[] = [];
  const original = HttpClient.prototype.request;
  const request = vi.spyOn(HttpClient.prototype, 'request').mockImplementation(function (this: HttpClient, spec, stats) {
    sent.push(`${spec.method} ${this.url(spec.path, spec.query)} ${JSON.stringify(spec.auth ?? 'token')}`);
    return original.call(this, spec, stats);
  });
  try {
    await run(server.url);
  } finally {
    request.mockRestore();
    await server.close();
  }
  return sent;
}

describe('each question asked once', () => {
  it('sends no list request twice: the probes, the traversals, the parent search and the exploration share every exchange', async () => {
    const eps = endpoints(['customers', 'hierarchies@latest', 'hierarchies@by-release']);
    let results: CheckResult[] = [];
    const sent = await sentBy(async (url) => {
      ({ results } = await runChecks(url, expandListChecks(listChecks, eps), { explore: 20, pagination: paginationSettings(eps) }));
    });
    expect(results.filter((r) => r.outcome === 'fail' || r.outcome === 'error')).toEqual([]);
    const repeated = [...new Set(sent.filter((s, i) => sent.indexOf(s) !== i))];
    expect(repeated).toEqual([]);
    // The nine invalid parameters, once each on the path the check probes: asked by the probe and
    // judged by the exploration's illegal side too.
    for (const { plan } of FIXED_ILLEGAL) {
      const [name, value] = fixedParam(plan);
      const q = `${name}=${encodeURIComponent(value).replace(/%3A/gi, ':')}`;
      expect(sent.filter((s) => s.includes('/v2/customers?') && s.includes(`?${q} `)).length, q).toBe(1);
    }
    const note = (op: string): string => results.find((r) => r.id === 'list.sort.id' && r.operation === op)!.notes!.find((n) => n.startsWith('explored: '))!;
    // One array for the two paths of hierarchies, each asking its own rows.
    expect(note('hierarchies@latest')).toMatch(
      /a covering array of \d+ requests \((\d+) of \1 pairs of conditions covered; \d+ more on the operation's other path/,
    );
    expect(note('customers')).toMatch(/a covering array of \d+ requests \((\d+) of \1 pairs of conditions covered\)/);
  });

  it('shares one covering array out over an operation paths: together as many rows as the array, each path its own', () => {
    const base = Date.UTC(2026, 0, 1);
    const records: Rec[] = Array.from({ length: 40 }, (_, i) => {
      const raw = new Date(base + Math.floor(i / 3) * 1000).toISOString();
      return { id: `0000${String(i).padStart(4, '0')}-0000-4000-8000-000000000000`, createdRaw: raw, updatedRaw: raw };
    }).map((r) => ({
      ...r,
      created: `1${String(Date.parse(r.createdRaw)).padStart(16, '0')}.000000000`,
      updated: `1${String(Date.parse(r.updatedRaw)).padStart(16, '0')}.000000000`,
    }));
    const m = listModelOf(records);
    const alone = coveringPlans(m, 7);
    const first = coveringPlans(m, 7, { paths: 2, index: 0 });
    const second = coveringPlans(m, 7, { paths: 2, index: 1 });
    expect(alone.covered).toBe(alone.pairs);
    expect(first.covered).toBe(first.pairs);
    expect(first.rows).toBe(second.rows);
    expect(first.plans.length + second.plans.length).toBe(first.rows);
    // The path is one more condition: the pairs grow, the rows hardly (two paths alone: twice as many).
    expect(first.pairs).toBeGreaterThan(alone.pairs);
    expect(first.rows).toBeLessThan(alone.plans.length * 1.5);
    for (const plans of [first.plans, second.plans]) {
      // Every limit kind and every sort on each path.
      expect(
        new Set(plans.map((p) => (p.limit === undefined ? 'absent' : p.limit === 1 ? 'one' : p.limit === 100 ? 'hundred' : p.limit > 100 ? 'over' : 'some')))
          .size,
      ).toBeGreaterThanOrEqual(5);
      expect(new Set(plans.map((p) => (p.sort ? `${p.sort.descending ? '-' : ''}${p.sort.attr}` : '')))).toEqual(
        new Set(['', 'created_at', '-created_at', 'updated_at', '-updated_at', 'id', '-id']),
      );
    }
  });
});
