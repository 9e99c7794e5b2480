// The project's own tests (npm test). The conformance suite itself is not run from here: it
// is driven by the CLI through vitest's Node API (lib/vitest/vitest-run.ts).
//
// Three tiers, one run: `npm test` runs them all; `npm run test:quick` runs `unit` alone, for an
// edit loop (well under 30 s on two cores).
// - unit: in-process and quick: no CLI child, no browser, no packing, no selftest;
// - proofs: the suite proved against its mutants, its variants and mutated answers;
// - integration: everything else, the CLI as users run it included. A new test file lands here
//   unless it is named in one of the two lists, so no file is in no tier.
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const UNIT = [
  'catalogue',
  'config',
  'contract',
  'explore-create',
  'flags',
  'http',
  'ids',
  'imports',
  'instant',
  'junit',
  'limiter',
  'list-rules',
  'merge',
  'oauth',
  'pairwise',
  'illegal',
  'progress',
  'verify-logic',
  'reporters',
  'rule-levels',
  'schema',
  'sdk',
  'server',
  'server-errors',
  'server-limits',
  'traceability',
  'walks',
  'warnings',
].map((name) => `test/${name}.test.ts`);

const PROOFS = ['mutants', 'legal-space', 'fuzz-answers', 'explore'].map((name) => `test/${name}.test.ts`);

/**
 * The slowest files, slowest first (each a minute or more on two cores; mutants several). Vitest
 * orders the tiers by name (integration, proofs, unit) and, before it has timings of its own (a
 * clean clone, CI), each tier's files by size: the selftest of mutants.test.ts, the longest, then
 * started last, and the run waited for it alone at the end. Started first, it runs beside the rest.
 */
const SLOW_FIRST = ['mutants', 'fuzz-answers', 'explore', 'cli', 'parents', 'preflight', 'query-readings', 'legal-space', 'transport'].map(
  (name) => `/test/${name}.test.ts`,
);

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification): number => {
      const i = SLOW_FIRST.findIndex((end) => f.moduleId.endsWith(end));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: SlowFirst },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores on CI: the slow end-to-end files (CLI runs, npm pack) get one each.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'proofs', include: PROOFS } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...UNIT, ...PROOFS] } },
    ],
  },
});
