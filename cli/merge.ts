// `conformance merge DIR...`: the report directories of shards joined into one report.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Secrets } from '../lib/secrets.js';
import { summarise, type RunReport } from '../reporters/model.js';
import { UsageError, type Io } from './io.js';

const MERGE_HELP = `Usage: conformance merge DIR... [--report-dir OUT] [--strict] [--no-color]
  Joins the report directories of shards (conformance --shard i/n --report-dir DIR) into one
  report: the console summary, and with --report-dir the report files. The shards must share
  their target, suite version and contract digest.
  --report-dir OUT  write results.json, junit.xml and report.html there
  --strict          SHOULD failures fail the merged run too
  --no-color        no colours
  Exit codes as for a run, from the merged results.`;

/** One report from the results.json of several shards. */
export async function merge(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { 'report-dir': { type: 'string' }, strict: { type: 'boolean' }, 'no-color': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.out(MERGE_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('merge needs the report directories of the shards: conformance merge DIR... [--report-dir OUT]');
  // Loaded here, not above: --help needs none of it (the schema check loads ajv).
  const [{ exitFor }, { validateReport }, { publish }] = await Promise.all([import('../reporters/verdict.js'), import('../reporters/write.js'), import('./publish.js')]);
  const parts = positionals.map((dir) => {
    const file = join(resolve(io.cwd, dir), 'results.json');
    if (!existsSync(file)) throw new UsageError(`no results.json in ${dir}`);
    const part = JSON.parse(readFileSync(file, 'utf8')) as RunReport;
    validateReport(part);
    return part;
  });
  const first = parts[0]!;
  const differ = (f: (r: RunReport) => string, what: string): void => {
    const seen = new Set(parts.map(f));
    if (seen.size > 1) throw new UsageError(`the shards differ in ${what}: ${[...seen].join(', ')}`);
  };
  differ((r) => r.contractDigest, 'contract digest');
  differ((r) => r.target.baseUrl, 'target');
  differ((r) => r.tool.version, 'suite version');
  const results = parts.flatMap((p) => p.results);
  const suiteErrors = parts.flatMap((p) => p.suiteErrors);
  const started = parts.map((p) => p.startedAt).sort()[0]!;
  const finished = parts.map((p) => p.finishedAt).sort().at(-1)!;
  const lists = parts.filter((p) => p.lists).map((p) => p.lists!);
  const report: RunReport = {
    ...first,
    runId: parts.map((p) => p.runId).join('+'),
    startedAt: started,
    finishedAt: finished,
    durationMs: Date.parse(finished) - Date.parse(started),
    results,
    suiteErrors,
    cleanup: { deleted: parts.reduce((n, p) => n + p.cleanup.deleted, 0), leftovers: parts.flatMap((p) => p.cleanup.leftovers) },
    ...(lists.length ? { lists: { ...lists[0]!, absent: [...new Set(lists.flatMap((l) => l.absent))], comparedBefore: lists.map((l) => l.comparedBefore).sort()[0]! } } : {}),
    summary: summarise(results),
    exit: exitFor(results, suiteErrors, values.strict ?? false),
  };
  delete report.shard;
  io.out(`merged ${parts.length} shard(s): ${positionals.join(', ')}`);
  publish(report, { reportDir: values['report-dir'] ? resolve(io.cwd, values['report-dir']) : undefined, color: io.isTTY && !io.env.NO_COLOR && !values['no-color'] }, new Secrets(), io);
  return report.exit.code;
}
