// The circuit breaker of a run (lib/transport/http.ts): once the target has failed at several
// moments apart in time, with no answer between, nothing more is sent to it.

/**
 * Failures at moments apart in time, with no answer between, after which the target is taken
 * for down. Three timeouts so spaced are two or three timeouts of complete silence while the
 * suite asked: a busy target answers something in that time.
 */
export const BREAKER_AFTER = 3;

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
  /** Failures counted since the last answer: moments apart in time (see BREAKER_GAP_MS). */
  failures = 0;
  /** When the last counted failure happened (performance.now()). */
  lastFailureAt = -Infinity;
  /** Set when the breaker opens: why every later request fails at once. */
  down?: string;
  /** See BREAKER_GAP_MS. */
  readonly gapMs: number;

  constructor(options: { gapMs?: number } = {}) {
    this.gapMs = options.gapMs ?? BREAKER_GAP_MS;
  }

  static forRun(runId: string): Breaker {
    let b = Breaker.#runs.get(runId);
    if (!b) Breaker.#runs.set(runId, (b = new Breaker()));
    return b;
  }

  /**
   * A failure of an attempt sent at `sentAt`: whether it counts, as a moment of its own. It
   * does not when the attempt was already in flight at the last counted failure and comes
   * within gapMs of it: requests that were sent together and fail together are one failure.
   */
  count(sentAt: number, now = performance.now()): boolean {
    if (this.failures > 0 && sentAt < this.lastFailureAt && now - this.lastFailureAt < this.gapMs) return false;
    this.failures++;
    this.lastFailureAt = now;
    return true;
  }
}
