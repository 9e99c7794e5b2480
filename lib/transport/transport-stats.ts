// What the transport did for a check or a run (retries, waits, the breaker), and their sum.

/**
 * What the transport did, kept by the client for the run and by each Session for its check
 * (shared work counts for the check that started it), so a summary can add them up.
 */
export interface TransportStats {
  /** Requests sent, each counted once however many attempts it took. */
  requests: number;
  /** Attempts beyond the first. */
  retries: number;
  /** Of those: GETs sent again after their connection was reset (before or during the answer). */
  resetRetries: number;
  /** Of those: GETs sent again after an attempt timed out. */
  timeoutRetries: number;
  /** 429 answers, and 5xx answers to be waited out (a 503, a GET's 502 or 504), waited out (each one followed by a retry). */
  waitedOut: number;
  /** Time spent waiting between attempts. */
  waitedMs: number;
  /** Requests not sent: the breaker was open. */
  refused: number;
  /** The lowest in-flight bound a 429 answered to these requests lowered the client to. */
  concurrencyLoweredTo?: number;
  /** The lowest in-flight bound timeouts of these requests lowered the client to (latency's own back-offs: LoadReport). */
  latencyLoweredTo?: number;
  /** The breaker opened on one of these requests, after this many failures apart in time. */
  breakerOpenedAfter?: number;
  /**
   * POSTs and DELETEs lost on the way (SuiteError.mayHaveApplied) after which the work was done
   * again: a create sent afresh (Session.create), a check run again (runCheck).
   */
  lostRedone?: number;
}

export function noTransport(): TransportStats {
  return { requests: 0, retries: 0, resetRetries: 0, timeoutRetries: 0, waitedOut: 0, waitedMs: 0, refused: 0 };
}

/** The stats of several checks (or runs) as one: counts added, the lowest bounds, the breaker if any opened. */
export function sumTransport(all: ReadonlyArray<TransportStats | undefined>): TransportStats {
  const sum = noTransport();
  for (const t of all) {
    if (!t) continue;
    sum.requests += t.requests;
    sum.retries += t.retries;
    sum.resetRetries += t.resetRetries;
    // Absent from reports written before it was counted.
    sum.timeoutRetries += t.timeoutRetries ?? 0;
    sum.waitedOut += t.waitedOut;
    sum.waitedMs += t.waitedMs;
    sum.refused += t.refused;
    if (t.concurrencyLoweredTo !== undefined) sum.concurrencyLoweredTo = Math.min(sum.concurrencyLoweredTo ?? Infinity, t.concurrencyLoweredTo);
    if (t.latencyLoweredTo !== undefined) sum.latencyLoweredTo = Math.min(sum.latencyLoweredTo ?? Infinity, t.latencyLoweredTo);
    if (t.breakerOpenedAfter !== undefined) sum.breakerOpenedAfter = Math.max(sum.breakerOpenedAfter ?? 0, t.breakerOpenedAfter);
    if (t.lostRedone) sum.lostRedone = (sum.lostRedone ?? 0) + t.lostRedone;
  }
  return sum;
}
