// A refused create leaves nothing, and every operation and method without a valid token
// (spec/contract/README.md#state.refused-creates-nothing, #authentication): the checks pass on
// the conforming server and on the variants that choose otherwise (403, an open create), fail on
// the mutants written for them, and what a refusal stored all the same is deleted by the run's
// cleanup.
import { describe, expect, it } from 'vitest';
import { staticChecks } from '../suites/index.js';
import { byId, endpoints, paginationSettings, runChecks, withServer } from './support.js';

const IDS = [
  'auth.matrix.refused',
  'auth.matrix.401',
  'auth.matrix.www-authenticate',
  'state.refused-create.custom-api',
  'create.reject.wrong-type',
  'create.reject.missing-type',
  'create.name.256-chars.rejected',
];
const CHECKS = staticChecks.filter((c) => IDS.includes(c.id));
// A flat list, a nested one (parents resolved as the run does) and a list the run writes to.
const OPERATIONS = ['orders', 'hierarchy-nodes@latest', 'application-keys'];

async function run(server: { faults?: string[]; variants?: string[] }) {
  return withServer({ seed: 3, ...server }, async (s) => {
    const { results, cleanup } = await runChecks(s.url, CHECKS, { pagination: paginationSettings(endpoints(OPERATIONS)) });
    const names = [...s.store.applicationKeys.values(), ...s.store.customApis.values()].map((r) => r.name).filter((n) => n.startsWith('conformance-test0001-'));
    return { results: byId(results), cleanup, left: names };
  });
}

const outcome = (r: Awaited<ReturnType<typeof run>>, id: string): string =>
  `${r.results.get(id)!.outcome}${r.results.get(id)!.reason ? `: ${r.results.get(id)!.reason}` : ''}`;

describe('a refused create leaves nothing; no operation without a valid token', () => {
  it('passes on the conforming server, and sends every operation, method and credential once', async () => {
    const r = await run({});
    for (const id of IDS) expect(outcome(r, id), id).toBe('pass');
    const refused = r.results.get('auth.matrix.refused')!;
    // 3 lists and the Custom API's read (16 GET), its delete and the two creates: 7 × 4 credentials.
    expect(refused.notes?.[0]).toMatch(/^28 requests without a valid token \(16 GET\); answered 401$/);
    expect(refused.notes?.join('\n')).toMatch(/Create an Application Key without a valid token .*: no Authorization header → 401/);
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.left).toEqual([]);
  });

  it('warns only auth.matrix.401 on 403 for a wrong token, and only notes an open create', async () => {
    const forbidden = await run({ variants: ['auth-403'] });
    for (const id of IDS.filter((i) => i !== 'auth.matrix.401')) expect(outcome(forbidden, id), id).toBe('pass');
    expect(forbidden.results.get('auth.matrix.401')).toMatchObject({ outcome: 'fail', level: 'SHOULD' });
    const open = await run({ variants: ['create-open'] });
    for (const id of IDS) expect(outcome(open, id), id).toBe('pass');
    expect(open.results.get('auth.matrix.refused')!.notes?.join('\n')).toMatch(/no Authorization header → 201/);
    // The keys the open create made without a token are the run's, and deleted.
    expect(open.cleanup.leftovers).toEqual([]);
    expect(open.left).toEqual([]);
  });

  it('fails the rejection check whose refusal stored the key, and the cleanup deletes what it stored', async () => {
    const r = await run({ faults: ['refused-create-stores-key'] });
    expect(r.results.get('create.reject.wrong-type')).toMatchObject({ outcome: 'fail', level: 'MUST' });
    expect(r.results.get('create.reject.wrong-type')!.reason).toMatch(/refused with 400, yet a key of the name it sent exists afterwards/);
    expect(outcome(r, 'create.reject.missing-type')).toBe('pass');
    // Nine near misses of a string type stored, each found by its own name and deleted at the end.
    expect(r.cleanup.deleted).toBeGreaterThanOrEqual(9);
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.left).toEqual([]);
  });

  it('fails state.refused-create.custom-api on a Custom API stored though refused, and deletes it', async () => {
    const r = await run({ faults: ['refused-create-stores-custom-api'] });
    expect(r.results.get('state.refused-create.custom-api')).toMatchObject({ outcome: 'fail', level: 'MUST' });
    expect(r.cleanup.leftovers).toEqual([]);
    expect(r.left).toEqual([]);
  });

  it('fails auth.matrix.refused on a list served without a token, naming the cell', async () => {
    const r = await run({ faults: ['list-without-token'] });
    expect(r.results.get('auth.matrix.refused')).toMatchObject({ outcome: 'fail', level: 'MUST' });
    expect(r.results.get('auth.matrix.refused')!.reason).toMatch(/^GET \/v2\/orders \(orders\) with no Authorization header was served \(200\)/);
  });
});
