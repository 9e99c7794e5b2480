// Real-world targets: each behaviour of the transport (lib/transport/http.ts) proved against the
// reference server behind a misbehaving front (test/fronts/front.ts). 429 and 503 answers are
// waited out (Retry-After in seconds or as a date, else backoff with jitter) within a time budget,
// not a small count, and never judged; 429s lower the in-flight bound; a GET is sent again after a
// reset or a timeout, a POST or DELETE never (a lost create is sent afresh by the create layer,
// a check whose DELETE was lost runs again from its start); GETs that time out together are one failure, not
// an outage; once the target hangs, the breaker stops the run from sending.
// The policy's sleep is injected where many waits add up: it records what was asked and waits
// 1/50 of it. The tests that prove a wait really happens run in real time, on one request.
// (More of the transport, on servers of their own: test/transport-resilience.test.ts.)
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  RunContext,
  resultKey,
  runCheck,
  type Check,
  type CheckResult,
  type RunSettings,
  seededRandom,
  cleanUp,
  type CleanupReport,
} from '../lib/runner/index.js';
import { exchangeLine, SuiteError, Secrets } from '../lib/evidence/index.js';
import { BREAKER_AFTER, HttpClient, retryAfterMs, sumTransport, type HttpClientOptions, type TransportStats } from '../lib/transport/index.js';
import { listChecks, staticChecks as statics } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { startFront, type Act, type Arrival, type Front, type FrontPlan } from './fronts/front.js';
import { createReferenceHandler, type ReferenceServerOptions } from '../server/index.js';
import { cli, endpoints, listening, paginationSettings, settingsFor, TOKEN, warm, withServer } from './support.js';

type Transport = Pick<HttpClientOptions, 'retry' | 'breakerAfter'>;

interface Through {
  results: CheckResult[];
  front: Front;
  /** The run's transport, as the checks' results add up. */
  sum: TransportStats;
  http: HttpClient;
  ms: number;
}

/** Runs `checks` as the vitest glue does (one RunContext, all at once) against a fresh reference server behind a front. */
async function through(plan: FrontPlan, checks: readonly Check[], transport: Transport = {}, over: Partial<RunSettings> = {}): Promise<Through> {
  return withServer({ seed: 3 }, async (server) => {
    const front = await startFront(server.url, plan);
    const { settings, dispose } = settingsFor(front.url, over);
    const run = new RunContext(settings, transport);
    const started = performance.now();
    try {
      const results = await Promise.all(checks.map((c) => runCheck(c, run)));
      return { results, front, sum: sumTransport(results.map((r) => r.transport)), http: run.http, ms: performance.now() - started };
    } finally {
      await run.close();
      await front.close();
      dispose();
    }
  });
}

/**
 * `through`, then what the upstream holds after the run and after the run's cleanup (read from
 * its store, not through the front), and the cleanup's report.
 */
async function lostThrough(
  plan: FrontPlan,
  checks: readonly Check[],
  server: Partial<ReferenceServerOptions> = {},
): Promise<Through & { heldAfterRun: Held; heldAfterCleanup: Held; cleanup: CleanupReport }> {
  return withServer({ seed: 3, ...server }, async (server) => {
    const held = (): Held => ({ customApis: server.store.customApis.size, applicationKeys: server.store.applicationKeys.size });
    const front = await startFront(server.url, plan);
    const { settings, dispose } = settingsFor(front.url);
    const run = new RunContext(settings);
    const started = performance.now();
    try {
      const results = await Promise.all(checks.map((c) => runCheck(c, run)));
      const ms = performance.now() - started;
      const heldAfterRun = held();
      const cleanup = await cleanUp({ ...settings, baseUrl: server.url });
      return { results, front, sum: sumTransport(results.map((r) => r.transport)), http: run.http, ms, heldAfterRun, cleanup, heldAfterCleanup: held() };
    } finally {
      await run.close();
      await front.close();
      dispose();
    }
  });
}

interface Held {
  customApis: number;
  applicationKeys: number;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A client of its own against a fresh reference server behind a front. */
async function direct<T>(plan: FrontPlan, over: Partial<HttpClientOptions>, fn: (http: HttpClient, front: Front) => Promise<T>): Promise<T> {
  return withServer({}, async (server) => {
    const front = await startFront(server.url, plan);
    const http = new HttpClient({ baseUrl: front.url, token: TOKEN, timeoutMs: 5_000, maxBodyBytes: 1 << 20, concurrency: 4, secrets: new Secrets(), ...over });
    try {
      return await fn(http, front);
    } finally {
      await http.close();
      await front.close();
    }
  });
}

/** A sleep that records the waits asked for and takes 1/50 of each: Retry-After: 1 costs 20 ms. */
function quickSleep(): { asked: number[]; retry: Transport['retry'] } {
  const asked: number[] = [];
  return { asked, retry: { sleep: (ms) => (asked.push(ms), delay(ms / 50)) } };
}

const keyOf = (a: Arrival): string => `${a.method} ${a.url} ${a.body}`;
/** How many times the front answered `status` itself. */
const answered = (acts: readonly Act[], status: number): number => acts.filter((x) => typeof x === 'object' && x.status === status).length;

/** Records what a plan decided, arrival by arrival. */
function recorded(plan: FrontPlan): { plan: FrontPlan; acts: Act[] } {
  const acts: Act[] = [];
  return { acts, plan: (a) => (acts[a.n] = plan(a)) };
}

const listEps = endpoints(['accounts', 'files', 'hierarchy-nodes@by-release']);
const lists = expandListChecks(listChecks, listEps);
const listSettings = (): Partial<RunSettings> => ({ pagination: paginationSettings(listEps) });

/** What the checks do against the reference behind a front that relays everything. */
let reference: { statics: Through; lists: Through };

beforeAll(async () => {
  reference = { statics: await through(() => 'relay', statics), lists: await through(() => 'relay', lists, {}, listSettings()) };
  expect(reference.statics.results.filter((r) => r.outcome !== 'pass' && r.outcome !== 'skip')).toEqual([]);
  expect(reference.lists.results.filter((r) => r.outcome !== 'pass' && r.outcome !== 'skip')).toEqual([]);
});

/** Results whose outcome is not the one against the plain reference, one line each (a MUST failure among them would blame a correct target for the network). */
function changed(results: readonly CheckResult[], against: Through): string[] {
  const before = new Map(against.results.map((r) => [resultKey(r), r.outcome]));
  return results.filter((r) => r.outcome !== before.get(resultKey(r))).map((r) => `${resultKey(r)} (${r.level}): ${r.outcome} ${r.reason ?? ''}`);
}

const postsOf = (xs: readonly Arrival[]): string[] =>
  xs
    .filter((a) => a.method === 'POST')
    .map(keyOf)
    .sort();

describe('429 and 503 are waited out, never judged', () => {
  it('through 429 + Retry-After: 1 on 2 of 3 requests, the static checks keep the reference outcomes; every 429 is waited out, 1 s each', async () => {
    const clock = quickSleep();
    // 2 of every 3 attempts of a request are refused: each request meets two 429s before it is served.
    const r = await through((a) => (a.repeat % 3 < 2 ? { status: 429, retryAfter: '1' } : 'relay'), statics, { retry: clock.retry });
    expect(changed(r.results, reference.statics)).toEqual([]);
    const limited = r.front.arrivals.length - r.front.relayed.length;
    expect(limited).toBe(2 * r.front.relayed.length);
    expect(r.sum).toMatchObject({
      requests: reference.statics.sum.requests,
      retries: limited,
      waitedOut: limited,
      resetRetries: 0,
      waitedMs: 1000 * limited,
      refused: 0,
    });
    expect(clock.asked.every((ms) => ms === 1000)).toBe(true);
    // No request reached the upstream twice: the 429s were not processed, the retries were.
    expect(postsOf(r.front.relayed)).toEqual(postsOf(reference.statics.front.relayed));
    expect(r.sum.concurrencyLoweredTo).toBe(1);
    // Each request and each retry counts for exactly one check (shared work for the one that started it).
    expect(r.sum.requests + r.sum.retries).toBe(r.front.arrivals.length);
  });

  it('through 429s in bursts of up to 6 in a row on 2 of 3 attempts (with Retry-After: 1 or without), the static checks keep the reference outcomes', async () => {
    const clock = quickSleep();
    // An arrival is refused unless it falls on every third one, or its request met 6 already:
    // some requests meet more 429s in a row than the 4 retries a count used to allow.
    const { plan, acts } = recorded((a) => (a.n % 3 !== 0 && a.repeat < 6 ? { status: 429, ...(a.repeat % 2 ? { retryAfter: '1' } : {}) } : 'relay'));
    const r = await through(plan, statics, { retry: clock.retry });
    expect(changed(r.results, reference.statics)).toEqual([]);
    const limited = answered(acts, 429);
    expect(r.sum).toMatchObject({ requests: reference.statics.sum.requests, retries: limited, waitedOut: limited });
    expect(postsOf(r.front.relayed)).toEqual(postsOf(reference.statics.front.relayed));
  });

  it('through 429 without Retry-After on 1 of 3 requests, the static checks keep the reference outcomes; the waits are a jittered backoff', async () => {
    const clock = quickSleep();
    // Every third arrival, unless it is already a retry: no request meets two 429s.
    const { plan, acts } = recorded((a) => (a.n % 3 === 0 && a.repeat === 0 ? { status: 429 } : 'relay'));
    const r = await through(plan, statics, { retry: clock.retry });
    expect(changed(r.results, reference.statics)).toEqual([]);
    const limited = answered(acts, 429);
    expect(limited).toBeGreaterThan(10);
    expect(r.sum).toMatchObject({ retries: limited, waitedOut: limited });
    // Each request met one 429 at most: its one wait is the first step of the backoff (500 ms), jittered in [250, 500].
    expect(clock.asked.every((ms) => ms >= 250 && ms <= 500)).toBe(true);
    expect(new Set(clock.asked).size).toBeGreaterThan(1);
    expect(r.sum.waitedMs).toBe(clock.asked.reduce((x, y) => x + y, 0));
  });

  it('honours Retry-After in seconds, and the exchange shows the retry', async () => {
    await direct(
      (a) => (a.repeat === 0 ? { status: 429, retryAfter: '1' } : 'relay'),
      {},
      async (http, front) => {
        const res = await http.request({ method: 'GET', path: '/v2/settings' });
        expect(res.status).toBe(200);
        const [first, second] = front.arrivals;
        expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
        expect(res.exchange.attempts).toBe(2);
        expect(exchangeLine(res.exchange)).toMatch(/-> 200 \(.*after 2 attempts\)$/);
        expect(http.stats).toMatchObject({ requests: 1, retries: 1, waitedOut: 1, waitedMs: 1000 });
      },
    );
  });

  it('honours Retry-After as an HTTP date', async () => {
    let until = 0;
    const plan: FrontPlan = (a) => {
      if (a.repeat > 0) return 'relay';
      const date = new Date(Date.now() + 2000).toUTCString();
      until = Date.parse(date);
      return { status: 503, retryAfter: date };
    };
    await direct(plan, {}, async (http, front) => {
      const res = await http.request({ method: 'POST', path: '/v2/application-keys', json: { data: { type: 'application_key', name: 'dated' } } });
      expect(res.status).toBe(201);
      // The date has whole seconds: the wait is what is left of them when the 503 arrives (1 to 2 s).
      expect(front.arrivals[1]!.at).toBeGreaterThanOrEqual(until - 5);
      expect(http.stats.waitedMs).toBeGreaterThanOrEqual(900);
      expect(http.stats.waitedMs).toBeLessThanOrEqual(2000);
      expect(front.relayed.length).toBe(1);
    });
  });

  it('reads Retry-After as delay-seconds or an HTTP date, and leaves the rest to the backoff', () => {
    const now = Date.parse('Sun, 22 Nov 2026 10:00:00 GMT');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(' 120 ', now)).toBe(120_000);
    expect(retryAfterMs('Sun, 22 Nov 2026 10:00:07 GMT', now)).toBe(7000);
    for (const v of [undefined, '', '0', '-1', '1.5', 'soon', 'Sun, 22 Nov 2026 09:59:59 GMT']) expect(retryAfterMs(v, now)).toBeUndefined();
  });

  it('in a 429 storm that never ends, every static check ends in error (RATE_LIMITED), none in fail, once the time budget is spent; concurrency drops to 1', async () => {
    const clock = quickSleep();
    const r = await through(() => ({ status: 429, retryAfter: '1' }), statics, { retry: { ...clock.retry, maxWaitMs: 10_000 } });
    expect(r.results.filter((x) => x.outcome !== 'error' || !x.reason?.startsWith('RATE_LIMITED: '))).toEqual([]);
    // Each request: 11 attempts, as many as 10 s of waiting allows at 1 s each (no count ends
    // it first); nothing reached the upstream. (Counted by the reasons: a check ends at its
    // first RATE_LIMITED request, and a sibling request of it still waiting is not in the
    // check's figures.)
    for (const x of r.results)
      expect(x.reason).toMatch(
        /still 429 after 11 attempts and 10000 ms of waiting: 1000 ms more \(Retry-After: 1\) would pass its 10000 ms of waiting; no verdict rests on a rate-limited answer$/,
      );
    expect(r.sum.retries).toBeLessThanOrEqual(10 * r.sum.requests);
    expect(r.front.relayed).toEqual([]);
    expect(r.http.concurrency).toBe(1);
    expect(r.sum.concurrencyLoweredTo).toBe(1);
  });

  it('gives up at once when Retry-After asks for more than is left of the wait budget', async () => {
    await direct(
      () => ({ status: 429, retryAfter: '120' }),
      {},
      async (http, front) => {
        const started = performance.now();
        const err = await http.request({ method: 'GET', path: '/v2/settings' }).catch((e: unknown) => e);
        expect((err as SuiteError).code).toBe('RATE_LIMITED');
        expect((err as SuiteError).message).toMatch(
          /still 429 after 1 attempt and 0 ms of waiting: 120000 ms more \(Retry-After: 120\) would pass its 60000 ms of waiting/,
        );
        expect(front.arrivals.length).toBe(1);
        expect(performance.now() - started).toBeLessThan(5_000);
      },
    );
  });

  it('waits no longer in all than the budget, in real time', async () => {
    await direct(
      () => ({ status: 429, retryAfter: '1' }),
      { retry: { maxWaitMs: 2_500 } },
      async (http, front) => {
        const started = performance.now();
        const err = await http.request({ method: 'GET', path: '/v2/settings' }).catch((e: unknown) => e);
        const ms = performance.now() - started;
        expect((err as SuiteError).code).toBe('RATE_LIMITED');
        // Two waits of 1 s fit in 2.5 s, a third does not.
        expect(front.arrivals.length).toBe(3);
        expect(ms).toBeGreaterThanOrEqual(1_990);
        expect(ms).toBeLessThan(15_000);
      },
    );
  });

  it('retries a POST answered 503: the static checks keep the reference outcomes, and each POST reached the upstream once', async () => {
    const clock = quickSleep();
    const { plan, acts } = recorded((a) => (a.method === 'POST' && a.repeat < 2 ? { status: 503 } : 'relay'));
    const r = await through(plan, statics, { retry: clock.retry });
    expect(changed(r.results, reference.statics)).toEqual([]);
    const unavailable = answered(acts, 503);
    expect(unavailable).toBe(2 * postsOf(reference.statics.front.relayed).length);
    expect(r.sum).toMatchObject({ retries: unavailable, waitedOut: unavailable });
    expect(postsOf(r.front.relayed)).toEqual(postsOf(reference.statics.front.relayed));
  });

  it('a 503 that outlasts the time budget is the answer: the last one, judged as any 5xx (errors.no-5xx), never an error of the suite', async () => {
    const clock = quickSleep();
    await direct(
      () => ({ status: 503 }),
      { retry: clock.retry },
      async (http, front) => {
        const res = await http.request({ method: 'DELETE', path: '/v2/settings/extensions/custom-apis/00000000-0000-4000-8000-000000000000' });
        expect(res.status).toBe(503);
        // The backoff (0.5 s doubling to 8 s, jittered) until the next wait would pass 60 s: about a dozen retries.
        expect(clock.asked.length).toBeGreaterThan(8);
        expect(front.arrivals.length).toBe(clock.asked.length + 1);
        expect(res.exchange.attempts).toBe(front.arrivals.length);
        const waited = clock.asked.reduce((x, y) => x + y, 0);
        expect(waited).toBeLessThanOrEqual(60_000);
        expect(waited).toBeGreaterThan(60_000 - 8_000);
      },
    );
  });

  it('lets the lowered bound climb back while answers come fast without a 429', async () => {
    const clock = quickSleep();
    await direct(
      (a) => (a.n < 3 ? { status: 429 } : 'relay'),
      { concurrency: 4, retry: clock.retry },
      async (http) => {
        for (let i = 0; i < 3; i++) await http.request({ method: 'GET', path: '/v2/settings' });
        expect(http.concurrency).toBe(1);
        // In batches as large as the bound: a bound not used does not grow.
        await warm(http, 4, '/v2/settings');
        expect(http.concurrency).toBe(4);
        expect(http.stats.concurrencyLoweredTo).toBe(1);
      },
    );
  });
});

describe('a reset connection', () => {
  it('with 1 GET in 15 reset, the list checks keep the reference outcomes: each reset GET is sent again', async () => {
    const { plan, acts } = recorded((a) => (a.method === 'GET' && a.n % 15 === 7 && a.repeat === 0 ? 'reset' : 'relay'));
    const r = await through(plan, lists, {}, listSettings());
    expect(changed(r.results, reference.lists)).toEqual([]);
    const resets = r.front.arrivals.filter((a) => acts[a.n] === 'reset');
    expect(resets.length).toBeGreaterThan(5);
    for (const a of resets) expect(r.front.relayed.some((b) => keyOf(b) === keyOf(a) && b.n > a.n)).toBe(true);
    expect(r.sum).toMatchObject({ retries: resets.length, resetRetries: resets.length, waitedOut: 0 });
  });

  it('a burst of resets while the target answers others (kept-alive connections closed as they are reused) is no outage: each GET is sent again, the breaker stays shut', async () => {
    // Twelve GETs in a row, arriving side by side, have their connections reset once each: more
    // than the five failed attempts in a row that open the breaker on a target that stopped.
    const { plan, acts } = recorded((a) => (a.method === 'GET' && a.n >= 40 && a.n < 52 && a.repeat === 0 ? 'reset' : 'relay'));
    const r = await through(plan, lists, {}, listSettings());
    expect(changed(r.results, reference.lists)).toEqual([]);
    const resets = r.front.arrivals.filter((a) => acts[a.n] === 'reset');
    expect(resets.length).toBe(12);
    expect(r.http.stats.breakerOpenedAfter).toBeUndefined();
    expect(r.sum).toMatchObject({ resetRetries: 12, refused: 0 });
  });

  it('a GET whose answer is cut off halfway (the connection dropped mid-body) is sent again whole: the list checks keep the reference outcomes', async () => {
    const { plan, acts } = recorded((a) => (a.method === 'GET' && a.n % 13 === 5 && a.repeat === 0 ? 'cut-body' : 'relay'));
    const r = await through(plan, lists, {}, listSettings());
    expect(changed(r.results, reference.lists)).toEqual([]);
    const cut = r.front.arrivals.filter((a) => acts[a.n] === 'cut-body');
    expect(cut.length).toBeGreaterThan(5);
    for (const a of cut) expect(r.front.arrivals.some((b) => keyOf(b) === keyOf(a) && b.n > a.n)).toBe(true);
    expect(r.sum).toMatchObject({ retries: cut.length, resetRetries: cut.length });
    expect(r.http.stats.breakerOpenedAfter).toBeUndefined();
  });

  it('a key create whose answer was lost is sent again by the create layer (the transport never resends it): the check passes, and the cleanup finds the lost key by name', async () => {
    const check = statics.find((c) => c.id === 'create.valid.2xx')!;
    let lost: Arrival | undefined;
    const r = await lostThrough((a) => (a.method === 'POST' && !lost ? ((lost = a), 'lose-answer') : 'relay'), [check]);
    expect(r.results.map((x) => `${x.id} ${x.outcome}`)).toEqual(['create.valid.2xx pass']);
    // Sent twice, as two requests: the first (processed, its answer lost) and the one after it.
    expect(r.front.arrivals.filter((a) => keyOf(a) === keyOf(lost!))).toHaveLength(2);
    expect(r.results[0]!.transport).toMatchObject({ requests: 2, retries: 0, lostRedone: 1 });
    expect(r.heldAfterRun.applicationKeys).toBe(2);
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.heldAfterCleanup).toEqual({ customApis: 0, applicationKeys: 0 });
  });

  it('a Custom API create whose answer was lost is followed by a fresh one, with a new name and slug (a target may refuse a slug it has)', async () => {
    const check = statics.find((c) => c.id === 'delete.existing.204')!;
    let lost: Arrival | undefined;
    const r = await lostThrough((a) => (a.method === 'POST' && !lost ? ((lost = a), 'lose-answer') : 'relay'), [check]);
    expect(r.results.map((x) => `${x.id} ${x.outcome}`)).toEqual(['delete.existing.204 pass']);
    const posts = r.front.arrivals.filter((a) => a.method === 'POST');
    expect(posts).toHaveLength(2);
    const slug = (a: Arrival): unknown => (JSON.parse(a.body) as { data: { slug: string } }).data.slug;
    expect(slug(posts[1]!)).not.toBe(slug(posts[0]!));
    expect(r.heldAfterRun.customApis).toBe(1);
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.heldAfterCleanup.customApis).toBe(0);
  });

  it('a DELETE whose answer was lost is not sent again: the checks that share it run again from their start, with one new Custom API, and say so', async () => {
    const checks = ['delete.existing.204', 'delete.repeat.404'].map((id) => statics.find((c) => c.id === id)!);
    let lost: Arrival | undefined;
    const r = await lostThrough((a) => (a.method === 'DELETE' && !lost ? ((lost = a), 'lose-answer') : 'relay'), checks);
    expect(r.results.map((x) => `${x.id} ${x.outcome}`)).toEqual(['delete.existing.204 pass', 'delete.repeat.404 pass']);
    const [result] = r.results;
    expect(r.front.arrivals.filter((a) => keyOf(a) === keyOf(lost!))).toHaveLength(1);
    // The shared create-and-delete is done again once, not once per check.
    expect(r.front.arrivals.filter((a) => a.method === 'POST')).toHaveLength(2);
    expect(result!.notes?.[0]).toMatch(/^try 1 ended on CONNECTION_CLOSED: DELETE .*may have been applied, so the check was run again from its start/);
    expect(result!.transport).toMatchObject({ lostRedone: 1 });
    expect(r.heldAfterCleanup).toEqual({ customApis: 0, applicationKeys: 0 });
  });

  it('a target that loses every create answer: three creates in all, then the check is in error (no verdict, no endless sending), and the cleanup removes all three', async () => {
    const check = statics.find((c) => c.id === 'create.valid.2xx')!;
    const r = await lostThrough((a) => (a.method === 'POST' ? 'lose-answer' : 'relay'), [check]);
    const [result] = r.results;
    expect(result!.outcome).toBe('error');
    // Three lost in a row with no answer between are also what opens the breaker, whichever says it first.
    expect(result!.reason).toMatch(/^(CONNECTION_CLOSED: POST .*3 tries|TARGET_DOWN: POST .*CONNECTION_CLOSED)/);
    expect(r.front.arrivals.filter((a) => a.method === 'POST')).toHaveLength(3);
    expect(r.heldAfterRun.applicationKeys).toBe(3);
    expect(r.heldAfterCleanup.applicationKeys).toBe(0);
  });

  it('a check whose DELETEs are all lost ends in error after three tries, each with its own Custom API, all removed by the cleanup', async () => {
    const check = statics.find((c) => c.id === 'delete.existing.204')!;
    const r = await lostThrough((a) => (a.method === 'DELETE' && a.repeat === 0 ? 'lose-answer' : 'relay'), [check]);
    const [result] = r.results;
    expect(result!.outcome).toBe('error');
    expect(result!.reason).toMatch(/^CONNECTION_CLOSED: DELETE /);
    expect(result!.notes?.filter((n) => n.startsWith('try '))).toHaveLength(2);
    expect(r.front.arrivals.filter((a) => a.method === 'POST')).toHaveLength(3);
    // Each lost DELETE was applied: the cleanup finds them gone (404) and says nothing is left.
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.heldAfterCleanup.customApis).toBe(0);
  });

  it('a body that must be refused, whose create was lost: found created by its name, the check fails on that (a refusal of the next one would hide it)', async () => {
    const check = statics.find((c) => c.id === 'create.name.256-chars.rejected')!;
    let lost: Arrival | undefined;
    const plan: FrontPlan = (a) => (a.method === 'POST' && !lost ? ((lost = a), 'lose-answer') : 'relay');
    const r = await lostThrough(plan, [check], { faults: ['name-max-256'] });
    const [result] = r.results;
    expect(result!.outcome).toBe('fail');
    expect(result!.reason).toMatch(/a body that must be refused was accepted/);
    expect(result!.evidence?.actual).toMatch(/1 application-key\(s\) named "conformance-/);
    expect(r.heldAfterCleanup.applicationKeys).toBe(0);
  });

  it("a body that must be refused, whose create was lost, under a name that cannot carry the run id: found, it may be anyone's, and the check ends in error, nothing sent again", async () => {
    const check = statics.find((c) => c.id === 'create.name.empty.rejected')!;
    const r = await lostThrough((a) => (a.method === 'POST' ? 'lose-answer' : 'relay'), [check], { faults: ['name-empty-accepted'] });
    const [result] = r.results;
    expect(result!.outcome).toBe('error');
    expect(result!.reason).toMatch(/^CONNECTION_CLOSED: POST .*1 application-key\(s\) named "" exist, which may be anyone's/);
    expect(r.front.arrivals.filter((a) => a.method === 'POST')).toHaveLength(1);
  });

  it('a body that must be refused, whose create was lost, where nothing of that name exists: it was not applied, and the next one is judged', async () => {
    const check = statics.find((c) => c.id === 'create.name.empty.rejected')!;
    let lost: Arrival | undefined;
    const r = await lostThrough((a) => (a.method === 'POST' && !lost ? ((lost = a), 'lose-answer') : 'relay'), [check]);
    expect(r.results.map((x) => `${x.id} ${x.outcome}`)).toEqual(['create.name.empty.rejected pass']);
    expect(r.front.arrivals.filter((a) => a.method === 'POST')).toHaveLength(2);
  });

  it('a check run again after a lost DELETE does its shared work afresh: a first DELETE that deletes nothing is not hidden by a later one', async () => {
    // The first DELETE of each Custom API answers 204 and deletes nothing; the second deletes it
    // and loses its answer. Reusing the first try's Custom API, a third DELETE would answer 404.
    const deletes = new Map<string, number>();
    const apis = new Set<string>();
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST') {
          const id = randomUUID();
          apis.add(id);
          return json(res, 201, { data: { type: 'custom_api', id, name: 'n', slug: 's', api_type: 's_ext', description: '' } });
        }
        // No read of a Custom API by id: the check's read after the first DELETE says nothing.
        if (req.method === 'GET') return json(res, 405, { errors: [{ status: '405', title: 'Method Not Allowed', detail: 'no read' }] });
        const id = decodeURIComponent(req.url!.split('/').pop()!);
        const n = (deletes.get(id) ?? 0) + 1;
        deletes.set(id, n);
        if (!apis.has(id)) return json(res, 404, { errors: [{ status: '404', title: 'Not Found', detail: 'no such Custom API' }] });
        if (n === 1) return void res.writeHead(204).end();
        apis.delete(id);
        if (n === 2) return void res.socket?.destroy();
        res.writeHead(204).end();
      });
    });
    const { url, close } = await listening(server);
    const { settings, dispose } = settingsFor(url);
    const run = new RunContext(settings);
    try {
      const [existing, repeat] = await Promise.all(
        ['delete.existing.204', 'delete.repeat.404'].map((id) =>
          runCheck(
            statics.find((c) => c.id === id)!,
            run,
          ),
        ),
      );
      expect(existing!.outcome).toBe('pass');
      // Each try's second DELETE is lost: no verdict, and above all no pass.
      expect(repeat!.outcome).toBe('error');
      expect(apis.size).toBe(0);
      expect(deletes.size).toBe(3);
    } finally {
      await run.close();
      await close();
      dispose();
    }
  });

  it('never sends a DELETE again after a reset', async () => {
    await direct(
      () => 'reset',
      {},
      async (http, front) => {
        const err = await http
          .request({ method: 'DELETE', path: '/v2/settings/extensions/custom-apis/00000000-0000-4000-8000-000000000000' })
          .catch((e: unknown) => e);
        expect((err as SuiteError).code).toBe('CONNECTION_CLOSED');
        expect(front.arrivals.length).toBe(1);
        expect(http.stats.retries).toBe(0);
      },
    );
  });
});

describe('a target that stops answering', () => {
  it(`opens the breaker after ${BREAKER_AFTER} failures apart in time: later requests fail at once (TARGET_DOWN), no check fails, the run ends soon`, async () => {
    const served = 20;
    const clock = quickSleep();
    const r = await through((a) => (a.n < served ? 'relay' : 'hang'), statics, { retry: clock.retry }, { timeoutMs: 300 });
    const reasons = r.results.filter((x) => x.outcome !== 'pass' && x.outcome !== 'skip').map((x) => `${x.outcome} ${x.reason}`);
    expect(reasons.filter((x) => !/^error (TIMEOUT|TARGET_DOWN): /.test(x))).toEqual([]);
    const down = reasons.filter((x) => x.startsWith('error TARGET_DOWN'));
    expect(down.length).toBeGreaterThan(10);
    expect(down[0]).toMatch(
      new RegExp(
        `the target stopped answering under the run after \\d+ answered requests \\(nothing answered for \\d+ s with requests in flight; ${BREAKER_AFTER} failures in a row, at moments apart in time; the last: TIMEOUT`,
      ),
    );
    expect(r.http.stats.breakerOpenedAfter).toBe(BREAKER_AFTER);
    expect(r.sum.refused).toBeGreaterThan(10);
    // What hung: five rounds at most of the requests in flight (8 at first, halved by each round of timeouts).
    expect(r.front.arrivals.length - served).toBeLessThanOrEqual(8 + 4 + 2 + 1 + 1 + 8);
    expect(r.http.stats.latencyLoweredTo).toBe(1);
  });

  it('GETs that time out together (a busy moment) are one failure, not an outage: each is sent again, the list checks keep the reference outcomes', async () => {
    const clock = quickSleep();
    // The GETs among fifteen arrivals in a row, side by side, get no answer at their first
    // attempt: more than the failures in a row that open the breaker on a target that stopped.
    const { plan, acts } = recorded((a) => (a.method === 'GET' && a.n >= 40 && a.n < 55 && a.repeat === 0 ? 'hang' : 'relay'));
    const r = await through(plan, lists, { retry: clock.retry }, { ...listSettings(), timeoutMs: 400 });
    expect(changed(r.results, reference.lists)).toEqual([]);
    const hung = r.front.arrivals.filter((a) => acts[a.n] === 'hang');
    expect(hung.length).toBeGreaterThan(5);
    for (const a of hung) expect(r.front.relayed.some((b) => keyOf(b) === keyOf(a) && b.n > a.n)).toBe(true);
    expect(r.http.stats.breakerOpenedAfter).toBeUndefined();
    expect(r.sum).toMatchObject({ timeoutRetries: hung.length, refused: 0 });
    expect(r.sum.latencyLoweredTo).toBeDefined();
  });

  it('times out one attempt, not the waits between attempts', async () => {
    // A 429 asking for 1 s, then an answer within the 800 ms timeout: the wait does not count against it.
    await direct(
      (a) => (a.repeat === 0 ? { status: 429, retryAfter: '1' } : 'relay'),
      { timeoutMs: 800 },
      async (http) => {
        const res = await http.request({ method: 'GET', path: '/v2/settings' });
        expect(res.status).toBe(200);
        expect(res.exchange.durationMs).toBeGreaterThanOrEqual(990);
      },
    );
  });
});

describe('through the CLI', () => {
  it('a host that answers 40 requests and then never again: the breaker stops the run in seconds, one line for what was not run', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const front = await startFront(server.url, (a) => (a.n < 40 ? 'relay' : 'hang'));
      try {
        const r = await cli(['--base-url', front.url, '--timeout', '500', '--operation', 'accounts'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.ms).toBeLessThan(60_000);
        const lines = r.stdout.split('\n');
        expect(lines.filter((l) => /the target stopped answering: the suite sends nothing more/.test(l))).toHaveLength(1);
        // The reason names the request the breaker stopped on: one not sent, or one sent that
        // never got its answer (which it is depends on what was in flight at the 40th).
        expect(r.stdout).toMatch(
          /Not run \(\d+\): errors of the suite, not failures of the target\n  \d+ check\(s\): TARGET_DOWN: .*(not sent|sent, no answer)(: |.*; )the target stopped answering/,
        );
        expect(r.stdout).toMatch(
          /transport: \d+ request\(s\);.*the target stopped answering under the run after \d+ answered requests: \d+ request\(s\) not sent, \d+ check\(s\) not run/,
        );
        expect(r.stdout).toMatch(
          /the target stopped answering during the run.*deleted once the target answers again by: npx conformance cleanup --run [0-9a-f]{8}$/m,
        );
        expect(r.stdout).not.toMatch(/left over:/);
        expect(lines.length).toBeLessThan(150);
        expect(r.stdout).not.toMatch(/✗ FAIL/);
      } finally {
        await front.close();
      }
    });
  });

  it('429 + Retry-After on 2 of 3 requests: the same verdict as without, and the summary counts the waits', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const front = await startFront(server.url, (a) => (a.repeat < 2 && a.n % 3 !== 2 ? { status: 429, retryAfter: '0' } : 'relay'));
      try {
        const r = await cli(
          ['--base-url', front.url, '--check', 'create.valid.2xx,create.keys.distinct,delete.existing.204,delete.repeat.404,errors.content-type.json'],
          { env: { CONFORMANCE_TOKEN: TOKEN } },
        );
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toMatch(/transport: \d+ request\(s\); \d+ request\(s\) sent again; \d+ 429\/5xx answer\(s\) waited out/);
      } finally {
        await front.close();
      }
    });
  });
});

/** The reference server behind a node:http server shaped by `setup` (its own request handler). */
async function shapedServer(
  shape: (server: Server, handler: (req: IncomingMessage, res: ServerResponse) => void) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const { handler } = createReferenceHandler({ token: TOKEN, seed: 6 });
  const server = createServer();
  shape(server, handler);
  return listening(server);
}

describe('a gateway in front of the target (through the CLI)', () => {
  // What a gateway answers when the service behind it dropped a connection: 502. A GET so
  // answered is waited out (lib/transport/http.ts); a 5xx that persists is the target's failure
  // (spec/contract/README.md#errors.no-5xx), never waited out forever, never skipped over.
  const args = ['--operation', 'accounts,catalog-rules', '--seed', '11'];

  it('one GET in 12 answered 502 (seeded): the verdict of a calm run, exit 0, no MUST check failed', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const draw = seededRandom(20261126);
      const front = await startFront(server.url, (a) => (a.method === 'GET' && draw() < 1 / 12 ? { status: 502 } : 'relay'));
      try {
        const r = await cli(['--base-url', front.url, ...args], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(front.arrivals.filter((a) => a.method === 'GET').length).toBeGreaterThan(50);
        expect(r.stdout).not.toMatch(/✗ FAIL|errors\.no-5xx/);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toMatch(/\d+ 429\/5xx answer\(s\) waited out/);
      } finally {
        await front.close();
      }
    });
  });

  it('a 500 to every GET of one list operation: the checks that read it fail under errors.no-5xx, exit 1', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const front = await startFront(server.url, (a) => (a.method === 'GET' && a.url.startsWith('/v2/accounts') ? { status: 500 } : 'relay'));
      try {
        // No replays: each would send the failed checks' requests again, as runs of their own.
        const r = await cli(['--base-url', front.url, ...args, '--replays', '0'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(r.code, r.stdout + r.stderr).toBe(1);
        expect(r.stdout).toMatch(/✗ FAIL list\.[a-z.-]+ \[accounts\]/);
        expect(r.stdout).toMatch(
          /GET http:\/\/127\.0\.0\.1:\d+\/v2\/accounts\S* answered 500: a server error fails the check that provoked it \(spec\/contract\/README\.md#errors\.no-5xx, MUST\)/,
        );
        // The 500 is never sent again: one arrival per request.
        expect(front.arrivals.filter((a) => a.url.startsWith('/v2/accounts')).every((a) => a.repeat === 0)).toBe(true);
        expect(r.stdout).not.toMatch(/✗ FAIL list\.[a-z.-]+ \[catalog-rules\]/);
      } finally {
        await front.close();
      }
    });
  });
});

describe('targets that take fewer requests than the default concurrency (through the CLI)', () => {
  it('a server that takes 30 requests a second (a token bucket, 429 with Retry-After: 1 beyond): the run waits, exit 0', async () => {
    let tokens = 30;
    const refill = setInterval(() => (tokens = Math.min(30, tokens + 3)), 100);
    const s = await shapedServer((server, handler) =>
      server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (tokens < 1) {
          res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
          res.end(JSON.stringify({ errors: [{ status: 429, title: 'Too Many Requests' }] }));
          return;
        }
        tokens--;
        handler(req, res);
      }),
    );
    try {
      const r = await cli(['--base-url', s.url, '--operation', 'accounts'], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      // The rate it admits is learned from its first 429s, and the run paced under it (the
      // summary's load line says so); 429s before that lower what is in flight, said live.
      expect(r.stdout).toMatch(/paced by 429s at [\d.]+ a second|rate limited \(429\): requests in flight lowered/);
    } finally {
      clearInterval(refill);
      await s.close();
    }
  });
});
