// The vitest glue: the suite file (suites/run.suite.ts) registers the checks as vitest tests. The outcome
// travels on the task's metadata (task.meta.conformance); the run's verdict is computed
// from those outcomes and levels, never from vitest's own pass/fail.
import { afterAll, inject, test } from 'vitest';
import {
  errorResult,
  GATE,
  gateChannel,
  resultHead,
  resultKey,
  RunContext,
  runCheck,
  stopChannel,
  type Check,
  type CheckResult,
  type RunSettings,
} from '../lib/runner/index.js';
import { Breaker, type LoadReport } from '../lib/transport/index.js';
import { useSchemaDocuments } from '../lib/contract/index.js';
import type { ProvidedRun } from '../lib/vitest/index.js';
import { CHANGES_STORE, WRITTEN_LISTS } from './index.js';
import { NO_5XX } from './levels.js';

declare module 'vitest' {
  interface ProvidedContext {
    conformance: ProvidedRun;
  }
  interface TaskMeta {
    conformance?: CheckResult;
    /**
     * The run's secrets as this worker knows them, for the main process to mask the report
     * with (in memory only: never part of a result, never written).
     */
    conformanceSecrets?: string[];
    /** How hard the run pushed the target: on the last check to finish only. */
    conformanceLoad?: LoadReport;
    /** How many times this worker logged in with client credentials so far. */
    conformanceLogins?: number;
  }
}

/**
 * Registers every selected check, of every area, as a test of the one suite file: vitest runs
 * them all at once (sequence.concurrent), and the HTTP client bounds what is in flight. Areas
 * do not wait for one another, except the list checks on WRITTEN_LISTS (suites/index.ts): they
 * wait until the checks that create and delete are done, so that no traversal of those lists
 * meets records coming and going under it. The checks that change the store's settings
 * (CHANGES_STORE) wait for every other check: none reads a list while the store is changed.
 */
export function registerRun(checksFor: (settings: RunSettings) => readonly Check[]): void {
  const { settings, selected, schemas } = inject('conformance');
  useSchemaDocuments(schemas);
  const wanted = new Set(selected);
  const run = new RunContext(settings, { breaker: Breaker.forRun(settings.runId) });
  let writersDone!: () => void;
  const written = new Promise<void>((resolve) => (writersDone = resolve));
  // Every check is under way at once, so a stop (Ctrl-C, SIGTERM) must reach the requests, not
  // only the checks not yet started: the main process says so on this channel
  // (lib/vitest/vitest-run.ts).
  const stop = new BroadcastChannel(stopChannel(settings.runId));
  stop.onmessage = () => {
    run.http.stop();
    // A check vitest never starts after a stop never says it is done: nothing waits for it.
    writersDone();
  };
  (stop as unknown as { unref(): void }).unref();
  // No check starts before the main process has checked the target (the preflight, run while
  // this worker loaded): it says go, or stop (a failed preflight, a Ctrl-C), and then no check
  // runs at all: none sends a request or writes to the ledger (lib/vitest/vitest-run.ts).
  const opened = new Promise<boolean>((resolve) => {
    const gate = new BroadcastChannel(gateChannel(settings.runId));
    gate.onmessage = (m: MessageEvent) => {
      if (m.data !== GATE.go && m.data !== GATE.stop) return;
      gate.close();
      if (m.data === GATE.stop) run.http.stop();
      resolve(m.data === GATE.go);
    };
    gate.postMessage(GATE.ask);
  });
  const notStarted = (check: Check): CheckResult => errorResult(resultHead(check), 'INTERRUPTED', 'the run was stopped before this check started');
  afterAll(async () => {
    stop.close();
    await run.close();
  });
  const checks = checksFor(settings).filter((c) => wanted.has(resultKey(c)));
  const changesStore = (c: Check): boolean => c.operation === undefined && CHANGES_STORE.has(c.id);
  let writing = checks.filter((c) => c.operation === undefined && !changesStore(c)).length;
  if (writing === 0) writersDone();
  let othersDone!: () => void;
  const others = new Promise<void>((resolve) => (othersDone = resolve));
  let running = checks.filter((c) => !changesStore(c)).length;
  let unfinished = checks.length;
  if (running === 0) othersDone();
  // A stop lets them go: they then report as not started, having sent nothing.
  let stopped = false;
  stop.addEventListener('message', () => {
    stopped = true;
    othersDone();
  });
  for (const check of checks) {
    const waits = check.operation !== undefined && WRITTEN_LISTS.has(check.operation);
    const last = changesStore(check);
    test(resultKey(check), async ({ task, skip }) => {
      const go = await opened;
      if (go && waits) await written;
      if (go && last) await others;
      let result: CheckResult;
      try {
        result = go && !(last && stopped) ? await runCheck(check, run, NO_5XX) : notStarted(check);
      } finally {
        if (!last && check.operation === undefined && --writing === 0) writersDone();
        if (!last && --running === 0) othersDone();
      }
      task.meta.conformance = result;
      task.meta.conformanceSecrets = run.secrets.values();
      task.meta.conformanceLogins = run.http.logins;
      if (--unfinished === 0) task.meta.conformanceLoad = run.http.load();
      if (result.outcome === 'skip') skip(result.reason);
      if (result.outcome === 'fail' || result.outcome === 'error') throw new Error(`${result.outcome}: ${result.reason ?? ''}`);
    });
  }
}
