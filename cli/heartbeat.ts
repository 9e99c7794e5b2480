// The line a run prints at least every so often where no live status line is shown (CI, pipes).

export interface Heartbeat {
  /** A line was just printed: the next beat is due `every` ms from now. */
  said(): void;
  stop(): void;
}

/**
 * Calls `quiet` whenever `every` ms have gone by since the last line (said()), and no later:
 * each beat is timed for the moment it is due, not found by polling, so the gap between two
 * lines is `every` plus the event loop's delay, never up to a polling period more.
 * `quiet` is expected to print (and so call said()); if it does not, the next beat is `every`
 * ms after this one all the same. A timer that never keeps the process alive.
 */
export function heartbeat(every: number, quiet: () => void): Heartbeat {
  // A floor, so that a heartbeat of 0 (tests) is a line per 10 ms rather than a busy loop.
  const period = Math.max(10, every);
  let saidAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = (ms: number): void => {
    timer = setTimeout(due, Math.max(0, ms));
    timer.unref();
  };
  const due = (): void => {
    if (stopped) return;
    const since = Date.now() - saidAt;
    // Something was said meanwhile: the beat is due `period` after that.
    if (since < period) return arm(period - since);
    saidAt = Date.now();
    quiet();
    if (!stopped) arm(saidAt + period - Date.now());
  };
  arm(period);
  return {
    said: () => {
      saidAt = Date.now();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
