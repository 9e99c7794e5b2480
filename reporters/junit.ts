// junit.xml: one testsuite per area, one testcase per check; failures carry the evidence.
import type { CheckResult } from '../lib/check.js';
import type { RunReport } from './model.js';
import { evidenceLines, label } from './console.js';

function esc(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function testcase(r: CheckResult): string {
  const head = `    <testcase classname="${esc(r.area)}" name="${esc(`${label(r)} [${r.level}] ${r.title}`)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
  const detail = esc([`${r.level} ${r.clause}`, ...evidenceLines(r)].join('\n'));
  switch (r.outcome) {
    case 'pass':
      return `${head}/>`;
    case 'skip':
      return `${head}>\n      <skipped message="${esc(r.reason ?? '')}"/>\n    </testcase>`;
    case 'fail':
      return `${head}>\n      <failure message="${esc(r.reason ?? '')}" type="${r.level}">${detail}</failure>\n    </testcase>`;
    case 'error':
      return `${head}>\n      <error message="${esc(r.reason ?? '')}" type="suite-error">${detail}</error>\n    </testcase>`;
  }
}

export function renderJunit(report: RunReport): string {
  const areas = [...new Set(report.results.map((r) => r.area))];
  const suites = areas.map((area) => {
    const rs = report.results.filter((r) => r.area === area);
    const count = (o: string): number => rs.filter((r) => r.outcome === o).length;
    const time = rs.reduce((t, r) => t + r.durationMs, 0) / 1000;
    return [
      `  <testsuite name="${esc(area)}" tests="${rs.length}" failures="${count('fail')}" errors="${count('error')}" skipped="${count('skip')}" time="${time.toFixed(3)}">`,
      ...rs.map(testcase),
      '  </testsuite>',
    ].join('\n');
  });
  const s = report.summary.byOutcome;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="conformance ${esc(report.tool.version)} run ${esc(report.runId)} seed ${report.seed}" tests="${report.summary.total}" failures="${s.fail}" errors="${s.error}" skipped="${s.skip}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
