// What a run says while its checks run: a line per result that is not a pass, one per area when
// its last check is done (areas run side by side, so they finish in any order), the moments the
// transport slowed, a status line rewritten in place where someone watches a terminal, and
// elsewhere a heartbeat line at least every so often.
import type { Check, CheckResult } from '../lib/runner/index.js';
import { printable } from '../lib/text/index.js';
import { interrupted as stoppedByUser, loginFailed, notRun, renderAreaLine, renderProgress, unanswered } from '../reporters/console.js';
import { verdictOf } from '../reporters/model.js';
import { heartbeat, type Heartbeat } from './heartbeat.js';
import type { Io } from './io.js';

export interface LiveOptions {
  color: boolean;
  strict: boolean;
  /** The requests in flight the run starts with (--concurrency). */
  concurrency: number;
  /** The status line, where someone watches a terminal (cli/io.ts liveProgress). */
  progress: Io['progress'];
  /** Whether a failure is listed in the baseline: it reads as a warning, as in the summary. */
  baselined(r: CheckResult): boolean;
}

export interface Live {
  /** A line, with the status line cleared first and the heartbeat told. */
  say(line: string): void;
  /** A result has come. */
  result(r: CheckResult): void;
  /** Without a status line: a line at least every `every` ms until stop(). */
  beat(every: number): void;
  stop(): void;
}

export function live(io: Io, checks: readonly Check[], o: LiveOptions): Live {
  const counts = new Map<string, Map<string, number>>();
  const left = new Map<string, number>();
  for (const c of checks) left.set(c.area, (left.get(c.area) ?? 0) + 1);
  let done = 0;
  let shownAt = 0;
  let stopped = false;
  let quietUnanswered = false;
  let saidLogin = false;
  let saidSlow = false;
  let inFlight = o.concurrency;
  let beating: Heartbeat | undefined;
  const say = (line: string): void => {
    o.progress?.(undefined);
    beating?.said();
    io.out(line);
  };
  /** The transport lowered what it sends at once: said as it happens, so a slowed run is not silent. */
  const slowedDown = (r: CheckResult): void => {
    const lowered = r.transport?.concurrencyLoweredTo;
    if (lowered !== undefined && lowered < inFlight) {
      inFlight = lowered;
      say(`  ~ rate limited (429): requests in flight lowered to ${lowered}; the run goes on, slower`);
    }
    // Said once: the summary's transport line has the lowest bound it reached.
    const slowed = r.transport?.latencyLoweredTo;
    if (slowed !== undefined && slowed < inFlight) {
      inFlight = slowed;
      if (!saidSlow) say(`  ~ timeouts: requests in flight lowered to ${slowed}; the run goes on, slower`);
      saidSlow = true;
    }
  };
  /** The line a result gets, if any. */
  const lineFor = (r: CheckResult): void => {
    // Once the breaker has opened, the checks it stops are one line, not one each.
    if (notRun(r)) {
      if (!stopped) say(`  ! the target stopped answering: the suite sends nothing more (${printable(r.reason ?? '')}); the remaining checks are not run`);
      stopped = true;
    } else if (loginFailed(r)) {
      if (!saidLogin) say(`  ! ${printable(r.reason ?? '')}: the checks that need a new token are not run`);
      saidLogin = true;
    } else if (unanswered(r)) {
      // Requests without an answer come in bursts: the first is said, the rest counted in the summary.
      if (!quietUnanswered) say(`${renderProgress(r, { color: o.color, strict: o.strict })} (no answer: more like it are counted in the summary)`);
      quietUnanswered = true;
    } else if (r.outcome !== 'pass' && r.outcome !== 'skip' && !stoppedByUser(r)) {
      say(renderProgress(r, { color: o.color, strict: o.strict }));
    }
  };
  return {
    say,
    result(result) {
      // Live lines read a failure that does not fail the run (a SHOULD one without --strict,
      // a baselined one) as a warning, as the summary will.
      const r = o.baselined(result) ? { ...result, baselined: true } : result;
      if (!counts.has(r.area)) counts.set(r.area, new Map());
      const c = counts.get(r.area)!;
      const verdict = verdictOf(r, o.strict);
      c.set(verdict, (c.get(verdict) ?? 0) + 1);
      done++;
      slowedDown(r);
      lineFor(r);
      const rest = left.get(r.area)! - 1;
      left.set(r.area, rest);
      if (rest === 0) say(renderAreaLine(r.area, c, { color: o.color }));
      if (o.progress && (Date.now() - shownAt > 100 || done === checks.length)) {
        shownAt = Date.now();
        o.progress(`  ${done}/${checks.length} checks done`);
      }
    },
    beat(every) {
      let beaten = '';
      let beatenAt = 0;
      beating = heartbeat(every, () => {
        if (done === checks.length) return;
        const running = [...left].filter(([, n]) => n > 0).map(([area]) => area);
        const line = `  … ${done}/${checks.length} checks done; still running: ${running.join(', ') || 'the last checks'}`;
        // The same line again says nothing new (a target gone quiet): it is said again only
        // after a minute, so a CI job watching for output still sees the run alive.
        if (line === beaten && Date.now() - beatenAt < 60_000) return;
        say(line);
        beaten = line;
        beatenAt = Date.now();
      });
    },
    stop() {
      beating?.stop();
      o.progress?.(undefined);
    },
  };
}
