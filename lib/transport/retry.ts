// How the transport (lib/transport/http.ts) sends a request again after an answer that says "not
// processed" (429, 503) or a gateway's 502 or 504 to a GET, a reset or a timeout: a time budget, not a small count, and the
// Retry-After a target names.
import { setTimeout as delay } from 'node:timers/promises';

export interface RetryPolicy {
  /**
   * A safety cap on the attempts after the first, whatever their cause. It is large: what ends
   * the retries of a request is its time budget (maxWaitMs).
   */
  maxRetries: number;
  /**
   * The time budget of one request: the most time it spends without an answer beyond its first
   * attempt, that is the waits between its attempts and the attempts that timed out after the
   * first, all together. No retry starts that would pass it.
   */
  maxWaitMs: number;
  /** The first wait when an answer names no Retry-After; it doubles with each retry, with jitter. */
  baseDelayMs: number;
  /** The longest wait the backoff chooses (a Retry-After may ask for more, within maxWaitMs). */
  maxDelayMs: number;
  /** How the client waits between attempts; tests shrink time with it. */
  sleep: (ms: number) => Promise<void>;
}

/**
 * A minute per request: a rate limit counted per minute is waited out, and so is a burst of
 * 429s without Retry-After (backoff 0.5 s doubling to 8 s: about a dozen retries). The count
 * is only a guard against a loop: the time budget ends the retries first (Retry-After is read
 * in whole seconds, and the backoff's shortest wait is a quarter of a second).
 */
export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 100, maxWaitMs: 60_000, baseDelayMs: 500, maxDelayMs: 8_000, sleep: (ms) => delay(ms) };

/**
 * Retry-After (RFC 9110 section 10.2.3) in ms from `now`: delay-seconds or an HTTP date.
 * Undefined when absent, unreadable, zero or past: the backoff decides then.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) > 0 ? Number(v) * 1000 : undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) || at <= now ? undefined : at - now;
}
