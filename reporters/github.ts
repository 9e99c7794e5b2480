// GitHub Actions: one error annotation per failed MUST check, and a Markdown summary for
// GITHUB_STEP_SUMMARY.
import type { CheckResult } from '../lib/runner/index.js';
import { label, replayCommand, replayTokenNote } from './console.js';
import { failsRun, LEVELS, replayLabel, settingsOf, verdictOf, type RunReport } from './model.js';

/** Workflow-command escaping: data escapes %, CR, LF; properties also ':' and ','. */
function data(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function property(s: string): string {
  return data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function githubAnnotations(report: RunReport): string[] {
  // Each annotation stands alone, so each says what its replay command needs.
  const note = replayTokenNote(report);
  return report.results
    .filter((r) => r.outcome === 'fail' && r.level === 'MUST' && !r.baselined)
    .map((r) => {
      const e = r.evidence;
      const body = [
        r.reason ?? '',
        e ? `expected: ${e.expected}` : '',
        e ? `actual: ${e.actual}` : '',
        e?.request ? `request: ${e.request}` : '',
        replayLabel(r) ? `run again alone: ${replayLabel(r)}` : '',
        `replay: ${replayCommand(report, r)}`,
        note ?? '',
      ]
        .filter(Boolean)
        .join('\n');
      return `::error title=${property(`conformance ${label(r)}`)}::${data(body)}`;
    });
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMarkdown(report: RunReport): string {
  const s = report.summary;
  // `fail` for what fails the run, `warn` for the other failures, as in the console.
  const strict = settingsOf(report).strict === true;
  const failing = (level: string): number => report.results.filter((r) => r.level === level && failsRun(r, strict)).length;
  const lines = [
    `## Conformance: ${report.exit.code === 0 ? '✅' : '❌'} ${cell(report.exit.reason)}`,
    '',
    `Target \`${report.target.baseUrl}\` · suite ${report.tool.version} · contract \`${report.contractDigest.slice(0, 19)}…\` · ${report.shards ? `shards ${report.shards.map((x) => `${x.shard} (run ${x.runId}, seed ${x.seed})`).join(', ')}` : `run ${report.runId}, seed ${report.seed}`}`,
    ...(report.certification ? ['', `**Certifiable: ${report.certification.certifiable ? 'yes' : 'no'}** (${cell(report.certification.why)})`] : []),
    '',
    '| level | pass | fail | warn | error | skip |',
    '|---|---|---|---|---|---|',
    ...LEVELS.map((l) => `| ${l} | ${s.byLevel[l].pass} | ${failing(l)} | ${s.byLevel[l].fail - failing(l)} | ${s.byLevel[l].error} | ${s.byLevel[l].skip} |`),
  ];
  const bad = report.results.filter((r: CheckResult) => (r.outcome === 'fail' && r.level !== 'INFO') || r.outcome === 'error');
  if (bad.length) {
    lines.push('', '| check | level | outcome | reason |', '|---|---|---|---|');
    for (const r of bad.slice(0, 50))
      lines.push(`| \`${cell(label(r))}\` | ${r.level} | ${verdictOf(r, strict)}${r.baselined ? ' (baselined)' : ''} | ${cell(r.reason ?? '')} |`);
    if (bad.length > 50) lines.push(`| … | | | ${bad.length - 50} more in the report |`);
  }
  if (report.lists?.absent.length) lines.push('', `Absent operations: ${report.lists.absent.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
