// Traversals asked for at once: offset walks fetch the pages the first page's total
// announces side by side, keyset walks run as segments that start at cursors taken from the
// offset walk. Neither may cost a check its strength: a total that is too small still leads to
// the end, a segment that stops short still shows as lost records, and a list too large for
// the budget is compared over a window the result names.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { listChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import type { Rec } from '../suites/list/pages.js';
import { instantKey } from '../suites/list/pages.js';
import { keysetCursors } from '../suites/list/keyset.js';
import { PAGE } from '../suites/list/walks.js';
import { endpoints, listening, paginationSettings, runChecks, runListChecks, withServer } from './support.js';

/** Records sorted by created_at, `ties[i]` records sharing the i-th instant. */
function records(ties: number[]): Rec[] {
  const out: Rec[] = [];
  let n = 0;
  for (const [i, k] of ties.entries()) {
    const raw = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
    for (let j = 0; j < k; j++, n++) out.push({ id: `id-${String(n).padStart(6, '0')}`, createdRaw: raw, created: instantKey(raw) });
  }
  return out;
}

describe('keyset cursors', () => {
  it('by id: each segment page of 100 ends on the next cursor', () => {
    const sorted = records(Array(1050).fill(1));
    const cursors = keysetCursors(sorted, 'id', PAGE);
    const at = cursors.map((c) => sorted.indexOf(c));
    // The first page holds 0..99; the page after it 100..199 ends on 199, the first cursor.
    expect(at.slice(0, 3)).toEqual([199, 299, 399]);
    // The last segment starts after the last cursor and holds the rest, fewer than a page.
    expect(sorted.length - 1 - at.at(-1)!).toBeLessThanOrEqual(PAGE);
  });

  it('by a timestamp with ties: each cursor lies on the page its segment asks for first', () => {
    const ties = Array.from({ length: 700 }, (_, i) => (i % 7 === 3 ? 4 : i % 11 === 5 ? 130 : 1));
    const sorted = records(ties);
    const value = (i: number): string => sorted[i]!.created!;
    const firstOf = (i: number): number => sorted.findIndex((r) => r.created === value(i));
    const cursors = keysetCursors(sorted, 'created_at', 7);
    expect(cursors.length).toBeGreaterThan(5);
    let start = firstOf(6);
    for (const c of cursors) {
      const j = sorted.indexOf(c);
      // ge(created_at, c) starts at c's first tie; a segment starting at `start` reaches it on
      // its first page, or, where the page is one tie group, at the first value past it.
      expect(c.created! > value(start)).toBe(true);
      expect(j <= start + PAGE - 1 || sorted.slice(start, j).every((r) => r.created === value(start))).toBe(true);
      start = firstOf(j);
    }
  });

  it('no cursor when the rest fits in the first pages', () => {
    expect(keysetCursors(records(Array(150).fill(1)), 'id', PAGE)).toEqual([]);
    expect(keysetCursors([], 'created_at', PAGE)).toEqual([]);
  });
});

/** A front before the reference server that rewrites list bodies (JSON) as `edit` says. */
async function rewritingFront(
  upstream: string,
  edit: (url: URL, body: { data?: unknown[]; meta?: { results?: { total?: number } } }) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const up = await request(new URL(req.url ?? '/', upstream), { method: req.method as 'GET', headers: { authorization: req.headers.authorization ?? '' } });
      let text = await up.body.text();
      if (req.method === 'GET' && up.statusCode === 200) {
        const body = JSON.parse(text) as { data?: unknown[] };
        if (Array.isArray(body.data)) {
          edit(new URL(req.url ?? '/', 'http://front'), body);
          text = JSON.stringify(body);
        }
      }
      res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
      res.end(text);
    })().catch(() => res.destroy());
  });
  return listening(server);
}

/** The front a test started, closed after it. */
let front: { close(): Promise<void> } | undefined;
afterEach(async () => {
  await front?.close();
  front = undefined;
});

describe('offset walks asked for at once', () => {
  it('a total too small still leads to the end: only the total check fails', async () => {
    await withServer({ seed: 3 }, async (server) => {
      // Every page says there are 60 records fewer than there are.
      const f = (front = await rewritingFront(server.url, (_url, body) => {
        if (typeof body.meta?.results?.total === 'number') body.meta.results.total = Math.max(0, body.meta.results.total - 60);
      }));
      const eps = endpoints(['accounts']);
      const { results } = await runChecks(
        f.url,
        expandListChecks(listChecks, eps).filter((c) => /traversal|keyset|total\.unfiltered|sort\.id/.test(c.id)),
        { pagination: paginationSettings(eps) },
      );
      const outcome = Object.fromEntries(results.map((r) => [r.id, r.outcome]));
      expect(outcome['list.total.unfiltered']).toBe('fail');
      // The walk read every record: 60 more than the total said.
      const ev = results.find((r) => r.id === 'list.total.unfiltered')!.evidence!;
      const n = (text: string): number => Number(/meta\.results\.total (\d+)/.exec(text)?.[1]);
      expect(n(ev.expected) - n(ev.actual)).toBe(60);
      for (const id of ['list.offset.traversal', 'list.keyset.id', 'list.keyset.created-at', 'list.keyset.updated-at', 'list.sort.id'])
        expect(outcome[id], id).toBe('pass');
    });
  });
});

describe('keyset segments', () => {
  it('a segment that meets an empty page before its cursor shows as lost records', async () => {
    await withServer({ seed: 3 }, async (server) => {
      // From the 40th record's id on, gt(id, …) answers an empty page: a target whose keyset
      // traversal ends early. The walk's segments start past it too, but they must not hide it.
      let cut: string | undefined;
      const f = (front = await rewritingFront(server.url, (url, body) => {
        const filter = url.searchParams.get('filter') ?? '';
        const sort = url.searchParams.get('sort');
        if (!filter && sort === 'id' && !url.searchParams.get('page[offset]') && body.data!.length > 50) cut ??= (body.data![39] as { id: string }).id;
        const m = /^gt\(id,(.+)\)$/.exec(filter);
        if (m && cut && m[1]! >= cut) body.data = [];
      }));
      const eps = endpoints(['orders']);
      const { results } = await runChecks(
        f.url,
        expandListChecks(listChecks, eps).filter((c) => c.id === 'list.keyset.id'),
        { pagination: paginationSettings(eps) },
      );
      const r = results[0]!;
      expect(r.outcome, r.reason).toBe('fail');
      expect(r.evidence?.actual).toMatch(/keyset lost \d+ record/);
    });
  });

  it('where segments need more pages than the budget leaves, the window is the stretch from the start, and a record lost in it shows', async () => {
    await withServer({ seed: 3 }, async (server) => {
      // Keyset pages hold 50 records, not 100, so every segment needs a second page and the
      // budget cannot give one to all; and the 1,500th record by id is never served by them.
      let lost: string | undefined;
      const f = (front = await rewritingFront(server.url, (url, body) => {
        const filter = url.searchParams.get('filter') ?? '';
        if (url.searchParams.get('sort') === 'id' && url.searchParams.get('page[offset]') === '1500') lost ??= (body.data![0] as { id: string }).id;
        if (/^gt\(id,/.test(filter)) body.data = body.data!.slice(0, 50).filter((r) => (r as { id: string }).id !== lost);
      }));
      const eps = endpoints(['orders']);
      const { results } = await runChecks(
        f.url,
        expandListChecks(listChecks, eps).filter((c) => c.id === 'list.keyset.id'),
        { pagination: paginationSettings(eps) },
      );
      const r = results[0]!;
      expect(lost).toBeDefined();
      expect(r.outcome, r.reason).toBe('fail');
      expect(r.evidence?.actual).toContain(lost);
    });
  });

  /**
   * The events (`ask URL`, `answer URL`) of list.keyset.created-at on `operation` behind a front
   * that holds its answers to the offset walk's pages `late` picks until a request `awaited`
   * picks is asked (or 3 s pass), and the check's result. A keyset walk that waits for the whole
   * offset walk asks for that request only after the held answers.
   */
  async function keysetBehindHeldPages(records: number, late: (url: URL) => boolean, awaited: RegExp): Promise<{ events: string[]; outcome: string }> {
    // A list of a few pages, so that the HTTP client's in-flight limit stays where it starts.
    return withServer({ seed: 3, records }, async (server) => {
      const events: string[] = [];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const f = (front = await listening(
        createServer((req, res) => {
          const url = new URL(req.url ?? '/', 'http://front');
          events.push(`ask ${req.url}`);
          if (awaited.test(req.url ?? '')) release();
          void (async () => {
            const up = await request(new URL(req.url ?? '/', server.url), { headers: { authorization: req.headers.authorization ?? '' } });
            const text = await up.body.text();
            if (late(url)) await Promise.race([released, new Promise((r) => setTimeout(r, 3_000))]);
            events.push(`answer ${req.url}`);
            res.writeHead(up.statusCode, { 'content-type': 'application/json' });
            res.end(text);
          })().catch(() => res.destroy());
        }),
      ));
      const eps = endpoints(['accounts']);
      const { results } = await runChecks(
        f.url,
        expandListChecks(listChecks, eps).filter((c) => c.id === 'list.keyset.created-at'),
        { pagination: paginationSettings(eps) },
      );
      return { events, outcome: `${results[0]!.outcome} ${results[0]!.reason ?? ''}` };
    });
  }
  const offsetPage = (url: URL): boolean =>
    url.searchParams.get('sort') === 'created_at' && url.searchParams.has('page[offset]') && !url.searchParams.has('filter');
  /**
   * Behind a front holding back the answers to the pages `late` picks (keysetBehindHeldPages),
   * the check passes and a request `awaited` picks is asked before any of them is answered.
   */
  async function expectAskedBeforeHeld(records: number, late: (url: URL) => boolean, awaited: RegExp): Promise<void> {
    const { events, outcome } = await keysetBehindHeldPages(records, late, awaited);
    expect(outcome).toBe('pass ');
    const asked = events.findIndex((x) => x.startsWith('ask ') && awaited.test(x.slice(4)));
    const lateAnswer = events.findIndex((x) => x.startsWith('answer ') && late(new URL(x.slice(7), 'http://front')));
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(lateAnswer).toBeGreaterThanOrEqual(0);
    expect(asked).toBeLessThan(lateAnswer);
  }

  it('segment 0 is asked for on the first page of the offset walk, beside its other pages, not after them', async () => {
    // Its first page ends inside the first tie of the first page (firstPageAcrossTie): a page[limit] under 100.
    await expectAskedBeforeHeld(130, offsetPage, /^\/v2\/accounts\?sort=created_at&page\[limit\]=\d{1,2}$/);
  });

  it('a segment past the first opens when the records of the offset walk show its cursor, before the walk ends', async () => {
    // About 400 records: the first cursor shows in the first 201, the pages past offset 200 are held.
    const last = (url: URL): boolean => offsetPage(url) && Number(url.searchParams.get('page[offset]')) > 200;
    await expectAskedBeforeHeld(400, last, /^\/v2\/accounts\?sort=created_at&filter=ge\(created_at/);
  });

  it('on a list too large for the budget, compares a window and says so', async () => {
    const eps = endpoints(['orders']);
    const { results } = await runListChecks({}, eps, { budget: 200 });
    const keyset = results.filter((r) => r.id.startsWith('list.keyset.'));
    expect(keyset.map((r) => `${r.id} ${r.outcome} ${r.reason ?? ''}`)).toEqual(keyset.map((r) => `${r.id} pass `));
    for (const r of keyset) expect((r.notes ?? []).join(' ')).toMatch(/window/);
  });
});
