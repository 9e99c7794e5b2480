// What `conformance judge` and `conformance proxy` share: their flags for the judgement and
// the reports, and the report of judged traffic, published as a run's is (cli/outputs.ts).
import { endpointsOf, loadCatalogSpec, contractDigest } from '../lib/contract/index.js';
import { newRunId } from '../lib/runner/index.js';
import { packageVersion } from '../lib/package/index.js';
import type { Secrets } from '../lib/evidence/index.js';
import type { RunReport } from '../reporters/model.js';
import { summarise } from '../reporters/model.js';
import { exitFor } from '../reporters/verdict.js';
import type { ObservedResult, ObservedSettings, TrafficCounts } from '../suites/observed.js';
import { publish, unwritable } from './outputs.js';
import { UsageError, useColor, type Io } from './io.js';
import { commandSettings } from './settings.js';
import { settingLabel } from '../lib/configuration/index.js';

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
  --default-page-length N the store's default page length (1 to 100), where no GET
                          /v2/settings was seen (without either, it is not judged)
  --strict                SHOULD failures fail too (exit 1)
  --no-color              no colours
  These four are read as a run reads them: also from CONFORMANCE_REPORT_DIR,
  CONFORMANCE_REPORTER, CONFORMANCE_DEFAULT_PAGE_LENGTH, CONFORMANCE_STRICT and the config
  file (conformance.config.yaml), a flag first.
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

/** The settings a judgement reads (lib/configuration/settings.ts), through the door a run reads its own by. */
export const OBSERVE_SETTINGS = ['report-dir', 'reporter', 'default-page-length', 'strict'] as const;

/**
 * The flags read and checked, with the environment and the config file as a run reads them
 * (cli/settings.ts): the same bounds, the same messages. A bad one is a UsageError of `command`.
 */
export async function observeFlags(values: Record<string, unknown>, io: Io, command: string): Promise<ObserveFlags> {
  const config = await commandSettings(values, io, command, OBSERVE_SETTINGS);
  const cannot = config.reportDir ? unwritable([{ path: config.reportDir, label: settingLabel(config, 'report-dir') }], []) : undefined;
  if (cannot) throw new UsageError(cannot, command);
  return {
    ...(config.reportDir ? { reportDir: config.reportDir } : {}),
    reporters: [...config.reporters],
    strict: config.strict,
    color: useColor(io, values['no-color'] === true),
    settings: { endpoints: endpointsOf(loadCatalogSpec()), ...(config.defaultPageLength !== undefined ? { defaultPageLength: config.defaultPageLength } : {}) },
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
