// The vitest glue: each area's suite file registers its checks as vitest tests. The outcome
// travels on the task's metadata (task.meta.conformance); the run's verdict is computed
// from those outcomes and levels, never from vitest's own pass/fail.
import { afterAll, inject, test } from 'vitest';
import { resultKey, RunContext, runCheck, type Check, type CheckResult, type RunSettings } from '../lib/check.js';
import { Breaker } from '../lib/http.js';

export interface ProvidedRun {
  settings: RunSettings;
  /** Result keys (id, or id and operation) of the checks to run. */
  selected: string[];
}

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
  }
}

export function registerChecks(checksFor: (settings: RunSettings) => readonly Check[]): void {
  const { settings, selected } = inject('conformance');
  const wanted = new Set(selected);
  // One breaker for the whole run: the area files run one after another in one worker, and an
  // area after the target stopped answering must not wait out its own timeouts to learn it.
  const run = new RunContext(settings, { breaker: Breaker.forRun(settings.runId) });
  afterAll(() => run.close());
  for (const check of checksFor(settings).filter((c) => wanted.has(resultKey(c)))) {
    test(resultKey(check), async ({ task, skip }) => {
      const result = await runCheck(check, run);
      task.meta.conformance = result;
      task.meta.conformanceSecrets = run.secrets.values();
      if (result.outcome === 'skip') skip(result.reason);
      if (result.outcome === 'fail' || result.outcome === 'error') throw new Error(`${result.outcome}: ${result.reason ?? ''}`);
    });
  }
}
