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
import { exploredPaths, resolvePath } from '../suites/list/target.js';
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
        path: expect.stringMatching(/^\/pcm\/catalogs\/[^/]+\/releases\/[^/]+\/hierarchies\/[^/]+\/nodes$/),
      });
      // A first wave of combinations, spread over the richest releases' hierarchies: enough,
      // as one holds more than a page of records.
      expect(resolved.ok && resolved.tried).toBeGreaterThan(1);
      expect(resolved.ok && resolved.emptyUnder).toBeUndefined();
    });
  });
});

describe('a nested list empty under every parent tried', () => {
  it('skips for want of records saying how many parents were tried, and stays seen empty', async () => {
    // The hierarchy fixed to the first one (a configured parent): the nodes under it are empty.
    const first = await withServer({ seed: 3, variants: ['first-parent-empty'] }, (server) => firstId(server, '/catalog/hierarchies'));
    const parents = { ...loadCatalogSpec().parents, catalog_hierarchy_id: { value: first } };
    const op = 'hierarchy-nodes@latest';
    const { results } = await runListChecks({ variants: ['first-parent-empty'] }, endpoints([op]), { parents });
    const sort = results.find((r) => r.id === 'list.sort.created-at')!;
    const where = `(under the one parent tried; set parents: in conformance.config.yaml to choose others)`;
    expect(sort).toMatchObject({ outcome: 'skip', reason: `needs 2 records, found 0 ${where}`, records: 0, wantsRecords: true });
    expect(results.find((r) => r.id === 'list.offset.records')!.reason).toBe(`needs 2 records, found 0 ${where}`);
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
      for (const p of explored) expect(p).toMatch(/^\/pcm\/catalogs\/[^/]+\/releases\/[^/]+\/hierarchies\/[^/]+\/nodes$/);
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
      const nothing = '?filter=gt(created_at,9999-12-31T23:59:59.000Z)';
      const catalogs = (await get('/pcm/catalogs')).data.map((r) => r.id);
      // Each catalog's first release, and the hierarchies of its own it holds.
      const hierarchies = async (c: string) => `/pcm/catalogs/${c}/releases/${(await get(`/pcm/catalogs/${c}/releases`)).data[0]!.id}/hierarchies`;
      const [under0, under1] = await Promise.all(catalogs.slice(0, 2).map(hierarchies));
      const [first, second] = await Promise.all([under0!, under1!].map(async (h) => (await get(h)).data.map((r) => r.id)));
      const nodes = (h: string, id: string) => `${h}/${id}/nodes${nothing}`;
      expect((await get(nodes(under0!, first![0]!))).meta.results.total).toBe(0);
      expect((await get(nodes(under0!, first![1]!))).meta.results.total).toBeGreaterThan(0);
      expect((await get(nodes(under1!, second![0]!))).meta.results.total).toBeGreaterThan(0);
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
      const byRelease = endpoints().filter((e) => e.variant === 'by-release');
      expect(byRelease).toHaveLength(9);
      // The third catalog is published (server/list-data.ts): each nested placeholder from a later
      // record of its own release's list, as the lists chain.
      const release = (catalog: string) => `/pcm/catalogs/${catalog}/releases/latestPublished`;
      for (const e of byRelease) {
        let path = e.path.replace('/pcm/catalogs/{catalog_id}/releases/{release_id}', release(catalogs[2]!));
        for (const name of e.placeholders.filter((n) => n !== 'catalog_id' && n !== 'release_id')) {
          const list = path.slice(0, path.indexOf(`/{${name}}`));
          path = path.replace(`{${name}}`, (await get(server, list)).body.data![3]!.id);
        }
        expect((await get(server, path)).status, path).toBe(200);
        const unpublished = await get(server, path.replace(release(catalogs[2]!), release(catalogs[0]!)));
        expect(unpublished.status, path).toBe(404);
        expect(unpublished.body.errors, path).toHaveLength(1);
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

  it('few-published: a by-release nested list is found under a published catalog, not the first, in a release of its own', async () => {
    await withServer({ seed: 3, variants: ['few-published'] }, async (server) => {
      const catalogs = (await get(server, '/pcm/catalogs')).body.data!.map((r) => r.id);
      for (const key of ['hierarchy-nodes@by-release', 'products-by-node@by-release', 'product-children@by-release']) {
        const [e] = endpoints([key]) as [Endpoint];
        const { resolved } = await paths(server, e);
        expect(resolved.ok && resolved.emptyUnder, key).toBeUndefined();
        const path = resolved.ok ? resolved.path : '';
        const [, catalog, release] = /^\/pcm\/catalogs\/([^/]+)\/releases\/([^/]+)\//.exec(path) ?? [];
        expect([1, 3, 6], path).toContain(catalogs.indexOf(catalog!));
        const releases = (await get(server, `/pcm/catalogs/${catalog}/releases`)).body.data as Array<{ id: string; meta: { release_status: string } }>;
        expect(releases.find((r) => r.id === release)?.meta.release_status, path).toBe('PUBLISHED');
        expect((await get(server, path)).body.meta!.results.total, path).toBeGreaterThan(0);
      }
    });
  });

  it('through the CLI: no operation absent, and the same MUST checks skipped as with the default data', async () => {
    const all = endpoints().map((e) => e.key);
    const [plain, realistic, few] = await Promise.all([
      runThroughCli(main, {}, all, 11),
      runThroughCli(main, { variants: ['realistic-store'] }, all, 11),
      runThroughCli(main, { variants: ['few-published'] }, all, 11),
    ]);
    expect(few.code, few.output.join('\n')).toBe(0);
    expect(few.results.filter((r) => r.absent).map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    const mustSkips = (results: CheckResult[]) =>
      results
        .filter((r) => r.level === 'MUST' && r.outcome === 'skip')
        .map((r) => `${r.id} [${r.operation ?? ''}] ${r.reason}`)
        .sort();
    expect(plain.code, plain.output.join('\n')).toBe(0);
    expect(realistic.code, realistic.output.join('\n')).toBe(0);
    expect(realistic.results.filter((r) => r.absent).map((r) => `${r.id} [${r.operation}]: ${r.reason}`)).toEqual([]);
    expect(mustSkips(realistic.results)).toEqual(mustSkips(plain.results));
    expect(mustSkips(few.results)).toEqual(mustSkips(plain.results));
    expect(mustSkips(plain.results).length).toBeGreaterThan(0);
  }, 300_000);
});

describe('through the CLI (dist/: npm run build first)', () => {
  const SEED = 11;
  const failing = (results: CheckResult[]) => results.filter((r) => r.outcome === 'fail').map((r) => `${r.id} ${r.operation}`);
  const NESTED = 'hierarchy-nodes@by-release';

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
      // The nested operation and the list checks alone: what the test is about (the whole sample,
      // every check, runs against each of these mutants in mutants.test.ts).
      const run = await runThroughCli(main, { faults: [fault] }, [NESTED], SEED, ['--grep', 'list.']);
      expect(run.code, run.output.join('\n')).toBe(1);
      expect(failing(run.results)).toEqual(expect.arrayContaining(checks.map((id) => `${id} ${NESTED}`)));
    },
    60_000,
  );
});
