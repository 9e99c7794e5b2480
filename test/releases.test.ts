// The reference server's catalog releases (server/list-data.ts): each catalog lists its own
// releases with meta.release_status; a by-release path takes a published release of that
// catalog, or latestPublished (its newest published one, served from the same collection); the
// lists nested under a release take only that release's own hierarchies, nodes and products,
// as the contract's lists chain (parentSourceIn). The stores: the plain one (every release
// published), realistic-store and few-published, and the by-release-offset-shift fault.
import { describe, expect, it } from 'vitest';
import { loadCatalogSpec, type ParentSource } from '../lib/contract/index.js';
import type { RunningServer } from '../server/index.js';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { endpoints, paginationSettings, runChecks, TOKEN, withServer } from './support.js';

interface Release {
  id: string;
  meta: { release_status: string; timestamps: { created_at: string } };
}
interface Answer {
  status: number;
  body: { data?: Array<Release & { id: string }>; meta?: { results: { total: number } }; errors?: Array<{ status: string }> };
}

async function get(server: RunningServer, path: string): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

const ids = async (server: RunningServer, path: string): Promise<string[]> => (await get(server, path)).body.data!.map((r) => r.id);
const releasesOf = async (server: RunningServer, catalog: string): Promise<Release[]> => (await get(server, `/pcm/catalogs/${catalog}/releases`)).body.data!;
/** A published release of each catalog, oldest first (the list's default order is created_at). */
const published = (releases: readonly Release[]): string[] => releases.filter((r) => r.meta.release_status === 'PUBLISHED').map((r) => r.id);

/** A 404 with the contract's Error shape. */
function expectNotFound(a: Answer, path: string): void {
  expect(a.status, path).toBe(404);
  expect(a.body.errors?.[0]?.status, path).toBe('404');
}

/** The places, in the catalogs' list, of the catalogs with a published release. */
async function publishedPlaces(server: RunningServer): Promise<number[]> {
  const catalogs = await ids(server, '/pcm/catalogs?page[limit]=100');
  const places = await Promise.all(catalogs.map(async (c, i) => (published(await releasesOf(server, c)).length ? i : -1)));
  return places.filter((i) => i >= 0);
}

describe("a catalog's releases (seed 5)", () => {
  it('are a list like any other, each with a meta.release_status; in the plain store every one is published', async () => {
    await withServer({ seed: 5 }, async (server) => {
      const [catalog] = await ids(server, '/pcm/catalogs');
      const all = await releasesOf(server, catalog!);
      expect(all.length).toBeGreaterThan(1);
      expect(new Set(all.map((r) => r.meta.release_status))).toEqual(new Set(['PUBLISHED']));
      const page = await get(server, `/pcm/catalogs/${catalog}/releases?page[limit]=1&page[offset]=1&sort=-created_at`);
      expect(page.body.meta!.results.total).toBe(all.length);
      expect(page.body.data!.map((r) => r.id)).toEqual([all.at(-2)!.id]);
      expectNotFound(await get(server, '/pcm/catalogs/no-such-catalog/releases'), 'unknown catalog');
    });
  });

  it('latestPublished serves the records of the newest published release, the same collection, nested lists included', async () => {
    await withServer({ seed: 5, variants: ['few-published'] }, async (server) => {
      const catalogs = await ids(server, '/pcm/catalogs');
      for (const place of [1, 3, 6]) {
        const c = catalogs[place]!;
        const releases = await releasesOf(server, c);
        const newest = published(releases).at(-1)!;
        const at = (release: string, rest = 'hierarchies') => `/pcm/catalogs/${c}/releases/${release}/${rest}`;
        // The links echo the path asked: the records and their numbers are the same.
        const served = async (path: string) => {
          const { status, body } = await get(server, path);
          return { status, data: body.data, meta: body.meta };
        };
        const hierarchies = await served(at(newest));
        expect(await served(at('latestPublished'))).toEqual(hierarchies);
        const h = hierarchies.data![3]!.id;
        expect(await served(at('latestPublished', `hierarchies/${h}/nodes`))).toEqual(await served(at(newest, `hierarchies/${h}/nodes`)));
      }
    });
  });

  it('a release of another catalog, or not published, answers 404 with the Error shape', async () => {
    await withServer({ seed: 5, variants: ['few-published'] }, async (server) => {
      const catalogs = await ids(server, '/pcm/catalogs');
      const [first, other] = [catalogs[1]!, catalogs[3]!];
      const releases = await releasesOf(server, first);
      const unpublished = releases.filter((r) => r.meta.release_status !== 'PUBLISHED').map((r) => r.id);
      expect(unpublished.length).toBeGreaterThan(0);
      for (const r of unpublished) expectNotFound(await get(server, `/pcm/catalogs/${first}/releases/${r}/hierarchies`), `unpublished ${r}`);
      for (const r of published(releases)) {
        expect((await get(server, `/pcm/catalogs/${first}/releases/${r}/products`)).status).toBe(200);
        expectNotFound(await get(server, `/pcm/catalogs/${other}/releases/${r}/products`), `${r} under another catalog`);
      }
      // A catalog never published has no latestPublished.
      expectNotFound(await get(server, `/pcm/catalogs/${catalogs[0]}/releases/latestPublished/nodes`), 'the oldest catalog');
    });
  });

  it('a by-release nested path takes ids of that release alone; the latest-release path those of /catalog/...', async () => {
    await withServer({ seed: 5, variants: ['few-published'] }, async (server) => {
      const catalogs = await ids(server, '/pcm/catalogs');
      const c = catalogs[3]!;
      const [older, newest] = published(await releasesOf(server, c)).slice(-2) as [string, string];
      const own = await ids(server, `/pcm/catalogs/${c}/releases/${newest}/hierarchies`);
      const olders = await ids(server, `/pcm/catalogs/${c}/releases/${older}/hierarchies`);
      const defaults = await ids(server, '/catalog/hierarchies');
      const nodes = (release: string, h: string) => `/pcm/catalogs/${c}/releases/${release}/hierarchies/${h}/children`;
      expect((await get(server, nodes(newest, own[3]!))).status).toBe(200);
      expect((await get(server, nodes('latestPublished', own[3]!))).status).toBe(200);
      expectNotFound(await get(server, nodes(newest, defaults[3]!)), 'a /catalog/hierarchies id');
      expectNotFound(await get(server, nodes('latestPublished', olders[3]!)), "an older release's id");
      expect((await get(server, `/catalog/hierarchies/${defaults[3]}/children`)).status).toBe(200);
      expectNotFound(await get(server, `/catalog/hierarchies/${own[3]}/children`), "a release's id on /catalog");
      // A release's nested lists are empty or tiny under its first parents, the big ones later.
      const totals = await Promise.all(own.slice(0, 4).map(async (h) => (await get(server, nodes(newest, h))).body.meta!.results.total));
      expect(totals.slice(0, 3)).toEqual([0, 1, 1]);
      expect(totals[3]).toBeGreaterThan(100);
    });
  });
});

describe('which catalogs were published', () => {
  it('few-published: the 2nd, 4th and 7th alone, each newest release perhaps not published', async () => {
    await withServer({ seed: 5, variants: ['few-published'] }, async (server) => {
      expect(await publishedPlaces(server)).toEqual([1, 3, 6]);
      const catalogs = await ids(server, '/pcm/catalogs');
      const histories = await Promise.all([1, 3, 6].map(async (i) => (await releasesOf(server, catalogs[i]!)).map((r) => r.meta.release_status)));
      expect(histories.every((h) => h.length >= 2 && h.length <= 3)).toBe(true);
      expect(histories.some((h) => h.at(-1) !== 'PUBLISHED')).toBe(true);
    });
  });

  it('realistic-store: never the first two, always the third, a share of the later ones', async () => {
    await withServer({ seed: 5, variants: ['realistic-store'] }, async (server) => {
      const places = await publishedPlaces(server);
      expect(places[0]).toBe(2);
      expect(places.length).toBeGreaterThan(3);
      expect(places.length).toBeLessThan(60);
    });
  });
});

describe('by-release-offset-shift', () => {
  /** Parents fixed to a big hierarchy of the newest release of the 4th catalog (few-published), as a settings file gives them. */
  async function releaseParents(server: RunningServer): Promise<Record<string, ParentSource>> {
    const c = (await ids(server, '/pcm/catalogs'))[3]!;
    const release = published(await releasesOf(server, c)).at(-1)!;
    const h = (await ids(server, `/pcm/catalogs/${c}/releases/${release}/hierarchies`))[3]!;
    const given = { catalog_id: c, release_id: release, catalog_hierarchy_id: h };
    return { ...loadCatalogSpec().parents, ...Object.fromEntries(Object.entries(given).map(([k, value]) => [k, { value, configured: true }])) };
  }

  it.each([
    ['few-published', { variants: ['few-published'] }, []],
    ['by-release-offset-shift', { faults: ['by-release-offset-shift'] }, ['list.offset.records', 'list.offset.traversal']],
  ])('%s: the list checks under a release-local hierarchy fail exactly on the fault', async (_name, options, caught) => {
    await withServer({ seed: 5, ...options }, async (server) => {
      const eps = endpoints(['hierarchy-nodes@by-release', 'hierarchies@by-release']);
      const pagination = paginationSettings(eps, { parents: await releaseParents(server) });
      const { results } = await runChecks(server.url, expandListChecks(listChecks, eps), { pagination });
      const failed = results.filter((r) => r.outcome === 'fail' && r.level === 'MUST').map((r) => `${r.id} ${r.operation}`);
      expect(failed).toEqual(expect.arrayContaining(caught.map((id) => `${id} hierarchy-nodes@by-release`)));
      expect(failed.filter((f) => !f.endsWith('hierarchy-nodes@by-release'))).toEqual([]);
      if (!caught.length) expect(failed).toEqual([]);
      expect(results.filter((r) => r.operation === 'hierarchy-nodes@by-release' && r.outcome === 'pass').length).toBeGreaterThan(5);
    });
  });
});
