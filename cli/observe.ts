// What `conformance judge` and `conformance proxy` share: their flags for the judgement and
// the reports, and the report of judged traffic, published as a run's is (cli/outputs.ts).
import { resolve } from 'node:path';
import { endpointsOf, loadCatalogSpec } from '../lib/catalog.js';
import { newRunId } from '../lib/ledger.js';
import { packageVersion } from '../lib/package.js';
import { contractDigest } from '../lib/schema.js';
import type { Secrets } from '../lib/secrets.js';
import { listOf } from '../lib/settings.js';
import type { RunReport } from '../reporters/model.js';
import { summarise } from '../reporters/model.js';
import { unknownReporter } from '../reporters/registry.js';
import { exitFor } from '../reporters/verdict.js';
import type { ObservedResult, ObservedSettings, TrafficCounts } from '../suites/observed.js';
import { publish, unwritable } from './outputs.js';
import { UsageError, useColor, type Io } from './io.js';

/** The flags of the judgement and its reports, as both commands take them. */
export const OBSERVE_OPTIONS = {
  'report-dir': { type: 'string' },
  reporter: { type: 'string', multiple: true },
  'default-page-length': { type: 'string' },
  strict: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const OBSERVE_HELP = `  --report-dir DIR        write results.json, junit.xml and report.html there
  --reporter NAME[,NAME]  the report files to write instead (see 'conformance --help')
  --default-page-length N the store's default page length, where no GET /v2/settings was seen
                          (without either, the default page length is not judged)
  --strict                SHOULD failures fail too (exit 1)
  --no-color              no colours
  A rule no observed exchange could show is reported as not exercised (skipped), never as passed.
  Exit codes: 0 no MUST rule broken, 1 a MUST rule broken (or a SHOULD one with --strict),
  2 the command could not work.`;

export interface ObserveFlags {
  reportDir?: string;
  reporters: string[];
  strict: boolean;
  color: boolean;
  settings: ObservedSettings;
}

/** The flags read and checked (a bad one is a UsageError of `command`). */
export function observeFlags(
  values: { 'report-dir'?: string; reporter?: string[]; 'default-page-length'?: string; strict?: boolean; 'no-color'?: boolean },
  io: Io,
  command: string,
): ObserveFlags {
  const reporters = listOf(values.reporter);
  const refused = reporters.length ? unknownReporter(reporters) : undefined;
  if (refused) throw new UsageError(`--reporter: ${refused}`, command);
  const raw = values['default-page-length'];
  if (raw !== undefined && !/^[1-9]\d*$/.test(raw)) throw new UsageError(`--default-page-length takes a whole number from 1 (got '${raw}')`, command);
  const reportDir = values['report-dir'] !== undefined ? resolve(io.cwd, values['report-dir']) : undefined;
  const cannot = reportDir ? unwritable([{ path: reportDir, label: '--report-dir' }], []) : undefined;
  if (cannot) throw new UsageError(cannot, command);
  return {
    ...(reportDir ? { reportDir } : {}),
    reporters,
    strict: values.strict === true,
    color: useColor(io, values['no-color']),
    settings: { endpoints: endpointsOf(loadCatalogSpec()), ...(raw !== undefined ? { defaultPageLength: Number(raw) } : {}) },
  };
}

/**
 * The report of judged traffic, as a run's: `source` names what was judged (the upstream of a
 * proxy, a HAR file), and `suiteErrors` what kept the command from seeing all of it.
 */
export function observedReport(
  source: string,
  results: ObservedResult[],
  counts: TrafficCounts,
  flags: ObserveFlags,
  startedAt: Date,
  errors: string[],
): RunReport {
  const finishedAt = new Date();
  // Nothing judged proves nothing: a CI job whose tests went around the proxy must not pass.
  const nothing =
    counts.judged - counts.rateLimited - counts.unread <= 0
      ? [`no exchange on an operation of the contract could be judged (${counts.exchanges} seen): nothing was judged`]
      : [];
  const suiteErrors = [...errors, ...counts.faults, ...nothing];
  return {
    tool: { name: 'conformance', version: packageVersion },
    runId: newRunId(),
    seed: 0,
    contractDigest: contractDigest(),
    target: { baseUrl: source, embedded: false },
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    config: {
      observed: {
        source,
        exchanges: counts.exchanges,
        judged: counts.judged,
        rateLimited: counts.rateLimited,
        unread: counts.unread,
        ...(flags.settings.basePath ? { basePath: flags.settings.basePath } : {}),
        ...(flags.settings.credentialsStripped ? { credentialsStripped: true } : {}),
      },
      strict: flags.strict,
      ...(flags.settings.defaultPageLength !== undefined ? { defaultPageLength: flags.settings.defaultPageLength } : {}),
    },
    results,
    suiteErrors,
    cleanup: { deleted: 0, leftovers: [] },
    summary: summarise(results),
    exit: exitFor(results, suiteErrors, flags.strict),
  };
}

/** Writes the report where a run writes its own, and says what was seen; returns the exit code. */
export function publishObserved(report: RunReport, counts: TrafficCounts, flags: ObserveFlags, secrets: Secrets, io: Io): number {
  const apart = [
    counts.rateLimited ? `${counts.rateLimited} answered 429` : '',
    counts.unread ? `${counts.unread} with a body not known whole: cut at --max-body-bytes, in an encoding not decoded (zstd), or not recorded` : '',
  ].filter(Boolean);
  io.out(`observed ${counts.exchanges} exchange(s), ${counts.judged} on operations of the contract${apart.length ? ` (not judged: ${apart.join('; ')})` : ''}`);
  const failed = publish(report, { ...(flags.reportDir ? { reportDir: flags.reportDir } : {}), reporters: flags.reporters, color: flags.color }, secrets, io);
  if (failed) {
    io.err(`conformance: ${failed}`);
    return 2;
  }
  return report.exit.code;
}
