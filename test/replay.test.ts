// Re-run commands reproduce: the command printed for a failure carries the seed, the
// target and every setting that changes the outcome, whatever set it (file, environment,
// flag), and never the token; results.json carries it for each failure and error.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { renderSummary, replayCommand, replayTokenNote, shellWord } from '../reporters/console.js';
import { githubAnnotations } from '../reporters/github.js';
import { renderHtml, esc } from '../reporters/html.js';
import { renderJson } from '../reporters/json.js';
import type { RunReport } from '../reporters/model.js';
import { reportOf, resultOf } from './fixtures/report.js';
import { cli, TOKEN, withServer } from './support.js';

const fail = (id: string, more: Partial<CheckResult> = {}): CheckResult => resultOf(id, 'fail', { reason: `${id} failed`, durationMs: 3, ...more });

/** A report as cli/run.ts makes it, with the configuration lib/configuration/config.ts maskedConfig gives. */
function report(
  config: Record<string, unknown>,
  results: CheckResult[],
  target: RunReport['target'] = { baseUrl: 'https://staging.example', embedded: false },
): RunReport {
  return reportOf(results, {
    runId: 'replay01',
    seed: 1234,
    contractDigest: `sha256:${'ef'.repeat(32)}`,
    target,
    config: {
      baseUrl: target.embedded ? undefined : target.baseUrl,
      token: '***',
      seed: 1234,
      concurrency: 64,
      maxBodyBytes: 16777216,
      checks: [],
      strict: false,
      requestBudget: 1000,
      timeBufferSeconds: 60,
      requireAllEndpoints: false,
      operations: [],
      catalog: {},
      timeoutMs: 10000,
      ...config,
    },
  });
}

/** The words a POSIX shell makes of a command line. */
function shellSplit(command: string): string[] {
  return execFileSync('/bin/sh', ['-c', `for w in ${command}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);
}

describe('the replay command', () => {
  const settings = {
    configFile: '/srv/ci/conformance config.yaml',
    strict: true,
    timeoutMs: 2500,
    requestBudget: 300,
    timeBufferSeconds: 5,
    defaultPageLength: 20,
    requireAllEndpoints: true,
    operations: ['hierarchies@by-release'],
  };

  it('carries the config file, seed, target and every setting that changes the outcome of a list check', () => {
    const r = report(settings, []);
    expect(replayCommand(r, { id: 'list.limit.default', operation: 'hierarchies@by-release' })).toBe(
      "npx conformance --config '/srv/ci/conformance config.yaml' --check list.limit.default --operation hierarchies@by-release --seed 1234 --base-url https://staging.example --timeout 2500 --max-body-bytes 16777216 --request-budget 300 --time-buffer 5 --default-page-length 20 --require-all-endpoints --strict",
    );
  });

  it('a check that is not a list check gets no list setting; a run against the bundled server no --base-url', () => {
    expect(replayCommand(report(settings, []), { id: 'delete.repeat.404' })).toBe(
      "npx conformance --config '/srv/ci/conformance config.yaml' --check delete.repeat.404 --seed 1234 --base-url https://staging.example --timeout 2500 --max-body-bytes 16777216 --strict",
    );
    expect(replayCommand(report({}, [], { baseUrl: 'http://127.0.0.1:40123', embedded: true }), { id: 'delete.repeat.404' })).toBe(
      'npx conformance --check delete.repeat.404 --seed 1234 --timeout 10000 --max-body-bytes 16777216',
    );
  });

  it('never holds the token, whatever the configuration holds', () => {
    const command = replayCommand(report({ token: TOKEN }, []), { id: 'delete.repeat.404' });
    expect(command).not.toContain(TOKEN);
    expect(command).not.toMatch(/--token|\*\*\*/);
  });

  it('logs in as the run did: --client-id and --token-url, never the secret, and the note says where the secret comes from', () => {
    const r = report({ clientId: 'client-7', clientSecret: '***', tokenUrl: 'https://staging.example/oauth/access_token' }, []);
    const command = replayCommand(r, { id: 'delete.repeat.404' });
    expect(command).toContain('--base-url https://staging.example --client-id client-7 --token-url https://staging.example/oauth/access_token');
    expect(command).not.toMatch(/secret|\*\*\*/);
    expect(replayTokenNote(r)).toMatch(/set CONFORMANCE_CLIENT_SECRET, or add --client-secret-file FILE/);
    expect(replayTokenNote(report({}, []))).toMatch(/set CONFORMANCE_TOKEN/);
  });

  it('quotes what the shell would read, so each value reaches the CLI as one word', () => {
    const odd = ["/tmp/it's here/conf.yaml", 'a b', '$HOME', '`x`', 'semi;colon', 'glob*', '~', ''];
    for (const s of odd) expect(shellSplit(shellWord(s))).toEqual([s]);
    const r = report({ configFile: "/tmp/it's here/conf.yaml" }, [], { baseUrl: 'https://staging.example/base path', embedded: false });
    expect(shellSplit(replayCommand(r, { id: 'list.limit.max', operation: 'orders' }))).toEqual([
      'npx',
      'conformance',
      '--config',
      "/tmp/it's here/conf.yaml",
      '--check',
      'list.limit.max',
      '--operation',
      'orders',
      '--seed',
      '1234',
      '--base-url',
      'https://staging.example/base path',
      '--timeout',
      '10000',
      '--max-body-bytes',
      '16777216',
      '--request-budget',
      '1000',
      '--time-buffer',
      '60',
    ]);
  });

  it('is the same in the console, the GitHub annotation, report.html and results.json; results.json has it for each failure and error only', () => {
    const results = [
      fail('list.limit.max', { operation: 'files' }),
      fail('create.valid.201', { level: 'SHOULD', area: 'create-application-key' }),
      { ...fail('list.limit.exact', { operation: 'orders' }), outcome: 'error' as const },
      { ...fail('delete.existing.204'), outcome: 'pass' as const },
      { ...fail('list.meta.fields', { operation: 'jobs' }), outcome: 'skip' as const },
    ];
    const r = report(settings, results);
    const expected = results.map((x) => (x.outcome === 'fail' || x.outcome === 'error' ? replayCommand(r, x) : undefined));
    const json = JSON.parse(renderJson(r)) as RunReport;
    expect(json.results.map((x) => x.replay)).toEqual(expected);
    const console = renderSummary(r, { color: false });
    const html = renderHtml(r);
    for (const c of expected.filter((x) => x !== undefined)) {
      expect(console).toContain(`replay:   ${c}`);
      expect(html).toContain(esc(c));
    }
    expect(githubAnnotations(r)[0]).toContain(`replay: ${expected[0]}`);
  });

  it("a result that carries its own command (a merged report: its shard's seed) keeps it", () => {
    const r = report({}, [fail('list.limit.max', { operation: 'files' })]);
    expect(replayCommand(r, { id: 'list.limit.max', operation: 'files', replay: 'npx conformance --check list.limit.max --operation files --seed 77' })).toBe(
      'npx conformance --check list.limit.max --operation files --seed 77',
    );
  });
});

/** Runs a replay command as printed, through the built CLI, in a fresh directory and environment. */
function replay(command: string, env: Record<string, string> = {}) {
  const words = shellSplit(command);
  expect(words.slice(0, 2)).toEqual(['npx', 'conformance']);
  return cli(words.slice(2), { env });
}

function readReport(dir: string): RunReport {
  return JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as RunReport;
}

describe('a replay reproduces the outcome', () => {
  it('a setting given in the environment: the replay carries it, and fails as the run did', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-replay-'));
    // An expected default page length of 20 against the bundled server's 25: a MUST failure
    // that exists only under this setting.
    const run = await cli(['--check', 'list.limit.default', '--operation', 'accounts', '--seed', '5', '--report-dir', dir], {
      env: { CONFORMANCE_DEFAULT_PAGE_LENGTH: '20', CONFORMANCE_TIMEOUT_MS: '4000' },
    });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const failed = readReport(dir).results.find((x) => x.outcome === 'fail')!;
    expect(failed.replay).toBe(
      'npx conformance --check list.limit.default --operation accounts --seed 5 --timeout 4000 --max-body-bytes 16777216 --request-budget 1000 --time-buffer 60 --explore 20 --default-page-length 20',
    );
    expect(run.stdout).toContain(`replay:   ${failed.replay}`);
    // Without the setting the same check passes: it is the setting the replay had to carry.
    const [again, without] = await Promise.all([replay(failed.replay!), replay(failed.replay!.replace(' --default-page-length 20', ''))]);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    expect(again.stdout).toContain(`reason:   ${failed.reason}`);
    expect(without.code, without.stdout).toBe(0);
  });

  it('a config file with the target, token and --strict: the replay names the file, never the token, and fails as the run did', async () => {
    await withServer({ faults: ['create-202'] }, async (server) => {
      const cwd = mkdtempSync(join(tmpdir(), 'conformance-cwd-'));
      writeFileSync(join(cwd, 'ci.yaml'), `base-url: ${server.url}\ntoken: ${TOKEN}\nstrict: true\ntimeout: 3000\n`);
      const dir = join(cwd, 'out');
      const run = await cli(['--config', 'ci.yaml', '--check', 'create.valid.201', '--seed', '8', '--report-dir', dir], { cwd });
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const failed = readReport(dir).results.find((x) => x.outcome === 'fail')!;
      expect(failed.replay).toBe(
        `npx conformance --config ${join(cwd, 'ci.yaml')} --check create.valid.201 --seed 8 --base-url ${server.url} --timeout 3000 --max-body-bytes 16777216 --explore 20 --strict`,
      );
      expect(`${run.stdout}${readFileSync(join(dir, 'results.json'), 'utf8')}`).not.toContain(TOKEN);
      // From another directory, with an empty environment: the file gives the token.
      const again = await replay(failed.replay!);
      expect(again.code, again.stdout + again.stderr).toBe(1);
      expect(again.stdout).toContain(`reason:   ${failed.reason}`);
    });
  });
});
