// Where a finished report goes: console, report files, certification bundle, baseline file,
// GitHub Actions. Every byte passes through the secrets mask first.
import { appendFileSync, writeFileSync } from 'node:fs';
import type { Secrets } from '../lib/secrets.js';
import { renderSummary } from '../reporters/console.js';
import { githubAnnotations, renderMarkdown } from '../reporters/github.js';
import type { RunReport } from '../reporters/model.js';
import { renderBaseline } from '../reporters/verdict.js';
import { bundleFiles, reportFiles, writeFiles } from '../reporters/write.js';
import type { Io } from './io.js';

/** Everything a finished report goes to: console, files, bundle, baseline, GitHub Actions. */
export function publish(report: RunReport, to: { reportDir?: string; certifyDir?: string; writeBaseline?: string; color: boolean }, secrets: Secrets, io: Io): void {
  const mask = (x: string): string => secrets.mask(x);
  io.out(mask(renderSummary(report, { color: to.color })).trimEnd());
  if (to.reportDir) {
    writeFiles(to.reportDir, reportFiles(report, mask));
    io.out(`reports written to ${to.reportDir} (results.json, junit.xml, report.html)`);
  }
  if (to.certifyDir) {
    writeFiles(to.certifyDir, bundleFiles(report, mask));
    io.out(`certification bundle written to ${to.certifyDir} (check it with: cd ${to.certifyDir} && sha256sum -c SHA256SUMS)`);
  }
  if (to.writeBaseline) {
    writeFileSync(to.writeBaseline, mask(renderBaseline(report.results)));
    io.out(`baseline of ${report.results.filter((r) => r.outcome === 'fail' && r.level !== 'INFO').length} current failure(s) written to ${to.writeBaseline}`);
  }
  if (io.env.GITHUB_ACTIONS === 'true') {
    for (const line of githubAnnotations(report)) io.out(mask(line));
    const summaryFile = io.env.GITHUB_STEP_SUMMARY;
    if (summaryFile) appendFileSync(summaryFile, mask(renderMarkdown(report)));
  }
}
