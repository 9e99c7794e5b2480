// The parent search of a nested list (suites/list/target.ts) against a target of the test's own,
// whose parents are shaped at will: the list is judged under the parent holding the most records,
// each candidate read once with page[limit]=1, a wave at once; an operation is absent only
// when every parent tried answers 404; a skip for want of records says where the most were.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { CheckContext, RunContext, type Check, type CheckResult } from '../lib/runner/index.js';
import type { Endpoint } from '../lib/contract/index.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { START_LIMIT } from '../lib/transport/index.js';
import { resolvePath } from '../suites/list/target.js';
import { endpoints, listening, paginationSettings, runChecks, settingsFor } from './support.js';

const [PRICES] = endpoints(['prices']) as [Endpoint];
const BOOKS = Array.from({ length: 12 }, (_, i) => `pb${String(i + 1).padStart(2, '0')}`);

interface Shape {
  /** Records of each price book's prices; a book left out answers 404 (deleted, never filled). */
  sizes: Record<string, number>;
  /** Pages without meta.results.total. */
  noTotal?: boolean;
}

/** A target serving /pcm/pricebooks and the prices under each, recording what it was asked. */
async function target(shape: Shape) {
  const asked: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const page = (ids: string[], url: URL) => {
    const limit = Math.min(100, Number(url.searchParams.get('page[limit]') ?? 25));
    const offset = Number(url.searchParams.get('page[offset]') ?? 0);
    const data = ids.slice(offset, offset + limit).map((id, i) => {
      const at = new Date(Date.UTC(2025, 0, 1 + offset + i)).toISOString();
      return { id, type: 'record', meta: { timestamps: { created_at: at, updated_at: at } } };
    });
    const results = shape.noTotal ? {} : { results: { total: ids.length } };
    return { data, meta: { page: { limit, offset, current: Math.floor(offset / limit) + 1, total: Math.ceil(ids.length / limit) }, ...results }, links: {} };
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    asked.push(req.url!);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/pcm/pricebooks') return send(200, page(BOOKS, url));
    const m = /^\/pcm\/pricebooks\/([^/]+)\/prices$/.exec(url.pathname);
    const size = m ? shape.sizes[m[1]!] : undefined;
    if (size === undefined) return send(404, { errors: [{ title: 'Not Found', status: '404', detail: 'no such price book' }] });
    // A count (page[limit]=1, the search's read) answered a little later, so that counts issued at once overlap here.
    const counting = url.searchParams.get('page[limit]') === '1';
    if (counting) mostInFlight = Math.max(mostInFlight, ++inFlight);
    setTimeout(() => {
      if (counting) inFlight--;
      send(
        200,
        page(
          Array.from({ length: size }, (_, i) => `${m![1]}-price-${String(i).padStart(3, '0')}`),
          url,
        ),
      );
    }, 15);
  });
  const { url, close } = await listening(server);
  return { url, close, asked, mostInFlight: () => mostInFlight };
}

/** The list checks of `prices` against `url`. */
async function checks(url: string): Promise<Map<string, CheckResult>> {
  const { results } = await runChecks(url, expandListChecks(listChecks, [PRICES]), { pagination: paginationSettings([PRICES]) });
  return new Map(results.map((r) => [r.id, r]));
}

/** How the run resolves `prices` against `url`. */
async function resolved(url: string) {
  const { settings, dispose } = settingsFor(url, { pagination: paginationSettings([PRICES]) });
  const run = new RunContext(settings);
  try {
    const check: Check = { id: 'test.parents', area: 'pagination', clause: '', clauseLink: '', level: 'INFO', title: '', run: async () => undefined };
    return await resolvePath(new CheckContext(run, check), PRICES);
  } finally {
    await run.close();
    dispose();
  }
}

// Small books first, the biggest late, one deleted (404): pb10 holds the most.
const SIZES: Record<string, number> = { pb01: 0, pb02: 1, pb04: 2, pb05: 1, pb06: 3, pb07: 1, pb08: 2, pb09: 4, pb10: 7, pb11: 5, pb12: 1 };

describe('the parent search of a nested list', () => {
  it('judges the list under the parent holding the most records, each read once with page[limit]=1, a wave at once', async () => {
    const t = await target({ sizes: SIZES });
    try {
      const results = await checks(t.url);
      // Seven records show offsets (offset 1 of them: ListCheck.fewest).
      expect(results.get('list.offset.records')).toMatchObject({ outcome: 'pass', records: 7 });
      // The checks read the chosen list, not the one of the first book holding a record.
      expect(results.get('list.sort.created-at')!.outcome).toBe('pass');
      expect(results.get('list.endpoint.present')!.outcome).toBe('pass');
      // The parent list read once with a full page; every book's list counted with one record.
      expect(t.asked.filter((u) => u.startsWith('/pcm/pricebooks?'))).toEqual(['/pcm/pricebooks?page[limit]=100']);
      expect(t.asked.filter((u) => u.endsWith('/prices?page[limit]=1')).sort()).toEqual(BOOKS.map((b) => `/pcm/pricebooks/${b}/prices?page[limit]=1`));
      // Pages are memoised per run: nothing asked twice.
      expect(t.asked.filter((u, i) => t.asked.indexOf(u) !== i)).toEqual([]);
      // A wave's counts go at once, bounded by the HTTP client alone (it starts at START_LIMIT).
      expect(t.mostInFlight()).toBeGreaterThan(1);
      expect(t.mostInFlight()).toBeLessThanOrEqual(START_LIMIT);
    } finally {
      await t.close();
    }
  });

  it('without meta.results.total, counts the records a page of 100 serves', async () => {
    const t = await target({ sizes: SIZES, noTotal: true });
    try {
      expect(await resolved(t.url)).toEqual({ ok: true, path: '/pcm/pricebooks/pb10/prices', tried: 12 });
      expect(t.asked).toContain('/pcm/pricebooks/pb10/prices?page[limit]=100');
    } finally {
      await t.close();
    }
  });

  it('a skip for want of records names the records needed, those the richest parent held, and where', async () => {
    const t = await target({ sizes: { pb01: 0, pb02: 1, pb03: 0 } });
    try {
      const results = await checks(t.url);
      const where = '(the most of the 12 parents tried, GET /pcm/pricebooks/pb02/prices; set parents: in conformance.config.yaml to choose others)';
      expect(results.get('list.offset.records')).toMatchObject({
        outcome: 'skip',
        reason: `needs 2 records, found 1 ${where}`,
        records: 1,
        wantsRecords: true,
      });
      // One record shows ge and gt on its own value (this target ignores filters: gt fails).
      expect(results.get('list.filter.gt')!.outcome).toBe('fail');
    } finally {
      await t.close();
    }
  });

  it('a 404 under some parents is theirs: the operation is judged under another', async () => {
    const t = await target({ sizes: { pb12: 11 } });
    try {
      const results = await checks(t.url);
      expect(results.get('list.endpoint.present')!.outcome).toBe('pass');
      expect(results.get('list.offset.records')!.outcome).toBe('pass');
      expect([...results.values()].filter((r) => r.absent)).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('calls the operation absent only when every parent tried answers 404, saying how many were', async () => {
    const t = await target({ sizes: {} });
    try {
      const results = await checks(t.url);
      expect(results.get('list.endpoint.present')).toMatchObject({
        outcome: 'skip',
        absent: true,
        reason: 'absent: GET /pcm/pricebooks/pb01/prices answered 404 (under each of the 12 parents tried)',
      });
      expect(results.get('list.sort.created-at')).toMatchObject({ outcome: 'skip', absent: true });
    } finally {
      await t.close();
    }
  });
});
