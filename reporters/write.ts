// Writing what the renderers produce. The results model is validated against
// spec/results.schema.yaml first: a report that breaks its own schema is a bug of the suite.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SuiteError } from '../lib/outcome.js';
import { describeViolations, SCHEMA, validate } from '../lib/schema.js';
import type { RunReport } from './model.js';
import { DEFAULT_REPORTERS } from './formats.js';
import { reportFormats } from './registry.js';

export interface OutputFile {
  name: string;
  content: string;
}

export function validateReport(report: RunReport): void {
  const v = validate(SCHEMA.results, JSON.parse(JSON.stringify(report)));
  if (v.length) throw new SuiteError('SUITE_BUG', `the results model breaks spec/results.schema.yaml: ${describeViolations(v)}`);
}

/** The files of the formats named (reporters/registry.ts; default results.json, junit.xml, report.html); `mask` masks secrets by value in every byte. */
export function reportFiles(report: RunReport, mask: (s: string) => string, reporters: readonly string[] = DEFAULT_REPORTERS): OutputFile[] {
  validateReport(report);
  return reportFormats(reporters).map((f) => ({ name: f.file, content: mask(f.render(report)) }));
}

/**
 * The certification bundle: the reports, the resolved configuration (masked), a certificate
 * naming product, suite and contract, and SHA256SUMS over all of it (`sha256sum -c SHA256SUMS`).
 */
export function bundleFiles(report: RunReport, mask: (s: string) => string): OutputFile[] {
  const certification = report.certification;
  const certificate = {
    product: report.product?.name ?? null,
    productVersion: report.product?.version ?? null,
    suite: `${report.tool.name} ${report.tool.version}`,
    contractDigest: report.contractDigest,
    target: report.target.baseUrl,
    runId: report.runId,
    seed: report.seed,
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    certifiable: report.certification?.certifiable ?? false,
    why: report.certification?.why ?? '',
    // What the vendor declared, and for each declared-empty list what the run saw and which
    // checks it could not exercise: an empty list neither blocks certification nor hides.
    declaredAbsent: certification?.declaredAbsent ?? [],
    declaredEmpty: certification?.declaredEmpty ?? [],
    exit: report.exit,
  };
  const files = [
    ...reportFiles(report, mask),
    { name: 'config.json', content: mask(`${JSON.stringify(report.config, null, 2)}\n`) },
    { name: 'certificate.json', content: mask(`${JSON.stringify(certificate, null, 2)}\n`) },
  ];
  const sums = files.map((f) => `${createHash('sha256').update(f.content).digest('hex')}  ${f.name}`).join('\n');
  return [...files, { name: 'SHA256SUMS', content: `${sums}\n` }];
}

/** Writes the files as rendered (already masked). */
export function writeFiles(dir: string, files: readonly OutputFile[]): void {
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.content);
}
