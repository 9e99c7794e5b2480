// A 5xx is a failure of the check that provoked it, wherever it comes
// (spec/contract/README.md#errors.no-5xx): runCheck holds every check to it, with the request as
// evidence and at the rule's level; and a target that answers every read of the preflight with
// a 5xx is down (exit 2), not judged. On a small server of the test's own (port 0, closed after).
import { createServer } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunContext, runCheck, type Check, type CheckContext, type CheckResult, fail, preflight, loadStatements } from '../lib/runner/index.js';
import { HttpClient } from '../lib/transport/index.js';
import { SuiteError, type Level, Secrets } from '../lib/evidence/index.js';
import { NO_5XX } from '../suites/levels.js';
import { listening } from './support.js';

const TOKEN = 'tok-server-errors-91c2';

/** Answers the status its path names (`/status/500`), with the Error shape; anything else 200. */
let url: string;
let close: () => Promise<void>;
let dir: string;
beforeAll(async () => {
  const server = createServer((req, res) => {
    const status = Number(/^\/status\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status >= 400 ? { errors: [{ status: String(status), title: 'x', detail: `answered ${status}` }] } : { data: [] }));
  });
  ({ url, close } = await listening(server));
  dir = mkdtempSync(join(tmpdir(), 'conformance-5xx-'));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Waits shrunk to 15 ms, within a budget of 2 s: a 502 or 503 is asked again a few times, then
 * stands; meanwhile the service answers the other requests in flight, if there are any (no
 * outage: lib/transport/http.ts), and it has time to.
 */
const QUICK = { retry: { sleep: () => delay(15), maxWaitMs: 2_000 } };

function context(): RunContext {
  return new RunContext(
    { baseUrl: url, token: TOKEN, seed: 1, runId: 'fivexx01', timeoutMs: 5_000, maxBodyBytes: 1 << 20, concurrency: 4, ledgerPath: join(dir, 'ledger.jsonl') },
    QUICK,
  );
}

function check(id: string, level: Level, run: (ctx: CheckContext) => Promise<void>): Check {
  return { id, area: 'errors', clause: 'Errors', clauseLink: 'spec/contract/README.md#errors', level, title: id, run };
}

async function results(checks: Check[], rule = NO_5XX): Promise<CheckResult[]> {
  const run = context();
  try {
    return await Promise.all(checks.map((c) => runCheck(c, run, rule)));
  } finally {
    await run.close();
  }
}

const get = (ctx: CheckContext, status: number) => ctx.request({ method: 'GET', path: `/status/${status}` });

describe('runCheck holds every check to errors.no-5xx', () => {
  it('takes the rule and its level from spec/contract/statements.yaml', () => {
    const statement = loadStatements().find((s) => s.id === 'errors.no-5xx')!;
    expect(NO_5XX).toEqual({ id: 'errors.no-5xx', level: statement.level });
  });

  it("a check that would pass, or skip, after a 5xx fails at the rule's level, the request as evidence", async () => {
    const [passed, skipped, info] = await results([
      check('t.pass', 'MUST', async (ctx) => void (await get(ctx, 500))),
      check('t.skip', 'MUST', async (ctx) => {
        const res = await get(ctx, 500);
        ctx.skip(`not testable: the setup answered ${res.status}`);
      }),
      check('t.info', 'INFO', async (ctx) => void (await get(ctx, 500))),
    ]);
    for (const r of [passed!, skipped!, info!]) {
      expect(r.outcome).toBe('fail');
      expect(r.level).toBe(NO_5XX.level);
      expect(r.reason).toMatch(
        /^GET http:\/\/127\.0\.0\.1:\d+\/status\/500 answered 500: a server error fails the check that provoked it \(spec\/contract\/README\.md#errors\.no-5xx, MUST\)/,
      );
      expect(r.evidence).toMatchObject({ status: 500, actual: 'status 500', bodyExcerpt: expect.stringContaining('answered 500') });
      expect(r.evidence!.request).toMatch(/^curl .*\/status\/500'/);
      expect(r.evidence!.request).not.toContain(TOKEN);
    }
    expect(skipped!.reason).toMatch(/; the check was otherwise skipped: not testable: the setup answered 500$/);
  });

  it("a check that fails keeps its own failure: raised to the rule's level when its own is lower, the 5xx named", async () => {
    const [should, must] = await results([
      check('t.should', 'SHOULD', async (ctx) => {
        // The service answers other requests meanwhile: the lasting 503 is this request's, no outage.
        const [res] = await Promise.all([get(ctx, 503), ...Array.from({ length: 20 }, () => get(ctx, 200))]);
        if (res!.status !== 401) fail('not a 401', { expected: 'status 401', actual: `status ${res!.status}`, res: res! });
      }),
      check('t.must', 'MUST', async (ctx) => {
        await Promise.all([get(ctx, 502), ...Array.from({ length: 20 }, () => get(ctx, 200))]);
        fail('wrong', { expected: 'a', actual: 'b', res: await get(ctx, 200) });
      }),
    ]);
    expect(should).toMatchObject({ outcome: 'fail', level: 'MUST', evidence: { status: 503 } });
    expect(should!.reason).toMatch(
      /^not a 401; and GET \S+\/status\/503 answered 503 \(still, after \d+ attempts\): a server error, which fails the check that provoked it at MUST/,
    );
    expect(must).toMatchObject({ outcome: 'fail', level: 'MUST', reason: 'wrong', evidence: { status: 200 } });
  });

  it('a gateway answer that outlasts its waits while the service answers nothing is an outage: an error, no verdict', async () => {
    const [passed, failed] = await results([
      check('t.pass', 'MUST', async (ctx) => {
        await get(ctx, 503);
      }),
      check('t.fail', 'MUST', async (ctx) => {
        const res = await get(ctx, 502);
        if (res.status !== 200) fail('not a 200', { expected: 'status 200', actual: `status ${res.status}`, res });
      }),
    ]);
    for (const r of [passed!, failed!]) {
      expect(r.outcome, r.id).toBe('error');
      expect(r.errorCode, r.id).toBe('TARGET_DOWN');
      expect(r.reason).toMatch(
        /^TARGET_DOWN: GET \S+\/status\/50[23] answered 50[23] for \d+ attempts, and no request reached the service meanwhile: an outage, not a verdict$/,
      );
    }
  });

  it('shared work that skips on a 5xx fails every check that used it, each citing the request', async () => {
    const setup = (ctx: CheckContext) =>
      ctx.shared('setup', async (s) => {
        const res = await s.request({ method: 'POST', path: '/status/500', json: {} });
        ctx.skip(`not testable: could not create (POST returned ${res.status})`);
      });
    const [a, b] = await results([check('t.a', 'MUST', setup), check('t.b', 'SHOULD', setup)]);
    for (const r of [a!, b!]) {
      expect(r).toMatchObject({ outcome: 'fail', level: 'MUST', evidence: { status: 500 } });
      expect(r.reason).toMatch(/^POST \S+\/status\/500 answered 500: /);
    }
  });

  it('work shared through the context of the check that started it (a walk reading its pages) carries its 5xx to every check that uses it later', async () => {
    // The walk reads its pages through the first check's ctx, as suites/list/walks.ts does.
    const walk = (ctx: CheckContext) =>
      ctx.shared('walk', async () => [
        await ctx.shared('page 1', (s) => s.request({ method: 'GET', path: '/status/200' })),
        await ctx.shared('page 2', (s) => s.request({ method: 'GET', path: '/status/500' })),
      ]);
    const run = context();
    try {
      const first = await runCheck(
        check('t.first', 'MUST', async (ctx) => void (await walk(ctx))),
        run,
        NO_5XX,
      );
      const later = await runCheck(
        check('t.later', 'SHOULD', async (ctx) => void (await walk(ctx))),
        run,
        NO_5XX,
      );
      for (const r of [first, later]) {
        expect(r).toMatchObject({ outcome: 'fail', level: 'MUST', evidence: { status: 500 } });
        expect(r.evidence!.exchanges).toHaveLength(2);
      }
    } finally {
      await run.close();
    }
  });

  it('leaves an error of the suite, a 4xx and a run without the rule as they are', async () => {
    const [error, refused] = await results([
      check('t.error', 'MUST', async (ctx) => {
        await get(ctx, 500);
        throw new SuiteError('TIMEOUT', 'no answer');
      }),
      check('t.404', 'MUST', async (ctx) => void (await get(ctx, 404))),
    ]);
    expect(error).toMatchObject({ outcome: 'error', errorCode: 'TIMEOUT' });
    expect(refused!.outcome).toBe('pass');
    const run = context();
    try {
      expect(
        (
          await runCheck(
            check('t.pass', 'MUST', async (ctx) => void (await get(ctx, 500))),
            run,
          )
        ).outcome,
      ).toBe('pass');
    } finally {
      await run.close();
    }
  });
});

describe('the preflight and 5xx answers', () => {
  const reads = { paths: ['/v2/accounts', '/v2/customers', '/v2/orders'], allowAll404: false };

  async function preflightOn(answer: (path: string) => number) {
    const server = createServer((req, res) => {
      const status = answer(req.url ?? '');
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status >= 400 ? { errors: [{ status: String(status), title: 'x', detail: 'y' }] } : { data: [] }));
    });
    const s = await listening(server);
    const http = new HttpClient({ baseUrl: s.url, token: TOKEN, timeoutMs: 5_000, maxBodyBytes: 1 << 20, concurrency: 4, secrets: new Secrets(), ...QUICK });
    try {
      return await preflight(http, s.url, reads);
    } finally {
      await http.close();
      await s.close();
    }
  }

  it('a target that answers every read with a 500 is down: one line, no check runs', async () => {
    const r = await preflightOn(() => 500);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.line).toMatch(/^the target answers its reads with a server error: GET \S+\/v2\/settings answered 500: .*an outage/);
  });

  it('a 502 to the first read that outlasts its waits is an outage at once', async () => {
    const r = await preflightOn((path) => (path === '/v2/settings' ? 502 : 200));
    expect(!r.ok && r.line).toMatch(/GET \S+\/v2\/settings answered 502 \(still, after \d+ attempts\)/);
  });

  it('a 500 to some reads while another is served: the run goes on, and the checks judge the 5xx', async () => {
    const r = await preflightOn((path) => (path.startsWith('/v2/orders') ? 200 : path === '/v2/customers' ? 404 : 500));
    expect(r).toMatchObject({ ok: true, note: expect.stringMatching(/\/v2\/orders answered 200/) });
  });
});
