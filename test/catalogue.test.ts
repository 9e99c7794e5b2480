// Every check of Delete, Create and Errors passes against the reference server, and the run
// leaves nothing behind. (Mutants and variants: test/mutants.test.ts.)
import { describe, expect, it } from 'vitest';
import { staticChecks } from '../suites/index.js';
import { runAgainst } from './support.js';

describe('against the reference server', () => {
  it('every check passes and the run leaves nothing behind', async () => {
    const { results, cleanup } = await runAgainst({});
    const notPassing = results.filter((r) => r.outcome !== 'pass').map((r) => `${r.id}: ${r.outcome} ${r.reason ?? ''}`);
    expect(notPassing).toEqual([]);
    expect(results).toHaveLength(staticChecks.length);
    expect(cleanup.leftovers).toEqual([]);
    expect(cleanup.deleted).toBeGreaterThan(0);
  });
});
