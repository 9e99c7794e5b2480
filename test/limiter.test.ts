// The in-flight limit follows latency (lib/transport/limiter.ts), the rate cap spaces sends and
// the rate a target admits is learned from its 429s (rate.ts), and the load report stays bounded
// (load.ts): driven by made-up latencies and clock values, nothing timed.
import { describe, expect, it } from 'vitest';
import { latencyClass, Limiter, LoadRecorder, RateCap, RateLearner, START_LIMIT, UNDER } from '../lib/transport/index.js';

const PAGE = latencyClass('GET', '/v2/orders', { 'page[limit]': 25 });

/** Answers of class `cls`, `ms` each, with the limit's worth in flight, until `n` are given; the limits seen. */
function feed(l: Limiter, n: number, ms: number | ((i: number) => number), cls = PAGE): number[] {
  const seen: number[] = [];
  for (let i = 0; i < n; i++) {
    const moved = l.answered(cls, typeof ms === 'number' ? ms : ms(i), l.epoch, l.limit);
    if (moved !== undefined) seen.push(moved);
  }
  return seen;
}

describe('latencyClass', () => {
  it('puts ids in a template, and pages apart by length, depth, sort and filter', () => {
    expect(latencyClass('GET', '/v2/orders/0f1e2d3c-1111-4000-8000-000000000001/items')).toBe(
      latencyClass('GET', '/v2/orders/9a8b7c6d-2222-4000-8000-000000000002/items'),
    );
    const shallow = latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 0 });
    expect(latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 9000 })).not.toBe(shallow);
    expect(latencyClass('GET', '/v2/orders', { 'page[limit]': 1, 'page[offset]': 0 })).not.toBe(shallow);
    expect(latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 0, sort: 'name' })).not.toBe(shallow);
    expect(latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 0, filter: 'eq(name,a)' })).not.toBe(shallow);
    expect(latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 0, filter: 'eq(name,b)' })).toBe(
      latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 0, filter: 'eq(name,a)' }),
    );
    expect(latencyClass('POST', '/v2/orders')).not.toBe(latencyClass('GET', '/v2/orders'));
  });
});

describe('Limiter', () => {
  it('starts low and grows to the ceiling while latency stays flat, a far target (100 ms) too', () => {
    for (const ms of [1, 100]) {
      const l = new Limiter(64);
      expect(l.limit).toBe(START_LIMIT);
      feed(l, 500, ms);
      expect(l.limit).toBe(64);
      expect(l.backoffs).toEqual({ latency: 0, 'rate-limited': 0, timeout: 0 });
    }
  });

  it('takes jitter of a fast target for no climb: a 1 ms baseline, then 3 to 15 ms', () => {
    const l = new Limiter(64);
    feed(l, 500, (i) => (i === 0 ? 1 : 3 + (i % 13)));
    expect(l.limit).toBe(64);
  });

  it('does not grow while the limit is not used: a run sending one at a time learns nothing of more', () => {
    const l = new Limiter(64);
    for (let i = 0; i < 200; i++) l.answered(PAGE, 5, l.epoch, 1);
    expect(l.limit).toBe(START_LIMIT);
  });

  it("shrinks when a class's latency climbs, before any error, and grows back once it falls", () => {
    const l = new Limiter(64);
    feed(l, 500, 100);
    expect(l.limit).toBe(64);
    // Deep sorted pages queued: 100 ms, then 2 s.
    // Within two windows of answers (the first may still be mostly 100 ms) it moves down.
    const seen = feed(l, 128, 2_000);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]).toBeLessThan(64);
    expect(l.backoffs.latency).toBe(seen.length);
    let lowest = l.limit;
    for (let i = 0; i < 100; i++) lowest = Math.min(lowest, ...feed(l, 1, 2_000), l.limit);
    expect(lowest).toBe(1);
    feed(l, 2_000, 100);
    expect(l.limit).toBe(64);
  });

  it('does not shrink when a slow class simply appears: each class is judged against its own baseline', () => {
    const l = new Limiter(64);
    feed(l, 500, 5);
    const deep = latencyClass('GET', '/v2/orders', { 'page[limit]': 100, 'page[offset]': 9000, sort: 'name' });
    // Mixed: fast first pages at 5 ms, deep sorted pages at 1.5 s, each as fast as ever.
    for (let i = 0; i < 500; i++) l.answered(i % 2 ? deep : PAGE, i % 2 ? 1_500 : 5, l.epoch, l.limit);
    expect(l.limit).toBe(64);
    expect(l.backoffs.latency).toBe(0);
  });

  it('shrinks under a queue that delays every request, each of a class never met before (its baseline taken under load)', () => {
    const l = new Limiter(64);
    feed(l, 200, 5);
    expect(l.limit).toBe(64);
    // A pool of workers: every request now waits 400 ms in its queue, whatever it asks; no class repeats.
    let n = 0;
    for (let i = 0; i < 200; i++) l.answered(latencyClass('GET', `/v2/lists/l${n++}x`), 405 + (i % 50), l.epoch, l.limit);
    expect(l.limit).toBeLessThan(16);
    expect(l.backoffs.latency).toBeGreaterThan(0);
  });

  it('a 429 or a timeout halves the limit once per generation: answers to requests sent before say nothing', () => {
    const l = new Limiter(64);
    feed(l, 500, 10);
    const sentAt = l.epoch;
    expect(l.backOff('rate-limited', sentAt)).toBe(32);
    expect(l.backOff('rate-limited', sentAt)).toBeUndefined();
    expect(l.backOff('timeout', l.epoch)).toBe(16);
    // Slow answers to requests sent before the cut move nothing.
    for (let i = 0; i < 100; i++) expect(l.answered(PAGE, 5_000, sentAt, 16)).toBeUndefined();
    expect(l.limit).toBe(16);
    expect(l.backoffs).toEqual({ latency: 0, 'rate-limited': 1, timeout: 1 });
    for (let i = 0; i < 10; i++) l.backOff('rate-limited', l.epoch);
    expect(l.limit).toBe(1);
  });

  it('forgets baselines that are slow even alone (the target holds more now), so it grows again', () => {
    const l = new Limiter(8, 1);
    feed(l, 20, 10);
    feed(l, 20, 500);
    expect(l.limit).toBe(1);
    feed(l, 24, 500);
    expect(l.limit).toBe(1);
    feed(l, 200, 500);
    expect(l.limit).toBe(8);
  });
});

describe('RateCap', () => {
  it('spaces sends evenly, 1/rate apart: a send waits for its turn, which it takes only when it goes', () => {
    const cap = new RateCap(10);
    // At most two at once (see below), then the next turn is 100 ms on, and asking does not take it.
    expect(cap.take(0)).toBe(0);
    expect(cap.take(0)).toBe(0);
    expect(cap.take(0)).toBe(100);
    expect(cap.take(50)).toBe(50);
    expect(cap.take(100)).toBe(0);
    // A turn taken a little late keeps the schedule (at most one gap made up)...
    expect(cap.take(230)).toBe(0);
    expect(cap.take(230)).toBe(70);
    // ...and after a while with nothing sent, no more than two go at once.
    expect(cap.take(1_000)).toBe(0);
    expect(cap.take(1_000)).toBe(0);
    expect(cap.take(1_000)).toBe(100);
  });

  it('follows the lower of the fixed cap and a learned one; with neither, every send goes at once', () => {
    const none = new RateCap();
    expect([0, 0, 0].map((now) => none.take(now))).toEqual([0, 0, 0]);
    const fixed = new RateCap(10);
    expect([0, 0].map((now) => fixed.take(now, 100))).toEqual([0, 0]);
    expect(fixed.take(10, 100)).toBe(90);
    const learned = new RateCap(10);
    expect([0, 0].map((now) => learned.take(now, 5))).toEqual([0, 0]);
    expect(learned.take(100, 5)).toBe(100);
  });
});

/** Whether `x` is within 2 % of `y` (answers are counted in bins of 10 ms). */
const near = (x: number | undefined, y: number): boolean => x !== undefined && Math.abs(x / y - 1) <= 0.02;

/** `n` answers spread evenly over [from, to) ms. */
function answers(l: RateLearner, n: number, from: number, to: number): void {
  for (let i = 0; i < n; i++) l.answered(from + ((to - from) * i) / n);
}

describe('RateLearner', () => {
  it('learns from a 429 the rate answered over the window before it, and paces just under it', () => {
    const l = new RateLearner();
    answers(l, 100, 0, 1_000);
    answers(l, 100, 1_000, 2_000);
    expect(l.rate(2_000)).toBeUndefined();
    expect(near(l.limited(2_000, 1_990, 1_000), UNDER * 100)).toBe(true);
    // The 429s to requests sent before the cut, or within a window of it, say nothing new.
    expect(near(l.limited(2_010, 1_995, 1_000), UNDER * 100)).toBe(true);
    expect(near(l.limited(2_500, 2_400, 1_000), UNDER * 100)).toBe(true);
    expect(l.cuts).toBe(1);
    // A Retry-After of 60 s: a limit a minute, measured over the minute before.
    const m = new RateLearner();
    answers(m, 600, 0, 60_000);
    expect(near(m.limited(60_000, 59_990, 60_000), UNDER * 10)).toBe(true);
  });

  it('rises again with no 429, slowly at first, and is cut again at the next one', () => {
    const l = new RateLearner();
    answers(l, 200, 0, 2_000);
    const cap = l.limited(2_000, 1_990)!;
    expect(l.rate(3_000)).toBe(cap);
    expect(l.rate(12_000)! / cap).toBeGreaterThan(1);
    expect(l.rate(12_000)! / cap).toBeLessThan(1.03);
    expect(l.rate(62_000)! / cap).toBeGreaterThan(10);
    // Risen past what the target admits (100 a second), it is refused, and cut to just under that again.
    answers(l, 100, 21_000, 22_000);
    expect(near(l.limited(22_000, 21_990), UNDER * 100)).toBe(true);
    expect(l.cuts).toBe(2);
    expect(near(l.lowest, UNDER * 100)).toBe(true);
  });

  it('takes 429s that come whatever the rate for none of its business: the cap is dropped, not lowered window after window', () => {
    const l = new RateLearner();
    answers(l, 100, 0, 1_000);
    expect(near(l.limited(1_000, 990), UNDER * 100)).toBe(true);
    // A window later at the cap, 30 % refused whatever the rate: 66 answered a second, well under the cap.
    answers(l, 66, 1_000, 2_000);
    expect(l.limited(2_000, 1_990)).toBeUndefined();
    expect(l.refuted).toBe(1);
    expect(l.rate(2_000)).toBeUndefined();
    // 10 % refused: each cut would be 15 % lower than the last; the second one is refuted.
    const m = new RateLearner();
    answers(m, 100, 0, 1_000);
    let cap = m.limited(1_000, 990)!;
    let now = 1_000;
    const caps = [cap];
    while (cap !== undefined && caps.length < 10) {
      answers(m, Math.round(0.9 * cap), now, now + 1_000);
      now += 1_000;
      cap = m.limited(now, now - 10)!;
      caps.push(cap);
    }
    expect(caps.length).toBeLessThanOrEqual(4);
    expect(caps.at(-1)).toBeUndefined();
  });

  it('learns nothing from a 429 with too few answers before it, and doubles a cap learned before a whole window has passed', () => {
    const l = new RateLearner();
    answers(l, 3, 0, 30);
    expect(l.limited(30, 20)).toBeUndefined();
    // 50 answered in the first 100 ms: at least 50 a second; it may be more.
    const m = new RateLearner();
    answers(m, 50, 0, 100);
    const cap = m.limited(100, 90)!;
    expect(near(cap, UNDER * 50)).toBe(true);
    expect(m.rate(1_100)).toBeCloseTo(2 * cap);
    expect(m.rate(2_100)).toBeCloseTo(4 * cap);
  });
});

describe('LoadRecorder', () => {
  it('says the peak, latency at the start and at the peak, back-offs by cause, and 429s', () => {
    const r = new LoadRecorder(64);
    for (let i = 0; i < 50; i++) {
      r.sent(i, 4, 4);
      r.answered(i, 10, 200);
    }
    for (let i = 0; i < 100; i++) {
      r.sent(2_000 + i, 40, 64);
      r.answered(2_000 + i, 200, 200);
    }
    r.answered(2_500, 0, 429);
    r.backedOff(2_500, 'rate-limited', 32);
    r.backedOff(3_100, 'latency', 16);
    const l = r.report();
    expect(l.peakInFlight).toBe(40);
    expect(l.start).toMatchObject({ answers: 50 });
    expect(l.start.p50).toBeGreaterThanOrEqual(10);
    expect(l.start.p50).toBeLessThan(13);
    expect(l.peak).toMatchObject({ answers: 100, inFlight: 40 });
    expect(l.peak.p95).toBeGreaterThanOrEqual(200);
    expect(l.peak.p95).toBeLessThan(250);
    expect(l.backoffs).toEqual({ latency: 1, 'rate-limited': 1, timeout: 0 });
    expect(l.rateLimited).toBe(1);
    expect(l.timeline.map((b) => b.inFlight)).toEqual([4, 0, 40, 0]);
  });

  it('keeps at most 120 stretches of time, however long the run: two become one, twice as wide', () => {
    const r = new LoadRecorder(8);
    for (let s = 0; s < 1_000; s++) {
      r.sent(s * 1_000, s % 8, 8);
      r.answered(s * 1_000, 5, 200);
    }
    const l = r.report();
    expect(l.timeline.length).toBeLessThanOrEqual(120);
    expect(l.bucketMs).toBe(16_000);
    expect(l.timeline.reduce((n, b) => n + b.answers, 0)).toBe(1_000);
    expect(l.peakInFlight).toBe(7);
  });
});
