// The proof the issue asks for: every check passes against the reference server; every
// fault is caught by the checks it names, with evidence; every legitimate variant passes
// every MUST check; and every check is shown failing against at least one fault.
import { describe, expect, it } from 'vitest';
import { FAULTS, VARIANTS } from '../server/index.js';
import { checkDefinitions, staticChecks } from '../suites/index.js';
import { byId, runAgainst } from './support.js';

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

const isListFault = (f: (typeof FAULTS)[number]): boolean => f.caughtBy.some((id) => id.startsWith('list.'));

describe('every fault is caught by the checks it names (pagination faults: test/pagination.test.ts)', () => {
  it.each(FAULTS.filter((f) => !isListFault(f)).map((f) => [f.name, f] as const))('%s', async (_name, fault) => {
    const { results } = await runAgainst({ faults: [fault.name] });
    const r = byId(results);
    for (const id of fault.caughtBy) {
      const result = r.get(id)!;
      expect(result, `${id} must exist`).toBeDefined();
      expect(result.outcome, `${id} against ${fault.name}: ${result.reason ?? ''}`).toBe('fail');
      // Evidence: what was expected, what came back, and the request to reproduce it.
      expect(result.evidence?.expected).toBeTruthy();
      expect(result.evidence?.actual).toBeTruthy();
      expect(result.evidence?.request).toMatch(/^curl -i -X (GET|POST|DELETE) '/);
      expect(result.evidence?.exchanges.length).toBeGreaterThan(0);
    }
    // A fault is a target bug, never a failure of the suite.
    expect(results.filter((x) => x.outcome === 'error').map((x) => `${x.id}: ${x.reason}`)).toEqual([]);
  });
});

describe('legitimate variants pass every MUST check', () => {
  it.each(VARIANTS.map((v) => [v.name, v] as const))('%s', async (_name, variant) => {
    const { results, cleanup } = await runAgainst({ variants: [variant.name] });
    const mustFailures = results.filter((r) => r.level === 'MUST' && r.outcome !== 'pass' && r.outcome !== 'skip');
    expect(mustFailures.map((r) => `${r.id}: ${r.outcome} ${r.reason ?? ''}`)).toEqual([]);
    expect(results.filter((r) => r.outcome === 'error')).toEqual([]);
    // The SHOULD/INFO warnings it draws are exactly the ones it declares.
    const warnings = results.filter((r) => r.outcome === 'fail').map((r) => r.id).sort();
    expect(warnings).toEqual([...variant.warns].sort());
    expect(cleanup.leftovers).toEqual([]);
  });
});

describe('the fault catalogue covers the checks', () => {
  it('names only checks that exist', () => {
    const ids = new Set(checkDefinitions.map((c) => c.id));
    for (const f of FAULTS) for (const id of f.caughtBy) expect(ids.has(id), `${f.name} names ${id}`).toBe(true);
  });

  it('shows every check failing against at least one fault', () => {
    const caught = new Set(FAULTS.flatMap((f) => f.caughtBy));
    expect(checkDefinitions.map((c) => c.id).filter((id) => !caught.has(id))).toEqual([]);
  });

  it('has unique fault and variant names', () => {
    const names = [...FAULTS.map((f) => f.name), ...VARIANTS.map((v) => `variant:${v.name}`)];
    expect(new Set(names).size).toBe(names.length);
  });
});
