// `conformance merge`: the shards of one run, each once and none missing, joined
// into one report in which every failure keeps the replay command of its own shard (its own
// seed). Anything else is refused with the reason, exit 2.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { main } from '../cli/main.js';
import { renderJson } from '../reporters/json.js';
import { summarise, type RunReport } from '../reporters/model.js';
import { exitFor } from '../reporters/verdict.js';
import { cli } from './support.js';
import { resultOf } from './fixtures/report.js';

const fail = (id: string, operation: string): CheckResult => resultOf(id, 'fail', { operation, reason: `${id} failed on ${operation}`, durationMs: 4 });
const pass = (id: string, operation: string): CheckResult => resultOf(id, 'pass', { operation, durationMs: 4 });

interface ShardSpec {
  shard?: string;
  seed?: number;
  runId?: string;
  results?: CheckResult[];
  target?: RunReport['target'];
  version?: string;
  digest?: string;
  config?: Record<string, unknown>;
}

/** A shard's report directory as a run writes it (results.json through the real renderer). */
function shardDir(spec: ShardSpec): string {
  const results = spec.results ?? [pass('list.limit.max', 'orders')];
  const target = spec.target ?? { baseUrl: 'https://staging.example', embedded: false };
  const report: RunReport = {
    tool: { name: 'conformance', version: spec.version ?? '0.0.0-test' },
    runId: spec.runId ?? `run${Math.random().toString(16).slice(2, 8)}`,
    seed: spec.seed ?? 1,
    contractDigest: spec.digest ?? `sha256:${'12'.repeat(32)}`,
    target,
    ...(spec.shard ? { shard: spec.shard } : {}),
    startedAt: '2026-11-21T10:00:00.000Z',
    finishedAt: '2026-11-21T10:00:02.000Z',
    durationMs: 2000,
    config: {
      ...(target.embedded ? {} : { baseUrl: target.baseUrl }),
      token: '***',
      seed: spec.seed ?? 1,
      timeoutMs: 10000,
      maxBodyBytes: 16777216,
      concurrency: 64,
      checks: [],
      strict: false,
      requestBudget: 1000,
      timeBufferSeconds: 60,
      requireAllEndpoints: false,
      operations: [],
      catalog: {},
      ...spec.config,
    },
    results,
    suiteErrors: [],
    cleanup: { deleted: 0, leftovers: [] },
    summary: summarise(results),
    exit: exitFor(results, [], false),
  };
  const dir = mkdtempSync(join(tmpdir(), 'conformance-shard-'));
  writeFileSync(join(dir, 'results.json'), renderJson(report));
  return dir;
}

/** `conformance merge ...` in-process, as bin.ts runs it. */
async function merge(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['merge', ...args], { out: (l) => out.push(l), err: (l) => err.push(l), env, cwd: tmpdir(), isTTY: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const readReport = (dir: string): RunReport => JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as RunReport;

describe('merge joins the shards of one run', () => {
  it("each failure keeps the replay command of its own shard, with that shard's seed; the shards are listed", async () => {
    const one = shardDir({ shard: '1/3', seed: 11, runId: 'aaaa0001', results: [fail('list.limit.max', 'accounts')] });
    const two = shardDir({ shard: '2/3', seed: 22, runId: 'aaaa0002', results: [pass('list.limit.max', 'orders')] });
    const three = shardDir({ shard: '3/3', seed: 33, runId: 'aaaa0003', results: [fail('list.limit.max', 'files')] });
    const out = mkdtempSync(join(tmpdir(), 'conformance-merged-'));
    // Given in any order.
    const r = await merge([three, one, two, '--report-dir', out]);
    expect(r.code, r.err).toBe(1);
    const m = readReport(out);
    expect(m.results.map((x) => [x.operation, x.replay])).toEqual([
      [
        'accounts',
        'npx conformance --check list.limit.max --operation accounts --seed 11 --base-url https://staging.example --timeout 10000 --max-body-bytes 16777216 --request-budget 1000 --time-buffer 60',
      ],
      ['orders', undefined],
      [
        'files',
        'npx conformance --check list.limit.max --operation files --seed 33 --base-url https://staging.example --timeout 10000 --max-body-bytes 16777216 --request-budget 1000 --time-buffer 60',
      ],
    ]);
    expect(m.shards).toEqual([
      { shard: '1/3', runId: 'aaaa0001', seed: 11 },
      { shard: '2/3', runId: 'aaaa0002', seed: 22 },
      { shard: '3/3', runId: 'aaaa0003', seed: 33 },
    ]);
    expect(m.shard).toBeUndefined();
    // The console prints the same commands; junit.xml carries them too.
    for (const x of m.results.filter((y) => y.replay)) expect(r.out).toContain(`replay:   ${x.replay}`);
    expect(r.out).toMatch(/shards 1\/3 run aaaa0001 seed 11, 2\/3 run aaaa0002 seed 22, 3\/3 run aaaa0003 seed 33/);
    expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('--operation files --seed 33 ');
  });

  it('shards run with --strict merge under --strict', async () => {
    const should = (op: string): CheckResult => ({ ...fail('list.sort.id', op), level: 'SHOULD' });
    const strict = { strict: true };
    const r = await merge([
      shardDir({ shard: '1/2', results: [should('orders')], config: strict }),
      shardDir({ shard: '2/2', results: [pass('list.sort.id', 'files')], config: strict }),
    ]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/exit 1: 1 SHOULD check\(s\) failed and --strict is on/);
  });

  it('shards that each ran the bundled reference server (each on its own port) are one target', async () => {
    const embedded = (port: number): RunReport['target'] => ({ baseUrl: `http://127.0.0.1:${port}`, embedded: true });
    const r = await merge([shardDir({ shard: '1/2', target: embedded(40001) }), shardDir({ shard: '2/2', target: embedded(40002) })]);
    expect(r.code, r.err).toBe(0);
  });

  it("through the CLI: a sharded run against the bundled server merges, and each failure replays with its shard's seed", async () => {
    const [a, b, out] = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'conformance-report-')));
    // An expected default page length of 20 against the bundled server's 25: one MUST failure
    // per operation; one operation per shard.
    const args = ['--check', 'list.limit.default', '--operation', 'accounts,catalogs'];
    const env = { CONFORMANCE_DEFAULT_PAGE_LENGTH: '20' };
    const [one, two] = await Promise.all([
      cli([...args, '--shard', '1/2', '--seed', '11', '--report-dir', a!], { env }),
      cli([...args, '--shard', '2/2', '--seed', '22', '--report-dir', b!], { env }),
    ]);
    expect([one.code, two.code], one.stdout + two.stdout).toEqual([1, 1]);
    const merged = await cli(['merge', a!, b!, '--report-dir', out!]);
    expect(merged.code, merged.stdout + merged.stderr).toBe(1);
    const m = readReport(out!);
    const seedOf = new Map(m.results.map((x) => [x.operation, /--seed (\d+)/.exec(x.replay ?? '')?.[1]]));
    expect(Object.fromEntries(seedOf)).toEqual({ accounts: '11', catalogs: '22' });
    for (const x of m.results) expect(x.replay).not.toContain('--base-url');
    expect(merged.stdout).toContain(`replay:   ${m.results[1]!.replay}`);
  });
});

describe('merge refuses what is not every shard of one run, once each, and says why (exit 2)', () => {
  const same = shardDir({ shard: '1/2', runId: 'same0001' });
  const cases: Array<[string, () => string[], RegExp]> = [
    ['the same shard directory twice', () => [same, same, shardDir({ shard: '2/2' })], /shard 1\/2 is given twice \(the same report given twice\)/],
    [
      'two reports of the same shard',
      () => [shardDir({ shard: '1/2' }), shardDir({ shard: '1/2' }), shardDir({ shard: '2/2' })],
      /shard 1\/2 is given twice \(two reports claim the same shard\)/,
    ],
    [
      'a missing shard',
      () => [shardDir({ shard: '1/3' }), shardDir({ shard: '3/3' })],
      /shard 2\/3 is missing: a merge needs the report directories of all 3 shards/,
    ],
    [
      'shards of runs split differently',
      () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/3' })],
      /the shards come from different runs: .* is one of 2 shards, .* one of 3/,
    ],
    ['a whole run with a shard', () => [shardDir({}), shardDir({ shard: '2/2' })], /the shards come from different runs: .* is one of 1 shards, .* one of 2/],
    [
      'different targets',
      () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2', target: { baseUrl: 'https://other.example', embedded: false } })],
      /different runs: they differ in target \(.*"https:\/\/staging\.example".*"https:\/\/other\.example"\)/,
    ],
    [
      'the bundled server and a target',
      () => [shardDir({ shard: '1/2', target: { baseUrl: 'http://127.0.0.1:4000', embedded: true } }), shardDir({ shard: '2/2' })],
      /differ in target \(.*the bundled reference server/,
    ],
    ['different suite versions', () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2', version: '0.0.1-test' })], /differ in suite version/],
    [
      'different contract digests',
      () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2', digest: `sha256:${'34'.repeat(32)}` })],
      /differ in contract digest/,
    ],
    [
      'different timeouts',
      () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2', config: { timeoutMs: 2000 } })],
      /differ in --timeout \(.*: 10000; .*: 2000\)/,
    ],
    ['one shard strict, one not', () => [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2', config: { strict: true } })], /differ in --strict/],
    ['different operations', () => [shardDir({ shard: '1/2', config: { operations: ['orders'] } }), shardDir({ shard: '2/2' })], /differ in --operation/],
    [
      'different default page lengths',
      () => [shardDir({ shard: '1/2', config: { defaultPageLength: 20 } }), shardDir({ shard: '2/2' })],
      /differ in --default-page-length/,
    ],
    [
      'different catalogs',
      () => [shardDir({ shard: '1/2', config: { catalog: { parents: { flowSlug: { value: 'a' } } } } }), shardDir({ shard: '2/2' })],
      /differ in the catalog of the config file/,
    ],
  ];

  it.each(cases)('%s', async (_, dirs, message) => {
    const out = join(mkdtempSync(join(tmpdir(), 'conformance-merged-')), 'out');
    const r = await merge([...dirs(), '--report-dir', out]);
    expect(r.code, r.out).toBe(2);
    expect(r.err.split('\n')[0]).toMatch(/^conformance: /);
    expect(r.err).toMatch(message);
    // Every refusal of merge points at merge's own usage, not the run's.
    expect(r.err.split('\n')[1]).toBe("Run 'conformance merge --help' for usage.");
    expect(existsSync(out)).toBe(false);
  });

  it('reads its settings as a run does, and never writes the merged report over a shard', async () => {
    const dirs = [shardDir({ shard: '1/2' }), shardDir({ shard: '2/2' })];
    const over = await merge(dirs, { CONFORMANCE_REPORT_DIR: dirs[0]! });
    expect(over.code).toBe(2);
    expect(over.err.split('\n')[0]).toBe(
      `conformance: CONFORMANCE_REPORT_DIR ${dirs[0]} is the report directory of a shard being merged (${dirs[0]}): the merged report goes elsewhere`,
    );
    const bad = await merge(dirs, { CONFORMANCE_REPORTER: 'junit,nope' });
    expect(bad.err.split('\n')[0]).toMatch(/^conformance: CONFORMANCE_REPORTER: unknown reporter 'nope'/);
    const out = join(mkdtempSync(join(tmpdir(), 'conformance-merged-')), 'out');
    expect((await merge(dirs, { CONFORMANCE_REPORT_DIR: out })).code).toBe(0);
    expect(existsSync(join(out, 'results.json'))).toBe(true);
  });

  it("no directory, or one without results.json: pointed at merge's usage too", async () => {
    for (const args of [[], [mkdtempSync(join(tmpdir(), 'conformance-empty-dir-'))]]) {
      const r = await merge(args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^conformance: (merge needs the report directories|no results\.json in )/);
      expect(r.err.split('\n')[1]).toBe("Run 'conformance merge --help' for usage.");
    }
  });

  it('a results.json that is not JSON, or not a report: a usage error that says so, never a crash of the suite', async () => {
    for (const [content, message] of [
      ['{"broken', /results\.json is not JSON/],
      ['{"a":1}', /results\.json is not a report of this suite's version \(it breaks spec\/results\.schema\.yaml/],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-not-a-report-'));
      writeFileSync(join(dir, 'results.json'), content);
      const r = await merge([dir]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/SUITE_BUG|suite itself failed|    at /);
    }
  });

  it('the same settings in another key order are the same run', async () => {
    const catalog = (a: string, b: string) => ({ parents: { [a]: { value: a }, [b]: { value: b } } });
    const r = await merge([
      shardDir({ shard: '1/2', config: { catalog: catalog('x', 'y') } }),
      shardDir({ shard: '2/2', config: { catalog: catalog('y', 'x') } }),
    ]);
    expect(r.code, r.err).toBe(0);
  });
});
