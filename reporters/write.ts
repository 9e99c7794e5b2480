// Writing what the renderers produce. The results model is validated against
// spec/results.schema.yaml first: a report that breaks its own schema is a bug of the suite.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SuiteError } from '../lib/evidence/index.js';
import { describeViolations, SCHEMA, validate, suiteDigest } from '../lib/contract/index.js';
import { ATTESTATION_FILE, certifiedTarget, predicateOf, sha256, signStatement, statementOf, type SigningKey } from './attestation.js';
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

/** What signs a bundle (--signing-key): the key, and what the predicate says beyond the report. */
export interface Attest {
  key: SigningKey;
  /** The MUST results the run planned (attestation.ts mustPlan). */
  mustChecks: readonly string[];
}

/**
 * The certification bundle: the reports, the resolved configuration (masked), a certificate
 * naming product, suite and contract, and SHA256SUMS over all of it (`sha256sum -c SHA256SUMS`).
 * With a key, attestation.json too: a signed statement over every other file
 * (reporters/attestation.ts). It is not masked: it holds only digests and what the masked
 * files say, and a byte changed would break its signature.
 */
export function bundleFiles(
  report: RunReport,
  mask: (s: string) => string,
  attest?: Attest,
  suite: { digest: string } = { digest: suiteDigest() },
): OutputFile[] {
  const certification = report.certification;
  const certificate = {
    product: report.product?.name ?? null,
    productVersion: report.product?.version ?? null,
    suite: `${report.tool.name} ${report.tool.version}`,
    suiteDigest: suite.digest,
    contractDigest: report.contractDigest,
    target: certifiedTarget(report.target),
    runId: report.runId,
    seed: report.seed,
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    certifiable: report.certification?.certifiable ?? false,
    why: report.certification?.why ?? '',
    // What was certified: every operation, or the list operations declared absent or empty.
    profile: certification?.profile ?? null,
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
  const sums = files.map((f) => `${sha256(f.content)}  ${f.name}`).join('\n');
  const bundle = [...files, { name: 'SHA256SUMS', content: `${sums}\n` }];
  if (!attest) return bundle;
  const statement = statementOf(bundle, predicateOf(report, suite, attest.mustChecks));
  return [...bundle, { name: ATTESTATION_FILE, content: signStatement(statement, attest.key) }];
}

/** Writes the files as rendered (already masked). */
export function writeFiles(dir: string, files: readonly OutputFile[]): void {
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.content);
}
