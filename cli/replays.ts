// After a run: each failed result run again alone, --replays times, to tell a failure the target
// gives every time from a moment of it (a rolling deploy, a cache warming, a race). A replay is
// the user's own replay command (reporters/console.ts replayCommand) done for them: a run of
// vitest (lib/vitest/vitest-run.ts) of the failed checks only, with the run's seed and settings,
// under a run id and a ledger of its own, cleaned up after it. It labels a failure; it never
// changes an outcome (docs/usage.md#replays).
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import {
  cleanUp,
  keepingLedger,
  Ledger,
  ledgerPath,
  newRunId,
  resultKey,
  type Check,
  type CheckResult,
  type CleanupReport,
  type RunSettings,
} from '../lib/runner/index.js';
import type { Secrets } from '../lib/evidence/index.js';
import { runSuite } from '../lib/vitest/index.js';
import { notRun } from '../reporters/console.js';
import type { ReplayCount, ReplaysReport, ReportedResult } from '../reporters/model.js';
import type { Io } from './io.js';

export interface Replayed {
  /** The run's results, each failure with its ReplayCount. */
  results: ReportedResult[];
  replays: ReplaysReport;
  /** What the passes' cleanups did, added up (each pass cleans up after itself). */
  cleanup: CleanupReport;
  /** The logins of the passes' workers (client credentials), to add to the run's. */
  logins: number;
}

/**
 * Runs the failed results of `results` again, `times` passes: each pass one vitest run of every
 * failed check (and operation) at once, side by side as in the run, each check with its own
 * requests only. Every pass runs every failure: a failure is replayed `times` times, not until it
 * reproduces, so that its label counts as many tries whatever the first one found. A pass stops
 * the passes when the run is stopped (Ctrl-C) or the target stops answering.
 */
export async function replayFailures(a: {
  settings: RunSettings;
  checks: readonly Check[];
  results: readonly CheckResult[];
  times: number;
  secrets: Secrets;
  signal: AbortSignal;
  io: Io;
}): Promise<Replayed> {
  const { io } = a;
  const failed = new Set(a.results.filter((r) => r.outcome === 'fail').map(resultKey));
  const checks = a.checks.filter((c) => failed.has(resultKey(c)));
  const counts = new Map<string, ReplayCount>(checks.map((c) => [resultKey(c), { runs: 0, reproduced: 0 }]));
  const statusOf = new Map(a.results.filter((r) => r.outcome === 'fail').map((r) => [resultKey(r), r.evidence?.status]));
  const started = Date.now();
  const report: ReplaysReport = { limit: a.times, passes: 0, requests: 0, durationMs: 0 };
  let cleanup: CleanupReport = { deleted: 0, leftovers: [] };
  let logins = 0;
  for (let pass = 1; pass <= a.times && checks.length > 0 && !a.signal.aborted; pass++) {
    const settings = replaySettings(a.settings);
    io.out(`replay ${pass} of ${a.times}: ${checks.length} failed result(s) run again alone, seed ${settings.seed} (run ${settings.runId})`);
    let results: CheckResult[];
    try {
      const suite = await runSuite({ settings, checks, signal: a.signal });
      for (const s of suite.secrets) a.secrets.add(s);
      logins += suite.logins;
      for (const e of suite.suiteErrors) io.err(`replay ${pass}: ${a.secrets.mask(e)} (the replay's counts may be short; no outcome changes)`);
      report.requests += Object.values(suite.load?.asked ?? {}).reduce((n, k) => n + (k ?? 0), 0);
      results = suite.results;
    } catch (e) {
      io.err(`replay ${pass}: could not run: ${a.secrets.mask((e as Error).message)}; no more replays`);
      results = [];
    }
    cleanup = added(cleanup, await cleanUpPass(settings, a.secrets));
    // A pass cut short by a stop counts nothing: its checks did not run to their end.
    if (a.signal.aborted || results.length === 0) break;
    report.passes = pass;
    for (const r of results) counted(counts.get(resultKey(r))!, r, statusOf.get(resultKey(r)));
    if (results.some(notRun)) {
      io.err(`replay ${pass}: the target stopped answering; no more replays`);
      break;
    }
  }
  report.durationMs = Date.now() - started;
  const labelled = a.results.map((r) => {
    const c = counts.get(resultKey(r));
    return r.outcome === 'fail' && c && report.passes > 0 ? { ...r, replays: { ...c } } : r;
  });
  return { results: labelled, replays: report, cleanup, logins };
}

/**
 * One replay's result added to its failure's count. A failure again reproduces the run's when
 * it rests on the same status, or when either has none to compare; one on another status (a 500
 * where the run saw a 200 for a 204) broke the rule otherwise, and is counted apart.
 */
function counted(c: ReplayCount, r: CheckResult, was: number | undefined): void {
  if (r.outcome === 'error' || r.outcome === 'skip') {
    if (r.outcome === 'error') c.errors = (c.errors ?? 0) + 1;
    else c.skipped = (c.skipped ?? 0) + 1;
    return;
  }
  c.runs++;
  if (r.outcome !== 'fail') return;
  const now = r.evidence?.status;
  if (was === undefined || now === undefined || now === was) {
    c.reproduced++;
    return;
  }
  c.otherwise = (c.otherwise ?? 0) + 1;
  c.otherStatuses = [...new Set([...(c.otherStatuses ?? []), now])];
}

/** A pass's settings: the run's, under a run id and a ledger of its own (as a replay command run by hand would be). */
function replaySettings(run: RunSettings): RunSettings {
  const runId = newRunId();
  const settings = { ...run, runId, ledgerPath: ledgerPath(runId) };
  new Ledger(settings.ledgerPath).started({ runId, baseUrl: settings.baseUrl, startedAt: new Date().toISOString(), pid: process.pid, host: hostname() });
  return settings;
}

/** A pass's cleanup: its ledger goes once nothing is left in it, else it stays (kept) for `conformance cleanup --run ID`. */
async function cleanUpPass(settings: RunSettings, secrets: Secrets): Promise<CleanupReport> {
  const done = keepingLedger(await cleanUp(settings, secrets), settings.runId);
  if (!done.kept) rmSync(dirname(settings.ledgerPath), { recursive: true, force: true });
  return done;
}

/** Two cleanups' reports as one. */
export function added(a: CleanupReport, b: CleanupReport): CleanupReport {
  const alreadyGone = (a.alreadyGone ?? 0) + (b.alreadyGone ?? 0);
  const restored = [...(a.restored ?? []), ...(b.restored ?? [])];
  const kept = [...(a.kept ?? []), ...(b.kept ?? [])];
  const loginFailed = a.loginFailed ?? b.loginFailed;
  return {
    ...a,
    deleted: a.deleted + b.deleted,
    ...(alreadyGone ? { alreadyGone } : {}),
    leftovers: [...a.leftovers, ...b.leftovers],
    ...(restored.length ? { restored } : {}),
    ...(kept.length ? { kept } : {}),
    ...(loginFailed ? { loginFailed } : {}),
  };
}
