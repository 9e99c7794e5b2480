// Key creation explored (--explore): create.name.verbatim, create.rate-limit.echo and
// create.keys.distinct draw values with fast-check from the run's seed, beside their fixed
// probes. The faults only drawn values reach are caught, with the shrunk value as evidence;
// the conforming server and the variants that bound or omit what they may still pass; without
// exploration the checks send their fixed probes alone; one seed draws the same values.
import type { Arbitrary } from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CheckResult, tracesTo } from '../lib/runner/index.js';
import { staticChecks } from '../suites/index.js';
import { HttpResponse } from '../lib/transport/index.js';
import {
  drawSeed,
  drawValues,
  explorationShare,
  groupArb,
  judgeRateLimit,
  nameDraftArb,
  nameOf,
  RATE_LIMIT_EDGES,
  rateLimitArb,
  rateLimitBody,
  runTag,
  SHRINK_BUDGET,
} from '../suites/create/explore.js';
import { byId, runAgainst, SEED } from './support.js';

const IDS = ['create.name.verbatim', 'create.rate-limit.echo', 'create.keys.distinct'] as const;
const CHECKS = staticChecks.filter((c) => (IDS as readonly string[]).includes(c.id));

async function run(server: { faults?: string[]; variants?: string[] }, explore: number, seed = SEED) {
  const { results, cleanup } = await runAgainst(server, CHECKS, { explore, seed });
  // Every key a check created, drawn or shrunk, is in the ledger and deleted at the end.
  expect(cleanup.leftovers).toEqual([]);
  return { results: byId(results), cleanup };
}

function outcomes(results: Map<string, CheckResult>): Record<string, string> {
  return Object.fromEntries(IDS.map((id) => [id, `${results.get(id)!.outcome}${results.get(id)!.reason ? `: ${results.get(id)!.reason}` : ''}`]));
}

describe('the share of --explore', () => {
  it('is off at 0 or absent, and modest at the default 24', () => {
    expect(explorationShare(0)).toBeUndefined();
    expect(explorationShare(undefined)).toBeUndefined();
    expect(explorationShare(20)).toEqual({ names: 12, rateLimits: 3, groups: 1, bodies: 5 });
    expect(explorationShare(24)).toEqual({ names: 15, rateLimits: 3, groups: 1, bodies: 6 });
    expect(explorationShare(1)).toEqual({ names: 1, rateLimits: 1, groups: 1, bodies: 1 });
  });

  it('draws valid names: at most 255 code points, well-formed Unicode, in several forms, each traceable to its run', () => {
    const names = drawValues({ arb: nameDraftArb, runs: 400 }, 7).map((d) => nameOf(d, runTag('a1b2c3d4')));
    for (const n of names) {
      expect([...n].length).toBeGreaterThanOrEqual(22);
      expect([...n].length).toBeLessThanOrEqual(255);
      expect((n as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
      // A create whose answer never came is found by its name (lib/runner/cleanup.ts).
      expect(tracesTo(n, 'a1b2c3d4'), n).toBe(true);
    }
    // Names NFC rewrites, and names NFC leaves as they are; astral, right-to-left, invisible, long.
    expect(names.some((n) => n.normalize('NFC') !== n)).toBe(true);
    expect(names.some((n) => n.normalize('NFD') !== n && n.normalize('NFC') === n)).toBe(true);
    expect(names.some((n) => /[\u{10000}-\u{10ffff}]/u.test(n))).toBe(true);
    expect(names.some((n) => /[\u05d0-\u05ea\u0620-\u064a]/.test(n))).toBe(true);
    expect(names.some((n) => /[\u200b-\u200f\ufeff\u202e]/.test(n))).toBe(true);
    expect(names.some((n) => [...n].length === 255)).toBe(true);
    expect(names.some((n) => /^\s|\s$/.test(n))).toBe(true);
  });

  it('draws rate limits across the safe range, beside the edges (integers past it among them)', () => {
    const limits = drawValues({ arb: rateLimitArb, runs: 200, edges: RATE_LIMIT_EDGES }, 7);
    expect(limits.slice(0, RATE_LIMIT_EDGES.length)).toEqual([...RATE_LIMIT_EDGES]);
    expect(limits).toEqual(expect.arrayContaining([0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -(2 ** 31)]));
    for (const n of limits) expect(Number.isInteger(n)).toBe(true);
    expect(limits.some((n) => Math.abs(n) > 2 ** 40)).toBe(true);
  });
});

describe('rate limits past 2^53, written and compared digit for digit', () => {
  const answer = (digits: string): HttpResponse => {
    const text = `{"data":{"type":"application_key","id":"0b8f4d2e-6f7a-4c1b-9a3e-2d5c7e9f1a0b","name":"k","client_id":"c","client_secret":"s","reserved_rate_limit":${digits}}}`;
    const exchange = {
      method: 'POST',
      url: 'http://target/v2/application-keys',
      requestHeaders: {},
      status: 201,
      responseHeaders: {},
      bodyExcerpt: '',
      bodyBytes: text.length,
      durationMs: 1,
    };
    return new HttpResponse(201, { 'content-type': 'application/json' }, text, exchange, { ok: true, value: JSON.parse(text) });
  };

  it('sends 2^63 as its own digits, not as JSON.stringify writes it', () => {
    const sent = rateLimitBody('k', 2 ** 63);
    expect('body' in sent && sent.body).toContain('"reserved_rate_limit":9223372036854775808}');
    expect(rateLimitBody('k', 7)).toEqual({ json: { data: { type: 'application_key', name: 'k', reserved_rate_limit: 7 } } });
  });

  it('agrees with the digits sent, and not with 2^63 - 1 (a store that saturates), which a double cannot tell apart', () => {
    expect(judgeRateLimit(2 ** 63, answer('9223372036854775808')).agrees).toBe(true);
    const saturated = judgeRateLimit(2 ** 63, answer('9223372036854775807'));
    expect(saturated.agrees).toBe(false);
    expect(!saturated.agrees && saturated.actual).toBe('data.reserved_rate_limit 9223372036854775807');
    expect(judgeRateLimit(2 ** 64, answer('0')).agrees).toBe(false);
  });
});

describe('replay: one seed, one draw', () => {
  it('the same seed draws the same values; another seed others', () => {
    const replays = <T>(arb: Arbitrary<T>, key: string): void => {
      const a = drawValues({ arb, runs: 12 }, drawSeed(SEED, key));
      expect(drawValues({ arb, runs: 12 }, drawSeed(SEED, key))).toEqual(a);
      expect(drawValues({ arb, runs: 12 }, drawSeed(SEED + 1, key))).not.toEqual(a);
    };
    replays(nameDraftArb, 'create.name.verbatim');
    replays(rateLimitArb, 'create.rate-limit.echo');
    replays(groupArb, 'create.keys.distinct');
  });

  it('two runs with one seed send the same values and shrink to the same one', async () => {
    const a = await run({ faults: ['name-normalized-nfc'] }, 24);
    const b = await run({ faults: ['name-normalized-nfc'] }, 24);
    const c = await run({}, 24, SEED + 1);
    const d = await run({}, 24, SEED + 1);
    const ra = a.results.get('create.name.verbatim')!;
    const rb = b.results.get('create.name.verbatim')!;
    expect(ra.reason).toBe(rb.reason);
    expect(ra.evidence?.expected).toBe(rb.evidence?.expected);
    expect(ra.evidence?.actual).toBe(rb.evidence?.actual);
    // The summary names the seed and a digest of what was drawn.
    for (const id of IDS) expect(c.results.get(id)!.notes?.find((n) => n.includes('drawn'))).toBe(d.results.get(id)!.notes?.find((n) => n.includes('drawn')));
    expect(c.results.get('create.name.verbatim')!.notes!.join('\n')).toMatch(new RegExp(`names: 15 drawn \\(seed ${SEED + 1}, draw [0-9a-f]{8}\\)`));
  });
});

describe('faults only drawn values reach', () => {
  it('name-normalized-nfc: create.name.verbatim fails with the shrunk name, escaped', async () => {
    const { results } = await run({ faults: ['name-normalized-nfc'] }, 24);
    const r = results.get('create.name.verbatim')!;
    expect(r.outcome, r.reason).toBe('fail');
    expect(r.reason).toMatch(/^data\.name is not the name sent, byte for byte, for the name "/);
    expect(r.reason).toMatch(/the smallest drawn value that disagrees, shrunk in \d+ steps from the name "/);
    expect(r.reason).toMatch(new RegExp(`replay with --seed ${SEED} --explore 24`));
    // The shrunk name: short, its invisible and non-ASCII characters as \u escapes.
    const shown = /, for the name ("(?:[^"\\]|\\.)*")/.exec(r.reason!)![1]!;
    expect(shown).toMatch(/^[\x20-\x7e]+$/);
    const name = JSON.parse(shown) as string;
    expect(name.normalize('NFC')).not.toBe(name);
    // The run's tag (21 code points) and a few drawn ones.
    expect(name).toContain('conformance-test0001-');
    expect([...name].length).toBeLessThanOrEqual(21 + 8);
    expect(r.evidence?.expected).toContain(shown);
    expect(r.evidence?.actual).toMatch(/normalised to NFC/);
    expect(r.evidence?.request).toMatch(/^curl -i -X POST '/);
    expect(r.evidence?.status).toBe(201);
    console.log(`name-normalized-nfc → ${r.reason}\n  expected: ${r.evidence?.expected}\n  actual: ${r.evidence?.actual}`);
    // The other two checks have nothing to say about it.
    expect(results.get('create.rate-limit.echo')!.outcome).toBe('pass');
    expect(results.get('create.keys.distinct')!.outcome).toBe('pass');
  });

  it('rate-limit-int32: create.rate-limit.echo fails with 2^31, the smallest integer that wraps', async () => {
    const { results } = await run({ faults: ['rate-limit-int32'] }, 24);
    const r = results.get('create.rate-limit.echo')!;
    expect(r.outcome, r.reason).toBe('fail');
    // 2^31 is the first edge that wraps; every smaller value shrinking tries comes back whole.
    expect(r.reason).toMatch(
      /^data\.reserved_rate_limit is not the integer sent, for reserved_rate_limit 2147483648 \(2\^31\) \(the first drawn value that disagrees; shrinking found none smaller; 20 more creates sent shrinking \(at most 20\)/,
    );
    expect(r.reason).toMatch(new RegExp(`replay with --seed ${SEED} --explore 24`));
    expect(r.evidence?.expected).toBe('data.reserved_rate_limit 2147483648 (2^31), the integer sent');
    expect(r.evidence?.actual).toBe('data.reserved_rate_limit -2147483648 (-2^31)');
    // Shrinking is bounded: the fixed probe, the edges and the drawn values, and at most SHRINK_BUDGET more.
    expect(r.transport!.requests).toBeLessThanOrEqual(1 + RATE_LIMIT_EDGES.length + 6 + SHRINK_BUDGET);
    console.log(`rate-limit-int32 → ${r.reason}\n  expected: ${r.evidence?.expected}\n  actual: ${r.evidence?.actual}`);
    expect(results.get('create.name.verbatim')!.outcome).toBe('pass');
    expect(results.get('create.keys.distinct')!.outcome).toBe('pass');
  });

  it('client-id-from-name: create.keys.distinct fails for keys created with one name, no secret shown', async () => {
    const { results } = await run({ faults: ['client-id-from-name'] }, 24);
    const r = results.get('create.keys.distinct')!;
    expect(r.outcome, r.reason).toBe('fail');
    expect(r.reason).toMatch(/^two keys created with one name share their client_id, for 3 keys with the name "/);
    expect(r.evidence?.expected).toMatch(/^3 different values of data\.client_id, for 3 keys with the name "[\x20-\x7e]*" \(/);
    expect(r.evidence?.actual).toBe('keys 1 and 2 of the 3 have the same client_id');
    expect(r.evidence?.bodyExcerpt).toMatch(/"client_secret":"\*\*\*"/);
    console.log(`client-id-from-name → ${r.reason}\n  expected: ${r.evidence?.expected}\n  actual: ${r.evidence?.actual}`);
    expect(results.get('create.name.verbatim')!.outcome).toBe('pass');
    expect(results.get('create.rate-limit.echo')!.outcome).toBe('pass');
  });

  it('without exploration, the fixed probes alone do not reach them', async () => {
    for (const fault of ['name-normalized-nfc', 'rate-limit-int32', 'client-id-from-name']) {
      const { results } = await run({ faults: [fault] }, 0);
      expect(outcomes(results), fault).toEqual(Object.fromEntries(IDS.map((id) => [id, 'pass'])));
    }
  });
});

describe('the conforming server and the variants pass', () => {
  it.each<[string, { variants?: string[] }]>([
    ['conforming', {}],
    ...['rate-limit-409', 'rate-limit-not-echoed', 'validation-422', 'utf16-names', 'null-rate-limit-accepted'].map((v): [string, { variants?: string[] }] => [
      v,
      { variants: [v] },
    ]),
  ])('%s', async (_name, server) => {
    const { results } = await run(server, 24);
    expect(outcomes(results)).toEqual(Object.fromEntries(IDS.map((id) => [id, 'pass'])));
    for (const id of IDS)
      expect(
        results.get(id)!.notes?.some((n) => n.includes('drawn')),
        id,
      ).toBe(true);
  });
});

describe('explore 0: the fixed probes, as before', () => {
  it('sends only the fixed probes and notes nothing drawn', async () => {
    const { results } = await run({}, 0);
    expect(outcomes(results)).toEqual(Object.fromEntries(IDS.map((id) => [id, 'pass'])));
    // Two markup names; one rate limit; the two shared valid keys.
    expect(results.get('create.name.verbatim')!.transport!.requests).toBe(2);
    expect(results.get('create.rate-limit.echo')!.transport!.requests).toBe(1);
    expect(results.get('create.keys.distinct')!.transport!.requests).toBe(2);
    for (const id of IDS) expect(results.get(id)!.notes?.some((n) => n.includes('drawn')) ?? false).toBe(false);
  });

  it('a 409 to the fixed rate limit still skips the echo check', async () => {
    const { results } = await run({ variants: ['rate-limit-409'] }, 0);
    expect(results.get('create.rate-limit.echo')!.outcome).toBe('skip');
    expect(results.get('create.rate-limit.echo')!.reason).toMatch(/refused reserved_rate_limit \d with 409/);
  });
});
