// `conformance selftest` (the suite against its mutants and variants) and
// `conformance traceability` (docs/traceability.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadStatements, renderTraceability, traceabilityProblems } from '../lib/traceability.js';
import { renderSelftest, runSelftest } from '../selftest/index.js';
import { checkDefinitions } from '../suites/index.js';
import type { Io } from './io.js';

/** `conformance selftest`: the mutation score and the variants (exit 1 unless 100% and clean). */
export async function selftest(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { fault: { type: 'string', multiple: true }, variant: { type: 'string', multiple: true } } });
  const started = Date.now();
  const result = await runSelftest({
    ...(values.fault ? { faults: values.fault } : {}),
    ...(values.variant ? { variants: values.variant } : {}),
    onMutant: (m) => io.progress?.(`mutant ${m.fault.name}: ${m.outcome}`),
    onVariant: (v) => io.progress?.(`variant ${v.name}: ${v.mustFailures.length} MUST failure(s)`),
  });
  io.progress?.(undefined);
  io.out(renderSelftest(result).trimEnd());
  io.out(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const clean = result.mutants.every((m) => m.outcome === 'caught') && result.variants.every((v) => v.mustFailures.length === 0 && v.errors.length === 0);
  return clean ? 0 : 1;
}

/** `conformance traceability [FILE]`: writes the matrix; exit 1 when it has gaps. */
export function traceability(args: string[], io: Io): number {
  const statements = loadStatements();
  const problems = traceabilityProblems(statements, checkDefinitions);
  for (const p of problems) io.err(`traceability: ${p}`);
  const out = resolve(io.cwd, args[0] ?? 'docs/traceability.md');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, renderTraceability(statements, checkDefinitions));
  io.out(`traceability matrix written to ${out}`);
  return problems.length ? 1 : 0;
}
