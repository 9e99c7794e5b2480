// A run of the checks: the reference server when there is no target, the preflight, vitest,
// the cleanup and the report. Loaded by cli/main.ts only when checks are to run: it is what
// pulls in vitest, ajv, faker, undici and the reference server, none of which --help,
// --version or --list need.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { errorResult, resultHead, type Check, type CheckResult, type RunSettings } from '../lib/check.js';
import { endpointsOf, loadCatalogSpec, mergeCatalog } from '../lib/catalog.js';
import { cleanUp, cleanUpAfterOutage, type CleanupReport } from '../lib/cleanup.js';
import { describeConfig, maskedConfig, settingLabel, type Config } from '../lib/config.js';
import { packageVersion } from '../lib/package.js';
import { checkTarget } from '../lib/preflight.js';
import { Secrets } from '../lib/secrets.js';
import { runSuite } from '../lib/vitest-run.js';
import { interrupted as stoppedByUser, notRun, renderAreaLine, renderProgress, unanswered } from '../reporters/console.js';
import { printable } from '../lib/text.js';
import { absentOperations, settingsOf, summarise, verdictOf, type RunReport } from '../reporters/model.js';
import { applyBaseline, certificationRefuses, certifiedExit, certify, exitFor, inBaseline, type BaselineEntry } from '../reporters/verdict.js';
import { contractDigest } from '../lib/schema.js';
import { mustPlan, type SigningKey } from '../reporters/attestation.js';
import type { RunningServer } from '../server/index.js';
import { listen, type Listening } from '../server/listen.js';
import { expandChecks, type CheckDefinition } from '../suites/index.js';
import { liveProgress, UsageError, useColor, type Io } from './io.js';
import { publish } from './outputs.js';
import { Ledger, ledgerPath, newRunId } from '../lib/ledger.js';
import { heartbeat, type Heartbeat } from './heartbeat.js';
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
  const runId = newRunId();
  const startedAt = new Date();
  const catalog = mergeCatalog(loadCatalogSpec(), config.catalog);
  const endpoints = endpointsOf(catalog);
  const pagination = paginationFor(config, catalog, endpoints);
  const declaredAbsent = operationKeys(options.declaredAbsent, endpoints, '--absent');
  const declaredEmpty = operationKeys(config.empty, endpoints, settingLabel(config, 'empty'));
  const ids = new Set(definitions.map((d) => d.id));
  const all: Check[] = expandChecks(pagination).filter((c) => ids.has(c.id));
  const checks = options.shard ? shardChecks(all, options.shard) : all;
  if (checks.length === 0) throw new UsageError(`shard ${options.shard!.index}/${options.shard!.count} has no checks (there are fewer units than shards)`);
  io.out(
    `conformance ${packageVersion}: ${checks.length} result(s) to come from ${new Set(checks.map((c) => c.id)).size} checks, run ${runId}, seed ${config.seed}${options.shard ? `, shard ${options.shard.index}/${options.shard.count}` : ''}`,
  );
  for (const line of describeConfig(config)) io.out(line);
  if (declaredEmpty.length && !options.certifyDir)
    io.out(`  (declared empty: ${declaredEmpty.join(', ')}; this counts only in a certification, with --certify DIR)`);

  // The bundled server's socket listens at once (its URL goes to the checks); the server itself
  // is loaded and seeded while vitest starts its worker (below).
  let listening: Listening | undefined;
  let server: RunningServer | undefined;
  let token = config.token;
  if (!config.baseUrl) {
    token ??= randomBytes(18).toString('base64url');
    listening = await listen();
  }
  const settings: RunSettings = {
    baseUrl: config.baseUrl ?? listening!.url,
    token: token!,
    seed: config.seed,
    runId,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    concurrency: config.concurrency,
    ledgerPath: ledgerPath(runId),
    explore: config.explore,
    pagination,
  };
  const secrets = new Secrets();
  secrets.add(settings.token);
  // The signing key's passphrase, and what the environment holds of the key (the PEM, or a path).
  secrets.add(io.env.CONFORMANCE_SIGNING_KEY_PASSPHRASE);
  secrets.add(io.env.CONFORMANCE_SIGNING_KEY);
  // The ledger names its run, target and process first, so `conformance cleanup` can finish the
  // job of a run that crashed or was killed, against that target only, and leaves this run
  // alone while it is under way.
  new Ledger(settings.ledgerPath).started({ runId, baseUrl: settings.baseUrl, startedAt: startedAt.toISOString(), pid: process.pid, host: hostname() });

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
    // Live: a line per result that is not a pass, and one per area when its last check is done
    // (areas run side by side, so they finish in any order).
    const counts = new Map<string, Map<string, number>>();
    const left = new Map<string, number>();
    for (const c of checks) left.set(c.area, (left.get(c.area) ?? 0) + 1);
    let done = 0;
    let shownAt = 0;
    let stopped = false;
    let quietUnanswered = false;
    let saidSlow = false;
    let inFlight = settings.concurrency;
    // Without a status line, a plain line at least every heartbeat (10 s) while checks run
    // (from the preflight's end): the areas' own lines when they finish, else how far the run has got.
    let beat: Heartbeat | undefined;
    const say = (line: string): void => {
      progress?.(undefined);
      beat?.said();
      io.out(line);
    };
    const areaDone = (area: string): void => say(renderAreaLine(area, counts.get(area)!, { color }));
    /** The run's report, from its results: the one every output is rendered from. */
    const reportOf = (
      results: CheckResult[],
      suiteErrors: string[],
      cleanup: CleanupReport,
      exit: RunReport['exit'],
      more: Pick<RunReport, 'baseline' | 'certification'> = {},
    ): RunReport => {
      const finishedAt = new Date();
      return {
        tool: { name: 'conformance', version: packageVersion },
        runId,
        seed: config.seed,
        contractDigest: contractDigest(),
        target: { baseUrl: settings.baseUrl, embedded: !config.baseUrl },
        ...(options.product ? { product: options.product } : {}),
        ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}),
        startedAt: startedAt.toISOString(),
        finishedAt: finishedAt.toISOString(),
        durationMs: finishedAt.getTime() - startedAt.getTime(),
        config: maskedConfig(config),
        results,
        suiteErrors,
        cleanup,
        ...more,
        ...(checks.some((c) => c.operation)
          ? {
              lists: {
                absent: absentOperations(results),
                comparedBefore: new Date(pagination.startedAt - pagination.timeBufferMs).toISOString(),
                timeBufferSeconds: config.timeBufferSeconds,
                requestBudget: config.requestBudget,
              },
            }
          : {}),
        summary: summarise(results),
        exit,
      };
    };
    // The bundled server, then the preflight, while vitest starts: the checks wait at the gate
    // (runSuite) until the preflight has passed, and are cancelled, having sent nothing, if not.
    // A Ctrl-C during the preflight ends it at once: its answer is not waited for.
    const onStop = new Promise<undefined>((resolve) => stop.signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    let refusal = '';
    const ready = (async (): Promise<'go' | 'refused' | 'interrupted'> => {
      if (listening) {
        const { serveOn } = await import('../server/index.js');
        server = serveOn(listening, { token: settings.token, seed: config.seed });
        io.out(`  reference server started on ${server.url}`);
      }
      const reach = stop.signal.aborted
        ? undefined
        : await Promise.race([
            checkTarget(settings, config.baseUrl ?? settings.baseUrl, secrets, {
              paths: endpoints.filter((e) => e.placeholders.length === 0).map((e) => e.path),
              allowAll404: config.allowAll404,
            }),
            onStop,
          ]);
      if (!reach) return 'interrupted';
      if (!reach.ok) {
        // Said at once; the run ends once vitest, cancelled, has closed.
        refusal = secrets.mask(reach.line);
        io.err(`conformance: ${refusal}`);
        io.err('exit 2: no check ran (the run stopped at the preflight)');
        return 'refused';
      }
      io.out(`  preflight: ${secrets.mask(reach.note)}`);
      io.out('');
      if (!progress && !stop.signal.aborted) {
        let beaten = '';
        let beatenAt = 0;
        beat = heartbeat(io.heartbeatMs ?? 10_000, () => {
          if (done === checks.length) return;
          const running = [...left].filter(([, n]) => n > 0).map(([area]) => area);
          const line = `  … ${done}/${checks.length} checks done; still running: ${running.join(', ') || 'the last checks'}`;
          // The same line again says nothing new (a target gone quiet): it is said again only
          // after a minute, so a CI job watching for output still sees the run alive.
          if (line === beaten && Date.now() - beatenAt < 60_000) return;
          say(line);
          beaten = line;
          beatenAt = Date.now();
        });
      }
      return 'go';
    })();
    const suite = await runSuite({
      settings,
      checks,
      signal: stop.signal,
      gate: ready.then((r) => r === 'go'),
      onResult: (result) => {
        // Live lines read a failure that does not fail the run (a SHOULD one without --strict,
        // a baselined one) as a warning, as the summary will.
        const r = options.baseline && inBaseline(options.baseline.entries, result) ? { ...result, baselined: true } : result;
        if (!counts.has(r.area)) counts.set(r.area, new Map());
        const c = counts.get(r.area)!;
        const verdict = verdictOf(r, config.strict);
        c.set(verdict, (c.get(verdict) ?? 0) + 1);
        done++;
        // 429s lower the requests in flight: said as it happens, so a slowed run is not silent.
        const lowered = r.transport?.concurrencyLoweredTo;
        if (lowered !== undefined && lowered < inFlight) {
          inFlight = lowered;
          say(`  ~ rate limited (429): requests in flight lowered to ${lowered}; the run goes on, slower`);
        }
        // Said once: the summary's transport line has the lowest bound it reached.
        const slowed = r.transport?.latencyLoweredTo;
        if (slowed !== undefined && slowed < inFlight) {
          inFlight = slowed;
          if (!saidSlow) say(`  ~ slow answers or timeouts: requests in flight lowered to ${slowed}; the run goes on, slower`);
          saidSlow = true;
        }
        // Once the breaker has opened, the checks it stops are one line, not one each.
        if (notRun(r)) {
          if (!stopped) say(`  ! the target stopped answering: the suite sends nothing more (${printable(r.reason ?? '')}); the remaining checks are not run`);
          stopped = true;
        } else if (unanswered(r)) {
          // Requests without an answer come in bursts: the first is said, the rest counted in the summary.
          if (!quietUnanswered) say(`${renderProgress(r, { color, strict: config.strict })} (no answer: more like it are counted in the summary)`);
          quietUnanswered = true;
        } else if (r.outcome !== 'pass' && r.outcome !== 'skip' && !stoppedByUser(r)) {
          say(renderProgress(r, { color, strict: config.strict }));
        }
        const rest = left.get(r.area)! - 1;
        left.set(r.area, rest);
        if (rest === 0) areaDone(r.area);
        if (progress && (Date.now() - shownAt > 100 || done === checks.length)) {
          shownAt = Date.now();
          progress(`  ${done}/${checks.length} checks done`);
        }
      },
    }).finally(() => beat?.stop());
    progress?.(undefined);
    // No check ran unless the preflight passed, so nothing was created: the ledger goes.
    const noLedger = (): void => rmSync(dirname(settings.ledgerPath), { recursive: true, force: true });
    // A server that would not load, a preflight that broke: thrown here, after vitest closed.
    const reached = await ready.catch((err: unknown) => {
      noLedger();
      throw err;
    });
    // A heartbeat started by a preflight that ended after the suite did (vitest could not start).
    beat?.stop();
    if (reached !== 'go') {
      noLedger();
      if (reached === 'refused') {
        // No check ran, and CI still gets its files, saying why: every check not run, with the reason.
        const results = checks.map((c) => errorResult(resultHead(c), 'NOT_RUN', `the run stopped at the preflight: ${refusal}`));
        const report = reportOf(
          results,
          [`the run stopped at the preflight: ${refusal}`],
          { deleted: 0, leftovers: [] },
          { code: 2, reason: 'exit 2: no check ran (the run stopped at the preflight)' },
        );
        // Through the door every report goes by: the formats --reporter chose, GitHub's annotations.
        publish(secrets.maskDeep(report), { reportDir: config.reportDir, reporters: config.reporters, color, summary: false }, secrets, io);
        return 2;
      }
      io.err('exit 130: interrupted (Ctrl-C or SIGTERM) during the preflight: no check ran, nothing was created');
      return 130;
    }
    for (const s of suite.secrets) secrets.add(s);
    const down = suite.results.find(notRun);
    // After an outage too: the cleanup waits a while for the target to come back, then deletes.
    const cleanup = down
      ? await cleanUpAfterOutage(settings, secrets, 'the target stopped answering during the run', { said: (line) => io.out(line) })
      : await cleanUp(settings, secrets);
    const suiteErrors = suite.suiteErrors.map((e) => secrets.mask(e));
    const based = options.baseline ? applyBaseline(suite.results, options.baseline.entries, options.baseline.file) : undefined;
    const results = based?.results ?? suite.results;
    let exit = exitFor(results, suiteErrors, config.strict);
    const refusedBy = certificationRefuses(settingsOf({ config: maskedConfig(config) }), {
      ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}),
      ...(options.baseline ? { baseline: options.baseline.file } : {}),
    });
    const extraOperations = pagination.endpoints.filter((e) => e.extra).map((e) => e.key);
    const certification = options.certifyDir ? certify(results, suiteErrors, { declaredAbsent, declaredEmpty, extraOperations, refusedBy }) : undefined;
    exit = certifiedExit(exit, certification);
    if (interrupted) exit = { code: exit.code, reason: `exit 130: interrupted (Ctrl-C or SIGTERM); ${exit.reason.replace(/^exit \d: /, '')}` };
    const report = reportOf(results, suiteErrors, cleanup, exit, { ...(based ? { baseline: based.report } : {}), ...(certification ? { certification } : {}) });
    // Masked whole, with every secret any area learned, before any renderer escapes a character.
    const attest = options.signingKey ? { key: options.signingKey, mustChecks: mustPlan(checks, extraOperations) } : undefined;
    const unwritten = publish(
      secrets.maskDeep(report),
      { reportDir: config.reportDir, reporters: config.reporters, certifyDir: options.certifyDir, attest, writeBaseline: options.writeBaseline, color },
      secrets,
      io,
    );
    if (unwritten) io.err('exit 2: the verdict above stands, but what it was to be written to was not (see above)');
    // Kept while it holds something undeleted: `conformance cleanup --run ID` retries from it.
    if (cleanup.leftovers.length === 0 && !cleanup.pending) rmSync(dirname(settings.ledgerPath), { recursive: true, force: true });
    // (A cleanup put off has said so, with the same command, in the summary.)
    else if (!cleanup.pending) io.out(`the ledger of run ${runId} is kept: 'conformance cleanup --run ${runId}' tries again`);
    return interrupted ? 130 : unwritten ? 2 : report.exit.code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await (server ?? listening)?.close();
  }
}
