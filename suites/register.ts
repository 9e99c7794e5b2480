// The vitest glue: each area's suite file registers its checks as vitest tests. The outcome
// travels on the task's metadata (task.meta.conformance); the run's verdict is computed
// from those outcomes and levels, never from vitest's own pass/fail.
import { afterAll, inject, test } from 'vitest';
import { RunContext, runCheck, type Check, type CheckResult, type RunSettings } from '../lib/check.js';

export interface ProvidedRun {
  settings: RunSettings;
  /** Ids of the checks to run. */
  selected: string[];
}

declare module 'vitest' {
  interface ProvidedContext {
    conformance: ProvidedRun;
  }
  interface TaskMeta {
    conformance?: CheckResult;
  }
}

export function registerChecks(checks: readonly Check[]): void {
  const { settings, selected } = inject('conformance');
  const wanted = new Set(selected);
  const run = new RunContext(settings);
  afterAll(() => run.close());
  for (const check of checks.filter((c) => wanted.has(c.id))) {
    test(check.id, async ({ task, skip }) => {
      const result = await runCheck(check, run);
      task.meta.conformance = result;
      if (result.outcome === 'skip') skip(result.reason);
      if (result.outcome === 'fail' || result.outcome === 'error') throw new Error(`${result.outcome}: ${result.reason ?? ''}`);
    });
  }
}
