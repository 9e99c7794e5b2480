// The suite's own proof: run the suite against every fault of the reference server (each a
// mutant that breaks one rule) and every legitimate variant (a choice the contract allows),
// through the path users run: the CLI's main() with --base-url, its exit code, and the
// results.json it writes. A MUST mutant is caught when a check it names fails and the run
// exits 1; a SHOULD/INFO mutant when a check it names fails and the exit code is what the
// levels of the failures say; a variant must exit 0, warning only where it declares.
//
// Cost: each row is a whole run of the suite through vitest (lib/vitest/vitest-run.ts), about 2.5
// CPU-s of which most is start-up; 101 rows take about 145 s on 2 cores. --quick runs only
// the checks, in-process (not the user's path). Runs go in parallel in this process (vitest's
// Node API allows several instances at once).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ledgerPath, RunContext, runCheck, type Check, type CheckResult, cleanUp } from '../lib/runner/index.js';
import { isDeepStrictEqual } from 'node:util';
import { endpointsOf, loadCatalogSpec } from '../lib/contract/index.js';
import type { Level } from '../lib/evidence/index.js';
import { notRun, unanswered } from '../reporters/console.js';
import { exitFor } from '../reporters/verdict.js';
import type { RunReport } from '../reporters/model.js';
import { FAULTS, resolveBehaviour, startReferenceServer, VARIANTS, type Fault, type ReferenceServerOptions, type Variant } from '../server/index.js';
import { CHANGES_STORE, checkDefinitions, listChecks, staticChecks, storeChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { FOUND_BY, type Source } from '../suites/list/explore.js';
import { NO_5XX } from '../suites/levels.js';

/**
 * List operations every run covers: a plain list, the empty one, a nested by-release one.
 * A fault or variant adds what it needs (`operations`: orders, over 10,000 records and slow
 * to traverse, only where the hard offset limit is the point; customers for a fault of that
 * operation alone).
 */
export const SAMPLE = ['accounts', 'catalog-rules', 'hierarchy-nodes@by-release'];

export function sampleFor(extra: readonly string[] = []): string[] {
  return [...new Set([...SAMPLE, ...extra])];
}

/** A fault's level: MUST when a check it names is a MUST (the run must then exit 1), else the highest named. */
export function faultLevel(f: Pick<Fault, 'caughtBy'>): Level {
  const levels = f.caughtBy.map((id) => checkDefinitions.find((c) => c.id === id)?.level);
  return levels.includes('MUST') ? 'MUST' : levels.includes('SHOULD') ? 'SHOULD' : 'INFO';
}

/** Faults whose server is the conforming one or a variant's: they would prove nothing. */
export function faultsEqualToVariants(): string[] {
  const servers = [{ name: 'CONFORMING', b: resolveBehaviour({}) }, ...VARIANTS.map((v) => ({ name: v.name, b: resolveBehaviour({ variants: [v.name] }) }))];
  return FAULTS.flatMap((f) => {
    const b = resolveBehaviour({ faults: [f.name] });
    return servers.filter((s) => isDeepStrictEqual(s.b, b)).map((s) => `${f.name} = ${s.name}`);
  });
}

/** What one run of the suite gave: the CLI's exit code and results (or, quick, the checks' own). */
export interface RunOutcome {
  code: number;
  results: CheckResult[];
  suiteErrors: string[];
  /** What the CLI printed (for a row that went wrong). */
  output: string[];
  ms: number;
}

const TOKEN = 'selftest-token-7d3f91';

/**
 * The time buffer of a selftest run, in seconds. The servers here are the selftest's own: their
 * records a day old, their store consistent at once but for list-visibility-delayed's lists (a
 * second late). A state check still waits the buffer out, asking once more at its end, before a
 * list that disagrees is a violation (spec/contract/README.md#states): two seconds cover the late
 * one, where the default minute made each mutant that breaks a list wait a minute.
 */
export const SELFTEST_TIME_BUFFER_S = 2;

async function withServer(
  options: Partial<ReferenceServerOptions>,
  seed: number,
  work: (url: string, dir: string) => Promise<Omit<RunOutcome, 'ms'>>,
): Promise<RunOutcome> {
  const started = performance.now();
  const server = await startReferenceServer({ token: TOKEN, seed, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'conformance-selftest-'));
  try {
    return { ...(await work(server.url, dir)), ms: Math.round(performance.now() - started) };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The suite against a reference server built from `options`, as a user runs it: main() with
 * --base-url, --token, --seed, --operation, --report-dir, --time-buffer and --replays 0, an empty environment and a
 * working directory of its own (no config file, no CONFORMANCE_* variables leak in). And with
 * --change-settings: the server is the selftest's own, so the checks of the store's page length run.
 */
export function runThroughCli(
  main: CliMain,
  options: Partial<ReferenceServerOptions>,
  operations: readonly string[],
  seed: number,
  extra: readonly string[] = [],
): Promise<RunOutcome> {
  return withServer(options, seed, async (url, dir) => {
    const output: string[] = [];
    const report = join(dir, 'report');
    // A variant about logging in is run logged in, with a key made for it (Variant.credentials).
    const login = VARIANTS.some((v) => v.credentials && options.variants?.includes(v.name)) ? await applicationKey(url) : undefined;
    const auth = login ? ['--client-id', login.client_id] : ['--token', TOKEN];
    const env = login ? { CONFORMANCE_CLIENT_SECRET: login.client_secret } : {};
    const io = { out: (l: string) => output.push(l), err: (l: string) => output.push(l), env, cwd: dir, isTTY: false };
    const code = await main(
      [
        ...['--base-url', url, ...auth, '--seed', String(seed), '--operation', operations.join(','), '--report-dir', report],
        // No replays: they label failures and change no outcome, and would make each row 2-3 times as long (docs/usage.md#replays).
        ...['--change-settings', '--time-buffer', String(SELFTEST_TIME_BUFFER_S), '--replays', '0', ...extra],
      ],
      io,
    );
    const file = join(report, 'results.json');
    const run = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RunReport) : undefined;
    // A mutant may keep the run from deleting what it made; its server is gone after this row,
    // so a kept ledger would only send `conformance cleanup` to a dead address.
    if (run) rmSync(dirname(ledgerPath(run.runId)), { recursive: true, force: true });
    return { code, results: run?.results ?? [], suiteErrors: run?.suiteErrors ?? (code === 2 ? output.filter((l) => /conformance: /.test(l)) : []), output };
  });
}

/** An Application Key made on a selftest server with its own token: the client credentials a run logs in with. */
async function applicationKey(url: string): Promise<{ client_id: string; client_secret: string }> {
  const res = await fetch(`${url}/v2/application-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'application_key', name: 'selftest-login' } }),
  });
  return ((await res.json()) as { data: { client_id: string; client_secret: string } }).data;
}

/**
 * The quick way, for a look while editing checks: every check through runCheck in-process
 * (no vitest, no report), the exit code computed by the CLI's exitFor. Not what users run.
 */
export function runChecksDirectly(options: Partial<ReferenceServerOptions>, operations: readonly string[], seed: number): Promise<RunOutcome> {
  return withServer(options, seed, async (baseUrl, dir) => {
    const endpoints = endpointsOf(loadCatalogSpec()).filter((e) => operations.includes(e.key));
    const settings = {
      baseUrl,
      token: TOKEN,
      seed,
      runId: 'selftest',
      timeoutMs: 10_000,
      maxBodyBytes: 16 * 1024 * 1024,
      concurrency: 8,
      ledgerPath: join(dir, 'ledger.jsonl'),
      pagination: {
        endpoints,
        parents: loadCatalogSpec().parents,
        budget: 1000,
        timeBufferMs: SELFTEST_TIME_BUFFER_S * 1000,
        requireAllEndpoints: false,
        startedAt: Date.now(),
      },
      changeSettings: true,
    };
    const run = new RunContext(settings);
    try {
      const checks: Check[] = [...staticChecks, ...expandListChecks(listChecks, endpoints), ...storeChecks];
      // The checks that change the store's settings once the others are done, as a run does (suites/register.ts).
      const results = await Promise.all(checks.filter((c) => !CHANGES_STORE.has(c.id)).map((c) => runCheck(c, run, NO_5XX)));
      results.push(...(await Promise.all(checks.filter((c) => CHANGES_STORE.has(c.id)).map((c) => runCheck(c, run, NO_5XX)))));
      await cleanUp(settings);
      return { code: exitFor(results, [], false).code, results, suiteErrors: [], output: [] };
    } finally {
      await run.close();
    }
  });
}

export interface MutantRow {
  fault: Fault;
  level: Level;
  /**
   * caught: a check it names failed and the exit code is what the failures' levels say (1 for
   * a MUST mutant); wrong-exit: a named check failed but the exit code says otherwise;
   * caught-wrongly: only other checks failed; survived: none did; error: the suite could not
   * do its work (exit 2, or an error outcome).
   */
  outcome: 'caught' | 'wrong-exit' | 'caught-wrongly' | 'survived' | 'error';
  exitCode: number;
  expectedExit: number;
  /** Expected checks that failed. */
  caughtBy: string[];
  /** Other checks that failed too (a fault can break what depends on its rule). */
  alsoFailed: string[];
  results: CheckResult[];
  run: RunOutcome;
}

export interface VariantRow {
  variant: Variant;
  name: string;
  exitCode: number;
  mustFailures: CheckResult[];
  /** SHOULD/INFO checks that failed, and whether that is what the variant declares. */
  warnings: string[];
  declaredWarnings: readonly string[];
  errors: CheckResult[];
  results: CheckResult[];
  run: RunOutcome;
}

/** Runs `work` over `items`, at most `n` at a time, keeping order. */
export async function pool<T, R>(items: readonly T[], n: number, work: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}

/**
 * The CLI's main(), handed in by whoever runs the selftest (the `selftest` command, a test): the
 * selftest sits below the CLI, which is what it drives.
 */
export type CliMain = (argv: string[], io: CliIo) => Promise<number>;

/** What the selftest gives main() to write to (the part of the CLI's Io it fills in). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  isTTY: boolean;
}

export interface SelftestOptions {
  /** Runs each server through it; needed unless `quick`. */
  main?: CliMain;
  faults?: readonly string[];
  variants?: readonly string[];
  seed?: number;
  /** Runs at once (default: the cores, 2 to 8). */
  parallel?: number;
  /** runChecksDirectly instead of the CLI (quick, but not the path users run). */
  quick?: boolean;
  /**
   * The list checks judge only the exploration's drawn requests (--explore-only): what the
   * model and the exploration catch alone (renderExploredFigure). Through the CLI only.
   */
  exploreOnly?: boolean;
  onMutant?: (row: MutantRow) => void;
  onVariant?: (row: VariantRow) => void;
}

export function mutantRow(fault: Fault, run: RunOutcome): MutantRow {
  const { results } = run;
  const level = faultLevel(fault);
  const failed = [...new Set(results.filter((r) => r.outcome === 'fail').map((r) => r.id))];
  const caughtBy = fault.caughtBy.filter((id) => failed.includes(id));
  const alsoFailed = failed.filter((id) => !fault.caughtBy.includes(id));
  const expectedExit = results.some((r) => r.outcome === 'fail' && r.level === 'MUST') ? 1 : 0;
  // A fault that stops answering leaves checks not run, or cut short, by the outage: its consequence, not errors of the suite.
  const outage = fault.stops === true && results.some(notRun);
  const errored =
    run.code === 2 ||
    run.suiteErrors.length > 0 ||
    results.length === 0 ||
    results.some((r) => r.outcome === 'error' && !(outage && (notRun(r) || unanswered(r))));
  const outcome = errored
    ? 'error'
    : !caughtBy.length
      ? failed.length
        ? 'caught-wrongly'
        : 'survived'
      : run.code !== expectedExit || (level === 'MUST' && run.code !== 1)
        ? 'wrong-exit'
        : 'caught';
  return { fault, level, outcome, exitCode: run.code, expectedExit, caughtBy, alsoFailed, results, run };
}

export function variantRow(variant: Variant, run: RunOutcome): VariantRow {
  const { results } = run;
  return {
    variant,
    name: variant.name,
    exitCode: run.code,
    mustFailures: results.filter((r) => r.level === 'MUST' && r.outcome === 'fail'),
    warnings: [...new Set(results.filter((r) => r.level !== 'MUST' && r.outcome === 'fail').map((r) => r.id))],
    declaredWarnings: variant.warns,
    errors: results.filter((r) => r.outcome === 'error'),
    results,
    run,
  };
}

export async function runSelftest(options: SelftestOptions = {}): Promise<{ mutants: MutantRow[]; variants: VariantRow[]; ms: number }> {
  const started = performance.now();
  const seed = options.seed ?? 3;
  // At most 8: each run holds a vitest instance (~150 MB) and a SIGINT listener of main().
  const parallel = options.parallel ?? Math.min(8, Math.max(2, availableParallelism()));
  const { main } = options;
  if (!options.quick && !main) throw new Error('runSelftest: main is needed to run through the CLI (or quick: true)');
  const runOne = options.quick
    ? runChecksDirectly
    : (o: Partial<ReferenceServerOptions>, ops: readonly string[], s: number) => runThroughCli(main!, o, ops, s, options.exploreOnly ? ['--explore-only'] : []);
  const faults = FAULTS.filter((f) => !options.faults || options.faults.includes(f.name));
  const variants = VARIANTS.filter((v) => !options.variants || options.variants.includes(v.name));
  // One queue for both, so the pool stays full to the end.
  const jobs: Array<{ fault: Fault } | { variant: Variant }> = [...faults.map((fault) => ({ fault })), ...variants.map((variant) => ({ variant }))];
  const rows = await pool(jobs, parallel, async (job) => {
    if ('fault' in job) {
      const row = mutantRow(job.fault, await runOne({ faults: [job.fault.name] }, sampleFor(job.fault.operations), seed));
      options.onMutant?.(row);
      return row;
    }
    const row = variantRow(job.variant, await runOne({ variants: [job.variant.name] }, sampleFor(job.variant.operations), seed));
    options.onVariant?.(row);
    return row;
  });
  return {
    mutants: rows.filter((r): r is MutantRow => 'fault' in r),
    variants: rows.filter((r): r is VariantRow => 'variant' in r),
    ms: Math.round(performance.now() - started),
  };
}

/** The share of mutants caught (all, or those of some levels). */
export function mutationScore(rows: readonly MutantRow[], levels: readonly Level[] = ['MUST', 'SHOULD', 'INFO']): number {
  const some = rows.filter((r) => levels.includes(r.level));
  return some.length ? some.filter((r) => r.outcome === 'caught').length / some.length : 1;
}

function scoreLine(what: string, rows: readonly MutantRow[]): string {
  const n = (o: MutantRow['outcome']): number => rows.filter((r) => r.outcome === o).length;
  if (rows.length === 0) return `${what}: none run`;
  return `${what}: ${(mutationScore(rows) * 100).toFixed(1)}% (${n('caught')}/${rows.length} caught; ${n('survived')} survived; ${n('caught-wrongly')} caught wrongly; ${n('wrong-exit')} with the wrong exit code; ${n('error')} with errors of the suite)`;
}

/** A mutant of a list rule: a fault one of whose named checks is a list check. */
function listRules(f: Fault): string[] {
  return f.caughtBy.filter((id) => id.startsWith('list.'));
}

export interface ExploredFigure {
  /** The check of a list rule. */
  rule: string;
  /** Mutants that name it, and of those, the ones caught (a check they name failed) with the fixed probes off. */
  mutants: number;
  caught: number;
  /** Of the mutants that name it, those written for exploration (Fault.explored), and how many of them were caught. */
  explored: number;
  exploredCaught: number;
  missed: string[];
}

/**
 * From a selftest run with --explore-only: for each list rule, how many of the mutants that
 * name it the model and the exploration catch on their own.
 */
export function exploredFigure(rows: readonly MutantRow[]): ExploredFigure[] {
  const out = new Map<string, ExploredFigure>();
  for (const m of rows) {
    for (const rule of listRules(m.fault)) {
      let x = out.get(rule);
      if (!x) out.set(rule, (x = { rule, mutants: 0, caught: 0, explored: 0, exploredCaught: 0, missed: [] }));
      const caught = m.caughtBy.length > 0;
      x.mutants++;
      if (caught) x.caught++;
      else x.missed.push(m.fault.name);
      if (m.fault.explored) {
        x.explored++;
        if (caught) x.exploredCaught++;
      }
    }
  }
  return [...out.values()].sort((a, b) => a.rule.localeCompare(b.rule));
}

/**
 * How many of the mutants caught with the fixed probes off each way of asking caught (a failure
 * of a check the mutant names whose requests it broke: the reason's `found by …` or `also by …`,
 * FOUND_BY); a mutant caught several ways counts under each.
 */
export function caughtByWay(rows: readonly MutantRow[]): Record<Source, number> {
  const out = Object.fromEntries(Object.keys(FOUND_BY).map((k) => [k, 0])) as Record<Source, number>;
  for (const m of rows) {
    const reasons = m.results.filter((r) => r.outcome === 'fail' && m.fault.caughtBy.includes(r.id)).map((r) => r.reason ?? '');
    // `found by <way>`, or `also by <way>` for the other ways whose requests broke the rule too.
    for (const [way, words] of Object.entries(FOUND_BY) as Array<[Source, string]>) if (reasons.some((r) => r.includes(`by ${words}`))) out[way]++;
  }
  return out;
}

/** The figure `conformance selftest --explore-only` prints. */
export function renderExploredFigure(rows: readonly MutantRow[]): string {
  const fig = exploredFigure(rows);
  const w = Math.max(...fig.map((x) => x.rule.length), 4);
  const lines = [`${'rule'.padEnd(w)}  caught with the fixed probes off   (mutants written for exploration)   missed`];
  for (const x of fig)
    lines.push(
      `${x.rule.padEnd(w)}  ${`${x.caught}/${x.mutants}`.padEnd(33)}  ${(x.explored ? `${x.exploredCaught}/${x.explored}` : '-').padEnd(34)}  ${x.missed.join(', ') || '-'}`,
    );
  const mutants = rows.filter((m) => listRules(m.fault).length);
  const caught = mutants.filter((m) => m.caughtBy.length > 0).length;
  lines.push('', `list mutants caught by the model and the exploration alone: ${caught}/${mutants.length}`);
  const ways = caughtByWay(mutants);
  lines.push(
    `  of them caught by ${(Object.entries(FOUND_BY) as Array<[Source, string]>).map(([way, words]) => `${words} ${ways[way]}`).join(', ')} (a mutant caught several ways counts under each)`,
  );
  return `${lines.join('\n')}\n`;
}

/** The table `conformance selftest` prints. */
export function renderSelftest(result: { mutants: MutantRow[]; variants: VariantRow[]; ms?: number }): string {
  const { mutants, variants } = result;
  const w = Math.max(...mutants.map((m) => m.fault.name.length), 8);
  const lines = mutants.length ? [`${'mutant'.padEnd(w)}  level   exit  outcome          expected check(s) → caught by`] : [];
  for (const m of mutants) {
    lines.push(
      `${m.fault.name.padEnd(w)}  ${m.level.padEnd(6)}  ${`${m.exitCode}${m.exitCode === m.expectedExit ? '' : `≠${m.expectedExit}`}`.padEnd(4)}  ${m.outcome.padEnd(15)}  ${m.fault.caughtBy.join(', ')} → ${m.caughtBy.join(', ') || '(none)'}${m.alsoFailed.length ? `  (also failed: ${m.alsoFailed.join(', ')})` : ''}`,
    );
    if (m.outcome === 'error')
      for (const l of [...m.run.suiteErrors, ...m.results.filter((r) => r.outcome === 'error').map((r) => `${r.id}: ${r.reason ?? ''}`)].slice(0, 3))
        lines.push(`${''.padEnd(w)}    ! ${l.split('\n')[0]}`);
  }
  if (mutants.length)
    lines.push(
      '',
      scoreLine(
        'mutation score, MUST mutants (exit 1 expected)',
        mutants.filter((m) => m.level === 'MUST'),
      ),
      scoreLine(
        'mutation score, SHOULD/INFO mutants',
        mutants.filter((m) => m.level !== 'MUST'),
      ),
      '',
    );
  const v = Math.max(...variants.map((x) => x.name.length), 8);
  if (variants.length) lines.push(`${'variant'.padEnd(v)}  exit  MUST failures  warnings (SHOULD/INFO)`);
  for (const x of variants) {
    const undeclared = x.warnings.filter((id) => !x.declaredWarnings.includes(id));
    lines.push(
      `${x.name.padEnd(v)}  ${String(x.exitCode).padEnd(4)}  ${String(x.mustFailures.length).padEnd(13)}  ${x.warnings.join(', ') || '-'}${undeclared.length ? `  (undeclared: ${undeclared.join(', ')})` : ''}${x.errors.length || x.run.suiteErrors.length ? `  ERRORS: ${x.errors.length + x.run.suiteErrors.length}` : ''}`,
    );
    for (const f of x.mustFailures) lines.push(`${''.padEnd(v)}    ✗ ${f.id}${f.operation ? ` [${f.operation}]` : ''}: ${f.reason ?? ''}`);
    for (const e of [...x.run.suiteErrors, ...x.errors.map((r) => `${r.id}: ${r.reason ?? ''}`)].slice(0, 3))
      lines.push(`${''.padEnd(v)}    ! ${e.split('\n')[0]}`);
  }
  const bad = variants.filter((x) => x.exitCode !== 0 || x.mustFailures.length || x.errors.length).length;
  if (variants.length) lines.push('', `variants: ${variants.length - bad}/${variants.length} exit 0 with no MUST failure (expected: all)`);
  const clash = faultsEqualToVariants();
  if (clash.length) lines.push(`mutants that are no mutant (the same server as a variant): ${clash.join('; ')}`);
  if (result.ms !== undefined) lines.push(`(${mutants.length + variants.length} runs in ${(result.ms / 1000).toFixed(1)} s)`);
  return `${lines.join('\n')}\n`;
}
