// The circuit breaker of a run (lib/transport/http.ts): once the target has failed at several
// moments apart in time, with no answer between, or has answered nothing for a long while
// with requests in flight, nothing more is sent to it.

/**
 * Failures at moments apart in time, with no answer between, after which the target is taken
 * for down. Three timeouts so spaced are two or three timeouts of complete silence while the
 * suite asked: a busy target answers something in that time.
 */
export const BREAKER_AFTER = 3;

/**
 * Silence (ms) with requests in flight after which two failures at moments apart are enough:
 * two rounds of timeouts (10 s each by default; the first round ends a little under 10 s after
 * the last answer, its requests sent before it) with nothing answered between, where a third
 * round would only make the run wait longer. One slow round never opens it.
 */
export const BREAKER_SILENT_MS = 15_000;

/**
 * Failures this close (ms) to the last one the breaker counted, of attempts sent before it,
 * are the same moment: requests in flight together that time out together (the target or
 * this machine was busy for a while) are one failure, not one each. A failure of an attempt
 * sent after the last counted one is new evidence, and counts however soon it comes.
 */
export const BREAKER_GAP_MS = 2_000;

/**
 * The circuit breaker's state. One per run, shared by the clients of every area (each vitest
 * area file builds its own client, in one worker): a target that stopped answering during one
 * area is not asked again, a round of timeouts at a time, by each area after it.
 */
export class Breaker {
  static readonly #runs = new Map<string, Breaker>();
  /** Requests answered. */
  answered = 0;
  #failures = 0;
  /** When the last answer came (performance.now()). */
  answeredAt = -Infinity;
  /** When the first failure counted since the last answer was sent: from then on, requests were in flight. */
  #inFlightSince = Infinity;
  /** When the last counted failure happened (performance.now()). */
  lastFailureAt = -Infinity;
  /** Set when the breaker opens: why every later request fails at once. */
  down?: string;
  /** See BREAKER_GAP_MS. */
  readonly gapMs: number;
  /** See BREAKER_SILENT_MS. */
  readonly silentMs: number;

  constructor(options: { gapMs?: number; silentMs?: number } = {}) {
    this.gapMs = options.gapMs ?? BREAKER_GAP_MS;
    this.silentMs = options.silentMs ?? BREAKER_SILENT_MS;
  }

  static forRun(runId: string): Breaker {
    let b = Breaker.#runs.get(runId);
    if (!b) Breaker.#runs.set(runId, (b = new Breaker()));
    return b;
  }

  /** Failures counted since the last answer: moments apart in time (see BREAKER_GAP_MS). */
  get failures(): number {
    return this.#failures;
  }

  /** Set to 0 by an answer (the client's #heard): the silence starts again from it. */
  set failures(n: number) {
    if (n === 0) {
      this.answeredAt = performance.now();
      this.#inFlightSince = Infinity;
    }
    this.#failures = n;
  }

  /**
   * A failure of an attempt sent at `sentAt`: whether it counts, as a moment of its own. It
   * does not when the attempt was already in flight at the last counted failure and comes
   * within gapMs of it: requests that were sent together and fail together are one failure.
   */
  count(sentAt: number, now = performance.now()): boolean {
    if (this.#failures > 0 && sentAt < this.lastFailureAt && now - this.lastFailureAt < this.gapMs) return false;
    if (this.#failures === 0) this.#inFlightSince = sentAt;
    this.#failures++;
    this.lastFailureAt = now;
    return true;
  }

  /** How long (ms) nothing has been answered while requests were in flight. */
  silentFor(now = performance.now()): number {
    return Math.max(0, now - Math.max(this.answeredAt, this.#inFlightSince));
  }

  /**
   * Whether the failures counted open the breaker: `after` moments apart with no answer between,
   * or two such moments and silentMs of silence with requests in flight (one slow moment never does).
   */
  opens(after: number, now = performance.now()): boolean {
    return this.#failures >= after || (this.#failures >= 2 && this.silentFor(now) >= this.silentMs);
  }
}
