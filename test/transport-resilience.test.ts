// The transport (lib/transport/http.ts) against a hostile network and a busy machine, one behaviour
// at a time, on small servers of the test's own (port 0, closed after): retries end by a time
// budget, not a small count; a GET that times out is sent again, a POST never; the in-flight
// bound follows latency as well as 429s; the breaker counts failures spread over time, not
// requests that failed together; one memory budget covers every body being read; and a body
// over the cap is reported as such. Time is shrunk with the policy's sleep and small timeouts;
// no assertion is on a wall time.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyBudget, Breaker, BREAKER_AFTER, HttpClient, type HttpClientOptions } from '../lib/transport/index.js';
import { SuiteError, Secrets } from '../lib/evidence/index.js';
import { listening, warm } from './support.js';

const TOKEN = 'tok-resilience-4c1d';

/** Servers and clients a test opened, closed after it. */
const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length) await open.pop()!();
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A server whose handler also gets the order of arrival (from 0); closed after the test. */
async function serve(handler: Handler): Promise<{ url: string; arrivals: string[] }> {
  const arrivals: string[] = [];
  const server = createServer((req, res) => {
    arrivals.push(`${req.method} ${req.url}`);
    handler(req, res, arrivals.length - 1);
  });
  const s = await listening(server);
  open.push(s.close);
  return { url: s.url, arrivals };
}

function client(url: string, over: Partial<HttpClientOptions> = {}): HttpClient {
  const http = new HttpClient({ baseUrl: url, token: TOKEN, timeoutMs: 2_000, maxBodyBytes: 1 << 20, concurrency: 8, secrets: new Secrets(), ...over });
  open.push(() => http.close());
  return http;
}

/** A sleep that records the waits asked for and takes 1/100 of each. */
function quickSleep(): { asked: number[]; sleep: (ms: number) => Promise<void> } {
  const asked: number[] = [];
  return { asked, sleep: (ms) => (asked.push(ms), delay(ms / 100)) };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** How many times each request (method and URL) has arrived, the current one included. */
function repeats(): (req: IncomingMessage) => number {
  const seen = new Map<string, number>();
  return (req) => {
    const key = `${req.method} ${req.url}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    return seen.get(key)!;
  };
}

const failure = (p: Promise<unknown>): Promise<SuiteError> =>
  p.then(
    () => expect.fail('the request was answered'),
    (e: unknown) => e as SuiteError,
  );

describe('429 and 503: retried by a time budget, not a count', () => {
  it('a burst of nine 429s without Retry-After is waited out: the request is served (four retries used to give up)', async () => {
    const nth = repeats();
    const s = await serve((req, res) => (nth(req) <= 9 ? json(res, 429, { errors: [] }) : json(res, 200, { data: 'ok' })));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep } });
    const res = await http.request({ method: 'GET', path: '/v2/settings' });
    expect(res.status).toBe(200);
    expect(res.exchange.attempts).toBe(10);
    expect(http.stats).toMatchObject({ requests: 1, retries: 9, waitedOut: 9, timeoutRetries: 0 });
    // Backoff with jitter, doubling from 500 ms and capped at 8 s: each wait in [ceiling / 2, ceiling].
    clock.asked.forEach((ms, i) => {
      const ceiling = Math.min(8_000, 500 * 2 ** i);
      expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
      expect(ms).toBeLessThanOrEqual(ceiling);
    });
  });

  it('a POST answered 429 with Retry-After in seconds, then as an HTTP date, then without, reaches the server once', async () => {
    const nth = repeats();
    let processed = 0;
    const s = await serve((req, res) => {
      const n = nth(req);
      if (n === 1) return json(res, 429, {}, { 'retry-after': '3' });
      if (n === 2) return json(res, 503, {}, { 'retry-after': new Date(Date.now() + 5_000).toUTCString() });
      if (n <= 6) return json(res, 429, {});
      processed++;
      json(res, 201, { data: { id: 'k1' } });
    });
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep } });
    const res = await http.request({ method: 'POST', path: '/v2/application-keys', json: { data: { name: 'k' } } });
    expect(res.status).toBe(201);
    expect(processed).toBe(1);
    expect(clock.asked[0]).toBe(3_000);
    // The date has whole seconds: what is left of 4 to 5 s when the 503 arrives.
    expect(clock.asked[1]).toBeGreaterThan(3_000);
    expect(clock.asked[1]).toBeLessThanOrEqual(5_000);
    expect(clock.asked).toHaveLength(6);
  });

  it('gives up when the next wait would pass the time budget, whatever the count: RATE_LIMITED, never an answer', async () => {
    const s = await serve((_req, res) => json(res, 429, {}, { 'retry-after': '1' }));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep, maxWaitMs: 12_000 } });
    const err = await failure(http.request({ method: 'GET', path: '/v2/accounts' }));
    expect(err.code).toBe('RATE_LIMITED');
    // Twelve waits of 1 s fit in 12 s; a thirteenth does not.
    expect(err.message).toMatch(
      /still 429 after 13 attempts and 12000 ms of waiting: 1000 ms more \(Retry-After: 1\) would pass its 12000 ms of waiting; no verdict rests on a rate-limited answer$/,
    );
    expect(s.arrivals).toHaveLength(13);
  });

  it('keeps a safety cap on the count: the last 503 is then the answer', async () => {
    const s = await serve((_req, res) => json(res, 503, {}, { 'retry-after': '1' }));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep, maxRetries: 3 } });
    const res = await http.request({ method: 'DELETE', path: '/v2/x/1' });
    expect(res.status).toBe(503);
    expect(res.exchange.attempts).toBe(4);
    expect(clock.asked).toEqual([1_000, 1_000, 1_000]);
  });
});

describe("a gateway's 502, 503 or 504: waited out for a GET; a 500 never sent again", () => {
  it('a GET answered 502, then 504, then 503 is sent again after the backoff and served', async () => {
    const nth = repeats();
    const s = await serve((req, res) => {
      const n = nth(req);
      if (n <= 3) return json(res, [502, 504, 503][n - 1]!, { errors: [] });
      json(res, 200, { data: [] });
    });
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep } });
    const res = await http.request({ method: 'GET', path: '/v2/accounts' });
    expect(res.status).toBe(200);
    expect(res.exchange.attempts).toBe(4);
    expect(clock.asked).toHaveLength(3);
    expect(http.stats).toMatchObject({ requests: 1, retries: 3, waitedOut: 3 });
  });

  it('a GET answered 502 to the end of its time budget gets that 502 as its answer (no error of the suite)', async () => {
    const s = await serve((_req, res) => json(res, 502, { errors: [{ status: '502', title: 'Bad Gateway' }] }));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep, maxWaitMs: 5_000 } });
    const res = await http.request({ method: 'GET', path: '/v2/accounts' });
    expect(res.status).toBe(502);
    expect(res.exchange.attempts).toBe(s.arrivals.length);
    expect(clock.asked.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(5_000);
  });

  it('a 500 is never sent again, whatever the method; a POST or DELETE answered 502 or 504 is not either (it may have been applied)', async () => {
    const s = await serve((req, res) => json(res, req.method === 'GET' ? 500 : req.method === 'POST' ? 502 : 504, {}));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep } });
    expect((await http.request({ method: 'GET', path: '/v2/accounts' })).status).toBe(500);
    expect((await http.request({ method: 'POST', path: '/v2/application-keys', json: {} })).status).toBe(502);
    expect((await http.request({ method: 'DELETE', path: '/v2/x/1' })).status).toBe(504);
    expect(s.arrivals).toEqual(['GET /v2/accounts', 'POST /v2/application-keys', 'DELETE /v2/x/1']);
    expect(clock.asked).toEqual([]);
  });

  it('a POST answered 503 is sent again (the service did not take it up), and reaches the service once', async () => {
    const nth = repeats();
    const s = await serve((req, res) => (nth(req) === 1 ? json(res, 503, {}) : json(res, 201, { data: { id: 'k1' } })));
    const clock = quickSleep();
    const http = client(s.url, { retry: { sleep: clock.sleep } });
    const res = await http.request({ method: 'POST', path: '/v2/application-keys', json: { data: { name: 'k' } } });
    expect(res.status).toBe(201);
    expect(s.arrivals).toHaveLength(2);
  });
});

describe('a GET that times out is sent again; a POST or DELETE is not', () => {
  it('a GET whose first attempt never answers is sent again after a backoff and served', async () => {
    const nth = repeats();
    const s = await serve((req, res) => {
      if (req.url === '/v2/settings' || nth(req) > 1) json(res, 200, { data: [] });
    });
    const clock = quickSleep();
    const http = client(s.url, { timeoutMs: 150, retry: { sleep: clock.sleep } });
    await http.request({ method: 'GET', path: '/v2/settings' });
    const res = await http.request({ method: 'GET', path: '/v2/accounts' });
    expect(res.status).toBe(200);
    expect(res.exchange.attempts).toBe(2);
    expect(http.stats).toMatchObject({ requests: 2, retries: 1, timeoutRetries: 1, resetRetries: 0, waitedOut: 0 });
    expect(clock.asked).toHaveLength(1);
    expect(clock.asked[0]).toBeGreaterThanOrEqual(250);
    expect(clock.asked[0]).toBeLessThanOrEqual(500);
  });

  it('a GET whose answer stalls halfway through its body is sent again whole', async () => {
    const nth = repeats();
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
      if (nth(req) === 1) res.write('{"data":');
      else res.end('{"data":[]}');
    });
    const http = client(s.url, { timeoutMs: 150, retry: { sleep: quickSleep().sleep } });
    const res = await http.request({ method: 'GET', path: '/v2/files' });
    expect(res.json()).toEqual({ data: [] });
    expect(http.stats).toMatchObject({ retries: 1, timeoutRetries: 1 });
  });

  it('never sends a POST or a DELETE again after a timeout (it may have been applied)', async () => {
    const s = await serve(() => undefined);
    const http = client(s.url, { timeoutMs: 100, retry: { sleep: quickSleep().sleep } });
    for (const spec of [
      { method: 'POST', path: '/v2/application-keys', json: {} },
      { method: 'DELETE', path: '/v2/x/1' },
    ] as const) {
      const err = await failure(http.request(spec));
      expect(err.code).toBe('TIMEOUT');
      expect(err.message).toMatch(/no complete answer within 100 ms$/);
    }
    expect(s.arrivals).toEqual(['POST /v2/application-keys', 'DELETE /v2/x/1']);
    expect(http.stats.retries).toBe(0);
  });

  it('a GET that never answers is sent again until its time budget is spent (the timed-out attempts count toward it), then ends in TIMEOUT', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/v2/settings') json(res, 200, { data: {} });
    });
    const clock = quickSleep();
    // Waits of 250 to 500 ms, and the second and later attempts' 100 ms each, within 1.2 s.
    const http = client(s.url, { timeoutMs: 100, breakerAfter: 100, retry: { sleep: clock.sleep, maxWaitMs: 1_200, baseDelayMs: 500, maxDelayMs: 500 } });
    await http.request({ method: 'GET', path: '/v2/settings' });
    const err = await failure(http.request({ method: 'GET', path: '/v2/accounts' }));
    const attempts = s.arrivals.length - 1;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(new RegExp(`no complete answer within 100 ms \\(${attempts} attempts\\)$`));
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(http.stats.timeoutRetries).toBe(attempts - 1);
    expect(clock.asked.reduce((x, y) => x + y, 0) + 100 * (attempts - 1)).toBeLessThanOrEqual(1_200 + 100);
  });

  it('a first request that times out before the target has answered anything is not sent again: the target is not there, or the timeout too short', async () => {
    const s = await serve(() => undefined);
    const http = client(s.url, { timeoutMs: 100, retry: { sleep: quickSleep().sleep } });
    const err = await failure(http.request({ method: 'GET', path: '/v2/settings' }));
    expect(err.code).toBe('TIMEOUT');
    expect(s.arrivals).toHaveLength(1);
  });
});

describe('the in-flight bound follows latency as well as 429s', () => {
  it('answers far slower than unloaded ones of their kind lower the bound, before any error; fast ones let it climb back', async () => {
    let slowMs = 0;
    const s = await serve((_req, res) => {
      setTimeout(() => json(res, 200, { data: [] }), slowMs);
    });
    const http = client(s.url, { timeoutMs: 1_000, concurrency: 8 });
    await warm(http, 8, '/v2/accounts');
    expect(http.concurrency).toBe(8);
    // Half the timeout: slow, against a target that answered in a few ms.
    slowMs = 500;
    // Counted from here: a slow moment of a busy machine may have lowered it once while warming.
    const before = http.load().backoffs.latency;
    await Promise.all(Array.from({ length: 8 }, () => http.request({ method: 'GET', path: '/v2/accounts' })));
    // One window of answers (some of it still fast, from before) far above the baseline lowers it.
    expect(http.concurrency).toBeLessThan(8);
    expect(http.load().backoffs).toEqual({ latency: before + 1, 'rate-limited': 0, timeout: 0 });
    // Latency's back-offs are the limiter at work, not a trouble of the run (timeouts and 429s are).
    expect(http.stats.latencyLoweredTo).toBeUndefined();
    expect(http.stats.concurrencyLoweredTo).toBeUndefined();
    slowMs = 0;
    await warm(http, 8, '/v2/accounts');
    expect(http.concurrency).toBe(8);
  });

  it('requests that time out together halve the bound once, and are sent again', async () => {
    const nth = repeats();
    const s = await serve((req, res) => {
      if (req.url === '/v2/settings' || nth(req) > 1) json(res, 200, { data: [] });
    });
    const http = client(s.url, { timeoutMs: 150, concurrency: 8, retry: { sleep: quickSleep().sleep } });
    await warm(http, 8, '/v2/settings');
    // Counted from here: a warming GET of a busy machine may have taken longer than 150 ms.
    const retried = http.stats.timeoutRetries;
    const halved = http.load().backoffs.timeout;
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => http.request({ method: 'GET', path: `/v2/accounts/${i}` })));
    expect(all.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(http.stats.timeoutRetries - retried).toBe(8);
    // Halved once, from 8 to 4; the retries, answered fast, may have let it grow back a step since.
    expect(http.stats.latencyLoweredTo).toBeLessThanOrEqual(4);
    expect(http.load().backoffs.timeout - halved).toBe(1);
    expect(http.concurrency).toBeLessThan(8);
  });
});

describe('the breaker counts failures spread over time, not requests in flight together', () => {
  it('counts a failure only when it is a moment of its own: sent after the last counted one, or well apart from it', () => {
    const b = new Breaker({ gapMs: 1_000 });
    expect(b.count(0, 100)).toBe(true);
    // In flight at the failure counted at 100, and failing soon after it: the same moment.
    expect(b.count(10, 150)).toBe(false);
    expect(b.count(90, 1_050)).toBe(false);
    // Sent after it: new evidence.
    expect(b.count(120, 300)).toBe(true);
    // In flight at it, but failing well after it (more than gapMs): a moment of its own.
    expect(b.count(0, 1_400)).toBe(true);
    expect(b.failures).toBe(3);
  });

  it('sixteen GETs in flight that time out together (a busy moment) do not open the breaker: each is sent again and served', async () => {
    const nth = repeats();
    const s = await serve((req, res) => {
      if (req.url === '/v2/warm' || nth(req) > 1) json(res, 200, { data: [] });
    });
    const http = client(s.url, { timeoutMs: 150, concurrency: 16, retry: { sleep: quickSleep().sleep } });
    await warm(http, 16);
    expect(http.concurrency).toBe(16);
    // Counted from here: a warming GET of a busy machine may have taken longer than 150 ms.
    const before = http.stats.timeoutRetries;
    const all = await Promise.all(Array.from({ length: 16 }, (_, i) => http.request({ method: 'GET', path: `/v2/accounts/${i}` })));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(http.stats.breakerOpenedAfter).toBeUndefined();
    expect(http.stats.timeoutRetries - before).toBe(16);
  });

  it(`a target that stops answering still stops the run: after ${BREAKER_AFTER} failures apart in time, nothing more is sent`, async () => {
    const s = await serve((_req, res, n) => {
      if (n < 10) json(res, 200, { data: [] });
    });
    const http = client(s.url, { timeoutMs: 100, concurrency: 4, retry: { sleep: quickSleep().sleep } });
    for (let i = 0; i < 10; i++) await http.request({ method: 'GET', path: '/v2/accounts' });
    const errs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        failure(http.request({ method: i % 4 === 0 ? 'POST' : 'GET', path: `/v2/accounts/${i}`, json: i % 4 === 0 ? {} : undefined })),
      ),
    );
    expect(errs.filter((e) => e.code !== 'TIMEOUT' && e.code !== 'TARGET_DOWN')).toEqual([]);
    expect(errs.filter((e) => e.code === 'TARGET_DOWN').length).toBeGreaterThan(20);
    expect(http.stats.breakerOpenedAfter).toBe(BREAKER_AFTER);
    expect(http.stats.refused).toBeGreaterThan(0);
    // The bound fell with the timeouts: few requests hung at a time, a few rounds of them.
    expect(s.arrivals.length - 10).toBeLessThanOrEqual(BREAKER_AFTER * 4);
    const down = errs.find((e) => e.code === 'TARGET_DOWN')!;
    expect(down.message).toMatch(
      new RegExp(
        `the target stopped answering under the run after 10 answered requests \\(nothing answered for \\d+ s with requests in flight; ${BREAKER_AFTER} failures in a row, at moments apart in time; the last: TIMEOUT: `,
      ),
    );
  });

  it(`a target that refuses connections opens the breaker after ${BREAKER_AFTER} requests`, async () => {
    const s = await serve(() => undefined);
    const url = s.url;
    await open.pop()!();
    const http = client(url);
    const errs: string[] = [];
    for (let i = 0; i < BREAKER_AFTER + 2; i++) errs.push((await failure(http.request({ method: 'GET', path: '/v2/accounts' }))).code);
    // The last failure before the breaker opens already says so.
    expect(errs).toEqual([...Array<string>(BREAKER_AFTER - 1).fill('TARGET_UNREACHABLE'), 'TARGET_DOWN', 'TARGET_DOWN', 'TARGET_DOWN']);
    expect(http.stats).toMatchObject({ breakerOpenedAfter: BREAKER_AFTER, refused: 2 });
  });
});

describe('a busy machine', () => {
  it('an answer that arrived while this process was busy past the timeout is read, not timed out', async () => {
    // The server runs in a thread of its own, so that it answers while this thread is blocked.
    // It waits for this thread to block, answers, and says so; this thread stays blocked until
    // the answer is in its socket and the timeout has passed, as on a machine too busy to run
    // the client's timers and read its sockets in time.
    const sync = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(
      `const { createServer } = require('node:http');
       const { parentPort, workerData } = require('node:worker_threads');
       const sync = workerData;
       const server = createServer((req, res) => {
         req.resume();
         req.on('end', () => {
           parentPort.postMessage('arrived');
           Atomics.wait(sync, 0, 0);
           res.writeHead(201, { 'content-type': 'application/json' });
           res.end('{"data":{"id":"k1"}}', () => { Atomics.store(sync, 1, 1); Atomics.notify(sync, 1); });
         });
       });
       server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
      { eval: true, workerData: sync },
    );
    open.push(async () => {
      await worker.terminate();
    });
    const messages: unknown[] = [];
    const next = (): Promise<unknown> => new Promise((r) => worker.once('message', r));
    const port = await next();
    const http = client(`http://127.0.0.1:${port}`, { timeoutMs: 150 });
    const arrived = next();
    const res = http.request({ method: 'POST', path: '/v2/application-keys', json: { data: { name: 'k' } } });
    messages.push(await arrived);
    const blockedAt = performance.now();
    Atomics.store(sync, 0, 1);
    Atomics.notify(sync, 0);
    Atomics.wait(sync, 1, 0, 10_000);
    while (performance.now() - blockedAt < 300);
    expect((await res).status).toBe(201);
    expect(messages).toEqual(['arrived']);
    expect(http.stats.retries).toBe(0);
  });
});

describe('one memory budget for every body being read', () => {
  it('a reader past the budget pauses until others give their bytes back; the oldest always goes on', () => {
    const budget = new BodyBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const woken: string[] = [];
    expect(budget.take(a, 60, () => woken.push('a'))).toBe(true);
    expect(budget.take(b, 30, () => woken.push('b'))).toBe(true);
    // Past the budget: b and c wait; a, the oldest, goes on however much it holds.
    expect(budget.take(b, 30, () => woken.push('b'))).toBe(false);
    expect(budget.take(c, 10, () => woken.push('c'))).toBe(false);
    expect(budget.take(a, 500, () => woken.push('a'))).toBe(true);
    expect(budget.used).toBe(630);
    budget.release(a);
    // 70 bytes held now: both may read on.
    expect(woken).toEqual(['b', 'c']);
    expect(budget.take(b, 100, () => woken.push('b'))).toBe(true);
    expect(budget.take(c, 1, () => woken.push('c'))).toBe(false);
    budget.release(b);
    expect(woken).toEqual(['b', 'c', 'c']);
    budget.release(c);
    expect(budget.used).toBe(0);
    expect(budget.pauses).toBe(3);
  });

  it('bodies read side by side stay within the budget (plus the oldest body and a chunk per reader), and each arrives whole', async () => {
    const size = 200 * 1024;
    const s = await serve((req, res) => {
      const id = req.url!.slice(1);
      const body = JSON.stringify({ id, pad: id.repeat(size / id.length) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      // In pieces, a few ms apart, so that the bodies are read side by side.
      let at = 0;
      const more = (): void => {
        if (at >= body.length) return void res.end();
        res.write(body.slice(at, (at += 16 * 1024)));
        setTimeout(more, 2);
      };
      more();
    });
    const budget = new BodyBudget(256 * 1024);
    const http = client(s.url, { concurrency: 8, bodyBudget: budget });
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => http.request({ method: 'GET', path: `/${i}` })));
    all.forEach((r) => expect((r.json() as { id: string; pad: string }).pad.length).toBeGreaterThanOrEqual(size));
    all.forEach((r, i) => expect((r.json() as { id: string }).id).toBe(String(i)));
    expect(budget.pauses).toBeGreaterThan(0);
    expect(budget.peak).toBeLessThanOrEqual(256 * 1024 + (size + 100) + 8 * 64 * 1024);
    expect(budget.peak).toBeLessThan(8 * size);
    expect(budget.used).toBe(0);
  });

  it('never deadlocks: with a budget smaller than one body, every body is still read, one after another', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pad":"');
      res.write('x'.repeat(40 * 1024));
      res.end('"}');
    });
    const budget = new BodyBudget(1024);
    const http = client(s.url, { concurrency: 6, bodyBudget: budget });
    const all = await Promise.all(Array.from({ length: 12 }, (_, i) => http.request({ method: 'GET', path: `/${i}` })));
    expect(all.every((r) => (r.json() as { pad: string }).pad.length === 40 * 1024)).toBe(true);
    expect(budget.used).toBe(0);
  });

  it("a reader paused for the budget is not timed out meanwhile: the wait is this process's, not the target's", async () => {
    // Each body's second half comes 250 ms after the one before it; the budget lets one body be
    // read at a time, so the last waits about 750 ms in all, of a 400 ms timeout, while the time
    // it spends reading is short.
    const s = await serve((req, res) => {
      const i = Number(req.url!.slice(1));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"i":${i},"pad":"${'x'.repeat(2048)}`);
      setTimeout(() => res.end('"}'), 250 * (i + 1));
    });
    const budget = new BodyBudget(1);
    const http = client(s.url, { concurrency: 4, timeoutMs: 400, breakerAfter: 100, retry: { maxWaitMs: 0 }, bodyBudget: budget });
    // Sent one after another, so that the oldest reader is the first request.
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < 4; i++) {
      pending.push(http.request({ method: 'GET', path: `/${i}` }).then((r) => (r.json() as { i: number }).i));
      await delay(20);
    }
    expect(await Promise.all(pending)).toEqual([0, 1, 2, 3]);
    expect(budget.pauses).toBeGreaterThan(0);
    expect(http.stats.retries).toBe(0);
  });

  it('a body over the cap is refused while others wait on the budget, and gives its bytes back', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/big' ? `"${'x'.repeat(300 * 1024)}"` : `"${'x'.repeat(20 * 1024)}"`);
    });
    const budget = new BodyBudget(8 * 1024);
    const http = client(s.url, { maxBodyBytes: 100 * 1024, bodyBudget: budget });
    const results = await Promise.allSettled([
      http.request({ method: 'GET', path: '/a' }),
      http.request({ method: 'GET', path: '/big' }),
      http.request({ method: 'GET', path: '/b' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const err = (results[1] as PromiseRejectedResult).reason as SuiteError;
    expect(err.code).toBe('RESPONSE_TOO_LARGE');
    expect(err.message).toMatch(/the response body is over the 102400-byte cap/);
    expect(budget.used).toBe(0);
  });
});
