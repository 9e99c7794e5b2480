// A run of the checks: the reference server when there is no target, the preflight, vitest,
// the cleanup and the report. Loaded by cli/main.ts only when checks are to run: it is what
// pulls in vitest, ajv, faker, undici and the reference server, none of which --help,
// --version or --list need.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import {
  errorResult,
  resultHead,
  type Check,
  type CheckResult,
  type RunSettings,
  cleanUp,
  cleanUpAfterOutage,
  keepingLedger,
  type CleanupReport,
  checkTarget,
  Ledger,
  ledgerPath,
  newRunId,
} from '../lib/runner/index.js';
import { endpointsOf, loadCatalogSpec, mergeCatalog, type Endpoint, type PaginationSettings, contractDigest } from '../lib/contract/index.js';
import { describeConfig, maskedConfig, settingLabel, type Config } from '../lib/configuration/index.js';
import { packageVersion } from '../lib/package/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { Login, LoginError, type LoadReport } from '../lib/transport/index.js';
import { runSuite } from '../lib/vitest/index.js';
import { cleanupCommand, notRun } from '../reporters/console.js';
import { absentOperations, settingsOf, summarise, type ReplaysReport, type RunReport } from '../reporters/model.js';
import { applyBaseline, certificationRefuses, certifiedExit, certify, exitFor, inBaseline, type BaselineEntry } from '../reporters/verdict.js';
import { mustPlan, type SigningKey } from '../reporters/attestation.js';
import type { RunningServer } from '../server/index.js';
import { listen, type Listening } from '../server/listen.js';
import { expandChecks, type CheckDefinition } from '../suites/index.js';
import { liveProgress, UsageError, useColor, type Io } from './io.js';
import { publish } from './outputs.js';
import { live, type Live } from './live.js';
import { added, replayFailures } from './replays.js';
import { operationKeys, paginationFor, shardChecks } from './plan.js';

/** What a run is for, beyond the target: certification, baselines, sharding (flags only). */
export interface RunOptions {
  certifyDir?: string;
  /** Signs the bundle (--signing-key): read once, by cli/main.ts. */
  signingKey?: SigningKey;
  product?: { name?: string; version?: string };
  /** Operations the vendor declares absent (certification). */
  declaredAbsent: string[];
  baseline?: { file: string; entries: BaselineEntry[] };
  writeBaseline?: string;
  shard?: { index: number; count: number };
}

export async function run(config: Config, definitions: CheckDefinition[], options: RunOptions, io: Io): Promise<number> {
  // Colours and a status line rewritten in place only where someone watches a terminal: not in
  // a pipe, a file or under CI (cli/io.ts). There, plain lines tell the progress instead.
  const color = useColor(io);
  const progress = liveProgress(io);
  const planned = plan(config, definitions, options);
  const { runId, startedAt, endpoints, pagination, checks, declaredAbsent, declaredEmpty } = planned;
  io.out(
    `conformance ${packageVersion}: ${checks.length} result(s) to come from ${new Set(checks.map((c) => c.id)).size} checks, run ${runId}, seed ${config.seed}${options.shard ? `, shard ${options.shard.index}/${options.shard.count}` : ''}`,
  );
  for (const line of describeConfig(config)) io.out(line);
  if (declaredEmpty.length && !options.certifyDir)
    io.out(`  (declared empty: ${declaredEmpty.join(', ')}; this counts only in a certification, with --certify DIR)`);
  const prepared = await prepare(config, planned, io);
  const { listening, settings, secrets } = prepared;
  // The bundled server, once it is loaded (closed at the end, whatever happened).
  let server = (): RunningServer | undefined => undefined;
  /**
   * No check ran: the login or the preflight refused the target (exit 2). CI still gets its
   * files, saying why: every check not run, with the reason.
   */
  const refusedRun = (why: string): number => {
    const results = checks.map((c) => errorResult(resultHead(c), 'NOT_RUN', why));
    const report = runReport(
      { runId, config, settings, options, startedAt, checks, pagination },
      results,
      [why],
      { deleted: 0, leftovers: [] },
      {
        code: 2,
        reason: `exit 2: no check ran (${why.startsWith('the run stopped at the preflight') ? 'the run stopped at the preflight' : 'the login failed'})`,
      },
      prepared.login ? { auth: { logins: prepared.login.logins } } : {},
    );
    // Through the door every report goes by: the formats --reporter chose, GitHub's annotations.
    publish(secrets.maskDeep(report), { reportDir: config.reportDir, reporters: config.reporters, color, summary: false }, secrets, io);
    return 2;
  };
  if (prepared.refused !== undefined) {
    io.err(`conformance: ${prepared.refused}`);
    io.err('exit 2: no check ran (the login failed: nothing was sent to the operations)');
    Login.forget(runId);
    return refusedRun(`the run stopped at the login: ${prepared.refused}`);
  }

  // Ctrl-C, or SIGTERM (a cancelled CI job): stop the checks, so that nothing is created after
  // the cleanup has read the ledger, then clean up and report as after any run; exit 130.
  let interrupted = false;
  const stop = new AbortController();
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    io.err('\ninterrupted: stopping the checks, then deleting what this run created (Ctrl-C again to leave at once)');
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const talk = live(io, checks, {
      color,
      strict: config.strict,
      concurrency: settings.concurrency,
      progress,
      baselined: (r) => (options.baseline ? inBaseline(options.baseline.entries, r) : false),
    });
    const about: ReportFacts = { runId, config, settings, options, startedAt, checks, pagination };
    // The bundled server, then the preflight, while vitest starts: the checks wait at the gate
    // (runSuite) until the preflight has passed, and are cancelled, having sent nothing, if not.
    const gate = startAndReach({
      config,
      endpoints,
      settings,
      secrets,
      listening,
      stop: stop.signal,
      io,
      talk,
      progress: progress !== undefined,
      login: prepared.login,
    });
    server = gate.server;
    const suite = await runSuite({ settings, checks, signal: stop.signal, gate: gate.ready.then((r) => r === 'go'), onResult: (r) => talk.result(r) }).finally(
      () => talk.stop(),
    );
    // No check ran unless the preflight passed, so nothing was created: the ledger goes.
    const noLedger = (): void => rmSync(dirname(settings.ledgerPath), { recursive: true, force: true });
    // A server that would not load, a preflight that broke: thrown here, after vitest closed.
    const reached = await gate.ready.catch((err: unknown) => {
      noLedger();
      throw err;
    });
    // A heartbeat started by a preflight that ended after the suite did (vitest could not start).
    talk.stop();
    if (reached !== 'go') {
      noLedger();
      if (reached === 'refused') return refusedRun(`the run stopped at the preflight: ${gate.refusal()}`);
      io.err('exit 130: interrupted (Ctrl-C or SIGTERM) during the preflight: no check ran, nothing was created');
      return 130;
    }
    for (const s of suite.secrets) secrets.add(s);
    const down = suite.results.find(notRun);
    // Each failure run again alone, before the cleanup, so on the store the failure met (cli/replays.ts): a label, no outcome changed.
    const replayed =
      down || interrupted || config.replays === 0
        ? undefined
        : await replayFailures({ settings, checks, results: suite.results, times: config.replays, secrets, signal: stop.signal, io });
    // After an outage too: the cleanup waits a while for the target to come back, then deletes.
    const cleaned = down
      ? await cleanUpAfterOutage(settings, secrets, 'the target stopped answering during the run', { said: (line) => io.out(line) })
      : await cleanUp(settings, secrets);
    // Kept while it holds something undeleted: `conformance cleanup --run ID` retries from it.
    const cleanup = keepingLedger(cleaned, runId);
    const { report, extraOperations } = judged(
      about,
      replayed?.results ?? suite.results,
      suite.suiteErrors.map((e) => secrets.mask(e)),
      replayed ? added(cleanup, replayed.cleanup) : cleanup,
      {
        declaredAbsent,
        declaredEmpty,
        interrupted,
        ...(suite.load ? { load: suite.load } : {}),
        // The logins of this process (before the preflight, for the cleanup) and of the checks' workers (the run's, the replays').
        ...(prepared.login ? { auth: { logins: prepared.login.logins + suite.logins + (replayed?.logins ?? 0) } } : {}),
        ...(replayed ? { replays: replayed.replays } : {}),
      },
    );
    if (report.auth) io.out(`logged in ${report.auth.logins} time(s) with client credentials (${secrets.mask(config.tokenUrl ?? '')})`);
    // Masked whole, with every secret any area learned, before any renderer escapes a character.
    const attest = options.signingKey ? { key: options.signingKey, mustChecks: mustPlan(checks, extraOperations) } : undefined;
    const unwritten = publish(
      secrets.maskDeep(report),
      { reportDir: config.reportDir, reporters: config.reporters, certifyDir: options.certifyDir, attest, writeBaseline: options.writeBaseline, color },
      secrets,
      io,
    );
    if (unwritten) io.err('exit 2: the verdict above stands, but what it was to be written to was not (see above)');
    if (!cleanup.kept) rmSync(dirname(settings.ledgerPath), { recursive: true, force: true });
    // The run's ledger and its replays' (a cleanup put off has said so, with the same command, in the summary).
    const kept = report.cleanup.kept ?? [];
    if (kept.length && !cleanup.pending)
      io.out(`${kept.length} ledger(s) kept (run ${kept.join(', ')}); what they hold is deleted by: ${secrets.mask(cleanupCommand(report))}`);
    return interrupted ? 130 : unwritten ? 2 : report.exit.code;
  } finally {
    Login.forget(runId);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await (server() ?? listening)?.close();
  }
}

/** What a run's report is made of beyond its results. */
interface ReportFacts {
  runId: string;
  config: Config;
  settings: RunSettings;
  options: RunOptions;
  startedAt: Date;
  checks: readonly Check[];
  pagination: PaginationSettings;
}

/** The run's report, from its results: the one every output is rendered from. */
function runReport(
  f: ReportFacts,
  results: CheckResult[],
  suiteErrors: string[],
  cleanup: CleanupReport,
  exit: RunReport['exit'],
  more: Pick<RunReport, 'baseline' | 'certification' | 'load' | 'auth' | 'replays'> = {},
): RunReport {
  const finishedAt = new Date();
  return {
    tool: { name: 'conformance', version: packageVersion },
    runId: f.runId,
    seed: f.config.seed,
    contractDigest: contractDigest(),
    target: { baseUrl: f.settings.baseUrl, embedded: !f.config.baseUrl },
    ...(f.options.product ? { product: f.options.product } : {}),
    ...(f.options.shard ? { shard: `${f.options.shard.index}/${f.options.shard.count}` } : {}),
    startedAt: f.startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - f.startedAt.getTime(),
    config: maskedConfig(f.config),
    results,
    suiteErrors,
    cleanup,
    ...more,
    ...(f.checks.some((c) => c.operation)
      ? {
          lists: {
            absent: absentOperations(results),
            comparedBefore: new Date(f.pagination.startedAt - f.pagination.timeBufferMs).toISOString(),
            timeBufferSeconds: f.config.timeBufferSeconds,
            requestBudget: f.config.requestBudget,
          },
        }
      : {}),
    summary: summarise(results),
    exit,
  };
}

/**
 * The verdict of a finished run: the baseline applied, the exit by level, the certification
 * (with --certify), an interruption said; and the report they make.
 */
function judged(
  f: ReportFacts,
  found: CheckResult[],
  suiteErrors: string[],
  cleanup: CleanupReport,
  run: { declaredAbsent: string[]; declaredEmpty: string[]; interrupted: boolean; load?: LoadReport; auth?: RunReport['auth']; replays?: ReplaysReport },
): { report: RunReport; extraOperations: string[] } {
  const { config, options } = f;
  const based = options.baseline ? applyBaseline(found, options.baseline.entries, options.baseline.file) : undefined;
  const results = based?.results ?? found;
  const refusedBy = certificationRefuses(settingsOf({ config: maskedConfig(config) }), {
    ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}),
    ...(options.baseline ? { baseline: options.baseline.file } : {}),
  });
  const extraOperations = f.pagination.endpoints.filter((e) => e.extra).map((e) => e.key);
  const certification = options.certifyDir
    ? certify(results, suiteErrors, { declaredAbsent: run.declaredAbsent, declaredEmpty: run.declaredEmpty, extraOperations, refusedBy })
    : undefined;
  let exit = certifiedExit(exitFor(results, suiteErrors, config.strict), certification);
  if (run.interrupted) exit = { code: exit.code, reason: `exit 130: interrupted (Ctrl-C or SIGTERM); ${exit.reason.replace(/^exit \d: /, '')}` };
  const report = runReport(f, results, suiteErrors, cleanup, exit, {
    ...(based ? { baseline: based.report } : {}),
    ...(certification ? { certification } : {}),
    ...(run.load ? { load: run.load } : {}),
    ...(run.auth ? { auth: run.auth } : {}),
    ...(run.replays ? { replays: run.replays } : {}),
  });
  return { report, extraOperations };
}

/** What a run will do: its id and start, the list operations it reads, its checks, the declarations. */
interface Plan {
  runId: string;
  startedAt: Date;
  endpoints: Endpoint[];
  pagination: PaginationSettings;
  checks: Check[];
  declaredAbsent: string[];
  declaredEmpty: string[];
}

function plan(config: Config, definitions: readonly CheckDefinition[], options: RunOptions): Plan {
  const catalog = mergeCatalog(loadCatalogSpec(), config.catalog);
  const endpoints = endpointsOf(catalog);
  const pagination = paginationFor(config, catalog, endpoints);
  const ids = new Set(definitions.map((d) => d.id));
  const all: Check[] = expandChecks(pagination).filter((c) => ids.has(c.id));
  const checks = options.shard ? shardChecks(all, options.shard) : all;
  if (checks.length === 0) throw new UsageError(`shard ${options.shard!.index}/${options.shard!.count} has no checks (there are fewer units than shards)`);
  return {
    runId: newRunId(),
    startedAt: new Date(),
    endpoints,
    pagination,
    checks,
    declaredAbsent: operationKeys(options.declaredAbsent, endpoints, '--absent'),
    declaredEmpty: operationKeys(config.empty, endpoints, settingLabel(config, 'empty')),
  };
}

/**
 * What a run needs before its first request: the bundled server's socket when there is no
 * target (it listens at once, as its URL goes to the checks; the server itself is loaded and
 * seeded while vitest starts its worker), the settings the checks get, the secrets to mask,
 * and the ledger.
 */
async function prepare(
  config: Config,
  p: Plan,
  io: Io,
): Promise<{ listening: Listening | undefined; settings: RunSettings; secrets: Secrets; login?: Login; refused?: string }> {
  let listening: Listening | undefined;
  let token = config.token;
  const secrets = new Secrets();
  // Client credentials: the first token, obtained before the preflight; a refused login ends the
  // run before anything is sent to the operations (run).
  const credentials = config.clientId
    ? { tokenUrl: config.tokenUrl!, clientId: config.clientId, clientSecret: config.clientSecret!, scope: p.runId }
    : undefined;
  const login = credentials ? Login.shared(credentials, config.timeoutMs) : undefined;
  login?.mask(secrets);
  let refused: string | undefined;
  if (login) {
    token = await login.token().catch((e: unknown) => {
      if (!(e instanceof LoginError)) throw e;
      refused = secrets.mask(e.message);
      return '';
    });
  }
  if (!config.baseUrl) {
    token ??= randomBytes(18).toString('base64url');
    listening = await listen();
  }
  const settings: RunSettings = {
    baseUrl: config.baseUrl ?? listening!.url,
    token: token!,
    ...(credentials ? { login: { ...credentials, ...(Number.isFinite(login!.renewAt) ? { renewAt: login!.renewAt } : {}) } } : {}),
    seed: config.seed,
    runId: p.runId,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    concurrency: config.concurrency,
    ...(config.maxRate !== undefined ? { maxRate: config.maxRate } : {}),
    ledgerPath: ledgerPath(p.runId),
    explore: config.explore,
    pagination: p.pagination,
    ...(config.changeSettings ? { changeSettings: true } : {}),
  };
  secrets.add(settings.token);
  // The signing key's passphrase, and what the environment holds of the key (the PEM, or a path).
  secrets.add(io.env.CONFORMANCE_SIGNING_KEY_PASSPHRASE);
  secrets.add(io.env.CONFORMANCE_SIGNING_KEY);
  // The ledger names its run, target and process first, so `conformance cleanup` can finish the
  // job of a run that crashed or was killed, against that target only, and leaves this run
  // alone while it is under way.
  if (refused !== undefined) return { listening, settings, secrets, ...(login ? { login } : {}), refused };
  new Ledger(settings.ledgerPath).started({
    runId: p.runId,
    baseUrl: settings.baseUrl,
    startedAt: p.startedAt.toISOString(),
    pid: process.pid,
    host: hostname(),
  });
  return { listening, settings, secrets, ...(login ? { login } : {}) };
}

/** The gate the checks wait at: the bundled server started, then the preflight's answer. */
interface Gate {
  ready: Promise<'go' | 'refused' | 'interrupted'>;
  /** Why the preflight refused the target (masked), once it has. */
  refusal(): string;
  server(): RunningServer | undefined;
}

/**
 * Starts the bundled server (when there is no target) and the preflight, while vitest starts:
 * the checks wait at the gate until the preflight has passed. A Ctrl-C during the preflight
 * ends it at once: its answer is not waited for. A refusal is said at once; the run ends once
 * vitest, cancelled, has closed.
 */
function startAndReach(a: {
  config: Config;
  endpoints: readonly Endpoint[];
  settings: RunSettings;
  secrets: Secrets;
  listening: Listening | undefined;
  stop: AbortSignal;
  io: Io;
  talk: Live;
  /** A status line is shown (no heartbeat lines then). */
  progress: boolean;
  login: Login | undefined;
}): Gate {
  const { config, settings, secrets, io } = a;
  let refusal = '';
  let server: RunningServer | undefined;
  const onStop = new Promise<undefined>((resolve) => a.stop.addEventListener('abort', () => resolve(undefined), { once: true }));
  const ready = (async (): Promise<'go' | 'refused' | 'interrupted'> => {
    if (a.listening) {
      const { serveOn } = await import('../server/index.js');
      server = serveOn(a.listening, { token: settings.token, seed: config.seed });
      io.out(`  reference server started on ${server.url}`);
    }
    const paths = a.endpoints.filter((e) => e.placeholders.length === 0).map((e) => e.path);
    const reach = a.stop.aborted
      ? undefined
      : await Promise.race([checkTarget(settings, config.baseUrl ?? settings.baseUrl, secrets, { paths, allowAll404: config.allowAll404 }), onStop]);
    if (!reach) return 'interrupted';
    if (!reach.ok) {
      refusal = secrets.mask(reach.line);
      io.err(`conformance: ${refusal}`);
      io.err('exit 2: no check ran (the run stopped at the preflight)');
      return 'refused';
    }
    // The token worked: a 401 to it later (the cleanup's) logs in again (lib/transport/login.ts).
    a.login?.worked(settings.token);
    io.out(`  preflight: ${secrets.mask(reach.note)}`);
    io.out('');
    // Without a status line, a plain line at least every heartbeat (10 s) while checks run.
    if (!a.progress && !a.stop.aborted) a.talk.beat(io.heartbeatMs ?? 10_000);
    return 'go';
  })();
  return { ready, refusal: () => refusal, server: () => server };
}
