// One plain results model for a run; every renderer is a pure function of it.
import type { CheckResult } from '../lib/check.js';
import type { Leftover } from '../lib/cleanup.js';
import type { Level, Outcome } from '../lib/outcome.js';

export interface RunReport {
  tool: { name: 'conformance'; version: string };
  runId: string;
  seed: number;
  target: { baseUrl: string; embedded: boolean };
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** The resolved configuration, token masked. */
  config: Record<string, unknown>;
  results: CheckResult[];
  /** Failures of the suite itself outside any check. */
  suiteErrors: string[];
  cleanup: { deleted: number; leftovers: Leftover[] };
  /** How list traversals were bounded and compared (absent when no list check ran). */
  lists?: ListsReport;
  summary: Summary;
  exit: { code: 0 | 1 | 2; reason: string };
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
    if (r.reason?.startsWith('absent:') || (r.id === 'list.endpoint.present' && r.outcome === 'fail' && / is absent$/.test(r.reason ?? ''))) out.add(r.operation);
  }
  return [...out];
}

export type Counts = Record<Outcome, number>;

export interface Summary {
  total: number;
  byOutcome: Counts;
  byLevel: Record<Level, Counts>;
}

const LEVELS: Level[] = ['MUST', 'SHOULD', 'INFO'];
const zero = (): Counts => ({ pass: 0, fail: 0, error: 0, skip: 0 });

export function summarise(results: readonly CheckResult[]): Summary {
  const s: Summary = { total: results.length, byOutcome: zero(), byLevel: { MUST: zero(), SHOULD: zero(), INFO: zero() } };
  for (const r of results) {
    s.byOutcome[r.outcome]++;
    s.byLevel[r.level][r.outcome]++;
  }
  return s;
}

/**
 * The exit code, from outcomes and levels (READING.md, "Requirement levels"): 2 when the suite
 * could not do its work (any error), else 1 when a MUST check failed (or a SHOULD check,
 * with --strict), else 0.
 */
export function exitFor(summary: Summary, suiteErrors: readonly string[], strict: boolean): { code: 0 | 1 | 2; reason: string } {
  const errors = summary.byOutcome.error + suiteErrors.length;
  if (errors > 0) return { code: 2, reason: `exit 2: the suite could not complete ${errors} check(s) or step(s); the results are incomplete` };
  const must = summary.byLevel.MUST.fail;
  const should = summary.byLevel.SHOULD.fail;
  if (must > 0) return { code: 1, reason: `exit 1: ${must} MUST check(s) failed` };
  if (strict && should > 0) return { code: 1, reason: `exit 1: ${should} SHOULD check(s) failed and --strict is on` };
  const warn = should > 0 ? ` (${should} SHOULD warning(s); --strict would fail them)` : '';
  return { code: 0, reason: `exit 0: every MUST check passed${warn}` };
}

export { LEVELS };
