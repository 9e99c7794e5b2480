// One plain results model for a run; every renderer is a pure function of it.
import type { CheckResult, CleanupReport } from '../lib/runner/index.js';
import type { Level, Outcome } from '../lib/evidence/index.js';
import type { LoadReport } from '../lib/transport/index.js';

export interface RunReport {
  tool: { name: 'conformance'; version: string };
  runId: string;
  seed: number;
  /** sha256 over spec/: the schemas and catalog the run judged by. */
  contractDigest: string;
  target: { baseUrl: string; embedded: boolean };
  /** The product the vendor declares (--product, --product-version). */
  product?: { name?: string; version?: string };
  /** This run's part of a sharded run (`i/n`). */
  shard?: string;
  /** A merged report (`conformance merge`): the shards it joins, each with its own run and seed. */
  shards?: ShardOfReport[];
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** The resolved configuration, token masked (lib/configuration/config.ts maskedConfig; read it through settingsOf). */
  config: Record<string, unknown>;
  results: ReportedResult[];
  /** Failures of the suite itself outside any check. */
  suiteErrors: string[];
  cleanup: CleanupReport;
  /** Known failures that did not fail the run (--baseline). */
  baseline?: BaselineReport;
  /** Certification mode (--certify). */
  certification?: {
    certifiable: boolean;
    why: string;
    declaredAbsent?: string[];
    declaredEmpty?: DeclaredEmpty[];
    profile?: { name: 'full' | 'partial'; absent: string[]; empty: string[] };
  };
  /** How list traversals were bounded and compared (absent when no list check ran). */
  lists?: ListsReport;
  /** How hard the run pushed the target (lib/transport/load.ts); absent from a merged report. */
  load?: LoadReport;
  /** With client credentials (--client-id): how many times the run logged in (lib/transport/login.ts). */
  auth?: { logins: number };
  /** The replays of the failed results (--replays); absent when none was replayed. */
  replays?: ReplaysReport;
  summary: Summary;
  exit: { code: 0 | 1 | 2; reason: string };
}

/**
 * A result as results.json holds it: a failure or an error carries the command that re-runs it
 * (reporters/json.ts). A merged report keeps each shard's own, made with that shard's seed.
 */
export type ReportedResult = CheckResult & { replay?: string; replays?: ReplayCount };

/**
 * What the replays of a failed result found (cli/replays.ts): each a run of the check alone,
 * with the run's seed and settings. It labels the failure; it never changes its outcome.
 */
export interface ReplayCount {
  /** Replays that came to a verdict on the rule (pass or fail). */
  runs: number;
  /** Of those, the ones that failed again as the run did: with its status where both had one. */
  reproduced: number;
  /** Of those, the ones that failed otherwise: the rule broken again, answered with another status (a 500 where the run saw a 200). */
  otherwise?: number;
  /** With otherwise: the statuses those replays failed on, each once. */
  otherStatuses?: number[];
  /** Replays that ended in an error of the suite (a timeout, an outage): no verdict, not in runs. */
  errors?: number;
  /** Replays that skipped (what the check needs was not found): no verdict, not in runs. */
  skipped?: number;
}

/** The replays of a run as a whole: how many passes, and what they cost the target. */
export interface ReplaysReport {
  /** --replays: the most times each failed result is run again. */
  limit: number;
  /** Passes made (each runs every failed result once, side by side). */
  passes: number;
  /** Requests the passes' checks sent (their cleanups' apart). */
  requests: number;
  durationMs: number;
}

/** What a failure's replays found, as the summary counts it: one class each (the label says more). */
export type ReplayClass = 'reproduced' | 'otherwise' | 'flaky' | 'noVerdict';

/** Reproduced at least once as in the run, else failed again only otherwise, else flaky (every verdict a pass), else no verdict at all. */
export function replayClass(x: ReplayCount): ReplayClass {
  return x.reproduced ? 'reproduced' : x.otherwise ? 'otherwise' : x.runs ? 'flaky' : 'noVerdict';
}

/**
 * A failure's label: `reproduced k of N`, `flaky: did not reproduce` (every replay passed), and
 * the replays that failed otherwise (`failed otherwise m of N (status 500, not 200)`), after
 * `reproduced k of N; ` or `did not reproduce as it was; `; none without replays.
 */
export function replayLabel(r: { replays?: ReplayCount; evidence?: { status?: number } }): string | undefined {
  const x = r.replays;
  if (!x) return undefined;
  const none = [x.errors ? `${x.errors} replay(s) ended in an error of the suite` : '', x.skipped ? `${x.skipped} skipped` : ''].filter(Boolean);
  const errors = none.length ? ` (${none.join(', ')})` : '';
  const otherwise = `failed otherwise ${x.otherwise} of ${x.runs} (status ${(x.otherStatuses ?? []).join(', ')}, not ${r.evidence?.status ?? '?'})`;
  switch (replayClass(x)) {
    case 'noVerdict':
      return `not replayed to a verdict${errors}`;
    case 'reproduced':
      return `reproduced ${x.reproduced} of ${x.runs}${x.otherwise ? `; ${otherwise}` : ''}${errors}`;
    // Failing every time, but not as in the run, is no flakiness: another failure came.
    case 'otherwise':
      return `did not reproduce as it was; ${otherwise}${errors}`;
    case 'flaky':
      return `flaky: did not reproduce${errors}`;
  }
}

/** The replays of several reports (shards) as one: passes as the most any made, requests and time added up. */
export function mergeReplays(reports: ReadonlyArray<Pick<RunReport, 'replays'>>): ReplaysReport | undefined {
  const all = reports.flatMap((r) => (r.replays ? [r.replays] : []));
  if (!all.length) return undefined;
  return {
    limit: Math.max(...all.map((x) => x.limit)),
    passes: Math.max(...all.map((x) => x.passes)),
    requests: all.reduce((n, x) => n + x.requests, 0),
    durationMs: all.reduce((n, x) => n + x.durationMs, 0),
  };
}

export interface ShardOfReport {
  shard: string;
  runId: string;
  seed: number;
}

/**
 * The settings of RunReport.config that decide outcomes, typed. The config comes from a file
 * when a report is merged, so a value of the wrong type reads as absent rather than trusted.
 */
export interface OutcomeSettings {
  configFile?: string;
  timeoutMs?: number;
  maxBodyBytes?: number;
  strict?: boolean;
  requestBudget?: number;
  timeBufferSeconds?: number;
  explore?: number;
  exploreOnly?: boolean;
  defaultPageLength?: number;
  requireAllEndpoints?: boolean;
  /** The run's selection: --check, --grep, --operation. */
  checks?: string[];
  grep?: string;
  operations?: string[];
  /** List operations declared legitimately empty (--empty): they change what certifies. */
  empty?: string[];
  /** Catalog overrides from the config file (operations, parents). */
  catalog?: unknown;
}

export function settingsOf(report: Pick<RunReport, 'config'>): OutcomeSettings {
  const c = report.config ?? {};
  const num = (k: string): number | undefined => (typeof c[k] === 'number' ? c[k] : undefined);
  const bool = (k: string): boolean | undefined => (typeof c[k] === 'boolean' ? c[k] : undefined);
  const str = (k: string): string | undefined => (typeof c[k] === 'string' ? c[k] : undefined);
  const strs = (k: string): string[] | undefined =>
    Array.isArray(c[k]) && (c[k] as unknown[]).every((x) => typeof x === 'string') ? [...(c[k] as string[])] : undefined;
  const out: OutcomeSettings = {
    configFile: str('configFile'),
    timeoutMs: num('timeoutMs'),
    maxBodyBytes: num('maxBodyBytes'),
    strict: bool('strict'),
    requestBudget: num('requestBudget'),
    timeBufferSeconds: num('timeBufferSeconds'),
    explore: num('explore'),
    exploreOnly: bool('exploreOnly'),
    defaultPageLength: num('defaultPageLength'),
    requireAllEndpoints: bool('requireAllEndpoints'),
    checks: strs('checks'),
    grep: str('grep'),
    operations: strs('operations'),
    empty: strs('empty'),
    catalog: c.catalog,
  };
  for (const k of Object.keys(out) as Array<keyof OutcomeSettings>) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * Whether a result fails the run: a MUST failure, or a SHOULD failure under --strict, that no
 * baseline lists. The same rule as exitFor (reporters/verdict.ts), result by result: junit.xml
 * writes a <failure> for exactly these, so that CI reads the same verdict as the exit code.
 */
export function failsRun(r: CheckResult, strict: boolean): boolean {
  return r.outcome === 'fail' && !r.baselined && (r.level === 'MUST' || (strict && r.level === 'SHOULD'));
}

/**
 * What a result reads as in the console and report.html: `fail` only when it fails the run
 * (failsRun); any other failure (a SHOULD failure without --strict, an INFO note, a baselined
 * failure) is a `warn`, as the level lines of the console call a SHOULD failure.
 */
export type Verdict = Outcome | 'warn';

export function verdictOf(r: CheckResult, strict: boolean): Verdict {
  return r.outcome === 'fail' && !failsRun(r, strict) ? 'warn' : r.outcome;
}

/** Why a failure that is reported does not fail the run (junit.xml, report.html). */
export function whyNotCounted(report: Pick<RunReport, 'baseline'>, r: CheckResult): string {
  if (r.baselined) return `known ${r.level} failure, listed in the baseline${report.baseline ? ` ${report.baseline.file}` : ''}: reported, not counted`;
  if (r.level === 'SHOULD') return 'SHOULD warning: it does not fail the run (--strict would)';
  return 'INFO note: it never fails the run';
}

export interface BaselineReport {
  file: string;
  /** Failures the baseline lists: reported, not counted. */
  known: number;
  /** Baseline entries whose check now passes: to be removed from the file. */
  stale: Array<{ id: string; operation?: string }>;
}

export interface ListsReport {
  /** Operations whose collection answered 404 (their checks skipped, or failed with --require-all-endpoints). */
  absent: string[];
  /** Traversal comparisons used only records created before this instant (run start minus the buffer). */
  comparedBefore: string;
  timeBufferSeconds: number;
  requestBudget: number;
}

/** Operations reported absent (a 404 on the collection), once each. */
export function absentOperations(results: readonly CheckResult[]): string[] {
  const out = new Set<string>();
  for (const r of results) {
    if (!r.operation) continue;
    if (r.absent) out.add(r.operation);
  }
  return [...out];
}

export type Counts = Record<Outcome, number>;

export interface Summary {
  total: number;
  byOutcome: Counts;
  byLevel: Record<Level, Counts>;
  /**
   * The failures replayed (ReplayCount): failed again as in the run at least once (reproduced),
   * failed again only otherwise, passed every replay (flaky), or no replay came to a verdict.
   * Absent without replays.
   */
  replayed?: { reproduced: number; flaky: number; otherwise?: number; noVerdict?: number };
}

const LEVELS: Level[] = ['MUST', 'SHOULD', 'INFO'];
const zero = (): Counts => ({ pass: 0, fail: 0, error: 0, skip: 0 });

export function summarise(results: readonly ReportedResult[]): Summary {
  const s: Summary = { total: results.length, byOutcome: zero(), byLevel: { MUST: zero(), SHOULD: zero(), INFO: zero() } };
  for (const r of results) {
    s.byOutcome[r.outcome]++;
    s.byLevel[r.level][r.outcome]++;
    if (r.replays) {
      s.replayed ??= { reproduced: 0, flaky: 0 };
      const c = replayClass(r.replays);
      s.replayed[c] = (s.replayed[c] ?? 0) + 1;
    }
  }
  return s;
}

export { LEVELS };

/** A check that could not be exercised on a declared-empty operation. */
export interface NotExercised {
  id: string;
  level: Level;
  reason: string;
}

/** What a certification says of one operation the vendor declared empty. */
export interface DeclaredEmpty {
  operation: string;
  /**
   * What the run saw, by the counts its checks report (CheckResult.records): `empty` (a check
   * read the list and none saw a record), `records` (one saw some: the declaration is wrong, it
   * does not certify), `unknown` (nothing to tell by: the operation was absent, not reached, or
   * not run). Only `empty` excuses skips.
   */
  observed: 'empty' | 'records' | 'unknown';
  /** The result `observed` rests on, in words. */
  evidence: string;
  /** The checks skipped for want of records, every level (only MUST ones gate certification). */
  notExercised: NotExercised[];
}
