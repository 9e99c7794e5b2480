// One plain results model for a run; every renderer is a pure function of it.
import type { CheckResult } from '../lib/check.js';
import type { CleanupReport } from '../lib/cleanup.js';
import type { Level, Outcome } from '../lib/outcome.js';

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
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** The resolved configuration, token masked. */
  config: Record<string, unknown>;
  results: CheckResult[];
  /** Failures of the suite itself outside any check. */
  suiteErrors: string[];
  cleanup: CleanupReport;
  /** Known failures that did not fail the run (--baseline). */
  baseline?: BaselineReport;
  /** Certification mode (--certify). */
  certification?: { certifiable: boolean; why: string };
  /** How list traversals were bounded and compared (absent when no list check ran). */
  lists?: ListsReport;
  summary: Summary;
  exit: { code: 0 | 1 | 2; reason: string };
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

export { LEVELS };
