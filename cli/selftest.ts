// `conformance selftest` (the suite against its mutants and variants) and
// `conformance traceability` (docs/traceability.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { liveProgress, parseFlags, UsageError, type Io } from './io.js';
import { refuseUnknownNames } from './serve.js';
import type { CliMain } from '../selftest/index.js';

const SELFTEST_HELP = `Usage: conformance selftest [--fault NAME]... [--variant NAME]... [--quick] [--explore-only] [--parallel N] [--seed N]
  Runs the suite, through the CLI, against every mutant (a reference server that breaks one rule)
  and every legitimate variant (one that makes a choice the contract allows), or only those named.
  --quick        run the checks in-process instead of through the CLI (faster; not the user's path)
  --explore-only the list mutants alone, each run with the list checks' fixed probes off: prints,
                 for each list rule, how many of its mutants the model and the exploration
                 catch on their own (exit 0: a figure, not a verdict)
  --parallel N   runs at once (default: the number of cores, 2 to 8)
  --seed N       the servers' and the suite's seed (default 3)
  Exit 0 when every MUST mutant exits 1 caught by a check it names, every SHOULD/INFO mutant is
  caught, and every variant exits 0 warning only where it declares.`;

/**
 * `conformance selftest`: every mutant and variant through the CLI's own path (exit 1 unless
 * every mutant is caught with the right exit code and every variant exits 0 with only the
 * warnings it declares).
 */
/** `main`: the CLI's, which the selftest drives (handed in: this file is loaded by it). */
export async function selftest(args: string[], io: Io, main: CliMain): Promise<number> {
  const { values } = parseFlags(
    {
      args,
      options: {
        fault: { type: 'string', multiple: true },
        variant: { type: 'string', multiple: true },
        parallel: { type: 'string' },
        seed: { type: 'string' },
        quick: { type: 'boolean' },
        'explore-only': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    'selftest',
  );
  if (values.help) {
    io.out(SELFTEST_HELP);
    return 0;
  }
  if (values.parallel !== undefined && !/^[1-9]\d*$/.test(values.parallel))
    throw new UsageError(`--parallel must be a whole number from 1 (got '${values.parallel}')`, 'selftest');
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw new UsageError(`--seed must be a whole number (got '${values.seed}')`, 'selftest');
  // Loaded here: the selftest and the servers are heavy, and only this command needs them.
  const { renderExploredFigure, renderSelftest, runSelftest } = await import('../selftest/index.js');
  const { FAULTS, VARIANTS } = await import('../server/index.js');
  refuseUnknownNames({ fault: values.fault ?? [], variant: values.variant ?? [] }, { fault: FAULTS, variant: VARIANTS }, 'selftest');
  // Only what was named: --fault alone runs no variant, and the other way round.
  const named = values.fault || values.variant;
  let done = 0;
  // A status line where someone watches a terminal; elsewhere (a pipe, CI) a plain line when
  // a row ends, at most one every 10 s, so a long selftest is not silent.
  const live = liveProgress(io);
  let saidAt = Date.now();
  const progress = (text: string): void => {
    if (live) return live(text);
    if (Date.now() - saidAt < (io.heartbeatMs ?? 10_000)) return;
    saidAt = Date.now();
    io.out(`  ${text}`);
  };
  const exploreOnly = values['explore-only'] ?? false;
  if (exploreOnly && values.quick) throw new UsageError('--explore-only runs through the CLI: it does not go with --quick', 'selftest');
  const result = await runSelftest({
    main,
    // With --explore-only: the mutants of list rules, no variant.
    faults: named ? (values.fault ?? []) : exploreOnly ? FAULTS.filter((f) => f.caughtBy.some((id) => id.startsWith('list.'))).map((f) => f.name) : undefined,
    variants: named ? (values.variant ?? []) : exploreOnly ? [] : undefined,
    exploreOnly,
    ...(values.parallel ? { parallel: Number(values.parallel) } : {}),
    ...(values.seed ? { seed: Number(values.seed) } : {}),
    quick: values.quick ?? false,
    onMutant: (m) => progress(`${++done} done; mutant ${m.fault.name}: ${m.outcome} (exit ${m.exitCode})`),
    onVariant: (v) => progress(`${++done} done; variant ${v.name}: exit ${v.exitCode}`),
  });
  live?.(undefined);
  if (exploreOnly) {
    io.out(renderExploredFigure(result.mutants).trimEnd());
    return 0;
  }
  io.out(renderSelftest(result).trimEnd());
  if (values.quick) io.out('(--quick: the checks ran in-process, not through the CLI)');
  const clean =
    result.mutants.every((m) => m.outcome === 'caught') &&
    result.variants.every(
      (v) => v.exitCode === 0 && v.mustFailures.length === 0 && v.errors.length === 0 && v.warnings.every((w) => v.declaredWarnings.includes(w)),
    );
  return clean ? 0 : 1;
}

/** `conformance traceability [FILE]`: writes the matrix; exit 1 when it has gaps. */
export async function traceability(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags({ args, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } }, 'traceability');
  if (values.help) {
    io.out('Usage: conformance traceability [FILE]   write the statements-to-checks matrix (default docs/traceability.md); exit 1 when it has gaps');
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`traceability takes one FILE (got ${positionals.length})`, 'traceability');
  const [{ loadStatements, renderTraceability, traceabilityProblems }, { checkDefinitions }] = await Promise.all([
    import('../lib/runner/index.js'),
    import('../suites/index.js'),
  ]);
  const statements = loadStatements();
  const problems = traceabilityProblems(statements, checkDefinitions);
  for (const p of problems) io.err(`traceability: ${p}`);
  const out = resolve(io.cwd, positionals[0] ?? 'docs/traceability.md');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, renderTraceability(statements, checkDefinitions));
  io.out(`traceability matrix written to ${out}`);
  return problems.length ? 1 : 0;
}
