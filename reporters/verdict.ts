// Turning results into a verdict: baselines (known failures that do not fail the run, and
// stale entries to clean), certification (can this run certify the product?), and the exit
// code, computed from levels.
import { readFileSync } from 'node:fs';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { CheckResult } from '../lib/runner/index.js';
import { ConfigError, DEFAULT_REQUEST_BUDGET } from '../lib/configuration/index.js';
import { failsRun, type BaselineReport, type DeclaredEmpty, type OutcomeSettings } from './model.js';

export interface BaselineEntry {
  id: string;
  /** Absent: every operation of the check. */
  operation?: string;
  reason?: string;
}

export function readBaseline(path: string): BaselineEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read baseline ${path}: ${(e as Error).message.split('\n')[0]}`);
  }
  const known = (doc as { known?: unknown } | null)?.known;
  if (!Array.isArray(known) || known.some((k) => !k || typeof (k as BaselineEntry).id !== 'string')) {
    throw new ConfigError(`${path}: a baseline is a mapping with 'known:', a list of { id, operation? } entries`);
  }
  return known as BaselineEntry[];
}

/** The baseline file for the current failures (MUST and SHOULD), sorted, one entry each. */
export function renderBaseline(results: readonly CheckResult[]): string {
  const known = results
    .filter((r) => r.outcome === 'fail' && r.level !== 'INFO')
    .map((r) => ({ id: r.id, ...(r.operation ? { operation: r.operation } : {}), reason: r.reason ?? '' }))
    .sort((a, b) => `${a.id} ${a.operation ?? ''}`.localeCompare(`${b.id} ${b.operation ?? ''}`));
  return `# Known failures: they are reported but do not fail the run (conformance --baseline FILE).\n# Remove an entry once its check passes; the run lists such entries as stale.\n${toYaml({ known })}`;
}

const matches = (e: BaselineEntry, r: CheckResult): boolean => e.id === r.id && (e.operation === undefined || e.operation === r.operation);

/**
 * Whether a baseline lists this failure (it will not count). applyBaseline marks the results
 * after the run; the console's live lines need to know as each result comes.
 */
export function inBaseline(entries: readonly BaselineEntry[], r: CheckResult): boolean {
  return r.outcome === 'fail' && entries.some((e) => matches(e, r));
}

/** Marks baselined failures on the results (returns new results) and finds stale entries. */
export function applyBaseline(results: CheckResult[], entries: readonly BaselineEntry[], file: string): { results: CheckResult[]; report: BaselineReport } {
  let known = 0;
  const out = results.map((r) => {
    if (inBaseline(entries, r)) {
      known++;
      return { ...r, baselined: true };
    }
    return r;
  });
  const stale = entries
    .filter((e) => {
      const ran = results.filter((r) => matches(e, r));
      return ran.length > 0 && ran.every((r) => r.outcome === 'pass');
    })
    .map((e) => ({ id: e.id, ...(e.operation ? { operation: e.operation } : {}) }));
  return { results: out, report: { file, known, stale } };
}

/**
 * The exit code (spec/contract/README.md#levels): 1 when a MUST check failed (or a SHOULD
 * check, with --strict), else 2 when the suite could not do its work (any error), else 0. A
 * MUST failure is a verdict whatever else went wrong, so it wins over an incomplete run; the
 * reason still says the results are incomplete. Baselined failures do not count.
 */
export function exitFor(results: readonly CheckResult[], suiteErrors: readonly string[], strict: boolean): { code: 0 | 1 | 2; reason: string } {
  const counted = results.filter((r) => !r.baselined);
  const errors = counted.filter((r) => r.outcome === 'error').length + suiteErrors.length;
  const incomplete = errors > 0 ? `; the suite could not complete ${errors} check(s) or step(s), so the results are incomplete` : '';
  // The same rule junit.xml writes a <failure> by (failsRun), so the two cannot disagree.
  const failing = results.filter((r) => failsRun(r, strict));
  const must = failing.filter((r) => r.level === 'MUST').length;
  const should = counted.filter((r) => r.outcome === 'fail' && r.level === 'SHOULD').length;
  const known = results.length - counted.length;
  const baselined = known ? ` (${known} known failure(s) baselined)` : '';
  if (must > 0) return { code: 1, reason: `exit 1: ${must} MUST check(s) failed${baselined}${incomplete}` };
  if (failing.length > 0) return { code: 1, reason: `exit 1: ${should} SHOULD check(s) failed and --strict is on${baselined}${incomplete}` };
  if (errors > 0) return { code: 2, reason: `exit 2: the suite could not complete ${errors} check(s) or step(s); the results are incomplete` };
  const warn = should > 0 ? ` (${should} SHOULD warning(s); --strict would fail them)` : '';
  // A skipped MUST check did not pass: the line says so rather than claim it did.
  const skipped = counted.filter((r) => r.level === 'MUST' && r.outcome === 'skip').length;
  const lead = skipped > 0 ? `no MUST check failed; ${skipped} could not be exercised (skipped)` : 'every MUST check passed';
  return { code: 0, reason: `exit 0: ${lead}${warn}${baselined}` };
}

/** The exit of a certification run: a run that passed but cannot certify exits 1, saying why. */
export function certifiedExit(
  exit: { code: 0 | 1 | 2; reason: string },
  certification: Pick<Certification, 'certifiable' | 'why'> | undefined,
): { code: 0 | 1 | 2; reason: string } {
  return certification && !certification.certifiable && exit.code === 0 ? { code: 1, reason: `exit 1: not certifiable: ${certification.why}` } : exit;
}

/**
 * Certification: every MUST check passed (a baseline does not excuse one), the suite did all
 * its work, and no MUST check was skipped except on an operation the vendor declares absent,
 * or, for want of records, on one the vendor declares legitimately empty and the run saw empty.
 */
export interface CertificationScope {
  declaredAbsent: readonly string[];
  /** Operations the vendor declares legitimately empty (--empty, key `empty`). */
  declaredEmpty?: readonly string[];
  /** Lists beyond the contract's 26: reported, but they do not gate certification. */
  extraOperations: readonly string[];
  /**
   * Why the run's settings cannot certify (certificationRefuses): narrowed, baselined, the
   * exploration off, a request budget below the default. Empty: they can.
   */
  refusedBy?: readonly string[];
}

/**
 * What a certificate says was certified: `full` (every list operation of the contract and both
 * write operations exercised), or `partial`, with the list operations the vendor declared
 * absent or empty.
 */
export interface Profile {
  name: 'full' | 'partial';
  absent: string[];
  empty: string[];
}

export function profileOf(declaredAbsent: readonly string[], declaredEmpty: readonly string[]): Profile {
  return { name: declaredAbsent.length || declaredEmpty.length ? 'partial' : 'full', absent: [...declaredAbsent], empty: [...declaredEmpty] };
}

/** A profile in words: `full`, or `partial (absent: a, b; empty: c)`. */
export function describeProfile(p: Profile): string {
  if (p.name === 'full') return 'full (all 26 list operations and both write operations)';
  const parts = [p.absent.length ? `absent: ${p.absent.join(', ')}` : '', p.empty.length ? `empty: ${p.empty.join(', ')}` : ''].filter(Boolean);
  return `partial (${parts.join('; ')})`;
}

/**
 * Why a run with these settings cannot certify, each reason in words (none: it can). A
 * certification runs every check (no --check, --grep, --operation or --shard), judges every
 * failure (no --baseline), draws requests (--explore above 0) and sends at least the default
 * request budget to each list operation. The run's verdict and `conformance verify` both ask this.
 */
export function certificationRefuses(s: OutcomeSettings, run: { shard?: string; baseline?: string }): string[] {
  const narrowed = [
    s.checks?.length ? '--check' : '',
    s.grep !== undefined ? '--grep' : '',
    s.operations?.length ? '--operation' : '',
    run.shard ? '--shard' : '',
  ].filter(Boolean);
  return [
    ...(narrowed.length ? [`the run was narrowed by ${narrowed.join(', ')}: a certification runs every check`] : []),
    ...(run.baseline ? [`the run had a baseline (${run.baseline}): a certification judges every failure`] : []),
    ...(s.explore === 0 ? ['the run drew no requests (--explore 0): a certification explores'] : []),
    ...(s.exploreOnly ? ['the run had the fixed probes off (--explore-only)'] : []),
    ...(s.requestBudget !== undefined && s.requestBudget < DEFAULT_REQUEST_BUDGET
      ? [`the request budget was ${s.requestBudget}, below the default ${DEFAULT_REQUEST_BUDGET}: a certification sends no fewer`]
      : []),
  ];
}

export interface Certification {
  certifiable: boolean;
  why: string;
  /** The operations declared absent (--absent), as given. */
  declaredAbsent: string[];
  /** The operations declared empty, each with what the run saw and what it could not exercise. */
  declaredEmpty: DeclaredEmpty[];
  profile: Profile;
}

/**
 * A skip for want of records (the list checks mark it: CheckContext.skipForRecords): what an
 * empty list cannot exercise, and the only skips a declared-empty list excuses.
 */
const wantsRecords = (r: CheckResult): boolean => r.outcome === 'skip' && r.wantsRecords === true;

/** `n` record(s). */
const records = (n: number): string => `${n} record${n === 1 ? '' : 's'}`;

/** What the run saw of an operation declared empty (see DeclaredEmpty). */
export function observeEmpty(results: readonly CheckResult[], operation: string): DeclaredEmpty {
  const mine = results.filter((r) => r.operation === operation);
  const notExercised = mine.filter(wantsRecords).map((r) => ({ id: r.id, level: r.level, reason: r.reason ?? '' }));
  // The checks say how many records they saw the list hold (CheckResult.records).
  const seen = mine.filter((r) => r.records !== undefined);
  const most = seen.reduce<CheckResult | undefined>((a, r) => (a && a.records! >= r.records! ? a : r), undefined);
  if (most) return { operation, observed: most.records! > 0 ? 'records' : 'empty', evidence: `${most.id} saw ${records(most.records!)}`, notExercised };
  const why = !mine.length
    ? 'no check ran on it'
    : mine.some((r) => r.absent)
      ? 'its collection answered 404 (absent)'
      : 'no result says whether it holds records';
  return { operation, observed: 'unknown', evidence: why, notExercised };
}

/** Most reasons, and most checks per reason, that a refusal names; the rest are counted. */
const NAMED_REASONS = 3;
const NAMED_PER_REASON = 6;

/**
 * Skipped checks grouped by their reason, each reason said once after the checks that share it
 * (`a, b [op]: reason`): the checks of one setting left off share one reason, which names the
 * flag that runs them.
 */
function skipsByReason(skipped: readonly CheckResult[]): string {
  const groups = new Map<string, string[]>();
  for (const r of skipped) {
    const reason = r.reason ?? 'no reason given';
    const ids = groups.get(reason) ?? [];
    ids.push(`${r.id}${r.operation ? ` [${r.operation}]` : ''}`);
    groups.set(reason, ids);
  }
  const said = [...groups].slice(0, NAMED_REASONS).map(([reason, ids]) => {
    const more = ids.length > NAMED_PER_REASON ? ` and ${ids.length - NAMED_PER_REASON} more` : '';
    return `${ids.slice(0, NAMED_PER_REASON).join(', ')}${more}: ${reason}`;
  });
  const rest = groups.size > NAMED_REASONS ? `; ${groups.size - NAMED_REASONS} other reason(s)` : '';
  return `${said.join('; ')}${rest}`;
}

export function certify(results: readonly CheckResult[], suiteErrors: readonly string[], scope: CertificationScope): Certification {
  const { declaredAbsent } = scope;
  const declaredEmpty = (scope.declaredEmpty ?? []).map((op) => observeEmpty(results, op));
  const seenEmpty = new Set(declaredEmpty.filter((d) => d.observed === 'empty').map((d) => d.operation));
  const why: string[] = [...(scope.refusedBy ?? [])];
  const must = results.filter((r) => r.level === 'MUST' && !(r.operation && scope.extraOperations.includes(r.operation)));
  const failed = must.filter((r) => r.outcome === 'fail');
  const errors = results.filter((r) => r.outcome === 'error').length + suiteErrors.length;
  const excused = (r: CheckResult): boolean =>
    r.operation !== undefined &&
    ((declaredAbsent.includes(r.operation) && r.outcome === 'skip' && r.absent === true) || (seenEmpty.has(r.operation) && wantsRecords(r)));
  const skipped = must.filter((r) => r.outcome === 'skip' && !excused(r));
  const claimed = declaredAbsent.filter((op) => results.some((r) => r.operation === op && r.id === 'list.endpoint.present' && r.outcome === 'pass'));
  const filled = declaredEmpty.filter((d) => d.observed === 'records');
  if (failed.length) why.push(`${failed.length} MUST check(s) failed${failed.some((r) => r.baselined) ? ' (baselines do not count in certification)' : ''}`);
  if (errors) why.push(`${errors} error(s) of the suite: the run is incomplete`);
  if (skipped.length) {
    const declared = scope.declaredEmpty?.length ? 'a declared-absent operation or a declared-empty list' : 'a declared-absent operation';
    why.push(`${skipped.length} MUST check(s) skipped for a reason other than ${declared} (${skipsByReason(skipped)})`);
    // Skipped for want of records on lists the run saw empty and nobody declared: --empty is
    // the way to say so, if they are empty on purpose. A list seen holding records is not
    // named: declaring it would only be refused.
    const undeclared = [
      ...new Set(skipped.flatMap((r) => (r.operation !== undefined && wantsRecords(r) && !scope.declaredEmpty?.includes(r.operation) ? [r.operation] : []))),
    ];
    const seenEmptyToo = undeclared.filter((op) => observeEmpty(results, op).observed === 'empty');
    if (seenEmptyToo.length)
      why.push(
        `if ${seenEmptyToo.length > 1 ? 'these lists are' : 'this list is'} legitimately empty, declare ${seenEmptyToo.length > 1 ? 'them' : 'it'}${scope.declaredEmpty?.length ? ' too' : ''}: --empty ${seenEmptyToo.join(',')}`,
      );
  }
  if (claimed.length) why.push(`declared absent but served: ${claimed.join(', ')}`);
  // A declaration the run contradicts does not certify: the certificate would say a list is
  // empty, and its checks not exercised, when the product holds records there.
  if (filled.length)
    why.push(
      `declared empty but holding records: ${filled.map((d) => `${d.operation} (${d.evidence})`).join('; ')}; drop --empty for ${filled.length > 1 ? 'them' : 'it'}`,
    );
  const report = { declaredAbsent: [...declaredAbsent], declaredEmpty, profile: profileOf(declaredAbsent, scope.declaredEmpty ?? []) };
  if (why.length) return { certifiable: false, why: why.join('; '), ...report };
  const notes = [
    ...(declaredAbsent.length ? [`declared absent: ${declaredAbsent.join(', ')}`] : []),
    ...declaredEmpty.map((d) => {
      const gated = d.notExercised.filter((n) => n.level === 'MUST' && !scope.extraOperations.includes(d.operation));
      return d.observed === 'empty'
        ? `declared empty: ${d.operation}, seen empty; ${gated.length} MUST check(s) could not be exercised on it (${gated.map((n) => n.id).join(', ') || 'none'})`
        : `declared empty: ${d.operation}, but ${d.evidence}`;
    }),
  ];
  const spared = must.filter((r) => r.outcome === 'skip' && excused(r));
  const kinds = [spared.some((r) => r.absent) ? 'declared-absent' : '', spared.some((r) => !r.absent) ? 'declared-empty' : ''].filter(Boolean).join(' or ');
  const lead = spared.length ? `every MUST check passed, but for ${spared.length} that a ${kinds} operation could not exercise` : 'every MUST check passed';
  return { certifiable: true, why: [lead, ...notes].join('; '), ...report };
}
