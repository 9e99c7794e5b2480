// Replays (cli/replays.ts): after a run, each failed result is run again alone, --replays times,
// and labelled `reproduced k of N` or `flaky: did not reproduce`, with no outcome changed. Through
// the CLI's main(), against reference servers on port 0 behind a proxy that counts what reaches
// them: a replay sends what its check needs, and nothing at all when nothing failed.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ledgerPath } from '../lib/runner/index.js';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import { cleanupCommand } from '../reporters/console.js';
import { renderCtrf } from '../reporters/ctrf.js';
import { replayLabel, type ReplayCount, type RunReport } from '../reporters/model.js';
import { applicationKey, listening, TOKEN, withServer } from './support.js';

/**
 * A proxy in front of `upstream` that writes down each request it forwards: `METHOD /path` (ids
 * as `{id}`). A request `refused` gives a status is answered that status by the proxy itself, and
 * not forwarded.
 */
async function counting(
  upstream: string,
  refused: (req: IncomingMessage) => number | undefined = () => undefined,
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const status = refused(req);
    if (status) {
      res.writeHead(status, { 'content-type': 'application/json' }).end(`{"errors":[{"status":"${status}","title":"Refused"}]}`);
      return;
    }
    seen.push(`${req.method} ${(req.url ?? '').split('?')[0]!.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}')}`);
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(out);
  });
  return { ...(await listening(server)), seen };
}

interface Ran {
  code: number;
  out: string;
  report: RunReport;
  junit: string;
  html: string;
  /** What reached the target. */
  seen: string[];
}

/** `conformance ARGS --report-dir DIR` through main(), the token in the environment: its exit code, its lines and DIR. `heard` hears each line as it is said. */
async function conformance(
  args: string[],
  heard: (line: string) => void = () => {},
  env: Record<string, string> = { CONFORMANCE_TOKEN: TOKEN },
): Promise<{ code: number; out: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-replays-'));
  const lines: string[] = [];
  const said = (l: string): void => {
    lines.push(l);
    heard(l);
  };
  const io: Io = { out: said, err: said, env, cwd: dir, isTTY: false };
  const code = await main([...args, '--report-dir', dir], io);
  return { code, out: lines.join('\n'), dir };
}

/** A run through main() against a server with `faults`, behind a counting proxy; its reports read back. */
async function runWith(faults: string[], args: string[]): Promise<Ran> {
  return withServer({ faults, seed: 7 }, async (server) => {
    const proxy = await counting(server.url);
    try {
      const { code, out, dir } = await conformance(['--base-url', proxy.url, '--seed', '3', ...args]);
      const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
      return {
        code,
        out,
        report: JSON.parse(read('results.json')) as RunReport,
        junit: read('junit.xml'),
        html: read('report.html'),
        seen: [...proxy.seen],
      };
    } finally {
      await proxy.close();
    }
  });
}

/** `a` without one of each of `b` (a multiset difference), sorted. */
function without(a: readonly string[], b: readonly string[]): string[] {
  const left = [...a];
  for (const x of b) {
    const i = left.indexOf(x);
    if (i >= 0) left.splice(i, 1);
  }
  return left.sort();
}

describe('replays', () => {
  it('a failure the target gives every time: "reproduced 2 of 2" everywhere it is shown; each replay sends what the check sent, and nothing more', async () => {
    const check = ['--check', 'delete.existing.204'];
    const once = await runWith(['delete-200-with-body'], [...check, '--replays', '0']);
    const twice = await runWith(['delete-200-with-body'], check);
    expect(twice.code, twice.out).toBe(1);
    const [r] = twice.report.results;
    expect(r!.outcome).toBe('fail');
    expect(r!.replays).toEqual({ runs: 2, reproduced: 2 });
    expect(replayLabel(r!)).toBe('reproduced 2 of 2');
    expect(twice.out).toMatch(/^ {6}again: {4}reproduced 2 of 2$/m);
    expect(twice.out).toMatch(
      /^replays: 1 failure\(s\) run again alone: 1 reproduced, 0 flaky \(did not reproduce\); 2 round\(s\) of at most 2, \d+ request\(s\)/m,
    );
    expect(twice.junit).toContain('<property name="replayed" value="reproduced 2 of 2"/>');
    expect(twice.junit).toMatch(/<failure message="\[reproduced 2 of 2\] /);
    expect(twice.html).toContain('<b>run again alone:</b> reproduced 2 of 2');
    const ctrf = (report: RunReport) => (JSON.parse(renderCtrf(report)) as { results: { tests: Array<Record<string, unknown>> } }).results.tests[0]!;
    expect(ctrf(twice.report)).toMatchObject({ retries: 2, flaky: false, extra: { replayed: 'reproduced 2 of 2' } });
    expect(twice.report.summary.replayed).toEqual({ reproduced: 1, flaky: 0 });
    // The run without replays: no label, no replay requests.
    expect(once.code).toBe(1);
    expect(once.report.results[0]!.replays).toBeUndefined();
    expect(once.report.replays).toBeUndefined();
    expect(once.report.summary.replayed).toBeUndefined();
    expect(once.out).not.toMatch(/again:|^replay \d/m);
    expect(once.junit).not.toContain('replayed');
    // Each replay is the check again, alone: the run's requests but its preflight, twice over.
    const run = without(once.seen, ['GET /v2/settings']);
    expect(run.length).toBeGreaterThan(1);
    expect(without(twice.seen, once.seen)).toEqual([...run, ...run].sort());
    const cleanup = once.seen.length - 1 - once.report.load!.timeline.reduce((n, b) => n + b.answers, 0);
    expect(twice.report.replays).toMatchObject({ limit: 2, passes: 2, requests: 2 * (run.length - cleanup) });
  }, 120_000);

  it('a failure of a moment (one read in three answered 500): labelled, still a MUST failure and exit 1, the counts agree', async () => {
    // Alone, delete.repeat.404 reads its Custom API once a run: the run's read is the first (500),
    // the replays' the second and third (served).
    const alone = await runWith(['custom-api-read-flaky-500'], ['--check', 'delete.repeat.404']);
    expect(alone.code, alone.out).toBe(1);
    const [r] = alone.report.results;
    expect(r).toMatchObject({ outcome: 'fail', level: 'MUST', replays: { runs: 2, reproduced: 0 } });
    expect(alone.out).toMatch(/^ {6}again: {4}flaky: did not reproduce$/m);
    expect(alone.junit).toContain('<property name="replayed" value="flaky: did not reproduce"/>');
    expect(alone.html).toContain('<b>run again alone:</b> flaky: did not reproduce');
    expect(JSON.parse(renderCtrf(alone.report)).results.tests[0]).toMatchObject({ retries: 2, flaky: true, extra: { replayed: 'flaky: did not reproduce' } });
    expect(alone.report.summary.replayed).toEqual({ reproduced: 0, flaky: 1 });
    expect(alone.seen.filter((x) => x === 'GET /v2/settings/extensions/custom-apis/{id}')).toHaveLength(3);

    // With every check that reads a Custom API by its id: whichever got a 500, labelled either way.
    const wide = await runWith(
      ['custom-api-read-flaky-500'],
      [
        '--check',
        'delete.existing.204,delete.repeat.404,state.sequence.created,state.sequence.deleted,state.sequence.distinct,state.sequence.total',
        '--replays',
        '3',
      ],
    );
    expect(wide.code, wide.out).toBe(1);
    const failed = wide.report.results.filter((x) => x.outcome === 'fail');
    expect(failed.length).toBeGreaterThan(0);
    for (const x of failed) {
      expect(x.replays!.runs + (x.replays!.errors ?? 0) + (x.replays!.skipped ?? 0)).toBe(3);
      expect(x.replays!.reproduced).toBeLessThanOrEqual(x.replays!.runs);
      expect(wide.out).toContain(`again:    ${replayLabel(x)}`);
    }
    // Each failure in one class: reproduced, else failed only otherwise, else flaky, else no verdict.
    const classes = { reproduced: 0, flaky: 0, otherwise: 0, noVerdict: 0 };
    for (const { replays: x } of failed) classes[x!.reproduced ? 'reproduced' : x!.otherwise ? 'otherwise' : x!.runs ? 'flaky' : 'noVerdict']++;
    expect(wide.report.summary.replayed).toEqual({
      reproduced: classes.reproduced,
      flaky: classes.flaky,
      ...(classes.otherwise ? { otherwise: classes.otherwise } : {}),
      ...(classes.noVerdict ? { noVerdict: classes.noVerdict } : {}),
    });
    expect(wide.report.results.filter((x) => x.outcome !== 'fail').every((x) => x.replays === undefined)).toBe(true);
  }, 180_000);

  it('every DELETE answered 500 from the first replay on: the replays failed otherwise, not as the run did; every ledger left is named in one command, which empties them once the target answers', async () => {
    await withServer({ faults: ['delete-200-with-body'], seed: 7 }, async (server) => {
      let replaying = false;
      const proxy = await counting(server.url, (req) => (replaying && req.method === 'DELETE' ? 500 : undefined));
      try {
        const run = await conformance(['--base-url', proxy.url, '--seed', '3', '--check', 'delete.existing.204'], (line) => {
          if (/^replay 1 of/.test(line)) replaying = true;
        });
        expect(run.code, run.out).toBe(1);
        const report = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as RunReport;
        const [r] = report.results;
        // The run's failure was a 200 for a 204; the replays' a 500: the rule broken again, otherwise.
        expect(r).toMatchObject({ outcome: 'fail', evidence: { status: 200 }, replays: { runs: 2, reproduced: 0, otherwise: 2, otherStatuses: [500] } });
        expect(run.out).toMatch(/^ {6}again: {4}did not reproduce as it was; failed otherwise 2 of 2 \(status 500, not 200\)$/m);
        expect(report.summary.replayed).toEqual({ reproduced: 0, flaky: 0, otherwise: 1 });
        expect(run.out).toMatch(/^replays: 1 failure\(s\) run again alone: 0 reproduced, 1 failed only otherwise \(another status\), 0 flaky/m);
        expect(JSON.parse(renderCtrf(report)).results.tests[0]).toMatchObject({ retries: 2, flaky: false });
        // Each pass left its Custom API (its DELETE answered 500), and the run's cleanup failed too.
        const kept = report.cleanup.kept!;
        expect(kept).toHaveLength(3);
        expect(kept[0]).toBe(report.runId);
        expect(report.cleanup.leftovers).toHaveLength(3);
        const command = `npx conformance cleanup ${kept.map((id) => `--run ${id}`).join(' ')}`;
        expect(run.out.split('\n')).toContain(`3 ledger(s) kept (run ${kept.join(', ')}); what they hold is deleted by: ${command}`);
        expect(readFileSync(join(run.dir, 'report.html'), 'utf8')).toContain(`what is left is deleted by: ${command}`);
        // The command as printed, once the target answers again: each ledger emptied, and gone.
        replaying = false;
        const lines: string[] = [];
        const io: Io = { out: (l) => lines.push(l), err: (l) => lines.push(l), env: { CONFORMANCE_TOKEN: TOKEN }, cwd: run.dir, isTTY: false };
        expect(await main(command.split(' ').slice(2), io), lines.join('\n')).toBe(0);
        for (const id of kept) expect(existsSync(dirname(ledgerPath(id))), `${id}: ${lines.join('\n')}`).toBe(false);
        expect(proxy.seen.filter((x) => x === 'DELETE /v2/settings/extensions/custom-apis/{id}').length).toBeGreaterThanOrEqual(3);
      } finally {
        await proxy.close();
      }
    });
  }, 120_000);

  it('every write refused (401) from the first replay on: the replays skip, and the label and the counts say no verdict came, not flaky', async () => {
    await withServer({ faults: ['delete-200-with-body'], seed: 7 }, async (server) => {
      let replaying = false;
      const proxy = await counting(server.url, (req) => (replaying && req.method !== 'GET' ? 401 : undefined));
      try {
        const run = await conformance(['--base-url', proxy.url, '--seed', '3', '--check', 'delete.existing.204'], (line) => {
          if (/^replay 1 of/.test(line)) replaying = true;
        });
        expect(run.code, run.out).toBe(1);
        const report = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as RunReport;
        expect(report.results[0]!.replays).toEqual({ runs: 0, reproduced: 0, skipped: 2 });
        expect(run.out).toMatch(/^ {6}again: {4}not replayed to a verdict \(2 skipped\)$/m);
        expect(report.summary.replayed).toEqual({ reproduced: 0, flaky: 0, noVerdict: 1 });
        expect(run.out).toMatch(/^replays: 1 failure\(s\) run again alone: 0 reproduced, 0 flaky \(did not reproduce\), 1 not replayed to a verdict/m);
        // What the run left (its cleanup's DELETE refused too) is named with the command.
        expect(run.out).toContain(`1 ledger(s) kept (run ${report.runId}); what they hold is deleted by: npx conformance cleanup --run ${report.runId}`);
        rmSync(dirname(ledgerPath(report.runId)), { recursive: true, force: true });
      } finally {
        await proxy.close();
      }
    });
  }, 120_000);

  it("with client credentials, every token of the run revoked when the replays start: each replay logs in again, and the label is the replays' verdict", async () => {
    await withServer({ faults: ['delete-200-with-body'], seed: 7 }, async (server) => {
      const { id, secret } = await applicationKey(server.url);
      let replaying = false;
      const before = new Set<string>();
      const proxy = await counting(server.url, (req) => {
        const auth = req.headers.authorization ?? '';
        if (!replaying) before.add(auth);
        return replaying && before.has(auth) && req.url !== '/oauth/access_token' ? 401 : undefined;
      });
      try {
        const run = await conformance(
          ['--base-url', proxy.url, '--client-id', id, '--seed', '3', '--check', 'delete.existing.204'],
          (line) => {
            if (/^replay 1 of/.test(line)) replaying = true;
          },
          { CONFORMANCE_CLIENT_SECRET: secret },
        );
        expect(run.code, run.out).toBe(1);
        const report = JSON.parse(readFileSync(join(run.dir, 'results.json'), 'utf8')) as RunReport;
        expect(report.results[0]!.replays).toEqual({ runs: 2, reproduced: 2 });
        expect(report.auth!.logins).toBeGreaterThan(1);
        expect(report.cleanup.leftovers).toEqual([]);
      } finally {
        await proxy.close();
      }
    });
  }, 120_000);

  it('a run with no failure replays nothing', async () => {
    const plain = await runWith([], ['--grep', 'delete.']);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.report.replays).toEqual({ limit: 2, passes: 0, requests: 0, durationMs: expect.any(Number) });
    expect(plain.out).not.toMatch(/^replay \d/m);
    // What reached the server is what the run's checks, its preflight and its cleanup sent.
    const off = await runWith([], ['--grep', 'delete.', '--replays', '0']);
    expect(plain.seen.sort()).toEqual(off.seen.sort());
  }, 120_000);

  it('conformance merge keeps the labels of each shard, and counts them', async () => {
    await withServer({ faults: ['delete-200-with-body'], seed: 7 }, async (server) => {
      const shard = (i: number) =>
        conformance(['--base-url', server.url, '--seed', '5', '--check', 'delete.existing.204,create.valid.2xx', '--shard', `${i}/2`]);
      const parts = [await shard(1), await shard(2)];
      const merged = await conformance(['merge', ...parts.map((p) => p.dir)]);
      expect(merged.code, merged.out).toBe(1);
      const report = JSON.parse(readFileSync(join(merged.dir, 'results.json'), 'utf8')) as RunReport;
      expect(report.results.find((r) => r.id === 'delete.existing.204')!.replays).toEqual({ runs: 2, reproduced: 2 });
      expect(report.summary.replayed).toEqual({ reproduced: 1, flaky: 0 });
      expect(report.replays).toMatchObject({ limit: 2, passes: 2 });
      expect(merged.out).toMatch(/^ {6}again: {4}reproduced 2 of 2$/m);
    });
  }, 120_000);
});

describe('cleanupCommand', () => {
  it('names every kept ledger, and logs in as the run did', () => {
    const cleanup = { deleted: 0, leftovers: [], kept: ['0b28f4b6', '8d6f3fc6'] };
    expect(cleanupCommand({ runId: '0b28f4b6', cleanup, config: {} })).toBe('npx conformance cleanup --run 0b28f4b6 --run 8d6f3fc6');
    expect(cleanupCommand({ runId: '0b28f4b6', cleanup, config: { clientId: 'c1', tokenUrl: 'https://auth.example/t?p=b2c' } })).toBe(
      "npx conformance cleanup --run 0b28f4b6 --run 8d6f3fc6 --client-id c1 --token-url 'https://auth.example/t?p=b2c'",
    );
    expect(cleanupCommand({ runId: '0b28f4b6', cleanup: { deleted: 0, leftovers: [] }, config: {} })).toBe('npx conformance cleanup --run 0b28f4b6');
  });
});

describe('replayLabel', () => {
  it('says what the replays found, and what came to no verdict', () => {
    const label = (replays: ReplayCount, status?: number) => replayLabel({ replays, evidence: { status } });
    expect(label({ runs: 2, reproduced: 2 })).toBe('reproduced 2 of 2');
    expect(label({ runs: 2, reproduced: 0 })).toBe('flaky: did not reproduce');
    expect(label({ runs: 3, reproduced: 1, otherwise: 1, otherStatuses: [503] }, 200)).toBe('reproduced 1 of 3; failed otherwise 1 of 3 (status 503, not 200)');
    expect(label({ runs: 2, reproduced: 0, otherwise: 2, otherStatuses: [500, 401] }, 200)).toBe(
      'did not reproduce as it was; failed otherwise 2 of 2 (status 500, 401, not 200)',
    );
    expect(label({ runs: 1, reproduced: 1, errors: 1 })).toBe('reproduced 1 of 1 (1 replay(s) ended in an error of the suite)');
    expect(label({ runs: 0, reproduced: 0, errors: 1, skipped: 1 })).toBe('not replayed to a verdict (1 replay(s) ended in an error of the suite, 1 skipped)');
    expect(replayLabel({})).toBeUndefined();
  });
});
