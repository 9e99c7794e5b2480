// Sequences across operations held to a model (suites/state/): the conforming server and the
// list-visibility-delayed variant pass every rule; each mutant fails the check of the rule it
// breaks, with the shrunk sequence as evidence (each step a command line, the token masked);
// one seed draws the same sequences; everything the sequences created is deleted at the end.
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { staticChecks } from '../suites/index.js';
import { drawSequences } from '../suites/state/sequence.js';
import { EDGE, judgeList, MAX_STEPS, type Made } from '../suites/state/model.js';
import { byId, paginationSettings, runAgainst, SEED, TOKEN } from './support.js';

const IDS = ['state.sequence.created', 'state.sequence.deleted', 'state.sequence.distinct', 'state.sequence.total'] as const;
const CHECKS = staticChecks.filter((c) => c.area === 'state');
/** A short time buffer: a mutant's violation is confirmed after it, not after the default minute. */
const BUFFER_MS = 2_500;

async function run(server: { faults?: string[]; variants?: string[]; seed?: number }, seed = SEED) {
  const { results, cleanup } = await runAgainst({ seed: 5, ...server }, CHECKS, { seed, pagination: paginationSettings([], { timeBufferMs: BUFFER_MS }) });
  // Every record a sequence created, drawn or shrunk, is in the ledger and deleted at the end.
  expect(cleanup.leftovers).toEqual([]);
  return byId(results);
}

function outcomes(results: Map<string, CheckResult>): Record<string, string> {
  return Object.fromEntries(
    IDS.map((id) => [id, `${results.get(id)!.outcome}${results.get(id)!.outcome === 'pass' ? '' : `: ${results.get(id)!.reason ?? ''}`}`]),
  );
}

describe('the sequences', () => {
  it('are the fixed one and four drawn, at most 8 steps, the same for one seed', () => {
    const a = drawSequences(SEED);
    expect(a).toHaveLength(5);
    expect(a[0]).toEqual(EDGE);
    for (const steps of a) {
      expect(steps.length).toBeLessThanOrEqual(MAX_STEPS);
      expect(steps[0]!.do).toBe('create');
      expect(steps.at(-1)!.do).toBe('list');
    }
    expect(drawSequences(SEED)).toEqual(a);
    expect(drawSequences(SEED + 1)).not.toEqual(a);
  });

  it("judge a list's total by the sequence's own records: others' records, listed, never move the verdict", () => {
    const made: Made[] = [
      { kind: 'api', id: 'a', name: 'p-1', gone: false },
      { kind: 'api', id: 'b', name: 'p-2', gone: true },
    ];
    // Another's: x, y, and z, named like the sequence's records but not created by it (another run of the same id).
    const others = [{ id: 'x', name: 'someone' }, { id: 'y' }, { id: 'z', name: 'p-9' }];
    expect(judgeList('api', made, { records: [...others, { id: 'a', name: 'p-1' }], total: 4, whole: true })).toEqual([]);
    expect(judgeList('api', made, { records: [...others, { id: 'a', name: 'p-1' }], total: 5, whole: true }).map((v) => v.rule)).toEqual(['total']);
    expect(
      judgeList('api', made, { records: [...others, { id: 'a', name: 'p-1' }, { id: 'b', name: 'p-2' }], total: 5, whole: true }).map((v) => v.rule),
    ).toEqual(['deleted', 'total']);
    // A list read in part, or whose pages gave different totals, is not counted.
    expect(judgeList('api', made, { records: [{ id: 'a', name: 'p-1' }], whole: false })).toEqual([]);
  });
});

describe('sequences against the reference server', () => {
  it('pass on the conforming server, exercising every rule', async () => {
    const results = await run({});
    expect(outcomes(results)).toEqual(Object.fromEntries(IDS.map((id) => [id, 'pass'])));
    expect(results.get('state.sequence.created')!.notes?.join()).toMatch(/5 sequences \(1 fixed, 4 drawn; seed \d+, draw [0-9a-f]{8}\)/);
  });

  it('pass on list-visibility-delayed: a record listed only a second after its creation, within the buffer', async () => {
    const results = await run({ variants: ['list-visibility-delayed'] });
    expect(outcomes(results)).toEqual(Object.fromEntries(IDS.map((id) => [id, 'pass'])));
  });

  it('catch deleted-custom-api-listed under state.sequence.deleted (MUST), with the sequence as evidence', async () => {
    const results = await run({ faults: ['deleted-custom-api-listed'] });
    const r = results.get('state.sequence.deleted')!;
    expect(r.outcome).toBe('fail');
    expect(r.level).toBe('MUST');
    expect(r.reason).toMatch(/Custom API\(s\) deleted in the sequence still in their list, at step \d+ of this sequence/);
    // Each step a command line; the token masked.
    expect(r.reason).toMatch(/\n {2}1\. create an? [^:]*: curl -i -X POST /);
    expect(r.reason).toMatch(/delete Custom API #1 of the sequence: curl -i -X DELETE/);
    expect(r.reason).not.toContain(TOKEN);
    expect(results.get('state.sequence.created')!.outcome).toBe('pass');
    expect(results.get('state.sequence.distinct')!.outcome).toBe('pass');
  });

  it('catch created-key-unlisted under state.sequence.created and state.sequence.total (both SHOULD), shrunk', async () => {
    const results = await run({ faults: ['created-key-unlisted'] });
    for (const id of ['state.sequence.created', 'state.sequence.total']) {
      const r = results.get(id)!;
      expect(r.outcome, id).toBe('fail');
      expect(r.level).toBe('SHOULD');
      expect(r.reason).toMatch(/list the Application Keys: curl -i -X GET '[^']*\/v2\/application-keys\?page\[limit\]=100' .*-H 'authorization: Bearer \*+'/);
      expect(r.reason).not.toContain(TOKEN);
    }
    // Shrunk to the shortest that breaks it: one key created, its list.
    expect(results.get('state.sequence.created')!.reason).toMatch(
      /shrunk in \d+ steps from a drawn sequence[^\n]*\n {2}1\. create an Application Key \(#1\)[^\n]*\n {2}2\. list the Application Keys/,
    );
    expect(results.get('state.sequence.deleted')!.outcome).toBe('pass');
  });

  it('catch create-repeated-secret under state.sequence.distinct (MUST)', async () => {
    const results = await run({ faults: ['create-repeated-secret'] });
    const r = results.get('state.sequence.distinct')!;
    expect(r.outcome).toBe('fail');
    expect(r.reason).toMatch(/two Application Keys created in the sequence share their client_secret/);
  });

  it('send the same sequences for the same seed', async () => {
    const a = await run({}, 77);
    const b = await run({}, 77);
    const digest = (r: Map<string, CheckResult>) => /draw ([0-9a-f]{8})/.exec(r.get('state.sequence.total')!.notes!.join())![1];
    expect(digest(a)).toBe(digest(b));
  });
});
