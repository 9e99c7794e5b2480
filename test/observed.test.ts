// Traffic the suite did not send, judged by its rules: `conformance proxy` in front of the
// reference server (and its faults), and `conformance judge` on a HAR file of the same traffic.
// The proxy must pass every byte through unchanged, fail exactly the rules a fault breaks in the
// traffic, pass nothing it did not see, leak no secret, and agree with the HAR judgement.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHar } from '../lib/har.js';
import { OBSERVED_LIST_CHECKS, judge, observerModel, OPAQUE, queryOfUrl } from '../suites/list/model.js';
import { listPageOf } from '../suites/list/pages.js';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import type { RunReport } from '../reporters/model.js';
import { startReferenceServer } from '../server/index.js';
import { endpoints, TOKEN } from './support.js';
import { startProxy } from './fixtures/proxy.js';
import { HttpResponse } from '../lib/http.js';

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
async function drive(base: string): Promise<Recorded[]> {
  const out: Recorded[] = [];
  const auth = { authorization: `Bearer ${TOKEN}` };
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth): Promise<Recorded> => {
    const h: Record<string, string> = { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
    const started = Date.now();
    const res = await fetch(`${base}${path}`, { method, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    const r: Recorded = { method, url: `${base}${path}`, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), status: res.status, responseHeaders: Object.fromEntries(res.headers), text, started, ms: Date.now() - started };
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
  await send('POST', '/v2/application-keys', { data: { type: 'application_key', name: 'observed-key-1', reserved_rate_limit: 5 } });
  await send('POST', '/v2/application-keys', { data: { type: 'application_key', name: 'observed-key-2' } });
  await send('POST', '/v2/application-keys', { data: { type: 'application_key' } });
  const made = await send('POST', '/v2/settings/extensions/custom-apis', { data: { type: 'custom_api', name: 'observed', slug: 'observed-api', api_type: 'observed_api_ext', description: 'seen through the proxy' } });
  const id = (JSON.parse(made.text) as { data: { id: string } }).data.id;
  await send('DELETE', `/v2/settings/extensions/custom-apis/${id}`);
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
    request: { method: r.method, url: r.url, httpVersion: 'HTTP/1.1', headers: list(r.headers), queryString: [], ...(r.body !== undefined ? { postData: { mimeType: 'application/json', text: r.body } } : {}) },
    response: { status: r.status, statusText: '', httpVersion: 'HTTP/1.1', headers: list(r.responseHeaders), content: i % 2 ? { size: r.text.length, mimeType: 'application/json', text: Buffer.from(r.text).toString('base64'), encoding: 'base64' } : { size: r.text.length, mimeType: 'application/json', text: r.text } },
  }));
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } });
}

/** The proxy in front of a reference server with `faults`, driven, stopped by a signal: its report, the traffic and what it printed. */
async function throughProxy(faults: string[] = []): Promise<{ report: RunReport; code: number; traffic: Recorded[]; printed: string[]; upstream: Recorded[] }> {
  const server = await startReferenceServer({ token: TOKEN, seed: 5, records: 40, faults });
  try {
    const proxy = await startProxy(server.url);
    const traffic = await drive(proxy.address);
    const { code, report, printed } = await proxy.stop();
    // The same requests straight to the server: what the proxy passed back must be what it answered.
    const upstream = await drive(server.url);
    return { report, code, traffic, printed, upstream };
  } finally {
    await server.close();
  }
}

const outcome = (report: RunReport, id: string, operation?: string): string | undefined => report.results.find((r) => r.id === id && r.operation === operation)?.outcome;
const failed = (report: RunReport): string[] => report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}`);

describe('conformance proxy in front of the reference server', () => {
  it('passes answers through unchanged, judges the conforming server clean, and never passes what it did not see', async () => {
    const { report, code, traffic, upstream } = await throughProxy();
    expect(failed(report)).toEqual([]);
    expect(code).toBe(0);
    // Byte for byte the same answers (ids and secrets differ: new keys, new Custom APIs).
    const shape = (r: Recorded) => `${r.method} ${new URL(r.url).pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/, '{id}')}${new URL(r.url).search} ${r.status} ${r.responseHeaders['content-type'] ?? ''}`;
    expect(traffic.map(shape)).toEqual(upstream.map(shape));
    expect(traffic.filter((r) => r.method === 'GET' && r.url.includes('/v2/accounts')).map((r) => r.text)).toEqual(upstream.filter((r) => r.method === 'GET' && r.url.includes('/v2/accounts')).map((r) => r.text));
    for (const [id, op] of [['delete.existing.204'], ['delete.repeat.404'], ['delete.malformed-id.rejected'], ['delete.unauthenticated.401'], ['create.valid.201'], ['create.keys.distinct'], ['create.rate-limit.echo'], ['create.reject.missing-name'], ['list.limit.max', 'accounts'], ['list.limit.default', 'accounts'], ['list.page.arithmetic', 'accounts'], ['list.sort.descending', 'accounts'], ['list.filter.ge', 'accounts'], ['list.offset.traversal', 'accounts']] as const) {
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
    ] as const) {
      const { report, code } = await throughProxy([fault]);
      expect(failed(report), fault).toEqual(expected);
      expect(code, fault).toBe(1);
    }
  }, 60_000);

  it('leaks neither the token nor a client_secret into any output', async () => {
    const { report, printed, traffic } = await throughProxy(['create-repeated-secret']);
    const secrets = [TOKEN, ...traffic.filter((r) => r.url.endsWith('/v2/application-keys') && r.status === 201).map((r) => (JSON.parse(r.text) as { data: { client_secret: string } }).data.client_secret)];
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
      [['proxy', '--upstream', 'http://x', '--default-page-length', 'ten'], /--default-page-length takes a whole number/],
      [['judge'], /which HAR file/],
    ] as const) {
      const io = captureIo(temp());
      expect(await main([...args], io), args.join(' ')).toBe(2);
      expect(io.lines[0], args.join(' ')).toMatch(said);
    }
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
    expect(readHar(JSON.stringify({ log: { entries: [{ request: { method: 'GET', url: 'http://x/v2/settings', headers: [] }, response: { status: 0, headers: [], content: {} } }] } })).skipped).toBe(1);
  });
});

describe('the list checks that judge traffic', () => {
  it('are exactly those judge() holds one answer to (and list.offset.traversal, across pages)', () => {
    const [e] = endpoints(['accounts']);
    const examined = new Set<string>();
    const page = (status: number, body: unknown, url: string) => {
      const text = JSON.stringify(body);
      const res = new HttpResponse(status, { 'content-type': 'application/json' }, text, { method: 'GET', url, requestHeaders: {}, status, responseHeaders: {}, bodyExcerpt: text, bodyBytes: text.length, durationMs: 1 }, { ok: true, value: body });
      return listPageOf(res, e!);
    };
    const rec = (i: number) => ({ id: `0000000${i}-0000-4000-8000-000000000000`, meta: { timestamps: { created_at: `2026-01-0${i}T00:00:00.000Z`, updated_at: `2026-01-0${i}T00:00:00.000Z` } } });
    const meta = (n: number, offset: number, limit: number) => ({ page: { limit, offset, current: Math.floor(offset / limit) + 1, total: Math.ceil(n / limit) }, results: { total: n } });
    for (const url of ['http://x/v2/accounts', 'http://x/v2/accounts?page[limit]=500', 'http://x/v2/accounts?page[limit]=2&sort=-created_at', 'http://x/v2/accounts?sort=id&page[limit]=2', 'http://x/v2/accounts?sort=updated_at&page[limit]=2', 'http://x/v2/accounts?sort=created_at&filter=gt(created_at,2026-01-01T00:00:00.000Z):ge(id,0)&page[limit]=2', 'http://x/v2/accounts?filter=ge(created_at,2099-01-01T00:00:00.000Z)&page[offset]=3']) {
      const q = queryOfUrl(url)!;
      const limit = q.limit === undefined ? 25 : Math.min(q.limit, 100);
      judge(observerModel('/v2/accounts', 25, false), q, page(200, { data: [rec(2), rec(1)], meta: meta(2, q.offset ?? 0, limit) }, url), () => OPAQUE, examined);
      judge(observerModel('/v2/orders', 25, true), { ...q, offset: 10_001 }, page(200, { data: [], meta: meta(0, 10_001, limit) }, url), () => OPAQUE, examined);
      judge(observerModel('/v2/accounts', 25, false), { ...q, offset: 10_001 }, page(500, { errors: [] }, url), () => OPAQUE, examined);
      judge(observerModel('/v2/accounts', 25, false), q, page(200, { data: [], meta: meta(0, q.offset ?? 0, limit) }, url), () => OPAQUE, examined);
    }
    expect([...examined].sort()).toEqual([...OBSERVED_LIST_CHECKS].filter((id) => id !== 'list.offset.traversal' || examined.has(id)).sort());
    for (const id of examined) expect(OBSERVED_LIST_CHECKS.has(id), id).toBe(true);
  });
});
