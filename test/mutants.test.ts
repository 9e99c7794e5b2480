// The selftest (npm run selftest) as part of npm test, through the CLI's own path (main() with
// --base-url, its exit code and results.json): every MUST mutant caught by a check it names
// and exit 1; every SHOULD/INFO mutant caught by a check it names, exiting as the levels of
// the failures say; every legitimate variant exit 0 with only the warnings it declares; no
// mutant the same server as a variant. Slow: one whole run of the suite per row (see
// selftest/index.ts for the figures).
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { endpointsOf, loadCatalogSpec } from '../lib/contract/index.js';
import { FAULTS, resolveBehaviour, VARIANTS } from '../server/index.js';
import { checkDefinitions } from '../suites/index.js';
import {
  exploredFigure,
  faultLevel,
  faultsEqualToVariants,
  mutationScore,
  renderExploredFigure,
  renderSelftest,
  runSelftest,
  sampleFor,
  type MutantRow,
  type VariantRow,
} from '../selftest/index.js';

let mutants: MutantRow[];
let variants: VariantRow[];

beforeAll(async () => {
  const result = await runSelftest({ main });
  ({ mutants, variants } = result);
  // The table, for whoever reads the test log.
  console.log(renderSelftest(result));
}, 30 * 60_000);

describe('the catalogue', () => {
  it('has at least 45 mutants with unique names, naming only checks that exist', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(45);
    const ids = new Set(checkDefinitions.map((c) => c.id));
    for (const f of FAULTS) for (const id of f.caughtBy) expect(ids.has(id), `${f.name} names ${id}`).toBe(true);
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
    expect(new Set(VARIANTS.map((v) => v.name)).size).toBe(VARIANTS.length);
  });

  it('names every check in some mutant', () => {
    const named = new Set(FAULTS.flatMap((f) => f.caughtBy));
    expect(checkDefinitions.map((c) => c.id).filter((id) => !named.has(id))).toEqual([]);
  });

  it('has no mutant that is the conforming server or a variant', () => {
    expect(faultsEqualToVariants()).toEqual([]);
  });

  it('declares only list operations that exist', () => {
    const keys = new Set(endpointsOf(loadCatalogSpec()).map((e) => e.key));
    for (const x of [...FAULTS, ...VARIANTS]) for (const op of x.operations ?? []) expect(keys.has(op), `${x.name}: ${op}`).toBe(true);
  });

  it('runs every scoped mutant on an operation where its scope shows: one scoped outside the sample would survive unseen', () => {
    const eps = endpointsOf(loadCatalogSpec());
    const scoped = FAULTS.filter((f) => f.behaviour.listFaultScope?.paths);
    expect(scoped.length).toBeGreaterThan(3);
    for (const f of scoped) {
      const paths = f.behaviour.listFaultScope!.paths!;
      const sampled = eps.filter((e) => sampleFor(f.operations).includes(e.key));
      const shows = paths === 'nested' ? sampled.some((e) => e.path.includes('{')) : paths.some((p) => sampled.some((e) => e.path === p));
      expect(shows, `${f.name}: scoped to ${JSON.stringify(paths)}, run on ${sampleFor(f.operations).join(', ')}`).toBe(true);
    }
  });

  it('holds a scoped mutant to its scope as a whole: every knob it sets, and only those', () => {
    const f = FAULTS.find((x) => x.name === 'nested-later-parents-sort-ignored')!;
    const b = resolveBehaviour({ faults: [f.name] });
    expect([...b.listFaultScope!.knobs!].sort()).toEqual(
      Object.keys(f.behaviour)
        .filter((k) => k !== 'listFaultScope')
        .sort(),
    );
    expect(resolveBehaviour({ variants: ['list-ids-prefixed'] }).listFaultScope).toBeNull();
  });

  it('says for every variant where the contract or its reading (spec/contract/) allows it', () => {
    for (const v of VARIANTS) expect(v.allowedBy, v.name).toMatch(/^(the reading \(spec\/contract\/README\.md#[a-z-]+\)|contract § )/);
  });
});

describe('mutants', () => {
  it('MUST mutants: score 100%, each caught by a check it names, the run exiting 1', () => {
    const must = mutants.filter((m) => m.level === 'MUST');
    expect(must.filter((m) => m.outcome !== 'caught' || m.exitCode !== 1).map((m) => `${m.fault.name}: ${m.outcome}, exit ${m.exitCode}`)).toEqual([]);
    expect(mutationScore(must)).toBe(1);
  });

  it("SHOULD/INFO mutants: each caught by a check it names, the run exiting as the failures' levels say", () => {
    const other = mutants.filter((m) => m.level !== 'MUST');
    expect(other.length).toBeGreaterThan(0);
    for (const m of other) expect(faultLevel(m.fault)).not.toBe('MUST');
    expect(other.filter((m) => m.outcome !== 'caught').map((m) => `${m.fault.name}: ${m.outcome}, exit ${m.exitCode} (expected ${m.expectedExit})`)).toEqual(
      [],
    );
  });

  it('every check a mutant names fails against it, with evidence (for a mutant written for exploration: those its draws reach; for an intermittent one: those that met a broken answer)', () => {
    for (const m of mutants) {
      for (const id of m.fault.caughtBy) {
        const failed = m.results.filter((r) => r.id === id && r.outcome === 'fail');
        // Which operator or which total a drawn request shows the bug on is the draw's: the
        // mutant is caught by some check it names (above), each with its evidence.
        if ((m.fault.explored || m.fault.intermittent) && failed.length === 0) continue;
        expect(failed.length, `${id} must fail against ${m.fault.name}`).toBeGreaterThan(0);
        for (const r of failed) {
          expect(r.evidence?.expected, `${id} vs ${m.fault.name}: expected`).toBeTruthy();
          expect(r.evidence?.actual, `${id} vs ${m.fault.name}: actual`).toBeTruthy();
          expect(r.evidence?.request, `${id} vs ${m.fault.name}: request`).toMatch(/^curl -i -X (GET|POST|DELETE) '/);
          // A check run once per list operation says which (list.settings.* run once per run).
          if (checkDefinitions.find((c) => c.id === id)?.perOperation) expect(r.operation).toBeTruthy();
        }
      }
    }
  });
});

describe('the model and the exploration alone (--explore-only)', () => {
  it(
    'catch every list mutant written for them, each through the CLI with exit 1',
    async () => {
      const written = FAULTS.filter((f) => f.explored && f.caughtBy.some((id) => id.startsWith('list.')));
      expect(written.length).toBeGreaterThanOrEqual(8);
      const { mutants: alone } = await runSelftest({ main, faults: written.map((f) => f.name), variants: [], exploreOnly: true });
      console.log(renderExploredFigure(alone));
      expect(alone.filter((m) => m.outcome !== 'caught' || m.exitCode !== 1).map((m) => `${m.fault.name}: ${m.outcome}, exit ${m.exitCode}`)).toEqual([]);
      for (const x of exploredFigure(alone)) expect(x.exploredCaught, x.rule).toBe(x.explored);
    },
    10 * 60_000,
  );
});

describe('legitimate variants', () => {
  it('include every open choice of the contract listed here', () => {
    const names = VARIANTS.map((v) => v.name);
    for (const n of [
      'validation-422',
      'limit-over-100-refused',
      'hard-limit-422',
      'auth-403',
      'timestamps-no-millis',
      'timestamps-offset',
      'extra-fields',
      'no-links',
      'empty-page-total-1',
      'custom-api-platform',
      'page-length-40',
      'timestamps-micros',
      'timestamps-mixed-offsets',
      'empty-page-current-formula',
      'empty-page-zero',
      'default-order-newest-first',
      'list-ids-numeric',
      'list-ids-numeric-as-string',
      'list-ids-prefixed',
      'lenient-content-type',
      'null-rate-limit-accepted',
      'rate-limit-not-echoed',
      'timestamps-elsewhere',
    ])
      expect(names).toContain(n);
  });

  it('exit 0 with no MUST failure and no error, and warn only where they declare', () => {
    for (const v of variants) {
      expect(v.mustFailures.map((r) => `${v.name}: ${r.id} [${r.operation ?? ''}] ${r.reason}`)).toEqual([]);
      expect([...v.errors.map((r) => `${v.name}: ${r.id}: ${r.reason}`), ...v.run.suiteErrors]).toEqual([]);
      expect(v.exitCode, v.name).toBe(0);
      expect([...v.warnings].sort(), v.name).toEqual([...v.declaredWarnings].sort());
    }
  });
});
