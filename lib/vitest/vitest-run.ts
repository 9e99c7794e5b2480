// Drives vitest in-process through its Node API, with its own root and config, so that the
// suite runs the same from a checkout and from under a user's node_modules (launching the
// vitest binary on a path there would let its default excludes drop our files), and so that
// a vitest config in the user's folder is never picked up.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createVitest } from 'vitest/node';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { errorResult, GATE, gateChannel, resultHead, resultKey, stopChannel, type Check, type CheckResult, type RunSettings } from '../runner/index.js';
import type { LoadReport } from '../transport/index.js';
import { packageRoot } from '../package/index.js';
import { schemaDocuments } from '../contract/index.js';

/** What the main process hands the checks' worker (vitest's provide/inject; typed for inject() in suites/register.ts). */
export interface ProvidedRun {
  settings: RunSettings;
  /** Result keys (id, or id and operation) of the checks to run. */
  selected: string[];
  /** The schemas of spec/, parsed by the main process (lib/contract/schema.ts). */
  schemas: object[];
}

export interface SuiteRunOptions {
  settings: RunSettings;
  checks: readonly Check[];
  /** Called as each check finishes. */
  onResult?: (result: CheckResult) => void;
  /** Aborted: the run stops (checks not yet finished do not report) and runSuite returns. */
  signal?: AbortSignal;
  /**
   * When the checks may start (true) or must not (false or a rejection: the run is cancelled,
   * having sent nothing). vitest and its worker start meanwhile. Absent: at once.
   */
  gate?: Promise<boolean>;
}

export interface SuiteRun {
  results: CheckResult[];
  /** The secrets the checks learned (the token, every client_secret): what the report is masked with. */
  secrets: string[];
  /** Failures of the suite itself outside any check (a file that did not load, a crash). */
  suiteErrors: string[];
  /** How hard the run pushed the target, as the last check to finish saw it. */
  load?: LoadReport;
  /** How many times the checks' worker logged in with client credentials. */
  logins: number;
}

function firstLine(s: string | undefined): string {
  return (s ?? '').split('\n')[0] ?? '';
}

class Collector implements Reporter {
  readonly results = new Map<string, CheckResult>();
  readonly suiteErrors: string[] = [];
  readonly secrets = new Set<string>();
  load: LoadReport | undefined;
  logins = 0;
  readonly #onResult?: (r: CheckResult) => void;
  readonly #byId: Map<string, Check>;

  readonly #signal?: AbortSignal;
  /**
   * Until the gate opens (runSuite): what vitest reports then is of a run cancelled before any
   * check started (a failed preflight, a Ctrl-C), and no result.
   */
  muted = true;

  constructor(checks: readonly Check[], onResult?: (r: CheckResult) => void, signal?: AbortSignal) {
    this.#signal = signal;
    this.#onResult = onResult;
    this.#byId = new Map(checks.map((c) => [resultKey(c), c]));
  }

  onTestCaseResult(testCase: TestCase): void {
    const meta = testCase.meta().conformance;
    for (const s of testCase.meta().conformanceSecrets ?? []) this.secrets.add(s);
    this.load = testCase.meta().conformanceLoad ?? this.load;
    this.logins = Math.max(this.logins, testCase.meta().conformanceLogins ?? 0);
    const check = this.#byId.get(testCase.name);
    let result: CheckResult | undefined = meta;
    if (!result && check) {
      // The check never reported: vitest stopped it (a timeout) or our glue failed.
      const errors = testCase.result().errors ?? [];
      const duration = Math.round(testCase.diagnostic()?.duration ?? 0);
      result = this.#signal?.aborted
        ? errorResult(resultHead(check), 'INTERRUPTED', 'the run was stopped before this check finished', duration)
        : errorResult(
            resultHead(check),
            'SUITE_BUG',
            `the check did not report an outcome (${firstLine(errors[0]?.message) || testCase.result().state})`,
            duration,
          );
    }
    if (!result || this.muted) return;
    this.results.set(resultKey(result), result);
    this.#onResult?.(result);
  }

  onTestModuleEnd(module: TestModule): void {
    for (const e of module.errors()) this.suiteErrors.push(`${module.moduleId}: ${firstLine(e.message)}`);
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<{ message?: string }>): void {
    for (const e of unhandledErrors) this.suiteErrors.push(`unhandled error: ${firstLine(e.message)}`);
  }
}

/**
 * The main process's side of the gate (lib/runner/check.ts, gateChannel). It answers the worker's
 * question with the word said so far, and says each new word unasked. A stop is final: a go
 * after it is not said, and a worker that asks after a go then a stop hears stop. Nothing is
 * said once it is closed.
 */
class Gate {
  readonly #channel: BroadcastChannel;
  #decision?: typeof GATE.go | typeof GATE.stop;
  #closed = false;

  constructor(runId: string) {
    this.#channel = new BroadcastChannel(gateChannel(runId));
    this.#channel.onmessage = (m: MessageEvent) => {
      if (m.data === GATE.ask && this.#decision && !this.#closed) this.#channel.postMessage(this.#decision);
    };
    (this.#channel as unknown as { unref(): void }).unref();
  }

  get decision(): typeof GATE.go | typeof GATE.stop | undefined {
    return this.#decision;
  }

  say(word: typeof GATE.go | typeof GATE.stop): void {
    if (this.#closed || this.#decision === GATE.stop || this.#decision === word) return;
    this.#decision = word;
    this.#channel.postMessage(word);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
  }
}

/** Our compiled modules (dist/ of the package), by path as vite names them. */
function compiledSuite(): RegExp {
  const dist = join(packageRoot, 'dist').replaceAll('\\', '/');
  return new RegExp(`^${dist.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`);
}

/**
 * Where vitest's own logger writes: nowhere. The suite reports through its own reporter (the
 * Collector) and the CLI's lines, never through vitest's logger; left on the process's streams,
 * that logger hides and shows the cursor (ESC[?25l, ESC[?25h) on a terminal, even under CI=true.
 * A plain Writable is no terminal, so vitest writes no such code into it in the first place.
 */
export function discardingSink(): Writable {
  return new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
}

/**
 * vitest's settings for a run: our own root and no config file, the one file that registers
 * every check, our reporter alone, and the checks side by side in one worker.
 */
function suiteConfig(collector: Collector, provided: ProvidedRun): Parameters<typeof createVitest>[1] {
  return {
    root: packageRoot,
    config: false,
    dir: join(packageRoot, 'dist', 'suites'),
    // One file registers every check (suites/run.suite.ts): areas run side by side.
    include: ['run.suite.js'],
    exclude: [],
    watch: false,
    reporters: [collector],
    // (The ProvidedContext augmentation in suites/register.ts types inject(); vitest/node
    // does not see it through its re-export, hence the cast.)
    provide: { conformance: provided } as unknown as Record<string, never>,
    pool: 'threads',
    isolate: false,
    // One worker: the HTTP layer bounds requests in flight per process, so one process
    // keeps --concurrency an honest bound on what the target sees.
    maxWorkers: 1,
    fileParallelism: false,
    sequence: { concurrent: true, shuffle: false },
    // Checks wait on their requests, and the HTTP client bounds those in flight (--concurrency):
    // every check may be under way at once, so no chain of requests waits for a slot held by a
    // check that is itself only waiting.
    maxConcurrency: 100_000,
    // Every request has its own timeout and every traversal a budget, so no check can run
    // forever; but a check may wait long, queued behind others' requests on a large remote
    // target (a full run can legitimately take hours). This only catches a real hang.
    testTimeout: 24 * 3600 * 1000,
    hookTimeout: 60_000,
    passWithNoTests: false,
    silent: true,
    // The suite is compiled JavaScript (dist/): the worker imports it natively, as it does
    // when the package is installed under node_modules, instead of having vite transform
    // every module in the main thread and send it over (about a third of a second).
    server: { deps: { external: [compiledSuite()] } },
  };
}

/** The result of each check, in their order: as reported, else an error of the suite (or of the interruption). */
function everyResult(checks: readonly Check[], collector: Collector, signal: AbortSignal | undefined): CheckResult[] {
  return checks.map(
    (c) =>
      collector.results.get(resultKey(c)) ??
      (signal?.aborted
        ? errorResult(resultHead(c), 'INTERRUPTED', 'the run was stopped before this check finished')
        : errorResult(resultHead(c), 'SUITE_BUG', 'the check did not run (see the suite errors)')),
  );
}

/**
 * A run of the checks through vitest: the gate and the stop wired to the signal, vitest created
 * (its logger's signal handlers taken off as it adds them) and started unless stopped meanwhile,
 * an unhandled rejection made an error of the suite, vitest closed; then every check's result.
 */
export async function runSuite(options: SuiteRunOptions): Promise<SuiteRun> {
  const { settings, checks } = options;
  const collector = new Collector(checks, options.onResult, options.signal);
  const provided: ProvidedRun = { settings, selected: checks.map(resultKey), schemas: schemaDocuments() };
  const cacheDir = join(tmpdir(), 'conformance-vite-cache');
  mkdirSync(cacheDir, { recursive: true });
  const savedExitCode = process.exitCode;
  const rejections = process.listeners('unhandledRejection');
  // Opened before vitest starts, so the worker's question always finds it listening.
  const gate = new Gate(settings.runId);
  let vitest: Vitest | undefined;
  // Nothing more starts: a worker not yet at the gate hears stop there, checks under way hear it
  // on the stop channel (all of them run side by side: suites/register.ts), and vitest skips the
  // checks not yet started. Before vitest exists, the gate alone says it (start is skipped).
  let over = false;
  const stopRun = (): void => {
    gate.say(GATE.stop);
    if (!vitest || over) return;
    const stop = new BroadcastChannel(stopChannel(settings.runId));
    stop.postMessage('stop');
    stop.close();
    void vitest.cancelCurrentRun('keyboard-input');
  };
  if (options.signal?.aborted) stopRun();
  options.signal?.addEventListener('abort', stopRun);
  (options.gate ?? Promise.resolve(true)).then(
    (go) => {
      if (!go || gate.decision === GATE.stop) return stopRun();
      collector.muted = false;
      gate.say(GATE.go);
    },
    () => stopRun(),
  );
  // vitest's logger exits the process 1 ms after SIGINT or SIGTERM; the CLI's own handler stops
  // the run instead, so that its cleanup and report happen (options.signal). Those handlers are
  // taken off as vitest adds them, before any signal can reach them (a signal is an event of
  // the loop; the removal is a microtask of the moment they are added).
  const dropSignalHandlers = (event: string | symbol, listener: (...args: unknown[]) => void): void => {
    if (event === 'SIGINT' || event === 'SIGTERM') queueMicrotask(() => process.off(event, listener));
  };
  process.on('newListener', dropSignalHandlers);
  vitest = await createVitest(
    'test',
    suiteConfig(collector, provided),
    { cacheDir, logLevel: 'silent', server: { watch: null } },
    { stdout: discardingSink(), stderr: discardingSink() },
  )
    .catch((err: unknown) => {
      options.signal?.removeEventListener('abort', stopRun);
      gate.close();
      throw err;
    })
    .finally(() => process.off('newListener', dropSignalHandlers));
  // Its logger also prints an unhandled rejection of this process (into the sink, now) and
  // exits at once: the run would end without a word, a cleanup or a report. The rejection is a
  // failure of the suite instead, in the report, and the run goes on to clean up.
  for (const l of process.listeners('unhandledRejection')) if (!rejections.includes(l)) process.off('unhandledRejection', l);
  const onRejection = (reason: unknown): void => {
    collector.suiteErrors.push(`unhandled rejection: ${firstLine(reason instanceof Error ? reason.message : String(reason))}`);
  };
  process.on('unhandledRejection', onRejection);
  try {
    // Stopped (a closed gate, Ctrl-C) while vitest was being created: nothing starts.
    if (gate.decision !== GATE.stop) await vitest.start();
  } catch (e) {
    collector.suiteErrors.push(`vitest could not run the suite: ${firstLine((e as Error).message)}`);
  } finally {
    options.signal?.removeEventListener('abort', stopRun);
    gate.close();
    over = true;
    try {
      await vitest.close();
    } finally {
      process.off('unhandledRejection', onRejection);
      // vitest sets process.exitCode from its own verdict; ours is computed from the levels.
      process.exitCode = savedExitCode;
    }
  }
  const results = everyResult(checks, collector, options.signal);
  return {
    results,
    suiteErrors: collector.suiteErrors,
    secrets: [...collector.secrets],
    logins: collector.logins,
    ...(collector.load ? { load: collector.load } : {}),
  };
}
