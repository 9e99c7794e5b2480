// GitHub Actions: one error annotation per failed MUST check, and a Markdown summary for
// GITHUB_STEP_SUMMARY.
import type { CheckResult } from '../lib/check.js';
import { label, replayCommand } from './console.js';
import { LEVELS, type RunReport } from './model.js';

/** Workflow-command escaping: data escapes %, CR, LF; properties also ':' and ','. */
function data(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function property(s: string): string {
  return data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function githubAnnotations(report: RunReport): string[] {
  return report.results
    .filter((r) => r.outcome === 'fail' && r.level === 'MUST' && !r.baselined)
    .map((r) => {
      const e = r.evidence;
      const body = [r.reason ?? '', e ? `expected: ${e.expected}` : '', e ? `actual: ${e.actual}` : '', e?.request ? `request: ${e.request}` : '', `replay: ${replayCommand(report, r)}`].filter(Boolean).join('\n');
      return `::error title=${property(`conformance ${label(r)}`)}::${data(body)}`;
    });
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMarkdown(report: RunReport): string {
  const s = report.summary;
  const lines = [
    `## Conformance: ${report.exit.code === 0 ? '✅' : '❌'} ${cell(report.exit.reason)}`,
    '',
    `Target \`${report.target.baseUrl}\` · suite ${report.tool.version} · contract \`${report.contractDigest.slice(0, 19)}…\` · ${report.shards ? `shards ${report.shards.map((x) => `${x.shard} (run ${x.runId}, seed ${x.seed})`).join(', ')}` : `run ${report.runId}, seed ${report.seed}`}`,
    ...(report.certification ? ['', `**Certifiable: ${report.certification.certifiable ? 'yes' : 'no'}** (${cell(report.certification.why)})`] : []),
    '',
    '| level | pass | fail | error | skip |',
    '|---|---|---|---|---|',
    ...LEVELS.map((l) => `| ${l} | ${s.byLevel[l].pass} | ${s.byLevel[l].fail} | ${s.byLevel[l].error} | ${s.byLevel[l].skip} |`),
  ];
  const bad = report.results.filter((r: CheckResult) => (r.outcome === 'fail' && r.level !== 'INFO') || r.outcome === 'error');
  if (bad.length) {
    lines.push('', '| check | level | outcome | reason |', '|---|---|---|---|');
    for (const r of bad.slice(0, 50)) lines.push(`| \`${cell(label(r))}\` | ${r.level} | ${r.outcome}${r.baselined ? ' (baselined)' : ''} | ${cell(r.reason ?? '')} |`);
    if (bad.length > 50) lines.push(`| … | | | ${bad.length - 50} more in the report |`);
  }
  if (report.lists?.absent.length) lines.push('', `Absent operations: ${report.lists.absent.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
