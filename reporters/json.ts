import type { RunReport } from './model.js';

/** results.json: the whole model. */
export function renderJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
