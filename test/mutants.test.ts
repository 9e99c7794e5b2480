// The selftest (npm run selftest) as part of npm test: every mutant caught by a check it
// names, with evidence; no mutant survives or is caught only by other checks; every
// legitimate variant draws no MUST failure and only the warnings it declares.
import { beforeAll, describe, expect, it } from 'vitest';
import { FAULTS, VARIANTS } from '../server/index.js';
import { checkDefinitions } from '../suites/index.js';
import { mutationScore, renderSelftest, runSelftest, type MutantRow, type VariantRow } from '../selftest/index.js';

let mutants: MutantRow[];
let variants: VariantRow[];

beforeAll(async () => {
  ({ mutants, variants } = await runSelftest());
  // The table, for whoever reads the test log.
  console.log(renderSelftest({ mutants, variants }));
}, 240_000);

describe('mutants', () => {
  it('the catalogue has at least 45, and names only checks that exist', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(45);
    const ids = new Set(checkDefinitions.map((c) => c.id));
    for (const f of FAULTS) for (const id of f.caughtBy) expect(ids.has(id), `${f.name} names ${id}`).toBe(true);
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
  });

  it('every check is shown failing against at least one mutant', () => {
    const named = new Set(FAULTS.flatMap((f) => f.caughtBy));
    expect(checkDefinitions.map((c) => c.id).filter((id) => !named.has(id))).toEqual([]);
  });

  it('mutation score 100%: none survives, none is caught wrongly, no error of the suite', () => {
    expect(mutants.filter((m) => m.outcome !== 'caught').map((m) => `${m.fault.name}: ${m.outcome}`)).toEqual([]);
    expect(mutationScore(mutants)).toBe(1);
  });

  it('every check a mutant names fails against it, with evidence', () => {
    for (const m of mutants) {
      for (const id of m.fault.caughtBy) {
        const failed = m.results.filter((r) => r.id === id && r.outcome === 'fail');
        expect(failed.length, `${id} must fail against ${m.fault.name}`).toBeGreaterThan(0);
        for (const r of failed) {
          expect(r.evidence?.expected, `${id} vs ${m.fault.name}: expected`).toBeTruthy();
          expect(r.evidence?.actual, `${id} vs ${m.fault.name}: actual`).toBeTruthy();
          expect(r.evidence?.request, `${id} vs ${m.fault.name}: request`).toMatch(/^curl -i -X (GET|POST|DELETE) '/);
          if (id.startsWith('list.')) expect(r.operation).toBeTruthy();
        }
      }
    }
  });
});

describe('legitimate variants', () => {
  it('include every choice the contract allows that issue 5 names', () => {
    const names = VARIANTS.map((v) => v.name);
    for (const n of ['validation-422', 'limit-over-100-refused', 'hard-limit-422', 'auth-403', 'timestamps-no-millis', 'timestamps-offset', 'extra-fields', 'no-links', 'empty-page-total-1', 'custom-api-platform']) expect(names).toContain(n);
  });

  it('draw no MUST failure and no error, and only the warnings they declare', () => {
    for (const v of variants) {
      expect(v.mustFailures.map((r) => `${v.name}: ${r.id} [${r.operation ?? ''}] ${r.reason}`)).toEqual([]);
      expect(v.errors.map((r) => `${v.name}: ${r.id}: ${r.reason}`)).toEqual([]);
      expect([...v.warnings].sort(), v.name).toEqual([...v.declaredWarnings].sort());
    }
  });
});
