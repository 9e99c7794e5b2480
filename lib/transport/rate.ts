// How fast requests are sent: a fixed cap (--max-rate), for a staging service shared with
// others, and a cap learned from 429s (RateLearner), for a target that admits so many requests a
// second and refuses the rest (how many is not stated: spec/contract/README.md#limits.request-rate).
// Sends are spaced evenly, 1/rate apart, with no burst, so a target's per-second limit is met
// without the 429s and Retry-After waits a burst would bring. Nothing here reads a clock (see
// Limiter): the HTTP client hands in the time, so tests drive it with made-up times.

export class RateCap {
  /** The fixed cap (--max-rate), if any. */
  readonly perSecond: number | undefined;
  /** When the next send may go (the caller's clock, ms). */
  #next = -Infinity;

  constructor(perSecond?: number) {
    this.perSecond = perSecond;
  }

  /**
   * Whether a send may go at `now`, under the fixed cap and `learned` (requests a second), the
   * lower of the two: 0 when it may, its turn then taken, else how long until the next turn (ms).
   * Turns keep their schedule when taken a little late (a timer fires late on a busy machine):
   * no more than one turn's gap is made up, so at most two sends go at once.
   */
  take(now: number, learned?: number): number {
    const rate = Math.min(this.perSecond ?? Infinity, learned ?? Infinity);
    if (rate === Infinity) return 0;
    if (now < this.#next) return this.#next - now;
    const gap = 1000 / rate;
    this.#next = Math.max(this.#next, now - gap) + gap;
    return 0;
  }
}

/** The learned cap is this share of the rate the target admitted over the window before a 429. */
export const UNDER = 0.95;
/**
 * A 429 that comes while answers came at less than this share of the cap, or while the cap is
 * under this share of the highest rate admitted at a 429 (a full window after the cap was set),
 * is not about the rate: refusals that come whatever the rate (a busy service, a key shared with
 * others) refute the cap, and it is dropped, so that they do not lower it window after window.
 */
const NEAR = 0.8;
/** The window a rate is measured over: the Retry-After the target names, within these bounds. */
const MIN_WINDOW_MS = 1_000;
const MAX_WINDOW_MS = 60_000;
/** Answers counted in bins of this width: bounded memory whatever the rate. */
const BIN_MS = 10;
const BINS = MAX_WINDOW_MS / BIN_MS;
const ring = (bin: number): number => ((bin % BINS) + BINS) % BINS;
/** The fewest answers in a window a rate is learned from. */
const MIN_ANSWERS = 10;
/** After a cut the cap holds for HOLD_S, then rises by RISE × s² (slowly near where the target refused)... */
const HOLD_S = 2;
const RISE = 1.6e-4;
/** ...and from DOUBLE_AFTER_S on doubles every DOUBLE_S besides, so a cap learned too low does not stay so. */
const DOUBLE_AFTER_S = 30;
const DOUBLE_S = 5;

/**
 * The rate a target admits, learned from its 429s: at a 429, the answers that came over the
 * window before it (as long as the Retry-After it names, at least 1 s) are what it admits in a
 * window, and sends are paced at UNDER that rate. With no 429 the cap rises again, slowly at
 * first. The 429s to requests sent before a cut, or within a window of it, say nothing of the
 * new cap (the window still holds the old rate). A cap learned before the run has lived a whole
 * window is provisional (the target may admit more than was sent): it doubles every window until
 * a 429 says where the limit is.
 */
export class RateLearner {
  /** The cap at the last cut (requests a second); undefined: none learned, or refuted. */
  #base: number | undefined;
  #provisional = false;
  #windowMs = MIN_WINDOW_MS;
  /** The highest rate admitted at a 429 since the cap was last refuted. */
  #peak = 0;
  /** When the cap was last set or dropped (ms). */
  #cutAt = -Infinity;
  /** When the first answer came. */
  #since: number | undefined;
  /** Answers by bin of BIN_MS, a ring; #bin is the bin of the latest time seen. */
  readonly #counts = new Uint32Array(BINS);
  #bin = -Infinity;
  /** The caps set, the lowest of them, and the caps refuted. */
  cuts = 0;
  lowest: number | undefined;
  refuted = 0;

  /** The cap at `now` (requests a second), risen since the last cut; undefined when there is none. */
  rate(now: number): number | undefined {
    if (this.#base === undefined) return undefined;
    const since = now - this.#cutAt;
    if (this.#provisional) return this.#base * 2 ** Math.floor(since / this.#windowMs);
    const s = Math.max(0, since / 1000 - HOLD_S);
    return this.#base * (1 + RISE * s * s) * 2 ** (Math.max(0, s + HOLD_S - DOUBLE_AFTER_S) / DOUBLE_S);
  }

  /** The target answered (anything but a 429) at `now`. */
  answered(now: number): void {
    this.#since ??= now;
    this.#advance(now);
    this.#counts[ring(this.#bin)]!++;
  }

  /**
   * A 429 came at `now` to an attempt sent at `sentAt`, naming `retryAfterMs` (if it did): the
   * cap in force afterwards, or undefined when there is none (the caller then lowers what is in
   * flight, as before any rate was learned).
   */
  limited(now: number, sentAt: number, retryAfterMs?: number): number | undefined {
    const windowMs = Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, retryAfterMs ?? 0));
    const cap = this.rate(now);
    if (sentAt < this.#cutAt || now - this.#cutAt < windowMs || this.#since === undefined) return cap;
    const answers = this.#count(now, windowMs);
    const admitted = (answers * 1000) / windowMs;
    // A provisional cap doubles as it goes: it says nothing of whether the 429 is about the rate.
    if (cap !== undefined && !this.#provisional && (admitted < NEAR * cap || cap < NEAR * this.#peak)) {
      this.#base = undefined;
      this.#peak = 0;
      this.#cutAt = now;
      this.refuted++;
      return undefined;
    }
    if (answers < MIN_ANSWERS) return cap;
    this.#base = UNDER * admitted;
    this.#provisional = now - this.#since < windowMs;
    this.#windowMs = windowMs;
    this.#peak = Math.max(this.#peak, admitted);
    this.#cutAt = now;
    this.cuts++;
    this.lowest = Math.min(this.lowest ?? Infinity, this.#base);
    return this.#base;
  }

  /** The bins up to `now`'s, those passed emptied. */
  #advance(now: number): void {
    const bin = Math.floor(now / BIN_MS);
    if (bin <= this.#bin) return;
    const from = Math.max(this.#bin + 1, bin - BINS + 1);
    for (let b = from; b <= bin; b++) this.#counts[ring(b)] = 0;
    this.#bin = bin;
  }

  /** Answers over the `ms` before `now`. */
  #count(now: number, ms: number): number {
    this.#advance(now);
    let n = 0;
    for (let b = this.#bin - Math.round(ms / BIN_MS) + 1; b <= this.#bin; b++) n += this.#counts[ring(b)]!;
    return n;
  }
}
