// The legal space: random combinations of choices the contract leaves open (selftest/legal-
// space.ts), each a reference server the suite, run through the CLI, must pass: exit 0, no
// MUST failure, no error of the suite. Variants prove one choice at a time; this proves they
// also hold together. A fixed seed, few runs (each is a whole run of the suite); for more:
//
//   LEGAL_SPACE_RUNS=50 npx vitest run test/legal-space.test.ts     (LEGAL_SPACE_SEED=n for another draw)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { CONFORMING, VARIANTS, type Behaviour } from '../server/index.js';
import { inLegalSpace, LEGAL_SPACE, operationsFor } from '../selftest/legal-space.js';
import { runThroughCli, sampleFor } from '../selftest/index.js';

const RUNS = Number(process.env.LEGAL_SPACE_RUNS ?? 4);
const SEED = Number(process.env.LEGAL_SPACE_SEED ?? 20261122);

/** One option per dimension, shown by dimension name (what fast-check prints on a failure). */
const combination = fc.record(
  Object.fromEntries(
    LEGAL_SPACE.map((d) => [d.name, 'options' in d ? fc.constantFrom(...d.options) : fc.integer({ min: d.range[0], max: d.range[1] }).map(d.make)]),
  ) as Record<string, fc.Arbitrary<Partial<Behaviour>>>,
);

describe('the legal space', () => {
  it("holds every variant's choice, and every option is a real knob value", () => {
    for (const v of VARIANTS) expect(inLegalSpace(v.behaviour), v.name).toBe(true);
    for (const d of LEGAL_SPACE) {
      const options = 'options' in d ? d.options : [d.make(d.range[0]), d.make(d.range[1])];
      for (const o of options) for (const k of Object.keys(o)) expect(k in CONFORMING, `${d.name}: ${k}`).toBe(true);
    }
  });

  it(
    `a random combination of legitimate choices exits 0 with no MUST failure (${RUNS} runs, seed ${SEED})`,
    async () => {
      const seen: string[] = [];
      await fc.assert(
        fc.asyncProperty(combination, async (choice) => {
          const behaviour = Object.assign({}, ...Object.values(choice)) as Partial<Behaviour>;
          const run = await runThroughCli(main, { behaviour }, sampleFor(operationsFor(behaviour)), SEED);
          seen.push(`${(run.ms / 1000).toFixed(1)} s`);
          const must = run.results
            .filter((r) => r.level === 'MUST' && r.outcome === 'fail')
            .map((r) => `${r.id}${r.operation ? ` [${r.operation}]` : ''}: ${r.reason ?? ''}`);
          const errors = [...run.suiteErrors, ...run.results.filter((r) => r.outcome === 'error').map((r) => `${r.id}: ${r.reason ?? ''}`)];
          // The combination itself is printed by fast-check as the counterexample.
          expect({ exit: run.code, must, errors, tail: run.code === 0 ? [] : run.output.slice(-5) }).toEqual({ exit: 0, must: [], errors: [], tail: [] });
        }),
        // A run is a whole run of the suite: no shrinking (each step would cost one more).
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      console.log(`legal space: ${seen.length} combinations, ${seen.join(', ')} each`);
    },
    60_000 + RUNS * 45_000,
  );
});
