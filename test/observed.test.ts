// Traffic the suite did not send, judged by its rules: `conformance proxy` in front of the
// reference server (and its faults), and `conformance judge` on a HAR file of the same traffic.
// The proxy must pass every byte through unchanged, fail exactly the rules a fault breaks in the
// traffic, pass nothing it did not see, leak no secret, and agree with the HAR judgement.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readHar, type Observed } from '../lib/runner/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { judgeTraffic } from '../suites/observed.js';
import { observerModel, OPAQUE, queryOfUrl } from '../suites/list/model.js';
import { OBSERVED_LIST_CHECKS, judge } from '../suites/list/judge.js';
import { listPageOf, parseInstant } from '../suites/list/pages.js';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import type { RunReport } from '../reporters/model.js';
import { startReferenceServer } from '../server/index.js';
import { endpoints, listening, TOKEN } from './support.js';
import { startProxy } from './fixtures/proxy.js';
import { READS_SETTLE_MS } from '../suites/delete/custom-api.js';
import { HttpResponse } from '../lib/transport/index.js';

const dirs: string[] = [];
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'conformance-observed-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function captureIo(cwd: string): Io & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(l), err: (l) => lines.push(l), env: { NO_COLOR: '1' }, cwd, isTTY: false };
}

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
  responseHeaders: Record<string, string>;
  text: string;
  started: number;
  ms: number;
}

/**
 * The traffic of a small client: the store's settings, list pages with and without parameters
 * (two pages of one sorted query), keys created (one body invalid), a Custom API created,
 * deleted, deleted again and read, a malformed id, a DELETE without a token.
 */
async function drive(base: string, settle = false): Promise<Recorded[]> {
  const out: Recorded[] = [];
  const auth = { authorization: `Bearer ${TOKEN}` };
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth): Promise<Recorded> => {
    const h: Record<string, string> = { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
    const started = Date.now();
    const res = await fetch(`${base}${path}`, { method, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    const r: Recorded = {
      method,
      url: `${base}${path}`,
      headers: h,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      status: res.status,
      responseHeaders: Object.fromEntries(res.headers),
      text,
      started,
      ms: Date.now() - started,
    };
    out.push(r);
    return r;
  };
  await send('GET', '/v2/settings');
  await send('GET', '/v2/accounts');
  await send('GET', '/v2/accounts?page[limit]=500');
  await send('GET', '/v2/accounts?sort=created_at&page[limit]=5');
  await send('GET', '/v2/accounts?sort=created_at&page[limit]=5&page[offset]=5');
  await send('GET', '/v2/accounts?sort=-id&page[limit]=7&page[offset]=3');
  await send('GET', '/v2/accounts?filter=ge(created_at,2026-01-01T00:00:00.000Z)&page[limit]=10');
  await send('GET', '/v2/accounts?page[limit]=abc');
  await send('POST', '/v2/application-keys', { data: { type: 'application_key', name: 'observed-key-1', reserved_rate_limit: 5 } });
  await send('POST', '/v2/application-keys', { data: { type: 'application_key', name: 'observed-key-2' } });
  await send('POST', '/v2/application-keys', { data: { type: 'application_key' } });
  const made = await send('POST', '/v2/settings/extensions/custom-apis', {
    data: { type: 'custom_api', name: 'observed', slug: 'observed-api', api_type: 'observed_api_ext', description: 'seen through the proxy' },
  });
  const id = (JSON.parse(made.text) as { data: { id: string } }).data.id;
  await send('DELETE', `/v2/settings/extensions/custom-apis/${id}`);
  // Reads of a deleted id are judged once a store's reads had READS_SETTLE_MS to settle.
  if (settle) await new Promise((r) => setTimeout(r, READS_SETTLE_MS + 100));
  await send('GET', `/v2/settings/extensions/custom-apis/${id}`);
  await send('DELETE', `/v2/settings/extensions/custom-apis/${id}`);
  await send('DELETE', '/v2/settings/extensions/custom-apis/not-a-uuid');
  await send('DELETE', '/v2/settings/extensions/custom-apis/00000000-0000-4000-8000-000000000000', undefined, {});
  return out;
}

/** The traffic as a HAR file, bodies of answers in base64 every other entry. */
function toHar(traffic: readonly Recorded[]): string {
  const list = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  const entries = traffic.map((r, i) => ({
    startedDateTime: new Date(r.started).toISOString(),
    time: r.ms,
    request: {
      method: r.method,
      url: r.url,
      httpVersion: 'HTTP/1.1',
      headers: list(r.headers),
      queryString: [],
      ...(r.body !== undefined ? { postData: { mimeType: 'application/json', text: r.body } } : {}),
    },
    response: {
      status: r.status,
      statusText: '',
      httpVersion: 'HTTP/1.1',
      headers: list(r.responseHeaders),
      content:
        i % 2
          ? { size: r.text.length, mimeType: 'application/json', text: Buffer.from(r.text).toString('base64'), encoding: 'base64' }
          : { size: r.text.length, mimeType: 'application/json', text: r.text },
    },
  }));
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } });
}

/** The proxy in front of a reference server with `faults`, driven, stopped by a signal: its report, the traffic and what it printed. */
async function throughProxy(
  faults: string[] = [],
  settle = faults.some((f) => f.startsWith('delete-')),
): Promise<{ report: RunReport; code: number; traffic: Recorded[]; printed: string[]; upstream: Recorded[] }> {
  const server = await startReferenceServer({ token: TOKEN, seed: 5, records: 40, faults });
  try {
    const proxy = await startProxy(server.url);
    const traffic = await drive(proxy.address, settle);
    const { code, report, printed } = await proxy.stop();
    // The same requests straight to the server: what the proxy passed back must be what it answered.
    const upstream = await drive(server.url);
    return { report, code, traffic, printed, upstream };
  } finally {
    await server.close();
  }
}

const outcome = (report: RunReport, id: string, operation?: string): string | undefined =>
  report.results.find((r) => r.id === id && r.operation === operation)?.outcome;
const failed = (report: RunReport): string[] =>
  report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}`);

describe('conformance proxy in front of the reference server', () => {
  it('passes answers through unchanged, judges the conforming server clean, and never passes what it did not see', async () => {
    const { report, code, traffic, upstream } = await throughProxy([], true);
    expect(failed(report)).toEqual([]);
    expect(code).toBe(0);
    // Byte for byte the same answers (ids and secrets differ: new keys, new Custom APIs).
    const shape = (r: Recorded) =>
      `${r.method} ${new URL(r.url).pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/, '{id}')}${new URL(r.url).search} ${r.status} ${r.responseHeaders['content-type'] ?? ''}`;
    expect(traffic.map(shape)).toEqual(upstream.map(shape));
    expect(traffic.filter((r) => r.method === 'GET' && r.url.includes('/v2/accounts')).map((r) => r.text)).toEqual(
      upstream.filter((r) => r.method === 'GET' && r.url.includes('/v2/accounts')).map((r) => r.text),
    );
    for (const [id, op] of [
      ['delete.existing.204'],
      ['delete.repeat.404'],
      ['delete.malformed-id.rejected'],
      ['delete.unauthenticated.401'],
      ['create.valid.201'],
      ['create.keys.distinct'],
      ['create.rate-limit.echo'],
      ['create.reject.missing-name'],
      ['list.limit.max', 'accounts'],
      ['list.limit.default', 'accounts'],
      ['list.page.arithmetic', 'accounts'],
      ['list.sort.descending', 'accounts'],
      ['list.filter.ge', 'accounts'],
      ['list.offset.traversal', 'accounts'],
      ['list.params.invalid', 'accounts'],
    ] as const) {
      expect(`${id} ${op ?? ''} ${outcome(report, id, op)}`).toBe(`${id} ${op ?? ''} pass`);
    }
    // Not seen, never passed: an operation no request reached, a rule no exchange can show.
    expect(outcome(report, 'list.limit.max', 'orders')).toBe('skip');
    expect(report.results.find((r) => r.id === 'list.keyset.id' && r.operation === 'accounts')?.reason).toMatch(/not exercised/);
    expect(report.results.find((r) => r.id === 'delete.bad-token.refused')?.outcome).toBe('skip');
  });

  it('fails exactly the rules a fault breaks in the traffic', async () => {
    for (const [fault, expected] of [
      ['delete-soft-reads-find-it', ['delete.repeat.404']],
      ['limit-uncapped', ['list.limit.max [accounts]']],
      ['create-repeated-secret', ['create.keys.distinct']],
      ['sort-inverted', ['list.sort.created-at [accounts]', 'list.sort.descending [accounts]']],
      ['create-name-optional', ['create.reject.missing-name']],
      ['page-total-in-records', ['list.page.arithmetic [accounts]']],
      ['bad-paging-500', ['list.params.invalid [accounts]']],
    ] as const) {
      const { report, code } = await throughProxy([fault]);
      expect(failed(report), fault).toEqual(expected);
      expect(code, fault).toBe(1);
    }
  }, 60_000);

  it('leaks neither the token nor a client_secret into any output', async () => {
    const { report, printed, traffic } = await throughProxy(['create-repeated-secret']);
    const secrets = [
      TOKEN,
      ...traffic
        .filter((r) => r.url.endsWith('/v2/application-keys') && r.status === 201)
        .map((r) => (JSON.parse(r.text) as { data: { client_secret: string } }).data.client_secret),
    ];
    const written = JSON.stringify(report) + printed.join('\n');
    for (const s of secrets) expect(written.includes(s), 'a secret in the output').toBe(false);
    expect(failed(report)).toContain('create.keys.distinct');
  });
});

describe('conformance proxy: stopping, and a target it cannot reach', () => {
  it('--until-idle S stops it after S seconds without a request, and the reports are written', async () => {
    const server = await startReferenceServer({ token: TOKEN, seed: 5, records: 10 });
    try {
      const dir = temp();
      const io = captureIo(dir);
      const started = Date.now();
      const done = main(['proxy', '--upstream', server.url, '--until-idle', '1', '--report-dir', 'out'], io);
      let address: string | undefined;
      while (!(address = /http:\/\/127\.0\.0\.1:\d+/.exec(io.lines.join('\n'))?.[0])) await new Promise((r) => setTimeout(r, 10));
      await (await fetch(`${address}/v2/accounts?page[limit]=500`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      expect(await done).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(io.lines.join('\n')).toMatch(/stopping: no request for 1 s \(--until-idle\)/);
      const report = JSON.parse(readFileSync(join(dir, 'out', 'results.json'), 'utf8')) as RunReport;
      expect(outcome(report, 'list.limit.max', 'accounts')).toBe('pass');
    } finally {
      await server.close();
    }
  });

  it('an upstream it cannot reach: 502 with the Error shape to the client, exit 2, no rule blamed', async () => {
    const proxy = await startProxy('http://127.0.0.1:9');
    const res = await fetch(`${proxy.address}/v2/accounts`);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { errors: Array<{ status: string }> }).errors[0]!.status).toBe('502');
    const { code, report } = await proxy.stop();
    expect(code).toBe(2);
    expect(report.suiteErrors.join('\n')).toMatch(/could not be reached/);
    expect(failed(report)).toEqual([]);
  });

  it('refuses bad flags in one line, exit 2', async () => {
    for (const [args, said] of [
      [['proxy'], /--upstream URL is required/],
      [['proxy', '--upstream', 'ftp://x'], /must be http or https/],
      [['proxy', '--upstream', 'http://x', '--until-idle', '0'], /--until-idle takes a whole number from 1/],
      [
        ['proxy', '--upstream', 'http://x', '--default-page-length', 'ten'],
        /^conformance: --default-page-length: must be a whole number from 1 to 100 \(got 'ten'\)$/,
      ],
      [['judge', 'x.har', '--default-page-length', '150'], /^conformance: --default-page-length: must be a whole number from 1 to 100 \(got '150'\)$/],
      [['judge', 'x.har', '--reporter', 'junit,nope'], /^conformance: --reporter: unknown reporter 'nope'/],
      [['judge'], /which HAR file/],
    ] as const) {
      const io = captureIo(temp());
      expect(await main([...args], io), args.join(' ')).toBe(2);
      expect(io.lines[0], args.join(' ')).toMatch(said);
    }
  });

  it('reads its settings as a run does: the environment and the config file too, with the same bounds and messages', async () => {
    const fromEnv = captureIo(temp());
    fromEnv.env.CONFORMANCE_DEFAULT_PAGE_LENGTH = '0';
    expect(await main(['judge', 'x.har'], fromEnv)).toBe(2);
    expect(fromEnv.lines[0]).toBe("conformance: CONFORMANCE_DEFAULT_PAGE_LENGTH: must be a whole number from 1 to 100 (got '0')");
    const dir = temp();
    writeFileSync(join(dir, 'conformance.config.yaml'), 'default-page-length: 101\nbase-url: https://staging.example\n');
    const fromFile = captureIo(dir);
    expect(await main(['judge', 'x.har'], fromFile)).toBe(2);
    // The file's base-url, a run's setting without its token here, does not stop a judgement.
    expect(fromFile.lines[0]).toBe("conformance: conformance.config.yaml: default-page-length: must be a whole number from 1 to 100 (got '101')");
  });
});

describe('conformance judge FILE.har', () => {
  it('reads bodies as text or base64 and gives the verdicts the proxy gave for the same traffic', async () => {
    for (const faults of [[], ['limit-uncapped'], ['delete-soft-reads-find-it']]) {
      const { report: viaProxy, traffic } = await throughProxy(faults);
      const dir = temp();
      writeFileSync(join(dir, 'traffic.har'), toHar(traffic));
      const io = captureIo(dir);
      const code = await main(['judge', 'traffic.har', '--report-dir', 'out'], io);
      const viaHar = JSON.parse(readFileSync(join(dir, 'out', 'results.json'), 'utf8')) as RunReport;
      const verdicts = (r: RunReport) => r.results.map((x) => `${x.id} ${x.operation ?? ''} ${x.outcome}`);
      expect(verdicts(viaHar), faults.join()).toEqual(verdicts(viaProxy));
      expect(code).toBe(viaProxy.exit.code);
    }
  }, 60_000);

  it('refuses what is not a HAR file, in one line, exit 2', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'x.har'), '{"log": {}}');
    const io = captureIo(dir);
    expect(await main(['judge', 'x.har'], io)).toBe(2);
    expect(io.lines[0]).toMatch(/x\.har: no log\.entries array/);
    expect(
      readHar(
        JSON.stringify({
          log: { entries: [{ request: { method: 'GET', url: 'http://x/v2/settings', headers: [] }, response: { status: 0, headers: [], content: {} } }] },
        }),
      ).skipped,
    ).toBe(1);
  });
});

describe('the list checks that judge traffic', () => {
  it('are exactly those judge() holds one answer to (and list.offset.traversal, across pages)', () => {
    const [e] = endpoints(['accounts']);
    const examined = new Set<string>();
    const page = (status: number, body: unknown, url: string) => {
      const text = JSON.stringify(body);
      const res = new HttpResponse(
        status,
        { 'content-type': 'application/json' },
        text,
        { method: 'GET', url, requestHeaders: {}, status, responseHeaders: {}, bodyExcerpt: text, bodyBytes: text.length, durationMs: 1 },
        { ok: true, value: body },
      );
      return listPageOf(res, e!);
    };
    const rec = (i: number) => ({
      id: `0000000${i}-0000-4000-8000-000000000000`,
      meta: { timestamps: { created_at: `2026-01-0${i}T00:00:00.000Z`, updated_at: `2026-01-0${i}T00:00:00.000Z` } },
    });
    const meta = (n: number, offset: number, limit: number) => ({
      page: { limit, offset, current: Math.floor(offset / limit) + 1, total: Math.ceil(n / limit) },
      results: { total: n },
    });
    for (const url of [
      'http://x/v2/accounts',
      'http://x/v2/accounts?page[limit]=500',
      'http://x/v2/accounts?page[limit]=2&sort=-created_at',
      'http://x/v2/accounts?sort=id&page[limit]=2',
      'http://x/v2/accounts?sort=updated_at&page[limit]=2',
      'http://x/v2/accounts?sort=created_at&filter=gt(created_at,2026-01-01T00:00:00.000Z):ge(id,0)&page[limit]=2',
      'http://x/v2/accounts?filter=ge(created_at,2099-01-01T00:00:00.000Z)&page[offset]=3',
    ]) {
      const q = queryOfUrl(url)!;
      const limit = q.limit === undefined ? 25 : Math.min(q.limit, 100);
      judge(
        observerModel('/v2/accounts', 25, false),
        q,
        page(200, { data: [rec(2), rec(1)], meta: meta(2, q.offset ?? 0, limit) }, url),
        () => OPAQUE,
        examined,
      );
      judge(
        observerModel('/v2/orders', 25, true),
        { ...q, offset: 10_001 },
        page(200, { data: [], meta: meta(0, 10_001, limit) }, url),
        () => OPAQUE,
        examined,
      );
      judge(observerModel('/v2/accounts', 25, false), { ...q, offset: 10_001 }, page(500, { errors: [] }, url), () => OPAQUE, examined);
      judge(observerModel('/v2/accounts', 25, false), q, page(200, { data: [], meta: meta(0, q.offset ?? 0, limit) }, url), () => OPAQUE, examined);
    }
    // The two judged outside judge(): across pages, and requests with invalid paging parameters.
    expect([...examined].sort()).toEqual(
      [...OBSERVED_LIST_CHECKS].filter((id) => !['list.offset.traversal', 'list.params.invalid'].includes(id) || examined.has(id)).sort(),
    );
    for (const id of examined) expect(OBSERVED_LIST_CHECKS.has(id), id).toBe(true);
  });
});

describe('the judgement of traffic, on what adversarial servers and clients sent', () => {
  const settings = { endpoints: endpoints() };
  let clock = Date.parse('2026-11-24T12:00:00.000Z');
  const x = (method: string, path: string, status: number, body: unknown, more: Partial<Observed> = {}): Observed => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    clock += 10;
    return {
      method,
      url: `http://t.example${path}`,
      requestHeaders: { authorization: `Bearer ${TOKEN}` },
      status,
      responseHeaders: { 'content-type': 'application/json' },
      responseBody: text,
      bodyBytes: text.length,
      startedAt: clock,
      durationMs: 2,
      ...more,
    };
  };
  const rec = (id: string, day = 1) => ({
    id,
    meta: {
      timestamps: { created_at: `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`, updated_at: `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z` },
    },
  });
  const page = (records: unknown[], limit: number, offset: number, total: number) => ({
    data: records,
    meta: { page: { limit, offset, current: Math.floor(offset / limit) + 1, total: Math.ceil(total / limit) }, results: { total } },
  });
  const failing = (traffic: Observed[], more: Partial<typeof settings & { credentialsStripped: boolean }> = {}): string[] =>
    judgeTraffic(traffic, { ...settings, ...more }, new Secrets())
      .results.filter((r) => r.outcome === 'fail')
      .map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}`);

  it('a request of a shape spec/contract/query-readings.yaml lists: passed under any reading of it, failed under none', () => {
    const ten = Array.from({ length: 10 }, (_, i) => rec(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, i + 1));
    const past = '/v2/accounts?page[limit]=5&page[offset]=18446744073709551621';
    // An offset past 2^64 ignored (Go's strconv.Atoi) or past the end: right; read as 5 (wrapped): wrong.
    expect(failing([x('GET', past, 200, page(ten.slice(0, 5), 5, 0, 10))])).toEqual([]);
    expect(failing([x('GET', past, 200, page([], 5, 0, 10))])).toEqual([]);
    expect(failing([x('GET', past, 200, page(ten.slice(5, 10), 5, 5, 10))])).toEqual(['list.params.invalid [accounts]']);
    // A bare page= before the group: Express's qs reads page[offset] no more; Go and PHP still apply it.
    const bare = '/v2/accounts?page=2&page[offset]=5';
    expect(failing([x('GET', bare, 200, page(ten, 25, 0, 10))])).toEqual([]);
    expect(failing([x('GET', bare, 200, page(ten.slice(5), 25, 5, 10))])).toEqual([]);
    expect(failing([x('GET', bare, 200, page(ten.slice(3), 25, 3, 10))])).toEqual(['list.params.invalid [accounts]']);
  });

  it('ids made of digits: a filter on id is judged in the collation a sort=id page showed, never in one guessed', () => {
    const numeric = (ids: number[]) => ids.map((i) => rec(String(i)));
    // No sort=id page yet: gt(id,9) over 11, 17, 23 is not judged (as strings 11 < 9).
    expect(failing([x('GET', '/v2/accounts?filter=gt(id,9)&page[limit]=3', 200, page(numeric([11, 17, 23]), 3, 0, 3))])).toEqual([]);
    // A sort=id page shows numbers: then records at or before 106 under gt(id,106) break the filter.
    const learned = x('GET', '/v2/accounts?sort=id&page[limit]=3', 200, page(numeric([2, 3, 11]), 3, 0, 40));
    expect(failing([learned, x('GET', '/v2/accounts?sort=id&filter=gt(id,106)&page[limit]=4', 200, page(numeric([77, 86, 95, 97]), 4, 0, 4))])).toEqual([
      'list.filter.gt [accounts]',
    ]);
    expect(failing([learned, x('GET', '/v2/accounts?filter=gt(id,9)&page[limit]=3', 200, page(numeric([11, 17, 23]), 3, 0, 3))])).toEqual([]);
    // Sorted by id descending and filtered, before any collation is learned: the page's own order, the id term not judged.
    expect(failing([x('GET', '/v2/accounts?sort=-id&filter=gt(id,1)&page[limit]=5', 200, page(numeric([23, 17, 11, 3, 2]), 5, 0, 5))])).toEqual([]);
  });

  it('create bodies the contract leaves open may be refused; a plain one may not', () => {
    const create = (data: unknown, status: number) =>
      x(
        'POST',
        '/v2/application-keys',
        status,
        { errors: [{ title: 'Bad Request', status: String(status), detail: 'no' }] },
        { requestBody: JSON.stringify({ data }), requestHeaders: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
      );
    expect(
      failing([
        create({ type: 'application_key', name: 'a', reserved_rate_limit: null }, 400),
        create({ type: 'application_key', name: 'b', description: 'x' }, 400),
        create({ type: 'application_key', name: 'c', reserved_rate_limit: -1 }, 422),
        create({ type: 'application_key', name: 'd\u200b' }, 400),
      ]),
    ).toEqual([]);
    expect(failing([create({ type: 'application_key', name: 'plain name' }, 400)])).toEqual(['create.valid.2xx']);
  });

  it('a parameter given twice, percent-encoding that does not decode, page[limit]=0: no false failure, no crash', () => {
    expect(failing([x('GET', '/v2/accounts?page[limit]=5&page[limit]=10', 200, page([rec('a'), rec('b'), rec('c'), rec('d'), rec('e')], 5, 0, 40))])).toEqual(
      [],
    );
    expect(
      failing([x('GET', '/v2/accounts?filter=ge(created_at,%ZZ)&page[limit]=5', 400, { errors: [{ title: 'Bad Request', status: '400', detail: 'no' }] })]),
    ).toEqual([]);
    const zero = judgeTraffic(
      [
        x(
          'GET',
          '/v2/accounts?page[limit]=0',
          200,
          page(
            Array.from({ length: 25 }, (_, i) => rec(`r${i}`)),
            25,
            0,
            40,
          ),
        ),
      ],
      settings,
      new Secrets(),
    );
    expect(zero.results.filter((r) => r.outcome === 'fail')).toEqual([]);
    expect(zero.counts.faults).toEqual([]);
    expect(zero.results.find((r) => r.id === 'list.params.invalid' && r.operation === 'accounts')!.outcome).toBe('pass');
  });

  it('a sanitized record (no Authorization header anywhere) blames no request for having no token', () => {
    const bare = (o: Observed): Observed => ({ ...o, requestHeaders: {} });
    const traffic = [bare(x('DELETE', '/v2/settings/extensions/custom-apis/0b0c7a5e-1111-4222-8333-444455556666', 204, undefined))];
    expect(failing(traffic)).toEqual(['delete.unauthenticated.refused', 'delete.unauthenticated.401']);
    expect(failing(traffic, { credentialsStripped: true })).toEqual([]);
  });

  it('pages of one query: a repeat is a failure only where writes between them cannot explain it', () => {
    const rs = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `id-${from + i}`,
        meta: { timestamps: { created_at: new Date(Date.UTC(2026, 0, 1, 0, from + i)).toISOString(), updated_at: '2026-01-01T00:00:00.000Z' } },
      }));
    // Newest first: a record created between the two reads pushes the last of page 1 onto page 2.
    const down = (from: number, n: number) => Array.from({ length: n }, (_, i) => rec(`id-${from - i}`, from - i));
    expect(
      failing([
        x('GET', '/v2/accounts?sort=-created_at&page[limit]=5', 200, page(down(27, 5), 5, 0, 12)),
        x('GET', '/v2/accounts?sort=-created_at&page[limit]=5&page[offset]=5', 200, page(down(23, 5), 5, 5, 12)),
      ]),
    ).toEqual([]);
    // Oldest first, the default page length on page 1 and page[limit]=25 on page 2: one traversal.
    const first = x('GET', '/v2/settings', 200, { data: { page_length: 25 } });
    expect(
      failing([
        first,
        x('GET', '/v2/accounts?sort=created_at', 200, page(rs(0, 25), 25, 0, 60)),
        x('GET', '/v2/accounts?sort=created_at&page[limit]=25&page[offset]=25', 200, page(rs(24, 25), 25, 25, 60)),
      ]),
    ).toEqual(['list.offset.traversal [accounts]']);
    // Records tied on created_at may change places between the reads (the order of ties is open).
    const tie = (ids: string[]) => ids.map((id) => rec(id, 5));
    expect(
      failing([
        x('GET', '/v2/accounts?sort=created_at&page[limit]=3', 200, page(tie(['t1', 't2', 't3']), 3, 0, 6)),
        x('GET', '/v2/accounts?sort=created_at&page[limit]=3&page[offset]=3', 200, page(tie(['t3', 't5', 't6']), 3, 3, 6)),
      ]),
    ).toEqual([]);
  });

  it('a Custom API read or deleted again after its DELETE: in either case of its id, once reads had time to settle', () => {
    const id = '020ffab2-1111-4222-8333-444455556666';
    const del = x('DELETE', `/v2/settings/extensions/custom-apis/${id}`, 204, undefined);
    const found = { data: { id, type: 'custom_api' } };
    const later = (path: string, method: string, status: number, body: unknown, ms: number) => ({
      ...x(method, path, status, body),
      startedAt: del.startedAt + del.durationMs + ms,
    });
    // Within the settle time: a lagging read is allowed.
    expect(failing([del, later(`/v2/settings/extensions/custom-apis/${id}`, 'GET', 200, found, 800)])).toEqual([]);
    expect(failing([del, later(`/v2/settings/extensions/custom-apis/${id.toUpperCase()}`, 'GET', 200, found, READS_SETTLE_MS + 50)])).toEqual([
      'delete.repeat.404',
    ]);
    expect(failing([del, later(`/v2/settings/extensions/custom-apis/${id.toUpperCase()}`, 'DELETE', 204, undefined, READS_SETTLE_MS + 50)])).toEqual([
      'delete.repeat.404',
    ]);
  });
});

describe('the judgement of traffic, on a second round of adversarial traffic', () => {
  const settings = { endpoints: endpoints() };
  let clock = Date.parse('2026-11-24T12:00:00.000Z');
  const err = (status: number) => ({ errors: [{ title: 'Error', status: String(status), detail: 'no' }] });
  const x = (method: string, path: string, status: number, body: unknown, more: Partial<Observed> = {}): Observed => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    clock += 10;
    return {
      method,
      url: `http://t.example${path}`,
      requestHeaders: { authorization: 'Bearer expired-token' },
      status,
      responseHeaders: { 'content-type': 'application/json' },
      responseBody: text,
      bodyBytes: text.length,
      startedAt: clock,
      durationMs: 2,
      ...more,
    };
  };
  const failing = (traffic: Observed[]): string[] =>
    judgeTraffic(traffic, settings, new Secrets())
      .results.filter((r) => r.outcome === 'fail')
      .map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}`);
  const create = (data: unknown, status: number, body: unknown, headers: Record<string, string> = {}) =>
    x('POST', '/v2/application-keys', status, body, {
      requestBody: JSON.stringify({ data }),
      requestHeaders: { authorization: 'Bearer t', 'content-type': 'application/json', ...headers },
    });
  const key = (id: string) => ({
    data: {
      id: `00000000-0000-4000-8000-00000000000${id.slice(-1)}`,
      type: 'application_key',
      name: 'n',
      client_id: `c-${id}`,
      client_secret: `s-${id}`,
      meta: { timestamps: { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_used_at: null } },
    },
    meta: {},
    links: {},
  });

  it('a 401 or 403 to a request with a token judges only the shape of the error', () => {
    expect(failing([x('DELETE', '/v2/settings/extensions/custom-apis/not-a-uuid', 401, err(401)), create({ type: 'application_key' }, 403, err(403))])).toEqual(
      [],
    );
  });

  it('an invalid body sent as text/plain or compressed may be refused as media (415)', () => {
    expect(
      failing([
        create({ type: 'application_key' }, 415, err(415), { 'content-type': 'text/plain' }),
        create({ type: 'application_key' }, 415, err(415), { 'content-encoding': 'gzip' }),
      ]),
    ).toEqual([]);
  });

  it('a timestamp without a zone is read as UTC, whatever the zone of the machine', () => {
    expect(parseInstant('2025-12-13T21:01:43')).toBe(parseInstant('2025-12-13T21:01:43Z'));
    expect(parseInstant('2025-12-13 21:01:43.250')).toBe(parseInstant('2025-12-13T21:01:43.250Z'));
  });

  it("a retry with the Idempotency-Key of an earlier create gets that create's key; another create may not", () => {
    expect(
      failing([
        create({ type: 'application_key', name: 'n' }, 201, key('k1'), { 'idempotency-key': 'i1' }),
        create({ type: 'application_key', name: 'n' }, 201, key('k1'), { 'idempotency-key': 'i1' }),
      ]),
    ).toEqual([]);
    expect(failing([create({ type: 'application_key', name: 'n' }, 201, key('k1')), create({ type: 'application_key', name: 'n' }, 201, key('k1'))])).toEqual([
      'create.keys.distinct',
    ]);
  });

  it('a page_length set with PUT /v2/settings is the default from then on; each store (credentials) has its own', () => {
    const rec = (i: number) => ({ id: `r${i}`, meta: { timestamps: { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' } } });
    const list = (n: number, auth: string) =>
      x(
        'GET',
        '/v2/accounts',
        200,
        { data: Array.from({ length: n }, (_, i) => rec(i)), meta: { page: { limit: n, offset: 0, current: 1, total: 2 }, results: { total: n * 2 - 1 } } },
        { requestHeaders: { authorization: auth } },
      );
    const settingsOf = (method: string, n: number, auth: string) =>
      x(method, '/v2/settings', 200, { data: { page_length: n } }, { requestHeaders: { authorization: auth } });
    expect(failing([settingsOf('GET', 25, 'Bearer a'), settingsOf('PUT', 40, 'Bearer a'), list(40, 'Bearer a')])).toEqual([]);
    expect(failing([settingsOf('GET', 40, 'Bearer a'), settingsOf('GET', 25, 'Bearer b'), list(25, 'Bearer b')])).toEqual([]);
    expect(failing([settingsOf('GET', 25, 'Bearer a'), list(40, 'Bearer a')])).toEqual(['list.limit.default [accounts]', 'list.page.arithmetic [accounts]']);
  });

  it('a well-formed UUID refused as invalid, and a 5xx to any create: failures', () => {
    const auth = { requestHeaders: { authorization: 'Bearer t' } };
    expect(failing([x('DELETE', '/v2/settings/extensions/custom-apis/8F14E45F-CEEA-467F-A0E6-A1C1E0A3B5D2', 400, err(400), auth)])).toEqual([
      'delete.unknown-id.404',
    ]);
    expect(failing([create({ type: 'application_key', name: 'n', reserved_rate_limit: null }, 500, err(500))])).toEqual(['create.request.open-shapes']);
  });
});

describe('conformance proxy passes requests as sent', () => {
  it('refuses what is not a path, forwards dot segments unchanged, and blames no upstream for a client that went away', async () => {
    const seen: string[] = [];
    const upstream = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"title":"Not Found","status":"404","detail":"none"}]}'));
    });
    const up = await listening(upstream);
    try {
      const proxy = await startProxy(up.url);
      const port = new URL(proxy.address).port;
      const raw = (text: string): Promise<string> =>
        new Promise((resolve) => {
          const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
          let got = '';
          socket.on('data', (d) => (got += d.toString()));
          socket.on('close', () => resolve(got));
          setTimeout(() => socket.destroy(), 500);
        });
      expect(await raw(`GET http://127.0.0.1:${port}/v2/accounts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
      expect(await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
      await raw('DELETE /v2/settings/extensions/custom-apis/%2e%2e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await raw('DELETE /v2/settings/extensions/custom-apis/.. HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      // A body announced longer than sent, then the client closes.
      const cut = connect(Number(port), '127.0.0.1', () =>
        cut.write('POST /v2/application-keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"data":{'),
      );
      await new Promise((r) => setTimeout(r, 200));
      cut.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const { report } = await proxy.stop();
      expect(seen).toEqual(expect.arrayContaining(['DELETE /v2/settings/extensions/custom-apis/%2e%2e', 'DELETE /v2/settings/extensions/custom-apis/..']));
      expect(seen.some((s) => s.startsWith('GET') || s.startsWith('OPTIONS'))).toBe(false);
      expect(report.suiteErrors.filter((e) => /upstream/.test(e))).toEqual([]);
    } finally {
      await up.close();
    }
  });

  it('judges a create whose body was sent gzip-compressed by what it says', async () => {
    // An upstream that reads gzip request bodies and creates the key.
    const upstream = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (d: Buffer) => parts.push(d));
      req.on('end', () => {
        const body = JSON.parse(gunzipSync(Buffer.concat(parts)).toString()) as { data: { name: string } };
        const now = new Date().toISOString();
        res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            data: {
              id: randomUUID(),
              type: 'application_key',
              name: body.data.name,
              client_id: randomUUID(),
              client_secret: 'zipped-secret-0123456789',
              meta: { timestamps: { created_at: now, updated_at: now, last_used_at: null } },
            },
            meta: {},
            links: {},
          }),
        );
      });
    });
    const up = await listening(upstream);
    try {
      const proxy = await startProxy(up.url);
      await fetch(`${proxy.address}/v2/application-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify({ data: { type: 'application_key', name: 'zipped' } })),
      }).then((r) => r.text());
      const { report } = await proxy.stop();
      expect(failed(report)).toEqual([]);
      expect(outcome(report, 'create.response.schema')).toBe('pass');
    } finally {
      await up.close();
    }
  });
});
