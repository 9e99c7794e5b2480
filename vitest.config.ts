// The project's own tests (npm test). The conformance suite itself is not run from here: it
// is driven by the CLI through vitest's Node API (lib/vitest-run.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on CI: the slow end-to-end files (CLI runs, npm pack) get one each.
    maxWorkers: 2,
  },
});
