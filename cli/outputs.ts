// Where a finished report goes: console, report files, certification bundle, baseline file,
// GitHub Actions. Every byte passes through the secrets mask first.
import { accessSync, appendFileSync, constants, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Secrets } from '../lib/evidence/index.js';
import { renderSummary } from '../reporters/console.js';
import { githubAnnotations, renderMarkdown } from '../reporters/github.js';
import type { RunReport } from '../reporters/model.js';
import { renderBaseline } from '../reporters/verdict.js';
import { reportFormats } from '../reporters/registry.js';
import { ATTESTATION_FILE } from '../reporters/attestation.js';
import { bundleFiles, reportFiles, writeFiles, type Attest } from '../reporters/write.js';
import type { Io } from './io.js';
import { errorWord } from '../lib/text/index.js';

/** A place a run writes, and the setting that named it (for the message when it cannot). */
export interface Output {
  path: string;
  label: string;
}

/**
 * Every place a run will write, tried before it sends anything: a folder that cannot be made
 * or written into, or a file that cannot be written, is said now, in one line (the caller
 * stops with exit 2), not found after the whole run.
 */
export function unwritable(folders: readonly Output[], files: readonly Output[]): string | undefined {
  for (const { path, label } of folders) {
    try {
      mkdirSync(path, { recursive: true });
      const probe = join(path, `.conformance-${process.pid}.probe`);
      writeFileSync(probe, '');
      rmSync(probe, { force: true });
    } catch (e) {
      return `${label} ${path}: cannot write there (${errorWord(e)})`;
    }
  }
  for (const { path, label } of files) {
    try {
      if (existsSync(path) && statSync(path).isDirectory()) return `${label} ${path}: is a folder, not a file`;
      if (!existsSync(path) && !statSync(dirname(path)).isDirectory()) return `${label} ${path}: cannot write there (ENOTDIR)`;
      accessSync(existsSync(path) ? path : dirname(path), constants.W_OK);
    } catch (e) {
      return `${label} ${path}: cannot write there (${errorWord(e)})`;
    }
  }
  return undefined;
}

/**
 * Everything a finished report goes to: console, files, bundle, baseline, GitHub Actions.
 * Returns why a file could not be written (the run then exits 2), or undefined.
 */
export function publish(
  report: RunReport,
  to: { reportDir?: string; reporters?: readonly string[]; certifyDir?: string; attest?: Attest; writeBaseline?: string; color: boolean; summary?: boolean },
  secrets: Secrets,
  io: Io,
): string | undefined {
  const mask = (x: string): string => secrets.mask(x);
  // A run stopped at the preflight has said why already: its files say the rest.
  if (to.summary !== false) io.out(mask(renderSummary(report, { color: to.color })).trimEnd());
  // Each output alone: one that fails (a disk full since the run began) is one line, and the others are still written.
  let failed: string | undefined;
  const write = (what: string, path: string, act: () => void, done: string): void => {
    try {
      act();
      io.out(done);
    } catch (e) {
      failed ??= `${what} could not be written to ${path} (${errorWord(e)})`;
      io.err(`conformance: ${failed}`);
    }
  };
  if (to.reportDir) {
    const chosen = to.reporters?.length ? to.reporters : undefined;
    const names = reportFormats(chosen).map((f) => f.file);
    write(
      'the reports',
      to.reportDir,
      () => writeFiles(to.reportDir!, reportFiles(report, mask, chosen)),
      `reports written to ${to.reportDir} (${names.join(', ')})`,
    );
  }
  if (to.certifyDir) {
    const check = to.attest
      ? `signed (${ATTESTATION_FILE}) by ${to.attest.key.algorithm} key sha256:${to.attest.key.hint}; verify it with its public key: conformance verify ${to.certifyDir} --key PUBLIC_KEY.pem`
      : `check it with: cd ${to.certifyDir} && sha256sum -c SHA256SUMS`;
    write(
      'the certification bundle',
      to.certifyDir,
      () => writeFiles(to.certifyDir!, bundleFiles(report, mask, to.attest)),
      `certification bundle written to ${to.certifyDir} (${check})`,
    );
  }
  if (to.writeBaseline) {
    write(
      'the baseline',
      to.writeBaseline,
      () => writeFileSync(to.writeBaseline!, mask(renderBaseline(report.results))),
      `baseline of ${report.results.filter((r) => r.outcome === 'fail' && r.level !== 'INFO').length} current failure(s) written to ${to.writeBaseline}`,
    );
  }
  if (io.env.GITHUB_ACTIONS === 'true') {
    for (const line of githubAnnotations(report)) io.out(mask(line));
    const summaryFile = io.env.GITHUB_STEP_SUMMARY;
    if (summaryFile) appendFileSync(summaryFile, mask(renderMarkdown(report)));
  }
  return failed;
}
