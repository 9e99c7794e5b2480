// Turning results into a verdict: baselines (known failures that do not fail the run, and
// stale entries to clean), certification (can this run certify the product?), and the exit
// code, computed from levels.
import { readFileSync } from 'node:fs';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { CheckResult } from '../lib/check.js';
import { ConfigError } from '../lib/config.js';
import type { BaselineReport } from './model.js';

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

/** Marks baselined failures on the results (returns new results) and finds stale entries. */
export function applyBaseline(results: CheckResult[], entries: readonly BaselineEntry[], file: string): { results: CheckResult[]; report: BaselineReport } {
  let known = 0;
  const out = results.map((r) => {
    if (r.outcome === 'fail' && entries.some((e) => matches(e, r))) {
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
 * The exit code (READING.md, "Requirement levels"): 1 when a MUST check failed (or a SHOULD
 * check, with --strict), else 2 when the suite could not do its work (any error), else 0. A
 * MUST failure is a verdict whatever else went wrong, so it wins over an incomplete run; the
 * reason still says the results are incomplete. Baselined failures do not count.
 */
export function exitFor(results: readonly CheckResult[], suiteErrors: readonly string[], strict: boolean): { code: 0 | 1 | 2; reason: string } {
  const counted = results.filter((r) => !r.baselined);
  const errors = counted.filter((r) => r.outcome === 'error').length + suiteErrors.length;
  const incomplete = errors > 0 ? `; the suite could not complete ${errors} check(s) or step(s), so the results are incomplete` : '';
  const must = counted.filter((r) => r.outcome === 'fail' && r.level === 'MUST').length;
  const should = counted.filter((r) => r.outcome === 'fail' && r.level === 'SHOULD').length;
  const known = results.length - counted.length;
  const baselined = known ? ` (${known} known failure(s) baselined)` : '';
  if (must > 0) return { code: 1, reason: `exit 1: ${must} MUST check(s) failed${baselined}${incomplete}` };
  if (strict && should > 0) return { code: 1, reason: `exit 1: ${should} SHOULD check(s) failed and --strict is on${baselined}${incomplete}` };
  if (errors > 0) return { code: 2, reason: `exit 2: the suite could not complete ${errors} check(s) or step(s); the results are incomplete` };
  const warn = should > 0 ? ` (${should} SHOULD warning(s); --strict would fail them)` : '';
  return { code: 0, reason: `exit 0: every MUST check passed${warn}${baselined}` };
}

/**
 * Certification: every MUST check passed (a baseline does not excuse one), the suite did all
 * its work, and no MUST check was skipped except on an operation the vendor declares absent.
 */
export interface CertificationScope {
  declaredAbsent: readonly string[];
  /** Lists beyond the contract's 26: reported, but they do not gate certification. */
  extraOperations: readonly string[];
  /** The run was narrowed (--check, --grep, --operation, --shard): it cannot certify. */
  narrowedBy?: string;
}

export function certify(results: readonly CheckResult[], suiteErrors: readonly string[], scope: CertificationScope): { certifiable: boolean; why: string } {
  const { declaredAbsent } = scope;
  const why: string[] = [];
  if (scope.narrowedBy) why.push(`the run was narrowed by ${scope.narrowedBy}: a certification runs every check`);
  const must = results.filter((r) => r.level === 'MUST' && !(r.operation && scope.extraOperations.includes(r.operation)));
  const failed = must.filter((r) => r.outcome === 'fail');
  const errors = results.filter((r) => r.outcome === 'error').length + suiteErrors.length;
  const skipped = must.filter((r) => r.outcome === 'skip' && !(r.operation && declaredAbsent.includes(r.operation) && r.reason?.startsWith('absent:')));
  const claimed = declaredAbsent.filter((op) => results.some((r) => r.operation === op && r.id === 'list.endpoint.present' && r.outcome === 'pass'));
  if (failed.length) why.push(`${failed.length} MUST check(s) failed${failed.some((r) => r.baselined) ? ' (baselines do not count in certification)' : ''}`);
  if (errors) why.push(`${errors} error(s) of the suite: the run is incomplete`);
  if (skipped.length) {
    const sample = skipped.slice(0, 3).map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}: ${r.reason}`);
    why.push(`${skipped.length} MUST check(s) skipped for a reason other than a declared-absent operation (${sample.join('; ')}${skipped.length > 3 ? '; ...' : ''})`);
  }
  if (claimed.length) why.push(`declared absent but served: ${claimed.join(', ')}`);
  return why.length ? { certifiable: false, why: why.join('; ') } : { certifiable: true, why: `every MUST check passed${declaredAbsent.length ? `; declared absent: ${declaredAbsent.join(', ')}` : ''}` };
}
