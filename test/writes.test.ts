// Bodies as a careless client spells them, and every read after a write: create bodies whose
// required members are present only in another letter case are refused (create.reject.member-case,
// state.refused-create.custom-api-member-case), and GET /v2/settings shows what a PUT wrote
// (list.settings.read-back). The conforming server passes; the mutants case-insensitive-members
// and stale-settings-read are caught, through the CLI too; nothing created is left.
import { describe, expect, it } from 'vitest';
import { startReferenceServer } from '../server/index.js';
import { staticChecks, storeChecks } from '../suites/index.js';
import { brokenRule } from '../suites/create/rejections.js';
import { MEMBER_CASE_EDGES, memberCaseBodyOf, memberCaseDraftArb, membersPresent, spelled, type MemberCaseDraft } from '../suites/create/explore.js';
import { drawValues } from '../suites/create/explore.js';
import { byId, cli, endpoints, paginationSettings, runAgainst, SEED, TOKEN } from './support.js';

const MEMBER_CASE = ['create.reject.member-case', 'state.refused-create.custom-api-member-case'];
const CREATES = staticChecks.filter((c) => MEMBER_CASE.includes(c.id));
const READ_BACK = 'list.settings.read-back';

/** A body as the observed-traffic judge sees it: parsed, sent as JSON. */
const seen = (sent: unknown) => ({ sent, x: { requestHeaders: { 'content-type': 'application/json' } } }) as unknown as Parameters<typeof brokenRule>[0];

describe('bodies with member names in another case', () => {
  it('spell a member with the letters of the mask in upper case', () => {
    expect([spelled('name', 0), spelled('name', 1), spelled('name', 15), spelled('type', 5)]).toEqual(['name', 'Name', 'NAME', 'TyPe']);
  });

  it("the fixed ones lack a required member, and carry the run's name (wherever it sits) for the look-up", () => {
    for (const d of MEMBER_CASE_EDGES) {
      expect(membersPresent(d)).toBe(false);
      expect(JSON.stringify(memberCaseBodyOf(d, 'conformance-abc-1').json)).toContain('"conformance-abc-1"');
    }
    expect(memberCaseBodyOf(MEMBER_CASE_EDGES[0]!, 'n').json).toEqual({ data: { TYPE: 'application_key', NAME: 'n' } });
    expect(memberCaseBodyOf(MEMBER_CASE_EDGES[3]!, 'n').json).toEqual({ DATA: { type: 'application_key', name: 'n' } });
  });

  it('with the member also as named, the body is valid and open: both copies, each its own name', () => {
    const d: MemberCaseDraft = { data: { mask: 0, alsoExact: false }, name: { mask: 15, alsoExact: true }, type: { mask: 0, alsoExact: false } };
    expect(membersPresent(d)).toBe(true);
    expect(memberCaseBodyOf(d, 'n').json).toEqual({ data: { type: 'application_key', name: 'n', NAME: 'n-other' } });
  });

  it('drawn from the seed: the same each time, each with a member in another case', () => {
    const a = drawValues({ arb: memberCaseDraftArb, runs: 20 }, SEED);
    expect(drawValues({ arb: memberCaseDraftArb, runs: 20 }, SEED)).toEqual(a);
    for (const d of a) expect(Object.values(d).some((s) => s.mask !== 0)).toBe(true);
  });

  it('observed traffic: a member present only in another case is judged by create.reject.member-case, a plain absence as before', () => {
    expect(brokenRule(seen({ data: { NAME: 'x', TYPE: 'application_key' } }))?.check).toBe('create.reject.member-case');
    expect(brokenRule(seen({ DATA: { name: 'x', type: 'application_key' } }))?.check).toBe('create.reject.member-case');
    expect(brokenRule(seen({ data: { name: 'x', Type: 'application_key' } }))).toEqual({ check: 'create.reject.member-case', what: 'type only as "Type"' });
    expect(brokenRule(seen({ data: { type: 'application_key' } }))?.check).toBe('create.reject.missing-name');
    // Both spellings: the body has its name; which copy a target takes is not judged.
    expect(brokenRule(seen({ data: { name: 'x', NAME: 'y', type: 'application_key' } }))).toBeUndefined();
  });
});

describe('the checks', () => {
  it('pass on the conforming server, exploring or not, and leave nothing', async () => {
    for (const explore of [0, 20]) {
      const { results, cleanup } = await runAgainst({ seed: 3 }, CREATES, { explore });
      expect(results.map((r) => `${r.id}: ${r.outcome} ${r.reason ?? ''}`)).toEqual(CREATES.map((c) => `${c.id}: pass `));
      expect(cleanup.leftovers).toEqual([]);
    }
  });

  it('catch case-insensitive-members, with the smallest body, and delete what it created', async () => {
    const { results, cleanup } = await runAgainst({ seed: 3, faults: ['case-insensitive-members'] }, CREATES, { explore: 20 });
    const by = byId(results);
    expect(by.get('create.reject.member-case')?.outcome).toBe('fail');
    expect(by.get('create.reject.member-case')?.reason).toMatch(
      /was accepted, though (data|name|type)( and \w+)* (is|are) missing \(JSON member names are case-sensitive\)/,
    );
    expect(by.get('state.refused-create.custom-api-member-case')?.outcome).toBe('fail');
    // Every key and Custom API the mutant made from such a body was in the ledger, and is gone.
    expect(cleanup.deleted).toBeGreaterThan(0);
    expect(cleanup.leftovers).toEqual([]);
  });

  it('GET /v2/settings after each PUT: passes on the conforming server, catches stale-settings-read alone', async () => {
    const settings = { changeSettings: true, pagination: paginationSettings(endpoints(['accounts', 'orders', 'customers'])) };
    const plain = byId((await runAgainst({ seed: 3 }, storeChecks, settings)).results);
    expect(`${plain.get(READ_BACK)?.outcome} ${(plain.get(READ_BACK)?.notes ?? []).join(' ')}`).toMatch(/^pass .*shown after the change, 25 after the restore/);
    const { results, cleanup } = await runAgainst({ seed: 3, faults: ['stale-settings-read'] }, storeChecks, settings);
    const by = byId(results);
    for (const c of storeChecks) expect(by.get(c.id)?.outcome, `${c.id}: ${by.get(c.id)?.reason ?? ''}`).toBe(c.id === READ_BACK ? 'fail' : 'pass');
    expect(by.get(READ_BACK)?.reason).toMatch(/GET \/v2\/settings right after PUT \/v2\/settings set page_length \d+ does not show it/);
    expect(cleanup.leftovers).toEqual([]);
  });
});

describe('through the CLI', () => {
  it.each([
    ['case-insensitive-members', 'create.reject.member-case'],
    ['stale-settings-read', READ_BACK],
  ])('%s: %s fails, and the cleanup says 0 left over', async (fault, id) => {
    const server = await startReferenceServer({ token: TOKEN, seed: 1, faults: [fault] });
    try {
      const r = await cli(['--base-url', server.url, '--change-settings', '--check', id, '--seed', '1', '--operation', 'accounts'], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      // Both rules are MUSTs: exit 1.
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(new RegExp(`${id.replace(/\./g, '\\.')}`));
      expect(r.stdout).toMatch(/\b0 left over/);
    } finally {
      await server.close();
    }
  });
});
