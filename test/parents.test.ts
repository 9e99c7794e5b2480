// Nested lists under more than one parent (suites/list/target.ts): a list whose first
// parent has no children is searched under others before it is called empty, a list is judged
// under the parent holding the most records, a 404 under one parent is not the operation's,
// and a bug that lives only under later parents is seen. The reference server's knobs for it:
// firstParentEmpty (variant first-parent-empty), storeShape 'realistic' (variant
// realistic-store) and ListFaultScope.parents 'later' (server/lists.ts).
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { CheckContext, RunContext, type Check, type CheckResult } from '../lib/runner/index.js';
import { loadCatalogSpec, type Endpoint } from '../lib/contract/index.js';
import { observeEmpty } from '../reporters/verdict.js';
import { runThroughCli, SAMPLE } from '../selftest/index.js';
import type { RunningServer } from '../server/index.js';
import { exploredPaths, MAX_PARENTS, resolvePath } from '../suites/list/target.js';
import { endpoints, paginationSettings, runListChecks, settingsFor, TOKEN, withServer } from './support.js';

const NESTED = ['hierarchy-nodes@by-release', 'node-products'];
const PLAIN = ['accounts', 'catalogs'];

/** A result as it reads, for comparing two runs (durations and transport aside). */
const shown = (r: CheckResult) => ({
  id: r.id,
  operation: r.operation,
  outcome: r.outcome,
  reason: r.reason,
  records: r.records,
  notes: r.notes,
  wantsRecords: r.wantsRecords,
});

/** The first record's id of a list of `server`. */
async function firstId(server: RunningServer, path: string): Promise<string> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { data: Array<{ id: string }> }).data[0]!.id;
}

/** resolvePath and exploredPaths of `e` in a run of their own against `server`. */
async function paths(server: RunningServer, e: Endpoint, parents = loadCatalogSpec().parents) {
  const { settings, dispose } = settingsFor(server.url, { pagination: paginationSettings([e], { parents }) });
  const run = new RunContext(settings);
  try {
    const check: Check = { id: 'test.parents', area: 'pagination', clause: '', clauseLink: '', level: 'INFO', title: '', run: async () => undefined };
    const ctx = new CheckContext(run, check);
    return { resolved: await resolvePath(ctx, e), explored: await exploredPaths(ctx, e) };
  } finally {
    await run.close();
    dispose();
  }
}

describe('a nested list whose first parent has no children (first-parent-empty)', () => {
  it('is judged under a parent that has some: its list checks no longer skip for want of records', async () => {
    const { results } = await runListChecks({ variants: ['first-parent-empty'] }, endpoints(NESTED));
    expect(results.filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    expect(results.filter((r) => r.wantsRecords).map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    for (const op of NESTED) expect(observeEmpty(results, op).observed).toBe('records');
  });

  it('changes nothing on lists without placeholders', async () => {
    const eps = endpoints(PLAIN);
    const plain = await runListChecks({}, eps);
    const variant = await runListChecks({ variants: ['first-parent-empty'] }, eps);
    expect(variant.results.map(shown)).toEqual(plain.results.map(shown));
    expect(plain.results.filter((r) => r.outcome !== 'pass' && r.outcome !== 'skip')).toEqual([]);
    // Their resolution reads nothing: the path as it is, and no parent list asked for.
    await withServer({ seed: 3 }, async (server) => {
      for (const e of eps) expect(await paths(server, e)).toEqual({ resolved: { ok: true, path: e.path }, explored: [e.path] });
    });
  });

  it('under the conforming server, takes a combination of parents that holds records, having read several', async () => {
    await withServer({ seed: 3 }, async (server) => {
      const [e] = endpoints(['hierarchy-nodes@by-release']) as [Endpoint];
      const { resolved } = await paths(server, e);
      expect(resolved).toMatchObject({
        ok: true,
        path: expect.stringMatching(/^\/pcm\/catalogs\/[^/]+\/releases\/latestPublished\/hierarchies\/[^/]+\/nodes$/),
      });
      // Two parent lists of about 130 records, four of each read: 16 combinations.
      expect(resolved.ok && resolved.tried).toBe(16);
      expect(resolved.ok && resolved.emptyUnder).toBeUndefined();
    });
  });
});

describe('a nested list empty under every parent tried', () => {
  it('skips for want of records saying how many parents were tried, and stays seen empty', async () => {
    // The catalog fixed to the first one (a configured parent): every hierarchy under it is empty, and the search stops at MAX_PARENTS.
    const first = await withServer({ seed: 3, variants: ['first-parent-empty'] }, (server) => firstId(server, '/pcm/catalogs'));
    const parents = { ...loadCatalogSpec().parents, catalog_id: { value: first } };
    const op = 'hierarchy-nodes@by-release';
    const { results } = await runListChecks({ variants: ['first-parent-empty'] }, endpoints([op]), { parents });
    const sort = results.find((r) => r.id === 'list.sort.created-at')!;
    const where = `(under each of the ${MAX_PARENTS} parents tried; set parents: in conformance.config.yaml to choose others)`;
    expect(sort).toMatchObject({ outcome: 'skip', reason: `needs 2 records, found 0 ${where}`, records: 0, wantsRecords: true });
    expect(results.find((r) => r.id === 'list.offset.records')!.reason).toBe(`needs 10 records, found 0 ${where}`);
    const skips = results.filter((r) => r.wantsRecords);
    expect(skips.length).toBeGreaterThan(5);
    expect(skips.filter((r) => !(r.records === 0 && r.reason!.endsWith(` ${where}`))).map((r) => `${r.id}: ${r.records} ${r.reason}`)).toEqual([]);
    expect(results.filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
    expect(observeEmpty(results, op).observed).toBe('empty');
  });
});

describe('exploredPaths', () => {
  it("gives several distinct parent combinations holding records, the target's own path first", async () => {
    const [hn, np] = endpoints(NESTED) as [Endpoint, Endpoint];
    await withServer({ seed: 3 }, async (server) => {
      const { resolved, explored } = await paths(server, hn);
      expect(explored).toHaveLength(2);
      expect(new Set(explored).size).toBe(2);
      expect(explored[0]).toBe(resolved.ok && resolved.path);
      for (const p of explored) expect(p).toMatch(/^\/pcm\/catalogs\/[^/]+\/releases\/latestPublished\/hierarchies\/[^/]+\/nodes$/);
    });
    await withServer({ seed: 3, variants: ['first-parent-empty'] }, async (server) => {
      for (const e of [hn, np]) {
        const { resolved, explored } = await paths(server, e);
        expect(resolved.ok && resolved.emptyUnder).toBeUndefined();
        expect(explored[0]).toBe(resolved.ok && resolved.path);
        expect(new Set(explored).size).toBeGreaterThanOrEqual(2);
        for (const p of explored) {
          const res = await fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } });
          expect(((await res.json()) as { data: unknown[] }).data.length, p).toBeGreaterThan(0);
        }
      }
    });
  });
});

describe("faults under later parents only (ListFaultScope.parents 'later')", () => {
  it('the reference server applies them only where a placeholder is not the first record of its parent list', async () => {
    // The fault without firstParentEmpty: the first parents' list holds records, and is right.
    await withServer({ seed: 3, faults: ['nested-later-parents-total-ignores-filter'], behaviour: { firstParentEmpty: false } }, async (server) => {
      const get = async (path: string) =>
        (await (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
          data: Array<{ id: string }>;
          meta: { results: { total: number } };
        };
      const catalogs = (await get('/pcm/catalogs')).data.map((r) => r.id);
      const hierarchies = (await get('/catalog/hierarchies')).data.map((r) => r.id);
      const nothing = '?filter=gt(created_at,9999-12-31T23:59:59.000Z)';
      const nodes = (c: string, h: string) => `/pcm/catalogs/${c}/releases/latestPublished/hierarchies/${h}/nodes${nothing}`;
      expect((await get(nodes(catalogs[0]!, hierarchies[0]!))).meta.results.total).toBe(0);
      expect((await get(nodes(catalogs[0]!, hierarchies[1]!))).meta.results.total).toBeGreaterThan(0);
      expect((await get(nodes(catalogs[1]!, hierarchies[0]!))).meta.results.total).toBeGreaterThan(0);
      // Not nested: out of the fault's paths.
      expect((await get(`/pcm/catalogs${nothing}`)).meta.results.total).toBe(0);
    });
  });

  it.each([
    ['nested-later-parents-total-ignores-filter', ['list.total.filtered']],
    ['nested-later-parents-sort-ignored', ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id']],
  ])('%s: the fixed checks catch it on hierarchy-nodes@by-release (no exploration)', async (fault, checks) => {
    const { results } = await runListChecks({ faults: [fault] }, endpoints(['hierarchy-nodes@by-release']));
    expect(results.filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(expect.arrayContaining(checks));
  });
});

describe('a store shaped as real ones grow (realistic-store)', () => {
  const get = async (server: RunningServer, path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as { data?: Array<{ id: string }>; meta?: { results: { total: number } }; errors?: unknown[] } };
  };

  it('the oldest catalog was never published: every by-release path under it answers 404 with the Error shape, under the others it serves', async () => {
    await withServer({ seed: 3, variants: ['realistic-store'] }, async (server) => {
      const catalogs = (await get(server, '/pcm/catalogs')).body.data!.map((r) => r.id);
      const fill = (path: string, catalog: string) => path.replace('{catalog_id}', catalog).replace('{release_id}', 'latestPublished');
      const byRelease = endpoints().filter((e) => e.variant === 'by-release');
      expect(byRelease).toHaveLength(9);
      for (const e of byRelease) {
        // The other placeholders from a later record of their lists: whether they exist is not the question.
        let path = fill(e.path, catalogs[0]!);
        for (const name of e.placeholders.filter((n) => n !== 'catalog_id' && n !== 'release_id')) {
          const from = (loadCatalogSpec().parents[name] as { from: string }).from;
          path = path.replace(`{${name}}`, (await get(server, from)).body.data![3]!.id);
        }
        const unpublished = await get(server, path);
        expect(unpublished.status, path).toBe(404);
        expect(unpublished.body.errors, path).toHaveLength(1);
        expect((await get(server, path.replace(catalogs[0]!, catalogs[5]!))).status, path).toBe(200);
      }
    });
  });

  it('judges a nested list under the parent holding the most records, not the first holding any', async () => {
    await withServer({ seed: 3, variants: ['realistic-store'] }, async (server) => {
      const books = (await get(server, '/pcm/pricebooks')).body.data!.map((r) => r.id);
      const totals = await Promise.all(books.map(async (b) => (await get(server, `/pcm/pricebooks/${b}/prices`)).body.meta!.results.total));
      // The first holds nothing, the next ones a single record, the big one comes last.
      expect(totals.slice(0, 3)).toEqual([0, 1, 1]);
      expect(totals[3]).toBeGreaterThan(100);
      const [e] = endpoints(['prices']) as [Endpoint];
      const { resolved, explored } = await paths(server, e);
      expect(resolved).toEqual({ ok: true, path: `/pcm/pricebooks/${books[3]}/prices`, tried: 4 });
      // The exploration reads it under a second, smaller parent too.
      expect(explored).toEqual([`/pcm/pricebooks/${books[3]}/prices`, `/pcm/pricebooks/${books[1]}/prices`]);
    });
  });

  it('through the CLI: no operation absent, and the same MUST checks skipped as with the default data', async () => {
    const all = endpoints().map((e) => e.key);
    const [plain, realistic] = await Promise.all([runThroughCli(main, {}, all, 11), runThroughCli(main, { variants: ['realistic-store'] }, all, 11)]);
    const mustSkips = (results: CheckResult[]) =>
      results
        .filter((r) => r.level === 'MUST' && r.outcome === 'skip')
        .map((r) => `${r.id} [${r.operation ?? ''}] ${r.reason}`)
        .sort();
    expect(plain.code, plain.output.join('\n')).toBe(0);
    expect(realistic.code, realistic.output.join('\n')).toBe(0);
    expect(realistic.results.filter((r) => r.absent).map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    expect(mustSkips(realistic.results)).toEqual(mustSkips(plain.results));
    expect(mustSkips(plain.results).length).toBeGreaterThan(0);
  }, 120_000);
});

describe('through the CLI (dist/: npm run build first)', () => {
  const SEED = 11;
  const failing = (results: CheckResult[]) => results.filter((r) => r.outcome === 'fail').map((r) => `${r.id} ${r.operation}`);

  it('the variant first-parent-empty exits 0', async () => {
    const run = await runThroughCli(main, { variants: ['first-parent-empty'] }, SAMPLE, SEED);
    expect(run.code, run.output.join('\n')).toBe(0);
  }, 60_000);

  it.each([
    ['nested-later-parents-total-ignores-filter', ['list.total.filtered']],
    ['nested-later-parents-sort-ignored', ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id']],
    // realistic-store's shape: the first catalog unpublished, the first parents holding one record or none.
    ['big-parents-sort-ignored', ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id']],
    ['published-catalogs-total-ignores-filter', ['list.total.filtered']],
  ])(
    '%s exits 1, caught by its checks on the nested operation',
    async (fault, checks) => {
      const run = await runThroughCli(main, { faults: [fault] }, SAMPLE, SEED);
      expect(run.code, run.output.join('\n')).toBe(1);
      expect(failing(run.results)).toEqual(expect.arrayContaining(checks.map((id) => `${id} hierarchy-nodes@by-release`)));
    },
    60_000,
  );
});
