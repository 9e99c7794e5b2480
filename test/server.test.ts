// The reference server: every bad input gets a 4xx with the Error shape, never a 5xx, never a
// crash, and never loses data it holds; and every knob of its behaviour (server/behaviour.ts)
// does what it says, seen over HTTP.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate, SCHEMA } from '../lib/contract/index.js';
import { createReferenceHandler, FAULTS, startReferenceServer, VARIANTS, type Behaviour, type RunningServer } from '../server/index.js';
import { generateRecords } from '../server/lists.js';
import { parseInstant } from '../server/collection.js';
import { requestUrl } from '../server/http.js';
import { TOKEN } from './support.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startReferenceServer({ token: TOKEN });
});
afterAll(() => server.close());

type Sent = { status: number; headers: Record<string, unknown>; text: string; json: unknown };

async function sendTo(base: string, method: string, path: string, opts: { body?: string | Buffer; type?: string; auth?: boolean } = {}): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (opts.auth !== false) headers.authorization = `Bearer ${TOKEN}`;
  if (opts.type) headers['content-type'] = opts.type;
  const res = await request(`${base}${path}`, { method: method as 'GET', headers, body: opts.body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

function send(method: string, path: string, opts: { body?: string | Buffer; type?: string; auth?: boolean } = {}): Promise<Sent> {
  return sendTo(server.url, method, path, opts);
}

function expectErrorShape(r: Pick<Sent, 'status' | 'text' | 'json'>): void {
  expect(validate(SCHEMA.error, r.json), r.text).toEqual([]);
  expect((r.json as { errors: Array<{ status: string }> }).errors[0]!.status).toBe(String(r.status));
}

describe('bad input', () => {
  it.each([
    ['no token', () => send('GET', '/v2/settings', { auth: false }), 401],
    ['unknown route', () => send('GET', '/v2/nothing-here'), 404],
    ['wrong method', () => send('PUT', '/v2/application-keys'), 405],
    ['malformed JSON', () => send('POST', '/v2/application-keys', { body: '{"data":', type: 'application/json' }), 400],
    ['empty body', () => send('POST', '/v2/application-keys', { type: 'application/json' }), 400],
    ['wrong content type', () => send('POST', '/v2/application-keys', { body: '{"data":{}}', type: 'text/plain' }), 415],
    ['body over 1 MB', () => send('POST', '/v2/application-keys', { body: Buffer.alloc(1024 * 1024 + 10, 0x20), type: 'application/json' }), 413],
    ['bad percent-encoding', () => send('DELETE', '/v2/application-keys/%E0%A4%A'), 400],
    ['JSON that is not an object', () => send('POST', '/v2/application-keys', { body: '[1,2]', type: 'application/json' }), 400],
    ['null data', () => send('POST', '/v2/application-keys', { body: '{"data":null}', type: 'application/json' }), 400],
    [
      'custom API with a bad slug',
      () =>
        send('POST', '/v2/settings/extensions/custom-apis', {
          body: '{"data":{"type":"custom_api","name":"x","slug":"Bad Slug!","api_type":"x_ext"}}',
          type: 'application/json',
        }),
      400,
    ],
  ])('%s gets %s with the Error shape', async (_what, go, status) => {
    const r = await go();
    expect(r.status).toBe(status);
    expectErrorShape(r);
  });

  it('keeps its data through any random request (fuzzed)', async () => {
    const created = await send('POST', '/v2/application-keys', {
      body: JSON.stringify({ data: { type: 'application_key', name: 'survivor' } }),
      type: 'application/json',
    });
    expect(created.status).toBe(201);
    const id = (created.json as { data: { id: string } }).data.id;
    const paths = fc.constantFrom(
      '/v2/application-keys',
      `/v2/application-keys/${id}x`,
      '/v2/settings/extensions/custom-apis',
      '/v2/settings/extensions/custom-apis/abc',
      '/v2/settings',
      '/v2',
      '/',
      '/oauth/access_token',
    );
    const bodies = fc.oneof(
      fc.string(),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify({ data: v })),
      fc
        .record({
          data: fc.record(
            {
              type: fc.constantFrom('application_key', 'x', 1),
              name: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)),
              reserved_rate_limit: fc.oneof(fc.integer(), fc.double(), fc.string()),
            },
            { requiredKeys: [] },
          ),
        })
        .map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH'),
        paths,
        bodies,
        fc.constantFrom('application/json', 'text/plain', undefined),
        async (method, path, body, type) => {
          const r = await send(method, path, method === 'GET' || method === 'DELETE' ? {} : { body, type });
          expect(r.status).toBeLessThan(500);
          if (r.status >= 400) expectErrorShape(r);
        },
      ),
      { numRuns: 300, seed: 424242 },
    );
    const still = await send('GET', `/v2/application-keys/${id}`);
    expect(still.status).toBe(200);
  });
});

describe('options', () => {
  it('without a token, from JavaScript: a TypeError that says what is required, not a crash inside Buffer.from', async () => {
    for (const options of [{}, { token: '' }, { token: '   ' }, { token: 42 }]) {
      await expect(startReferenceServer(options as never)).rejects.toThrow(
        new TypeError('startReferenceServer: options.token (a non-empty string) is required'),
      );
      expect(() => createReferenceHandler(options as never)).toThrow(new TypeError('createReferenceHandler: options.token (a non-empty string) is required'));
    }
    await expect(startReferenceServer(undefined as never)).rejects.toThrow(/^startReferenceServer: options.token \(a non-empty string\) is required$/);
  });
});

describe('the store settings', () => {
  it('reports the page length', async () => {
    const r = await send('GET', '/v2/settings');
    expect((r.json as { data: { page_length: number } }).data.page_length).toBe(25);
  });
});

// --- The knobs, seen over HTTP -------------------------------------------------------------

/** A server with `behaviour` (and faults/variants), for the duration of `fn`. */
async function withBehaviour<T>(
  behaviour: Partial<Behaviour>,
  fn: (go: (method: string, path: string, opts?: Parameters<typeof send>[2]) => Promise<Sent>) => Promise<T>,
  more: { faults?: string[]; records?: number } = {},
): Promise<T> {
  const s = await startReferenceServer({ token: TOKEN, seed: 11, behaviour, ...more });
  try {
    return await fn((method, path, opts) => sendTo(s.url, method, path, opts));
  } finally {
    await s.close();
  }
}

interface ListBody {
  data: Array<{ id: string; meta?: { timestamps?: { created_at: string; updated_at: string } }; attributes?: Record<string, string> }>;
  meta: { page: { limit: number; offset: number; current: number; total: number }; results: { total: number } };
}
const list = (r: Sent): ListBody => r.json as ListBody;
const created = (r: Sent): string[] => list(r).data.map((x) => x.meta!.timestamps!.created_at);
const ids = (r: Sent): string[] => list(r).data.map((x) => x.id);
const FAR_FUTURE = '9999-12-31T23:59:59.000Z';
const keyBody = (data: Record<string, unknown>): string => JSON.stringify({ data: { type: 'application_key', name: 'knob', ...data } });

describe('list knobs', () => {
  it('pageLength: GET /v2/settings reports it, and a list read without page[limit] uses it', async () => {
    await withBehaviour({ pageLength: 40 }, async (go) => {
      expect(((await go('GET', '/v2/settings')).json as { data: { page_length: number } }).data.page_length).toBe(40);
      const r = await go('GET', '/v2/accounts');
      expect(list(r).data).toHaveLength(40);
      expect(list(r).meta.page.limit).toBe(40);
    });
  });

  it('micros-z: six fractional digits, records apart only below the millisecond, gt on a shown value returns only greater ones', async () => {
    await withBehaviour({ timestampStyle: 'micros-z' }, async (go) => {
      const all = await go('GET', '/v2/accounts?sort=created_at&page[limit]=100');
      const shown = created(all);
      for (const t of shown) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      // Two neighbours in the same millisecond, different microseconds.
      const i = shown.findIndex((t, k) => k + 1 < shown.length && t.slice(0, 23) === shown[k + 1]!.slice(0, 23) && t !== shown[k + 1]);
      expect(i, 'a pair apart only below the millisecond').toBeGreaterThanOrEqual(0);
      const page = await go('GET', `/v2/accounts?sort=created_at&page[limit]=100&filter=gt(created_at,${shown[i]})`);
      const after = created(page);
      expect(after[0]).toBe(shown[i + 1]);
      expect(after.every((t) => t > shown[i]!)).toBe(true);
      // ge keeps the value itself.
      expect(created(await go('GET', `/v2/accounts?sort=created_at&page[limit]=1&filter=ge(created_at,${shown[i]})`))).toEqual([shown[i]]);
    });
  });

  it('mixed-offsets: offsets vary per record, string order is not time order, filters take any offset as the same instant', async () => {
    await withBehaviour({ timestampStyle: 'mixed-offsets' }, async (go) => {
      const shown = created(await go('GET', '/v2/accounts?sort=created_at&page[limit]=100'));
      const offsets = new Set(shown.map((t) => t.slice(-6)));
      expect(offsets.size).toBeGreaterThanOrEqual(4);
      for (const t of shown) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
      const instants = shown.map((t) => Date.parse(t));
      expect(instants).toEqual([...instants].sort((a, b) => a - b));
      expect(shown).not.toEqual([...shown].sort());
      const v = shown[50]!;
      const z = new Date(Date.parse(v)).toISOString();
      const a = ids(await go('GET', `/v2/accounts?sort=created_at&page[limit]=100&filter=ge(created_at,${encodeURIComponent(v)})`));
      const b = ids(await go('GET', `/v2/accounts?sort=created_at&page[limit]=100&filter=ge(created_at,${z})`));
      expect(a).toEqual(b);
      expect(a.length).toBeGreaterThan(0);
    });
  });

  it.each([
    [{}, 1, 0],
    [{ emptyCurrent: 'zero' }, 0, 0],
    [{ emptyPageTotal: 1 }, 1, 1],
    [{ emptyCurrent: 'formula' }, 5, 0],
  ] as Array<[Partial<Behaviour>, number, number]>)('empty page %j: current %i, total %i at offset 100, limit 25', async (b, current, total) => {
    await withBehaviour(b, async (go) => {
      const r = await go('GET', `/v2/accounts?filter=gt(created_at,${FAR_FUTURE})&page[offset]=100&page[limit]=25`);
      expect(list(r).meta.page).toEqual({ limit: 25, offset: 100, current, total });
      expect(list(r).meta.results.total).toBe(0);
    });
  });

  it.each(['created_at', '-created_at', 'id', 'updated_at', 'insertion'] as const)('defaultOrder %s: the order of a list read without sort', async (order) => {
    await withBehaviour({ defaultOrder: order }, async (go) => {
      const plain = ids(await go('GET', '/v2/accounts?page[limit]=100'));
      const sorted =
        order === 'insertion'
          ? ids(await go('GET', '/v2/accounts?sort=id&page[limit]=100'))
          : ids(await go('GET', `/v2/accounts?sort=${order}&page[limit]=100`));
      expect(plain).toEqual(sorted);
      // Stable: the second page follows the first.
      const next = ids(await go('GET', '/v2/accounts?page[limit]=50&page[offset]=50'));
      expect(next).toEqual(plain.slice(50, 100));
    });
  });

  it('listIds numeric: digit-only ids, sort=id and gt(id,…) numeric (9 before 10)', async () => {
    await withBehaviour({ listIds: 'numeric' }, async (go) => {
      const all = ids(await go('GET', '/v2/accounts?sort=id&page[limit]=100'));
      for (const id of all) expect(id).toMatch(/^[1-9]\d*$/);
      const n = all.map(Number);
      expect(n).toEqual([...n].sort((a, b) => a - b));
      expect(new Set(all.map((x) => x.length)).size).toBeGreaterThan(1);
      const nine = all.findIndex((x) => x.length === 2) - 1;
      const after = ids(await go('GET', `/v2/accounts?sort=id&page[limit]=3&filter=gt(id,${all[nine]})`));
      expect(after).toEqual(all.slice(nine + 1, nine + 4));
      expect((await go('GET', '/v2/accounts?filter=gt(id,abc)')).status).toBe(400);
    });
  });

  it('listIds numeric-as-string: the same digit-only ids, ordered as strings (10 before 9)', async () => {
    await withBehaviour({ listIds: 'numeric-as-string' }, async (go) => {
      const all = ids(await go('GET', '/v2/accounts?sort=id&page[limit]=100'));
      for (const id of all) expect(id).toMatch(/^\d+$/);
      expect(all).toEqual([...all].sort());
      expect(all).not.toEqual([...all].sort((a, b) => Number(a) - Number(b)));
      const after = ids(await go('GET', `/v2/accounts?sort=id&page[limit]=2&filter=gt(id,${all[10]})`));
      expect(after).toEqual(all.slice(11, 13));
    });
  });

  it('listIds prefixed: rec_ and eight digits, in generation order', async () => {
    await withBehaviour({ listIds: 'prefixed' }, async (go) => {
      const all = ids(await go('GET', '/v2/accounts?sort=id&page[limit]=100'));
      for (const id of all) expect(id).toMatch(/^rec_\d{8}[0-9a-f]{6}$/);
      expect(all).toEqual([...all].sort());
    });
  });

  it('timestampsAt attributes: the timestamps are attributes, not meta.timestamps', async () => {
    await withBehaviour({ timestampsAt: 'attributes' }, async (go) => {
      const r = list(await go('GET', '/v2/accounts?page[limit]=3'));
      for (const x of r.data) {
        expect(x.meta).toBeUndefined();
        expect(Date.parse(x.attributes!.created_at!)).not.toBeNaN();
        expect(Date.parse(x.attributes!.updated_at!)).not.toBeNaN();
      }
    });
  });

  it('generated data: ~15% of records tied in groups of 2 to 6 on created_at and on updated_at, at no fixed stride', () => {
    for (const precision of ['seconds', 'micros'] as const) {
      const rs = generateRecords(5, '/v2/accounts', 2000, Date.UTC(2026, 0, 1), false, { precision, ids: 'uuid' });
      for (const field of ['created', 'updated'] as const) {
        const counts = new Map<number, number>();
        for (const r of rs) counts.set(r[field], (counts.get(r[field]) ?? 0) + 1);
        const groups = [...counts.values()].filter((n) => n > 1);
        const tied = groups.reduce((a, b) => a + b, 0) / rs.length;
        expect(tied, `${precision} ${field}`).toBeGreaterThan(0.08);
        expect(tied, `${precision} ${field}`).toBeLessThan(0.3);
        expect(Math.max(...groups)).toBeLessThanOrEqual(12);
        // Where ties start in that order: not all on one residue of 100, 25 or 7.
        const sorted = [...rs].sort((a, b) => a[field] - b[field]);
        const starts = sorted
          .map((r, i) => (i > 0 && r[field] === sorted[i - 1]![field] && (i < 2 || sorted[i - 2]![field] !== r[field]) ? i : -1))
          .filter((i) => i > 0);
        for (const m of [100, 25, 7]) expect(new Set(starts.map((i) => i % m)).size, `${precision} ${field} mod ${m}`).toBeGreaterThan(1);
      }
      for (const r of rs) expect(r.updated).toBeGreaterThanOrEqual(r.created);
      if (precision === 'micros') expect(rs.some((r) => r.created % 1000 !== 0)).toBe(true);
      else expect(rs.every((r) => r.created % 1_000_000 === 0)).toBe(true);
    }
  });

  it('parses filter timestamps at the microsecond, with any offset', () => {
    expect(parseInstant('2026-01-01T00:00:00.123456Z')).toBe(Date.UTC(2026, 0, 1) * 1000 + 123456);
    expect(parseInstant('2026-01-01T02:00:00.5+02:00')).toBe(Date.UTC(2026, 0, 1) * 1000 + 500000);
    expect(parseInstant('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1) * 1000);
    expect(parseInstant('yesterday')).toBeNaN();
  });
});

describe('list faults and their scopes', () => {
  it('unstableTies: records tied on the sort key come reversed past offset 0, the same every time', async () => {
    await withBehaviour({ unstableTies: true }, async (go) => {
      const first = list(await go('GET', '/v2/accounts?sort=created_at&page[limit]=100'));
      const shown = first.data.map((x) => x.meta!.timestamps!.created_at);
      const i = shown.findIndex((t, k) => k > 0 && t === shown[k - 1]);
      expect(i).toBeGreaterThan(0);
      const start = shown.indexOf(shown[i]!);
      const run = first.data.filter((x) => x.meta!.timestamps!.created_at === shown[i]).map((x) => x.id);
      const again = ids(await go('GET', `/v2/accounts?sort=created_at&page[limit]=${run.length}&page[offset]=${start}`));
      expect(again).toEqual([...run].reverse());
      expect(ids(await go('GET', `/v2/accounts?sort=created_at&page[limit]=${run.length}&page[offset]=${start}`))).toEqual(again);
    });
  });

  it('a fault scoped to one path leaves the others alone (customers-total-ignores-filter)', async () => {
    await withBehaviour(
      {},
      async (go) => {
        const q = `?filter=gt(created_at,${FAR_FUTURE})`;
        expect(list(await go('GET', `/v2/customers${q}`)).meta.results.total).toBeGreaterThan(0);
        expect(list(await go('GET', `/v2/accounts${q}`)).meta.results.total).toBe(0);
      },
      { faults: ['customers-total-ignores-filter'] },
    );
  });

  it('a fault scoped to nested paths (nested-drop-page-boundary)', async () => {
    await withBehaviour(
      {},
      async (go) => {
        const plain = ids(await go('GET', '/v2/accounts?page[limit]=20'));
        expect(ids(await go('GET', '/v2/accounts?page[limit]=10&page[offset]=10'))).toEqual(plain.slice(10, 20));
        const hierarchy = ids(await go('GET', '/catalog/hierarchies'))[0]!;
        const nested = ids(await go('GET', `/catalog/hierarchies/${hierarchy}/nodes?page[limit]=21`));
        expect(ids(await go('GET', `/catalog/hierarchies/${hierarchy}/nodes?page[limit]=10&page[offset]=10`))).toEqual(nested.slice(11, 21));
      },
      { faults: ['nested-drop-page-boundary'] },
    );
  });

  it('a fault scoped to pages past the first (sort-ignored-past-first-page)', async () => {
    await withBehaviour(
      {},
      async (go) => {
        const first = created(await go('GET', '/v2/accounts?sort=created_at&page[limit]=10'));
        expect(first).toEqual([...first].sort());
        const second = created(await go('GET', '/v2/accounts?sort=created_at&page[limit]=10&page[offset]=10'));
        expect(second).toEqual([...second].sort().reverse());
      },
      { faults: ['sort-ignored-past-first-page'] },
    );
  });

  it('a fault scoped to filtered requests (filter-offset-ignored)', async () => {
    await withBehaviour(
      {},
      async (go) => {
        expect(ids(await go('GET', '/v2/accounts?page[limit]=5&page[offset]=5'))).not.toEqual(ids(await go('GET', '/v2/accounts?page[limit]=5')));
        const f = 'filter=ge(created_at,2000-01-01T00:00:00Z)';
        expect(ids(await go('GET', `/v2/accounts?${f}&page[limit]=5&page[offset]=5`))).toEqual(ids(await go('GET', `/v2/accounts?${f}&page[limit]=5`)));
      },
      { faults: ['filter-offset-ignored'] },
    );
  });

  it('gt-hidden-precision: under gt, records shown equal to the value come back', async () => {
    await withBehaviour(
      {},
      async (go) => {
        const shown = created(await go('GET', '/v2/accounts?sort=created_at&page[limit]=100'));
        const v = shown.find((t, k) => k > 0 && t === shown[k - 1])!;
        expect(created(await go('GET', `/v2/accounts?sort=created_at&page[limit]=1&filter=gt(created_at,${v})`))).toEqual([v]);
      },
      { faults: ['gt-hidden-precision'] },
    );
  });
});

describe('create and delete knobs', () => {
  const post = (go: (m: string, p: string, o?: Parameters<typeof send>[2]) => Promise<Sent>, body: string, type: string | undefined = 'application/json') =>
    go('POST', '/v2/application-keys', { body, ...(type ? { type } : {}) });
  const data = (r: Sent): Record<string, unknown> => (r.json as { data: Record<string, unknown> }).data;

  it('lenientContentType: JSON under text/plain or no Content-Type is taken; strict answers 415', async () => {
    expect((await post(send, keyBody({}), 'text/plain')).status).toBe(415);
    await withBehaviour({ lenientContentType: true }, async (go) => {
      expect((await post(go, keyBody({}), 'text/plain')).status).toBe(201);
      expect((await post(go, keyBody({}), undefined)).status).toBe(201);
      const bad = await post(go, '{"data":', 'text/plain');
      expect(bad.status).toBe(400);
      expectErrorShape(bad);
    });
  });

  it.each([
    ['refuse', 400],
    ['accept', 201],
    ['crash', 500],
  ] as const)('nullRateLimit %s: reserved_rate_limit null gets %i', async (mode, status) => {
    await withBehaviour({ nullRateLimit: mode }, async (go) => {
      const r = await post(go, keyBody({ reserved_rate_limit: null }));
      expect(r.status).toBe(status);
      if (status === 201) expect(data(r)).not.toHaveProperty('reserved_rate_limit');
      else expectErrorShape(r);
    });
  });

  it('echoRateLimit / rateLimitEchoWrong: the echo is the value sent, absent, or another integer', async () => {
    expect(data(await post(send, keyBody({ reserved_rate_limit: 7 }))).reserved_rate_limit).toBe(7);
    await withBehaviour({ echoRateLimit: false }, async (go) =>
      expect(data(await post(go, keyBody({ reserved_rate_limit: 7 })))).not.toHaveProperty('reserved_rate_limit'),
    );
    await withBehaviour({ rateLimitEchoWrong: true }, async (go) =>
      expect(data(await post(go, keyBody({ reserved_rate_limit: 7 }))).reserved_rate_limit).toBe(8),
    );
  });

  it('type-case-insensitive, a transformation of the body: Application_Key and " application_key " pass (and are stored as the constant)', async () => {
    expect((await post(send, JSON.stringify({ data: { type: 'Application_Key', name: 'x' } }))).status).toBe(400);
    await withBehaviour(
      {},
      async (go) => {
        for (const type of ['Application_Key', ' application_key ', 'APPLICATION_KEY']) {
          const r = await post(go, JSON.stringify({ data: { type, name: 'x' } }));
          expect(r.status, type).toBe(201);
          expect(data(r).type).toBe('application_key');
        }
        expect((await post(go, JSON.stringify({ data: { type: 'application-key', name: 'x' } }))).status).toBe(400);
      },
      { faults: ['type-case-insensitive'] },
    );
  });

  it('nameHtmlEscaped / nameTrimmed: the name comes back changed', async () => {
    const name = `  <b>&amp;</b> "q" 'a' \\ x  `;
    expect(data(await post(send, keyBody({ name }))).name).toBe(name);
    await withBehaviour({ nameHtmlEscaped: true }, async (go) =>
      expect(data(await post(go, keyBody({ name }))).name).toBe(`  &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;q&quot; &#39;a&#39; \\ x  `),
    );
    await withBehaviour({ nameTrimmed: true }, async (go) => expect(data(await post(go, keyBody({ name }))).name).toBe(name.trim()));
  });

  it('validationStatus 403: a refused body gets 403 with the Error shape', async () => {
    await withBehaviour({ validationStatus: 403 }, async (go) => {
      const r = await post(go, JSON.stringify({ data: { type: 'application_key' } }));
      expect(r.status).toBe(403);
      expectErrorShape(r);
    });
  });

  const UPPER = 'ABCDEF01-2345-4678-89AB-CDEF01234567';
  const LOWER = UPPER.toLowerCase();

  it('uuidCaseSensitive: an upper-case well-formed UUID gets 400 (the reference: 404)', async () => {
    expect((await send('DELETE', `/v2/settings/extensions/custom-apis/${UPPER}`)).status).toBe(404);
    await withBehaviour({ uuidCaseSensitive: true }, async (go) => {
      const r = await go('DELETE', `/v2/settings/extensions/custom-apis/${UPPER}`);
      expect(r.status).toBe(400);
      expectErrorShape(r);
      expect((await go('DELETE', `/v2/settings/extensions/custom-apis/${LOWER}`)).status).toBe(404);
    });
  });

  it('uuidPartialMatch: an id that merely contains a UUID gets 404 (the reference: 400)', async () => {
    for (const id of [`x${LOWER}`, `${LOWER}-1`, `${LOWER}${LOWER}`])
      expect((await send('DELETE', `/v2/settings/extensions/custom-apis/${id}`)).status, id).toBe(400);
    await withBehaviour({ uuidPartialMatch: true }, async (go) => {
      for (const id of [`x${LOWER}`, `${LOWER}-1`]) {
        const r = await go('DELETE', `/v2/settings/extensions/custom-apis/${id}`);
        expect(r.status, id).toBe(404);
        expectErrorShape(r);
      }
      expect((await go('DELETE', '/v2/settings/extensions/custom-apis/not-a-uuid')).status).toBe(400);
    });
  });
});

describe('bad input under every variant and fault', () => {
  // Every variant and every fault that is not about a crash answers bad input with a 4xx and
  // the Error shape (a fault that breaks the Error shape itself is left out).
  const crashes = new Set([
    'create-crash-on-non-object-data',
    'malformed-json-500',
    'bad-paging-500',
    'past-end-500',
    'null-rate-limit-500',
    'delete-malformed-500',
    'error-status-number',
    'error-without-array',
    'unauthorized-plain-text',
    'offset-overflow-500',
    'paging-array-500',
    'sort-unknown-500',
    'filter-malformed-500',
    'create-deep-nesting-500',
    'create-bom-500',
  ]);
  const servers: Array<[string, { faults?: string[]; variants?: string[] }]> = [
    ...VARIANTS.map((v): [string, { variants: string[] }] => [v.name, { variants: [v.name] }]),
    ...FAULTS.filter((f) => !crashes.has(f.name)).map((f): [string, { faults: string[] }] => [f.name, { faults: [f.name] }]),
  ];
  const bad: Array<[string, string, string?, string?]> = [
    ['POST', '/v2/application-keys', '{"data":', 'application/json'],
    ['POST', '/v2/application-keys', '{"data":{"type":1,"name":[]}}', 'application/json'],
    ['POST', '/v2/application-keys', '{"data":{"type":"application_key","name":"x","reserved_rate_limit":null}}', 'application/json'],
    ['DELETE', '/v2/settings/extensions/custom-apis/%E0%A4%A'],
    ['DELETE', '/v2/settings/extensions/custom-apis/nope'],
    ['GET', '/v2/accounts?page[limit]=abc'],
    ['GET', '/v2/accounts?filter=gt(created_at,yesterday)'],
    ['GET', '/v2/accounts?filter=gt(id,'],
    ['GET', '/v2/accounts?sort=name'],
    ['GET', '/catalog/hierarchies/nope/nodes'],
  ];
  it.each(servers)('%s', async (_name, options) => {
    const s = await startReferenceServer({ token: TOKEN, seed: 2, ...options });
    try {
      for (const [method, path, body, type] of bad) {
        const r = await sendTo(s.url, method, path, { ...(body ? { body } : {}), ...(type ? { type } : {}) });
        expect(r.status, `${method} ${path}`).toBeLessThan(500);
        if (r.status >= 400) expectErrorShape(r);
      }
    } finally {
      await s.close();
    }
  });
});

describe('request targets read without the URL parser', () => {
  // server/http.ts reads a plain target (PLAIN_TARGET) without new URL(): it must give what the
  // parser gives, or throw where it throws, for any target. Targets are drawn from pieces that
  // matter to the parser: dots and percent escapes (`%2e` is a dot in a path), a bare `%`,
  // brackets, slashes, `?` and `#`, spaces, controls and non-ASCII.
  const pieces = [
    'a',
    'Z',
    '0',
    '/',
    '.',
    '..',
    '%',
    '%2e',
    '%2E',
    '%2e%2e',
    '%5B',
    '%5d',
    '%zz',
    '%2',
    '[',
    ']',
    '?',
    '#',
    '&',
    '=',
    '(',
    ')',
    ',',
    ' ',
    '"',
    '<',
    '\\',
    '\t',
    'é',
    '~',
    '-',
    '_',
    ':',
    '@',
    '+',
    '!',
    '$',
    "'",
    '*',
    ';',
    '`',
    '{',
    '|',
    '^',
  ];
  const target = fc
    .tuple(fc.constantFrom('/', '/v2/', '//', '/./', '/a/../'), fc.array(fc.constantFrom(...pieces), { maxLength: 20 }))
    .map(([head, ps]) => head + ps.join(''));
  const parsed = (t: string, host: string) => {
    try {
      const u = new URL(t, `http://${host}`);
      return { href: u.href, pathname: u.pathname, search: u.search };
    } catch {
      return 'throws';
    }
  };
  const read = (t: string, host: string) => {
    try {
      return requestUrl(t, host);
    } catch {
      return 'throws';
    }
  };

  it('gives what new URL gives (fuzzed)', () => {
    fc.assert(
      fc.property(target, fc.constantFrom('127.0.0.1:8080', 'localhost', 'EXAMPLE.com:80', '[::1]:3000'), (t, host) => {
        expect(read(t, host)).toEqual(parsed(t, host));
      }),
      { numRuns: 3_000, seed: 20261122 },
    );
  });

  it('reads the query a client sends (page%5Blimit%5D, a filter) as the parser does', () => {
    for (const t of [
      '/v2/customers?sort=id&page%5Blimit%5D=100&filter=gt(id,00000063-5247-4f30-89a1-235e1bc578f8)',
      '/v2/orders?page[limit]=100&page[offset]=9900',
      '/x?%zz=%',
      '/x?a=%2e%2E',
      '/%2e/x?y',
      '/x/%2E%2e/?q',
    ])
      expect(requestUrl(t, '127.0.0.1:1')).toEqual(parsed(t, '127.0.0.1:1'));
  });
});
