// How hard a run pushed its target: the most requests in flight, latency at the start and at
// the peak, the back-offs and why, and the same over the run's time for report.html. Bounded
// whatever the run's length: latencies go into log-scale histograms, and the run's time into at
// most MAX_BUCKETS buckets (two merged into one, the width doubled, when they would be more).
import type { BackoffCause } from './limiter.js';

/** Latency percentiles of a set of answers (ms, to the answer's head). */
export interface LatencyFigures {
  answers: number;
  p50: number;
  p95: number;
}

/** One stretch of the run's time. */
export interface LoadBucket {
  /** The lowest limit in it (0: nothing sent), so that a back-off shows, and the most requests actually in flight. */
  limit: number;
  inFlight: number;
  answers: number;
  p50?: number;
  p95?: number;
  rateLimited: number;
  backoffs: number;
}

export interface LoadReport {
  /** --concurrency: the limit's ceiling; --max-rate, if set. */
  ceiling: number;
  maxRate?: number;
  peakInFlight: number;
  /** The run's first START_ANSWERS answers, and the answers of the stretch of time with the most in flight. */
  start: LatencyFigures;
  peak: LatencyFigures & { inFlight: number };
  backoffs: Record<BackoffCause, number>;
  /** 429 answers. */
  rateLimited: number;
  /** Sends paced at a rate learned from 429s (lib/transport/rate.ts): how often it was set, and its lowest (a second). */
  paced?: { cuts: number; lowest: number };
  bucketMs: number;
  timeline: LoadBucket[];
  /** Requests by the way of asking that sent them (RequestSpec.way), each counted once, however often it was tried. */
  asked: Partial<Record<Way, number>>;
}

/**
 * The ways a run asks the target, for the count of requests by way (LoadReport.asked): a check's
 * own probes, the traversals (offset and keyset walks), the parent search, the exploration's
 * covering array, legal draws (in the suite's spelling and in others), illegal draws, tie walks,
 * the model's reads and shrinking; the writes (creates and deletes of the checks), the auth
 * matrix, the settings changes, the preflight and the cleanup.
 */
export type Way =
  | 'probes'
  | 'walks'
  | 'parents'
  | 'covering'
  | 'legal'
  | 'spellings'
  | 'illegal'
  | 'ties'
  | 'shrinking'
  | 'writes'
  | 'auth'
  | 'settings'
  | 'preflight'
  | 'cleanup';

/** Answers that make "the start". */
const START_ANSWERS = 50;
const MAX_BUCKETS = 120;
const FIRST_BUCKET_MS = 1000;
/** Bins of the latency histograms: each 1.25 times the one below, up to ~10 minutes. */
const GROWTH = 1.25;
const BINS = 64;

function bin(ms: number): number {
  return Math.min(BINS - 1, Math.max(0, Math.ceil(Math.log(Math.max(ms, 1)) / Math.log(GROWTH))));
}

class Histogram {
  readonly counts = new Array<number>(BINS).fill(0);
  n = 0;
  add(ms: number): void {
    this.counts[bin(ms)]!++;
    this.n++;
  }
  merge(h: Histogram): void {
    for (let i = 0; i < BINS; i++) this.counts[i]! += h.counts[i]!;
    this.n += h.n;
  }
  /** The `q` quantile, as its bin's upper edge (within 25 %), whole ms. */
  quantile(q: number): number {
    let seen = 0;
    for (let i = 0; i < BINS; i++) {
      seen += this.counts[i]!;
      if (seen >= q * this.n) return Math.round(GROWTH ** i);
    }
    return Math.round(GROWTH ** (BINS - 1));
  }
  figures(): LatencyFigures {
    return { answers: this.n, p50: this.n ? this.quantile(0.5) : 0, p95: this.n ? this.quantile(0.95) : 0 };
  }
}

interface Bucket {
  limit: number;
  inFlight: number;
  latency: Histogram;
  rateLimited: number;
  backoffs: number;
}

/** The lower of two limits, 0 standing for none yet. */
const lowest = (a: number, b: number): number => (a === 0 ? b : b === 0 ? a : Math.min(a, b));

const emptyBucket = (): Bucket => ({ limit: 0, inFlight: 0, latency: new Histogram(), rateLimited: 0, backoffs: 0 });

export class LoadRecorder {
  readonly #ceiling: number;
  readonly #maxRate: number | undefined;
  /** The clock's value at the run's first request. */
  #origin: number | undefined;
  #bucketMs = FIRST_BUCKET_MS;
  readonly #buckets: Bucket[] = [];
  readonly #start = new Histogram();
  #peak = 0;
  #rateLimited = 0;
  readonly #asked: Partial<Record<Way, number>> = {};
  #paced: { cuts: number; lowest: number } | undefined;
  readonly #backoffs: Record<BackoffCause, number> = { latency: 0, 'rate-limited': 0, timeout: 0 };

  constructor(ceiling: number, maxRate?: number) {
    this.#ceiling = ceiling;
    this.#maxRate = maxRate;
  }

  #at(now: number): Bucket {
    this.#origin ??= now;
    let i = Math.floor((now - this.#origin) / this.#bucketMs);
    while (i >= MAX_BUCKETS) {
      this.#halve();
      i = Math.floor((now - this.#origin) / this.#bucketMs);
    }
    while (this.#buckets.length <= i) this.#buckets.push(emptyBucket());
    return this.#buckets[i]!;
  }

  /** Two buckets become one, twice as wide. */
  #halve(): void {
    const merged: Bucket[] = [];
    for (let i = 0; i < this.#buckets.length; i += 2) {
      const a = this.#buckets[i]!;
      const b = this.#buckets[i + 1];
      if (b) {
        a.limit = lowest(a.limit, b.limit);
        a.inFlight = Math.max(a.inFlight, b.inFlight);
        a.latency.merge(b.latency);
        a.rateLimited += b.rateLimited;
        a.backoffs += b.backoffs;
      }
      merged.push(a);
    }
    this.#buckets.splice(0, this.#buckets.length, ...merged);
    this.#bucketMs *= 2;
  }

  /** A request was sent at `now`, `inFlight` in flight with it, under `limit`. */
  sent(now: number, inFlight: number, limit: number): void {
    const b = this.#at(now);
    b.inFlight = Math.max(b.inFlight, inFlight);
    b.limit = lowest(b.limit, limit);
    this.#peak = Math.max(this.#peak, inFlight);
  }

  /** A request of `way` was admitted (sent once, however often it is tried). */
  asked(way: Way): void {
    this.#asked[way] = (this.#asked[way] ?? 0) + 1;
  }

  /** An answer came at `now`, `ms` after its request was sent; a 429 counts apart. */
  answered(now: number, ms: number, status: number): void {
    const b = this.#at(now);
    if (status === 429) {
      b.rateLimited++;
      this.#rateLimited++;
      return;
    }
    b.latency.add(ms);
    if (this.#start.n < START_ANSWERS) this.#start.add(ms);
  }

  /** At `now`, 429s set the learned rate to `perSecond`. */
  paced(_now: number, perSecond: number): void {
    this.#paced = { cuts: (this.#paced?.cuts ?? 0) + 1, lowest: Math.min(this.#paced?.lowest ?? Infinity, Math.round(perSecond * 10) / 10) };
  }

  backedOff(now: number, cause: BackoffCause, limit: number): void {
    const b = this.#at(now);
    b.backoffs++;
    b.limit = lowest(b.limit, limit);
    this.#backoffs[cause]++;
  }

  report(): LoadReport {
    // The stretch with the most in flight; of those, the one with the most answers.
    let peak: Bucket | undefined;
    for (const b of this.#buckets) if (!peak || b.inFlight > peak.inFlight || (b.inFlight === peak.inFlight && b.latency.n > peak.latency.n)) peak = b;
    return {
      ceiling: this.#ceiling,
      ...(this.#maxRate !== undefined ? { maxRate: this.#maxRate } : {}),
      peakInFlight: this.#peak,
      start: this.#start.figures(),
      peak: { ...(peak?.latency ?? new Histogram()).figures(), inFlight: peak?.inFlight ?? 0 },
      backoffs: { ...this.#backoffs },
      rateLimited: this.#rateLimited,
      ...(this.#paced ? { paced: { ...this.#paced } } : {}),
      bucketMs: this.#bucketMs,
      asked: { ...this.#asked },
      timeline: this.#buckets.map((b) => {
        const f = b.latency.figures();
        return {
          limit: b.limit,
          inFlight: b.inFlight,
          answers: f.answers,
          ...(f.answers ? { p50: f.p50, p95: f.p95 } : {}),
          rateLimited: b.rateLimited,
          backoffs: b.backoffs,
        };
      }),
    };
  }
}
