// No check crashes, whatever the answer. Every check runs against the reference server
// behind a proxy that mutates one of its answers; the outcome may be pass, fail or skip (the
// target's answer is wrong, and the check may say so), never error (the suite could not work).
// FUZZ_RUNS and FUZZ_SEED run more cases or others (the seed is printed); FUZZ_SEED with
// FUZZ_PATH replays a counterexample (fast-check's failure message gives both).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunContext, resultKey, runCheck, type Check, type CheckResult, type RunSettings } from '../lib/runner/index.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import { listChecks, staticChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { AnswerProxy, type Plan } from './fuzz/answer-proxy.js';
import { applicable, mutate, type Answer, type Mutation } from './fuzz/mutate.js';
import { endpoints, paginationSettings, settingsFor, TOKEN } from './support.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 12);
/** fast-check's replay path of a counterexample (its failure message prints it). */
const PATH = process.env.FUZZ_PATH;

// A flat list, a nested one (by release, its ids from two parent lists) and files, the small
// list with the hard offset limit (its two checks run on no other); orders (10,050 records) is slow.
const eps = endpoints(['accounts', 'hierarchy-nodes@by-release', 'files']);
const checks = new Map<string, Check>([...staticChecks, ...expandListChecks(listChecks, eps)].map((c) => [resultKey(c), c]));

let server: RunningServer;
let proxy: AnswerProxy;
let settings: RunSettings;
let dispose: () => void;
/** Each check's answers when nothing is mutated: what a case's k and mutation are drawn from. */
const dry = new Map<string, { result: CheckResult; answers: Array<{ line: string; applicable: Mutation[] }> }>();

/** Runs one check alone: a fresh RunContext re-does the shared work through the proxy. */
async function runAlone(check: Check, plan?: Plan): Promise<CheckResult> {
  proxy.arm(plan);
  const run = new RunContext(settings);
  try {
    return await runCheck(check, run);
  } finally {
    await run.close();
  }
}

beforeAll(async () => {
  server = await startReferenceServer({ token: TOKEN, seed: 3 });
  proxy = await AnswerProxy.start(server.url);
  // Concurrency 1: the k-th answer is the same answer on every replay of a case.
  ({ settings, dispose } = settingsFor(proxy.url, { concurrency: 1, pagination: paginationSettings(eps) }));
  for (const [key, c] of checks) {
    const result = await runAlone(c);
    dry.set(key, { result, answers: proxy.relayed.map((x) => ({ line: x.line, applicable: x.answer ? applicable(x.answer) : [] })) });
  }
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  dispose?.();
});

describe('the mutations the proxy makes', () => {
  const page: Answer = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"data":[{"id":"a"},{"id":"b"}],"meta":{"page":{"total":2}}}'),
  };
  // pick modulo the shapes ((root), data, data[*], data[*].id, meta, meta.page, meta.page.total;
  // drop has no root) is the member; the quotient picks the element of an array.
  it.each<[Mutation, number, string, string]>([
    ['drop', 9, 'drop at meta', '{"data":[{"id":"a"},{"id":"b"}]}'],
    ['null', 6, 'null at meta.page.total', '{"data":[{"id":"a"},{"id":"b"}],"meta":{"page":{"total":null}}}'],
    ['retype', 9, 'retype at data[1]', '{"data":[{"id":"a"},["b"]],"meta":{"page":{"total":2}}}'],
    ['retype', 1, 'retype at data', '{"data":{"0":{"id":"a"},"1":{"id":"b"}},"meta":{"page":{"total":2}}}'],
    ['retype', 6, 'retype at meta.page.total', '{"data":[{"id":"a"},{"id":"b"}],"meta":{"page":{"total":"2"}}}'],
    ['huge-30-digits', 6, 'huge-30-digits at meta.page.total', '{"data":[{"id":"a"},{"id":"b"}],"meta":{"page":{"total":123456789012345678901234567890}}}'],
    ['huge-1e308', 0, 'huge-1e308 at (root)', '1e308'],
    ['truncate', 9, 'body cut to 10 of 60 bytes', '{"data":[{'],
  ])('%s, pick %i: %s', (m, pick, what, body) => {
    const r = mutate(page, m, pick)!;
    expect([r.what, r.answer.body.toString()]).toEqual([what, body]);
  });

  it('finds nothing but a login page to make of an empty 204', () => {
    expect(applicable({ status: 204, headers: {}, body: Buffer.alloc(0) })).toEqual(['html-page']);
  });
});

describe('whatever one answer is, no check errors', () => {
  it('passes or skips every check when no answer is mutated (the dry run the cases are drawn from)', () => {
    const bad = [...dry.values()].filter(({ result: r }) => r.outcome !== 'pass' && r.outcome !== 'skip');
    expect(bad.map(({ result: r }) => `${resultKey(r)}: ${r.outcome} ${r.reason}`)).toEqual([]);
    // Every check asked something, and had every answer (a complete one can at least become a login page).
    expect([...dry.values()].every((d) => d.answers.length > 0 && d.answers.every((x) => x.applicable.length > 0))).toBe(true);
  });

  it(`ends every check in pass, fail or skip with one answer mutated (${RUNS} cases, seed ${SEED})`, { timeout: 60_000 + RUNS * 300 }, async () => {
    console.log(`fuzz-answers: ${RUNS} cases, seed ${SEED} (FUZZ_RUNS, FUZZ_SEED)`);
    // A case names its check by key, so a counterexample prints as one line.
    const cases = fc
      .constantFrom(...checks.keys())
      .chain((check) => fc.nat(dry.get(check)!.answers.length - 1).map((k) => ({ check, k })))
      .chain(({ check, k }) =>
        fc.record({ check: fc.constant(check), k: fc.constant(k), mutation: fc.constantFrom(...dry.get(check)!.answers[k]!.applicable), pick: fc.nat() }),
      );
    await fc.assert(
      fc.asyncProperty(cases, async ({ check, ...plan }) => {
        const at = `${check}, answer k=${plan.k}, ${plan.mutation}, pick ${plan.pick}`;
        // runCheck itself may crash (in the evidence it builds for a failure): that is an error too.
        const r = await runAlone(checks.get(check)!, plan).catch((err: unknown): Pick<CheckResult, 'outcome' | 'reason'> => ({
          outcome: 'error',
          reason: `runCheck threw: ${(err as Error)?.stack ?? String(err)}`,
        }));
        // Up to the k-th answer a case replays the dry run; if it does not, the case is not what it says.
        if (!proxy.mutated)
          throw new Error(
            `${at}: not applied: the dry run's answer k was ${dry.get(check)!.answers[plan.k]!.line}; this run's answers: ${proxy.relayed.map((x) => x.line).join(', ')}`,
          );
        if (r.outcome === 'error') throw new Error(`${at}: ${proxy.mutated.what} on ${proxy.mutated.line}\n  -> error: ${r.reason}`);
      }),
      { numRuns: RUNS, seed: SEED, ...(PATH ? { path: PATH } : {}) },
    );
  });
});
