// `conformance merge DIR...`: the report directories of shards joined into one report. Only the
// shards of one run are joined: each once, none missing, all with the same target, suite,
// contract and outcome-deciding settings. Anything else is refused with the reason (exit 2),
// since a merged report of mismatched parts would certify nothing and replay nothing.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Secrets } from '../lib/evidence/index.js';
import { SETTINGS, type SettingSpec, settingLabel } from '../lib/configuration/index.js';
import { REPORT_FORMATS } from '../reporters/formats.js';
import { replayCommand } from '../reporters/console.js';
import { mergeReplays, settingsOf, summarise, type BaselineReport, type OutcomeSettings, type RunReport } from '../reporters/model.js';
import { parseFlags, UsageError, useColor, type Io } from './io.js';
import { commandSettings } from './settings.js';

const MERGE_HELP = `Usage: conformance merge DIR... [--report-dir OUT] [--reporter NAME[,NAME]] [--strict] [--no-color]
  Joins the report directories of shards (conformance --shard i/n --report-dir DIR) into one
  report: the console summary, and with --report-dir the report files. Give every shard of
  one run once: the shards must share their target, suite version, contract digest and the
  settings that decide outcomes (each keeps its own seed, and its failures their own replay
  command).
  --report-dir OUT  write results.json, junit.xml and report.html there
  --reporter NAME   the report files to write instead: ${REPORT_FORMATS.map((f) => f.name).join(', ')} (comma-separated)
  --strict          SHOULD failures fail the merged run too (as they do when the shards ran with --strict)
  --no-color        no colours
  The first three are read as a run reads them: also from CONFORMANCE_REPORT_DIR,
  CONFORMANCE_REPORTER, CONFORMANCE_STRICT and the config file, a flag first. The merged
  report is never written over a shard's.
  Exit codes as for a run, from the merged results; 2 when the shards cannot be merged.`;

interface Part {
  dir: string;
  report: RunReport;
  index: number;
  count: number;
}

/** Stable text of a value, object keys sorted, for comparing settings. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? '(unset)' : JSON.stringify(v);
}

/**
 * What makes two shards parts of the same run, each with the name a user knows it by. The
 * bundled reference server is one target whatever port each shard's copy listened on.
 */
const SAME_RUN: Array<[string, (r: RunReport, s: OutcomeSettings) => unknown]> = [
  ['target', (r) => (r.target.embedded ? 'the bundled reference server' : r.target.baseUrl)],
  ['suite version', (r) => r.tool.version],
  ['contract digest', (r) => r.contractDigest],
  // The settings that decide outcomes (lib/configuration/settings.ts): a switch off is false, a
  // list is a set.
  ...(SETTINGS as readonly SettingSpec[])
    .filter((x) => x.shards)
    .map((x): [string, (r: RunReport) => unknown] => [
      `--${x.key}`,
      (r) => {
        const v = (r.config ?? {})[x.field];
        return x.kind === 'switch' ? v === true : x.kind === 'list' ? [...((v as string[] | undefined) ?? [])].sort() : v;
      },
    ]),
  ['--check', (_, s) => [...(s.checks ?? [])].sort()],
  ['--grep', (_, s) => s.grep],
  ['--operation', (_, s) => [...(s.operations ?? [])].sort()],
  ['the catalog of the config file (operations, parents)', (_, s) => s.catalog ?? {}],
  ['--baseline', (r) => r.baseline?.file],
];

function readPart(dir: string, cwd: string, validateReport: (r: RunReport) => void): Part {
  const file = join(resolve(cwd, dir), 'results.json');
  if (!existsSync(file)) throw new UsageError(`no results.json in ${dir}`, 'merge');
  // A file that is not a run's report is the user's to fix, not a bug of the suite.
  let report: RunReport;
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as RunReport;
  } catch (e) {
    throw new UsageError(
      `${dir}/results.json is not JSON (${(e as Error).message.split('\n')[0]}): give the report directory of a shard (--report-dir)`,
      'merge',
    );
  }
  try {
    validateReport(report);
  } catch (e) {
    throw new UsageError(
      `${dir}/results.json is not a report of this suite's version (${(e as Error).message.replace(/^the results model /, 'it ')})`,
      'merge',
    );
  }
  // A report without --shard is a whole run: shard 1 of 1.
  const [index, count] = (report.shard ?? '1/1').split('/').map(Number) as [number, number];
  return { dir, report, index, count };
}

/** Refuses, with the reason, parts that are not every shard of one run, each once. */
function checkShards(parts: readonly Part[]): void {
  const name = (p: Part): string => `${p.dir} (shard ${p.index}/${p.count}, run ${p.report.runId})`;
  const first = parts[0]!;
  for (const p of parts) {
    if (p.count !== first.count)
      throw new UsageError(`the shards come from different runs: ${name(first)} is one of ${first.count} shards, ${name(p)} one of ${p.count}`, 'merge');
  }
  const settings = parts.map((p) => settingsOf(p.report));
  for (const [what, of] of SAME_RUN) {
    const a = canonical(of(first.report, settings[0]!));
    const i = parts.findIndex((p, j) => canonical(of(p.report, settings[j]!)) !== a);
    if (i >= 0)
      throw new UsageError(
        `the shards come from different runs: they differ in ${what} (${name(first)}: ${a}; ${name(parts[i]!)}: ${canonical(of(parts[i]!.report, settings[i]!))})`,
        'merge',
      );
  }
  const seen = new Map<number, Part>();
  for (const p of parts) {
    const twin = seen.get(p.index);
    if (twin) {
      const same = twin.report.runId === p.report.runId ? 'the same report given twice' : 'two reports claim the same shard';
      throw new UsageError(
        `shard ${p.index}/${p.count} is given twice (${same}): ${name(twin)} and ${name(p)}; give each shard's report directory once`,
        'merge',
      );
    }
    seen.set(p.index, p);
  }
  const missing = Array.from({ length: first.count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missing.length) {
    throw new UsageError(
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${first.count}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing: a merge needs the report directories of all ${first.count} shards of the run`,
      'merge',
    );
  }
}

/** The shards' cleanups as one: what each deleted and left over, and any cleanup postponed. */
function mergeCleanup(reports: readonly RunReport[]): RunReport['cleanup'] {
  const postponed = reports.filter((p) => p.cleanup.postponed);
  const loginFailed = reports.find((p) => p.cleanup.loginFailed)?.cleanup.loginFailed;
  return {
    deleted: reports.reduce((n, p) => n + p.cleanup.deleted, 0),
    ...(reports.some((p) => p.cleanup.alreadyGone) ? { alreadyGone: reports.reduce((n, p) => n + (p.cleanup.alreadyGone ?? 0), 0) } : {}),
    leftovers: reports.flatMap((p) => p.cleanup.leftovers),
    ...(reports.some((p) => p.cleanup.kept?.length) ? { kept: reports.flatMap((p) => p.cleanup.kept ?? []) } : {}),
    ...(loginFailed ? { loginFailed } : {}),
    ...(postponed.length
      ? {
          postponed: postponed.map((p) => `run ${p.runId}: ${p.cleanup.postponed}`).join('; '),
          pending: postponed.reduce((n, p) => n + (p.cleanup.pending ?? 0), 0),
        }
      : {}),
  };
}

/** One report from the results.json of several shards. */
export async function merge(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(
    {
      args,
      allowPositionals: true,
      options: {
        'report-dir': { type: 'string' },
        reporter: { type: 'string', multiple: true },
        strict: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    'merge',
  );
  if (values.help) {
    io.out(MERGE_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('merge needs the report directories of the shards: conformance merge DIR... [--report-dir OUT]', 'merge');
  // Read as a run reads them: flags, the environment, the config file (cli/settings.ts).
  const settings = await commandSettings(values, io, 'merge', ['report-dir', 'reporter', 'strict']);
  const reporters = [...settings.reporters];
  // CONFORMANCE_REPORT_DIR set for the shards' runs is still set for the merge: never over a shard.
  const over = settings.reportDir !== undefined ? positionals.find((dir) => resolve(io.cwd, dir) === settings.reportDir) : undefined;
  if (over !== undefined)
    throw new UsageError(
      `${settingLabel(settings, 'report-dir')} ${settings.reportDir} is the report directory of a shard being merged (${over}): the merged report goes elsewhere`,
      'merge',
    );
  // Loaded here, not above: --help needs none of it (the schema check loads ajv).
  const [{ exitFor }, { validateReport }, { publish }] = await Promise.all([
    import('../reporters/verdict.js'),
    import('../reporters/write.js'),
    import('./outputs.js'),
  ]);
  const parts = positionals.map((dir) => readPart(dir, io.cwd, validateReport)).sort((a, b) => a.index - b.index);
  checkShards(parts);
  const reports = parts.map((p) => p.report);
  const first = reports[0]!;
  // Each failure keeps the command that re-runs it in its own shard: that shard's seed.
  const results = reports.flatMap((p) =>
    p.results.map((r) => (r.outcome === 'fail' || r.outcome === 'error' ? { ...r, replay: replayCommand(p, { id: r.id, operation: r.operation }) } : r)),
  );
  const suiteErrors = reports.flatMap((p) => p.suiteErrors);
  const started = reports.map((p) => p.startedAt).sort()[0]!;
  const finished = reports
    .map((p) => p.finishedAt)
    .sort()
    .at(-1)!;
  const lists = reports.filter((p) => p.lists).map((p) => p.lists!);
  const baselines = reports.filter((p) => p.baseline).map((p) => p.baseline!);
  const baseline: BaselineReport | undefined = baselines.length
    ? {
        file: baselines[0]!.file,
        known: baselines.reduce((n, b) => n + b.known, 0),
        stale: [...new Map(baselines.flatMap((b) => b.stale).map((s) => [`${s.id} ${s.operation ?? ''}`, s])).values()],
      }
    : undefined;
  const strict = settings.strict || settingsOf(first).strict === true;
  const report: RunReport = {
    ...first,
    runId: reports.map((p) => p.runId).join('+'),
    shards: parts.map((p) => ({ shard: `${p.index}/${p.count}`, runId: p.report.runId, seed: p.report.seed })),
    startedAt: started,
    finishedAt: finished,
    durationMs: Date.parse(finished) - Date.parse(started),
    config: { ...first.config, strict },
    results,
    suiteErrors,
    cleanup: mergeCleanup(reports),
    ...(lists.length
      ? { lists: { ...lists[0]!, absent: [...new Set(lists.flatMap((l) => l.absent))], comparedBefore: lists.map((l) => l.comparedBefore).sort()[0]! } }
      : {}),
    ...(baseline ? { baseline } : {}),
    ...(mergeReplays(reports) ? { replays: mergeReplays(reports)! } : {}),
    summary: summarise(results),
    exit: exitFor(results, suiteErrors, strict),
  };
  delete report.shard;
  // Each shard was narrowed by --shard and so could not certify; merging does not certify either.
  delete report.certification;
  io.out(`merged ${parts.length} shard(s): ${parts.map((p) => `${p.dir} (${p.index}/${p.count}, seed ${p.report.seed})`).join(', ')}`);
  publish(report, { reportDir: settings.reportDir, reporters, color: useColor(io, values['no-color']) }, new Secrets(), io);
  return report.exit.code;
}
