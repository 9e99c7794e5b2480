// ctrf.json: the run in CTRF, the Common Test Report Format (ctrf.io), a JSON shape that many CI
// dashboards and pull-request bots read whatever tool wrote it. One test per result, named as
// the console names it; a failure that does not fail the run (a SHOULD or INFO failure, a
// baselined one) is `other` with its verdict as rawStatus, as is an error of the suite, so that
// `failed` counts exactly what fails the run.
import { label, replayCommand } from './console.js';
import { replayClass, replayLabel, settingsOf, verdictOf, type RunReport, type Verdict } from './model.js';

/** The CTRF specification version this file follows. */
export const CTRF_SPEC_VERSION = '0.0.0';

const STATUS: Record<Verdict, 'passed' | 'failed' | 'skipped' | 'other'> = { pass: 'passed', fail: 'failed', warn: 'other', error: 'other', skip: 'skipped' };

export function renderCtrf(report: RunReport): string {
  const strict = settingsOf(report).strict === true;
  const tests = report.results.map((r) => {
    const v = verdictOf(r, strict);
    const e = r.evidence;
    const trace = e
      ? [`expected: ${e.expected}`, `actual: ${e.actual}`, ...(e.request ? [`request: ${e.request}`] : []), ...e.exchanges].join('\n')
      : undefined;
    return {
      name: label(r),
      status: STATUS[v],
      duration: r.durationMs,
      ...(STATUS[v] === 'other' ? { rawStatus: v } : {}),
      suite: [r.area],
      ...(r.reason !== undefined ? { message: r.reason } : {}),
      ...(trace !== undefined ? { trace } : {}),
      tags: [r.level],
      labels: {
        id: r.id,
        level: r.level,
        clause: r.clause,
        ...(r.operation ? { operation: r.operation } : {}),
        ...(r.errorCode ? { errorCode: r.errorCode } : {}),
      },
      // A failure run again alone (--replays): CTRF's retries and flaky, and the label as the other reports say it.
      ...(r.replays ? { retries: r.replays.runs, flaky: replayClass(r.replays) === 'flaky' } : {}),
      ...(r.outcome === 'fail' || r.outcome === 'error'
        ? { extra: { replay: replayCommand(report, r), ...(r.replays ? { replayed: replayLabel(r) } : {}) } }
        : {}),
    };
  });
  const count = (s: string): number => tests.filter((t) => t.status === s).length;
  const start = Date.parse(report.startedAt);
  const stop = Date.parse(report.finishedAt);
  const doc = {
    reportFormat: 'CTRF',
    specVersion: CTRF_SPEC_VERSION,
    timestamp: report.finishedAt,
    generatedBy: `${report.tool.name} ${report.tool.version}`,
    results: {
      tool: { name: report.tool.name, version: report.tool.version },
      summary: {
        tests: tests.length,
        passed: count('passed'),
        failed: count('failed'),
        skipped: count('skipped'),
        pending: 0,
        other: count('other'),
        start,
        stop,
        duration: report.durationMs,
      },
      tests,
    },
    extra: { runId: report.runId, seed: report.seed, target: report.target.baseUrl, contractDigest: report.contractDigest, exit: report.exit },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
