// results.json: the whole model, and for each failure and error the command that re-runs it
// (console.ts replayCommand), so that a script or a later `conformance merge` has it at hand.
import { replayCommand } from './console.js';
import type { RunReport } from './model.js';

/** The model as results.json holds it: each failed or errored result with its `replay`. */
export function withReplays(report: RunReport): RunReport {
  return { ...report, results: report.results.map((r) => (r.outcome === 'fail' || r.outcome === 'error' ? { ...r, replay: replayCommand(report, r) } : r)) };
}

/** results.json. */
export function renderJson(report: RunReport): string {
  return `${JSON.stringify(withReplays(report), null, 2)}\n`;
}
