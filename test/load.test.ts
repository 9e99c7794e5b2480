// A reference server with a capacity (the capacity variant, server/load.ts), and the breaker
// that stops a run once the target has answered nothing for a long while.
import { describe, expect, it } from 'vitest';
import { Breaker } from '../lib/transport/index.js';
import { capacity } from '../server/load.js';
import { CAPACITY } from '../server/variants.js';
import { cli, TOKEN, withServer } from './support.js';

/** `n` list reads sent at once: the statuses, and the error bodies of those answered 500. */
async function burst(url: string, n: number): Promise<{ statuses: number[]; errors: unknown[] }> {
  const answers = await Promise.all(
    Array.from({ length: n }, () => fetch(`${url}/v2/accounts?sort=created_at`, { headers: { authorization: `Bearer ${TOKEN}` } })),
  );
  const bodies = await Promise.all(answers.map((a) => a.json() as Promise<unknown>));
  return { statuses: answers.map((a) => a.status), errors: bodies.filter((_, i) => answers[i]!.status === 500) };
}

describe('a server with a capacity', () => {
  // Workers held far longer than the deadline: whoever waits for one waits past it.
  const slow = { workers: 2, deadlineMs: 20, baseMs: 200, perRecordMs: 0 };

  it('answers 500 with the Error shape to the requests of a burst of three times its workers that wait past the deadline', async () => {
    await withServer({ behaviour: { around: [capacity(slow)] } }, async (server) => {
      const { statuses, errors } = await burst(server.url, 3 * slow.workers);
      expect(statuses.filter((s) => s === 200)).toHaveLength(slow.workers);
      expect(statuses.filter((s) => s === 500)).toHaveLength(2 * slow.workers);
      for (const e of errors)
        expect(e).toMatchObject({ errors: [{ status: '500', title: 'Internal Server Error', detail: expect.stringMatching(/waited more than 20 ms/) }] });
    });
  });

  it('answers every request of a burst no larger than its workers', async () => {
    await withServer({ behaviour: { around: [capacity(slow)] } }, async (server) => {
      for (let round = 0; round < 3; round++) expect((await burst(server.url, slow.workers)).statuses).toEqual([200, 200]);
    });
  });

  it('the capacity variant answers its workers at a time, round after round', async () => {
    await withServer({ variants: ['capacity'] }, async (server) => {
      for (let round = 0; round < 3; round++) expect(new Set((await burst(server.url, CAPACITY.workers)).statuses)).toEqual(new Set([200]));
    });
  });

  it('keeps a pool of its own per server: a burst at one leaves another free', async () => {
    await withServer({ behaviour: { around: [capacity(slow)] } }, async (a) => {
      await withServer({ behaviour: { around: [capacity(slow)] } }, async (b) => {
        const [x, y] = await Promise.all([burst(a.url, slow.workers), burst(b.url, slow.workers)]);
        expect([...x.statuses, ...y.statuses]).toEqual([200, 200, 200, 200]);
      });
    });
  });
});

describe('the breaker after a silence', () => {
  /** A breaker that has just heard an answer, and when. */
  const answered = (): { b: Breaker; t: number } => {
    const b = new Breaker({ silentMs: 20_000 });
    b.failures = 0;
    return { b, t: b.answeredAt };
  };

  it('opens on the second failure apart in time once nothing was answered for silentMs with requests in flight', () => {
    const { b, t } = answered();
    expect(b.count(t + 1, t + 10_001)).toBe(true);
    expect(b.opens(3, t + 10_001)).toBe(false);
    expect(b.count(t + 10_002, t + 20_003)).toBe(true);
    expect(b.silentFor(t + 20_003)).toBeGreaterThanOrEqual(20_000);
    expect(b.opens(3, t + 20_003)).toBe(true);
  });

  it('does not open on one slow moment, nor on two with an answer between', () => {
    const { b, t } = answered();
    expect(b.count(t + 1, t + 25_000)).toBe(true);
    expect(b.opens(3, t + 25_000)).toBe(false);
    b.failures = 0; // an answer between
    const u = b.answeredAt;
    expect(b.count(u + 1, u + 10_001)).toBe(true);
    expect(b.opens(3, u + 10_001)).toBe(false);
  });

  it('counts the silence from the first failure sent after the last answer, not from the answer, when the suite sent nothing between', () => {
    const { b, t } = answered();
    // An idle minute, then requests that time out twice: 20 s of silence with requests in flight.
    expect(b.count(t + 60_000, t + 70_000)).toBe(true);
    expect(b.count(t + 70_001, t + 75_000)).toBe(true);
    expect(b.opens(3, t + 75_000)).toBe(false);
    expect(b.silentFor(t + 75_000)).toBeCloseTo(15_000);
  });
});

// Run alone: npx vitest run test/load.test.ts -t 'capacity variant at default settings'
// Expected to fail until the in-flight bound follows the target's latency (lib/transport/http.ts):
// today the run climbs to 64 in flight and the variant answers 500 past its deadline.
it('the capacity variant at default settings: a run of the CLI exits 0 with no MUST failure', async () => {
  await withServer({ variants: ['capacity'] }, async (server) => {
    const r = await cli(['--base-url', server.url], { env: { CONFORMANCE_TOKEN: TOKEN } });
    expect(r.stdout).not.toMatch(/✗ fail {2}MUST/);
    expect(r.code, r.stdout.split('\n').slice(-8).join('\n')).toBe(0);
  });
}, 120_000);
