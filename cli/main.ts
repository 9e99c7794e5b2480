// `conformance`: resolve the configuration, select checks, start the reference server when
// there is no target, run the checks through vitest, clean up, report, and exit by level.
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Check, PaginationSettings, RunSettings } from '../lib/check.js';
import { endpointsOf, loadCatalogSpec, mergeCatalog } from '../lib/catalog.js';
import { cleanUp } from '../lib/cleanup.js';
import { ConfigError, describeConfig, maskedConfig, resolveConfig, type Config, type RawSettings } from '../lib/config.js';
import { packageVersion } from '../lib/package.js';
import { Secrets } from '../lib/secrets.js';
import { runSuite } from '../lib/vitest-run.js';
import { renderAreaLine, renderProgress, renderSummary } from '../reporters/console.js';
import { renderJson } from '../reporters/json.js';
import { renderJunit } from '../reporters/junit.js';
import { absentOperations, exitFor, summarise, type RunReport } from '../reporters/model.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import { checkDefinitions, expandChecks, type CheckDefinition } from '../suites/index.js';
import { HELP } from './help.js';
import { UsageError, type Io } from './io.js';
import { serve } from './serve.js';

const OPTIONS = {
  'base-url': { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  seed: { type: 'string' },
  check: { type: 'string', multiple: true },
  grep: { type: 'string' },
  operation: { type: 'string', multiple: true },
  list: { type: 'boolean' },
  'list-operations': { type: 'boolean' },
  'request-budget': { type: 'string' },
  'time-buffer': { type: 'string' },
  'default-page-length': { type: 'string' },
  'require-all-endpoints': { type: 'boolean' },
  'report-dir': { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  strict: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

export function selectChecks(ids: readonly string[], grep: string | undefined): CheckDefinition[] {
  const known = new Set(checkDefinitions.map((c) => c.id));
  for (const id of ids) if (!known.has(id)) throw new UsageError(`unknown check id '${id}' (see 'conformance --list')`);
  let selected = ids.length ? checkDefinitions.filter((c) => ids.includes(c.id)) : [...checkDefinitions];
  if (grep !== undefined) {
    const g = grep.toLowerCase();
    selected = selected.filter((c) => c.id.toLowerCase().includes(g) || c.title.toLowerCase().includes(g));
  }
  if (selected.length === 0) throw new UsageError(`no check matches --grep '${grep}' (see 'conformance --list')`);
  return selected;
}

function renderList(checks: readonly CheckDefinition[]): string[] {
  const w = Math.max(...checks.map((c) => c.id.length));
  return [
    `${'id'.padEnd(w)}  level   clause / title`,
    ...checks.map((c) => `${c.id.padEnd(w)}  ${c.level.padEnd(6)}  ${c.clause}\n${' '.repeat(w + 10)}${c.title}${c.perOperation ? ' [per list operation]' : ''}`),
    '',
    `${checks.length} checks (${checks.filter((c) => c.perOperation).length} of them run once per list operation; see --list-operations)`,
  ];
}

/** The list operations as the run will read them (catalog, with the config's overrides). */
function paginationFor(config: Config): PaginationSettings {
  let endpoints = endpointsOf(mergeCatalog(loadCatalogSpec(), config.catalog));
  if (config.operations.length) {
    const unknown = config.operations.filter((o) => !endpoints.some((e) => e.key === o || e.operation === o));
    if (unknown.length) throw new UsageError(`unknown operation '${unknown[0]}' (see 'conformance --list-operations')`);
    endpoints = endpoints.filter((e) => config.operations.includes(e.key) || config.operations.includes(e.operation));
  }
  return {
    endpoints,
    parents: { ...loadCatalogSpec().parents, ...config.catalog.parents },
    budget: config.requestBudget,
    timeBufferMs: config.timeBufferSeconds * 1000,
    ...(config.defaultPageLength !== undefined ? { defaultPageLength: config.defaultPageLength } : {}),
    requireAllEndpoints: config.requireAllEndpoints,
    startedAt: Date.now(),
  };
}

function parseMain(args: string[]) {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const flags: RawSettings = {};
  if (values['base-url'] !== undefined) flags['base-url'] = values['base-url'];
  if (values.token !== undefined) flags.token = values.token;
  if (values.seed !== undefined) flags.seed = values.seed;
  if (values.concurrency !== undefined) flags.concurrency = values.concurrency;
  if (values.timeout !== undefined) flags.timeout = values.timeout;
  if (values['report-dir'] !== undefined) flags['report-dir'] = values['report-dir'];
  if (values.strict) flags.strict = true;
  if (values['request-budget'] !== undefined) flags['request-budget'] = values['request-budget'];
  if (values['time-buffer'] !== undefined) flags['time-buffer'] = values['time-buffer'];
  if (values['default-page-length'] !== undefined) flags['default-page-length'] = values['default-page-length'];
  if (values['require-all-endpoints']) flags['require-all-endpoints'] = true;
  const checks = (values.check ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  return { values, flags, checks };
}

async function run(config: Config, definitions: CheckDefinition[], io: Io): Promise<number> {
  const color = io.isTTY && !io.env.NO_COLOR && !io.env.CONFORMANCE_NO_COLOR;
  const runId = randomBytes(4).toString('hex');
  const startedAt = new Date();
  const pagination = paginationFor(config);
  const ids = new Set(definitions.map((d) => d.id));
  const checks: Check[] = expandChecks(pagination).filter((c) => ids.has(c.id));
  io.out(`conformance ${packageVersion}: ${checks.length} check(s), run ${runId}, seed ${config.seed}`);
  for (const line of describeConfig(config)) io.out(line);

  let server: RunningServer | undefined;
  let token = config.token;
  if (!config.baseUrl) {
    token ??= randomBytes(18).toString('base64url');
    server = await startReferenceServer({ token, seed: config.seed });
    io.out(`  reference server started on ${server.url}`);
  }
  const workDir = join(tmpdir(), 'conformance', runId);
  const settings: RunSettings = {
    baseUrl: config.baseUrl ?? server!.url,
    token: token!,
    seed: config.seed,
    runId,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    concurrency: config.concurrency,
    ledgerPath: join(workDir, 'ledger.jsonl'),
    pagination,
  };
  const secrets = new Secrets();
  secrets.add(settings.token);

  // Ctrl-C: delete what the run created before leaving.
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    io.err('\ninterrupted: deleting what this run created (Ctrl-C again to leave at once)');
    void cleanUp(settings, secrets).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    io.out('');
    // Live: a line per result that is not a pass, and one per area when it is done (areas
    // run one after the other).
    const counts = new Map<string, Map<string, number>>();
    let area = '';
    const areaDone = (): void => {
      if (area) io.out(renderAreaLine(area, counts.get(area)!, { color }));
    };
    const suite = await runSuite({
      settings,
      checks,
      onResult: (r) => {
        if (r.area !== area) {
          areaDone();
          area = r.area;
          counts.set(area, new Map());
        }
        const c = counts.get(area)!;
        c.set(r.outcome, (c.get(r.outcome) ?? 0) + 1);
        if (r.outcome !== 'pass' && r.outcome !== 'skip') io.out(renderProgress(r, { color }));
      },
    });
    areaDone();
    const cleanup = await cleanUp(settings, secrets);
    const finishedAt = new Date();
    const summary = summarise(suite.results);
    const suiteErrors = suite.suiteErrors.map((e) => secrets.mask(e));
    const report: RunReport = {
      tool: { name: 'conformance', version: packageVersion },
      runId,
      seed: config.seed,
      target: { baseUrl: settings.baseUrl, embedded: !config.baseUrl },
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationMs: finishedAt.getTime() - startedAt.getTime(),
      config: maskedConfig(config),
      results: suite.results,
      suiteErrors,
      cleanup,
      ...(checks.some((c) => c.operation)
        ? {
            lists: {
              absent: absentOperations(suite.results),
              comparedBefore: new Date(pagination.startedAt - pagination.timeBufferMs).toISOString(),
              timeBufferSeconds: config.timeBufferSeconds,
              requestBudget: config.requestBudget,
            },
          }
        : {}),
      summary,
      exit: exitFor(summary, suiteErrors, config.strict),
    };
    io.out(secrets.mask(renderSummary(report, { color })).trimEnd());
    if (config.reportDir) {
      mkdirSync(config.reportDir, { recursive: true });
      writeFileSync(join(config.reportDir, 'results.json'), secrets.mask(renderJson(report)));
      writeFileSync(join(config.reportDir, 'junit.xml'), secrets.mask(renderJunit(report)));
      io.out(`reports written to ${config.reportDir} (results.json, junit.xml)`);
    }
    rmSync(workDir, { recursive: true, force: true });
    return report.exit.code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await server?.close();
  }
}

export async function main(argv: string[], io: Io): Promise<number> {
  try {
    if (argv[0] === 'serve') return await serve(argv.slice(1), io);
    const { values, flags, checks } = parseMain(argv);
    if (values.help) {
      io.out(HELP);
      return 0;
    }
    if (values.version) {
      io.out(packageVersion);
      return 0;
    }
    const selected = selectChecks(checks, values.grep);
    if (values.list) {
      for (const l of renderList(selected)) io.out(l);
      return 0;
    }
    if (values['list-operations']) {
      for (const e of endpointsOf(loadCatalogSpec())) io.out(`${e.key.padEnd(34)}${e.path}${e.hardOffsetLimit ? '  (hard offset limit)' : ''}${e.extra ? '  (not among the contract\'s 26)' : ''}`);
      return 0;
    }
    const config = resolveConfig({
      flags,
      env: values['no-color'] ? { ...io.env, CONFORMANCE_NO_COLOR: '1' } : io.env,
      cwd: io.cwd,
      configFile: values.config,
      checks,
      grep: values.grep,
      operations: (values.operation ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean),
      randomSeed: randomInt(0, 2 ** 31 - 1),
    });
    return await run(config, selected, { ...io, env: values['no-color'] ? { ...io.env, NO_COLOR: '1' } : io.env });
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`conformance: ${(e as Error).message.split('\n')[0]}`);
      io.err(`Run 'conformance --help' for usage.`);
      return 2;
    }
    const secrets = new Secrets();
    secrets.add(io.env.CONFORMANCE_TOKEN);
    io.err(`conformance: the suite itself failed: ${secrets.mask((e as Error)?.stack ?? String(e))}`);
    return 2;
  }
}
