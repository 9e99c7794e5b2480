// The suite's own proof: run every check against every fault of the reference server (each a
// mutant that breaks one rule) and every legitimate variant (a choice the contract allows).
// A mutant is caught when a check it names fails, caught wrongly when only other checks
// fail, and survives when no check fails; a variant must draw no MUST failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunContext, runCheck, type Check, type CheckResult } from '../lib/check.js';
import { endpointsOf, loadCatalogSpec, type Endpoint } from '../lib/catalog.js';
import { cleanUp } from '../lib/cleanup.js';
import { FAULTS, startReferenceServer, VARIANTS, type Fault, type ReferenceServerOptions } from '../server/index.js';
import { listChecks, staticChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/pagination/list-check.js';

/**
 * List operations the list checks run on: a plain list, the empty one, a nested by-release
 * one; orders (over 10,000 records, slow to traverse) only where the hard offset limit is the
 * point.
 */
const SAMPLE = ['accounts', 'catalog-rules', 'hierarchy-nodes@by-release'];

function sampleFor(names: readonly string[], all: readonly Endpoint[]): Endpoint[] {
  const withOrders = names.some((n) => /hard-limit/.test(n));
  return all.filter((e) => SAMPLE.includes(e.key) || (withOrders && e.key === 'orders'));
}

export interface MutantRow {
  fault: Fault;
  outcome: 'caught' | 'caught-wrongly' | 'survived' | 'error';
  /** Expected checks that failed. */
  caughtBy: string[];
  /** Other checks that failed too (a fault can break what depends on its rule). */
  alsoFailed: string[];
  results: CheckResult[];
}

export interface VariantRow {
  name: string;
  choice: string;
  mustFailures: CheckResult[];
  /** SHOULD/INFO checks that failed, and whether that is what the variant declares. */
  warnings: string[];
  declaredWarnings: readonly string[];
  errors: CheckResult[];
  results: CheckResult[];
}

const TOKEN = 'selftest-token-7d3f91';

async function runAgainst(options: Partial<ReferenceServerOptions>, endpoints: Endpoint[], seed: number): Promise<CheckResult[]> {
  const server = await startReferenceServer({ token: TOKEN, seed, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'conformance-selftest-'));
  const settings = {
    baseUrl: server.url,
    token: TOKEN,
    seed,
    runId: 'selftest',
    timeoutMs: 10_000,
    maxBodyBytes: 16 * 1024 * 1024,
    concurrency: 8,
    ledgerPath: join(dir, 'ledger.jsonl'),
    pagination: { endpoints, parents: loadCatalogSpec().parents, budget: 1000, timeBufferMs: 60_000, requireAllEndpoints: false, startedAt: Date.now() },
  };
  const run = new RunContext(settings);
  try {
    const checks: Check[] = [...staticChecks, ...expandListChecks(listChecks, endpoints)];
    const results = await Promise.all(checks.map((c) => runCheck(c, run)));
    await cleanUp(settings);
    return results;
  } finally {
    await run.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `work` over `items`, at most `n` at a time, keeping order. */
async function pool<T, R>(items: readonly T[], n: number, work: (t: T) => Promise<R>): Promise<R[]> {
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

export interface SelftestOptions {
  faults?: readonly string[];
  variants?: readonly string[];
  seed?: number;
  parallel?: number;
  onMutant?: (row: MutantRow) => void;
  onVariant?: (row: VariantRow) => void;
}

export async function runSelftest(options: SelftestOptions = {}): Promise<{ mutants: MutantRow[]; variants: VariantRow[] }> {
  const all = endpointsOf(loadCatalogSpec());
  const seed = options.seed ?? 3;
  const parallel = options.parallel ?? 4;
  const faults = FAULTS.filter((f) => !options.faults || options.faults.includes(f.name));
  const variants = VARIANTS.filter((v) => !options.variants || options.variants.includes(v.name));
  const mutants = await pool(faults, parallel, async (fault) => {
    const results = await runAgainst({ faults: [fault.name] }, sampleFor([fault.name, ...fault.caughtBy], all), seed);
    const failed = [...new Set(results.filter((r) => r.outcome === 'fail').map((r) => r.id))];
    const caughtBy = fault.caughtBy.filter((id) => failed.includes(id));
    const alsoFailed = failed.filter((id) => !fault.caughtBy.includes(id));
    const errored = results.some((r) => r.outcome === 'error');
    const outcome = errored ? 'error' : caughtBy.length ? 'caught' : failed.length ? 'caught-wrongly' : 'survived';
    const row: MutantRow = { fault, outcome, caughtBy, alsoFailed, results };
    options.onMutant?.(row);
    return row;
  });
  const variantRows = await pool(variants, parallel, async (v) => {
    const results = await runAgainst({ variants: [v.name] }, sampleFor([v.name], all), seed);
    const row: VariantRow = {
      name: v.name,
      choice: v.choice,
      mustFailures: results.filter((r) => r.level === 'MUST' && r.outcome === 'fail'),
      warnings: [...new Set(results.filter((r) => r.level !== 'MUST' && r.outcome === 'fail').map((r) => r.id))],
      declaredWarnings: v.warns,
      errors: results.filter((r) => r.outcome === 'error'),
      results,
    };
    options.onVariant?.(row);
    return row;
  });
  return { mutants, variants: variantRows };
}

export function mutationScore(rows: readonly MutantRow[]): number {
  return rows.length ? rows.filter((r) => r.outcome === 'caught').length / rows.length : 0;
}

/** The table `npm run selftest` prints. */
export function renderSelftest(result: { mutants: MutantRow[]; variants: VariantRow[] }): string {
  const { mutants, variants } = result;
  const w = Math.max(...mutants.map((m) => m.fault.name.length), 8);
  const lines = [`${'mutant'.padEnd(w)}  outcome          expected check(s) → caught by`];
  for (const m of mutants) {
    lines.push(`${m.fault.name.padEnd(w)}  ${m.outcome.padEnd(15)}  ${m.fault.caughtBy.join(', ')} → ${m.caughtBy.join(', ') || '(none)'}${m.alsoFailed.length ? `  (also failed: ${m.alsoFailed.join(', ')})` : ''}`);
  }
  const score = mutationScore(mutants);
  const wrong = mutants.filter((m) => m.outcome === 'caught-wrongly').length;
  const survived = mutants.filter((m) => m.outcome === 'survived').length;
  const errors = mutants.filter((m) => m.outcome === 'error').length;
  lines.push('', `mutation score: ${(score * 100).toFixed(1)}% (${mutants.length - survived - wrong - errors}/${mutants.length} caught; ${survived} survived; ${wrong} caught wrongly; ${errors} with errors of the suite)`, '');
  const v = Math.max(...variants.map((x) => x.name.length), 8);
  lines.push(`${'variant'.padEnd(v)}  MUST failures  warnings (SHOULD/INFO)`);
  for (const x of variants) {
    const undeclared = x.warnings.filter((id) => !x.declaredWarnings.includes(id));
    lines.push(`${x.name.padEnd(v)}  ${String(x.mustFailures.length).padEnd(13)}  ${x.warnings.join(', ') || '-'}${undeclared.length ? `  (undeclared: ${undeclared.join(', ')})` : ''}${x.errors.length ? `  ERRORS: ${x.errors.length}` : ''}`);
    for (const f of x.mustFailures) lines.push(`${''.padEnd(v)}    ✗ ${f.id}${f.operation ? ` [${f.operation}]` : ''}: ${f.reason ?? ''}`);
  }
  const bad = variants.filter((x) => x.mustFailures.length || x.errors.length).length;
  lines.push('', `variants: ${variants.length - bad}/${variants.length} with no MUST failure (expected: all)`);
  return `${lines.join('\n')}\n`;
}
