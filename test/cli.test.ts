// The CLI end to end, as a user runs it: the built bin, a real target, real exit codes.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDefinitions, expandChecks, WRITTEN_LISTS } from '../suites/index.js';
import { shardChecks } from '../cli/plan.js';
import type { RunReport } from '../reporters/model.js';
import { cli, endpoints, paginationSettings, TOKEN, withServer } from './support.js';

function reportDir(): string {
  return mkdtempSync(join(tmpdir(), 'conformance-report-'));
}

function readReport(dir: string): RunReport {
  return JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as RunReport;
}

describe('usage', () => {
  it('--help explains the commands and the exit codes', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage:/);
    expect(r.stdout).toMatch(/Exit codes:/);
  });

  it('--version prints the version', async () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    expect((await cli(['--version'])).stdout.trim()).toBe(pkg.version);
  });

  it('--list shows every check with its level and clause', async () => {
    const r = await cli(['--list']);
    expect(r.code).toBe(0);
    for (const c of checkDefinitions) expect(r.stdout).toContain(c.id);
    expect(r.stdout).toContain(`${checkDefinitions.length} checks`);
  });

  it.each([
    [['--bogus'], /unknown option '--bogus'$/, ''],
    [['--check', 'no.such.check'], /unknown check id 'no.such.check'/, ''],
    [['--grep', 'zzzz-nothing'], /no check matches/, ''],
    [['--base-url', 'https://staging.example'], /needs a token/, ''],
    [['--concurrency', 'lots'], /--concurrency: must be a whole number/, ''],
    [['serve', '--fault', 'nope'], /unknown fault 'nope'/, 'serve '],
    // `--token "$CONFORMANCE_TOKEN"` with the variable unset: a server that would refuse everything.
    [['serve', '--token', ''], /--token must not be empty \(leave --token out to have a token generated and shown\)$/, 'serve '],
    [['extra'], /unexpected argument 'extra'/, ''],
  ])('%j is a usage error: one line, the help hint, exit 2', async (args, message, command) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines).toEqual([expect.stringMatching(/^conformance: /), `Run 'conformance ${command}--help' for usage.`]);
  });
});

describe('runs', () => {
  it('with no target: starts the reference server, nothing fails, exit 0, reports written', async () => {
    const dir = reportDir();
    const r = await cli(['--seed', '7', '--report-dir', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/reference server started on http:\/\/127\.0\.0\.1:\d+/);
    // The bundled server keeps one list empty: its MUST checks that need records are skipped.
    expect(r.stdout).toMatch(/exit 0: no MUST check failed; \d+ could not be exercised \(skipped\)/);
    const report = readReport(dir);
    const expected = expandChecks(paginationSettings(endpoints()));
    expect(report.results).toHaveLength(expected.length);
    expect(report.results.filter((x) => x.outcome === 'fail' || x.outcome === 'error')).toEqual([]);
    // Skips only where the reference data cannot show the rule: the empty lists, and past
    // the end of orders, which lies beyond the hard offset limit.
    const skipped = new Set(report.results.filter((x) => x.outcome === 'skip').map((x) => x.operation));
    expect([...skipped].sort()).toEqual(['application-keys', 'catalog-rules', 'custom-apis', 'orders'].filter((o) => skipped.has(o)));
    expect(skipped.has('catalog-rules')).toBe(true);
    expect(report.seed).toBe(7);
    expect(report.cleanup.leftovers).toEqual([]);
    for (const x of report.results) expect(Object.keys(x)).toEqual(expect.arrayContaining(['id', 'level', 'clause', 'outcome', 'durationMs']));
    const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)).toHaveLength(expected.length);
  });

  it('against a server that breaks a MUST rule: exit 1, the failure with its evidence', async () => {
    await withServer({ faults: ['delete-not-applied'] }, async (server) => {
      const dir = reportDir();
      const r = await cli(['--base-url', server.url, '--grep', 'delete.', '--report-dir', dir], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/FAIL delete\.repeat\.404/);
      // The read after the DELETE finds it: the evidence is that GET.
      expect(r.stdout).toMatch(/curl -i -X GET '[^']*custom-apis\//);
      expect(r.stdout).toContain(`--check delete.repeat.404 --seed`);
      const failed = readReport(dir).results.filter((x) => x.outcome === 'fail');
      expect(failed.map((x) => x.id)).toEqual(['delete.repeat.404']);
    });
  });

  it('a SHOULD failure alone exits 0; --strict makes it 1', async () => {
    await withServer({ faults: ['create-202'] }, async (server) => {
      const env = { CONFORMANCE_TOKEN: TOKEN };
      const plain = await cli(['--base-url', server.url, '--check', 'create.valid.2xx,create.valid.201'], { env });
      expect(plain.code, plain.stdout).toBe(0);
      expect(plain.stdout).toMatch(/SHOULD warning/);
      const strict = await cli(['--base-url', server.url, '--check', 'create.valid.2xx,create.valid.201', '--strict'], { env });
      expect(strict.code).toBe(1);
    });
  });

  it('a target that stops answering after the preflight is an error of the suite (exit 2), never a failure of the target', async () => {
    // (A target unreachable from the start stops at the preflight: test/preflight.test.ts.)
    const server = createServer((req, res) => {
      if (req.url === '/v2/settings') res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"page_length":25}}');
      else req.socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const dir = reportDir();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await cli(['--base-url', url, '--check', 'delete.unknown-id.404,create.valid.2xx', '--timeout', '2000', '--report-dir', dir], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(readReport(dir).results.map((x) => x.outcome)).toEqual(['error', 'error']);
      expect(r.stdout).toMatch(/CONNECTION_CLOSED|TARGET_DOWN/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('reads the target and token from conformance.config.yaml', async () => {
    await withServer({}, async (server) => {
      const cwd = mkdtempSync(join(tmpdir(), 'conformance-cwd-'));
      writeFileSync(join(cwd, 'conformance.config.yaml'), `base-url: ${server.url}\ntoken: ${TOKEN}\nseed: 11\n`);
      const r = await cli(['--check', 'delete.existing.204'], { cwd });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/seed {11}11 {2}\(file\)/);
      expect(r.stdout).not.toContain(TOKEN);
    });
  });
});

describe('list operations', () => {
  it('--list-operations lists every operation with its path', async () => {
    const r = await cli(['--list-operations']);
    expect(r.code).toBe(0);
    for (const e of endpoints()) expect(r.stdout).toContain(e.key);
    expect(r.stdout).toMatch(/orders +\/v2\/orders {2}\(hard offset limit\)/);
  });

  it('--list-operations shows the catalog as the settings file makes it: its additions and changes marked', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'conformance-cwd-'));
    try {
      // A target without its token: listing needs neither.
      writeFileSync(
        join(cwd, 'conformance.config.yaml'),
        [
          'base-url: https://staging.example',
          'operations:',
          '  my-keys:',
          '    name: My keys',
          '    paths: { default: /v2/application-keys }',
          '  accounts:',
          '    paths: { default: /v2/accounts-v2 }',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(cwd, 'other.yaml'),
        [
          'operations:',
          '  my-apis:',
          '    paths: { default: /v2/settings/extensions/custom-apis, by-slug: "/v2/settings/extensions/custom-apis/{slug}/entries" }',
          '',
        ].join('\n'),
      );
      const r = await cli(['--list-operations'], { cwd });
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toContain(`${'my-keys'.padEnd(34)}/v2/application-keys  (from conformance.config.yaml)`);
      expect(lines).toContain(`${'accounts'.padEnd(34)}/v2/accounts-v2  (changed in conformance.config.yaml)`);
      expect(lines).toHaveLength(endpoints().length + 1);
      for (const e of endpoints()) expect(r.stdout).toContain(e.key);
      // --config names another file; the marks name it.
      const other = await cli(['--list-operations', '--config', 'other.yaml'], { cwd });
      expect(other.code, other.stderr).toBe(0);
      expect(other.stdout).toMatch(/^my-apis@default +\/v2\/settings\/extensions\/custom-apis {2}\(from other\.yaml\)$/m);
      expect(other.stdout).toMatch(/^my-apis@by-slug +\/v2\/settings\/extensions\/custom-apis\/\{slug\}\/entries {2}\(from other\.yaml\)$/m);
      expect(other.stdout).not.toContain('my-keys');
      expect(other.stdout).toMatch(/^accounts +\/v2\/accounts$/m);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('lists absent operations once, and says which records traversals compared', async () => {
    await withServer({ behaviour: { absentPaths: ['/v2/files', '/pcm/jobs'] } }, async (server) => {
      const dir = reportDir();
      const r = await cli(['--base-url', server.url, '--operation', 'files,jobs,accounts', '--grep', 'list.', '--report-dir', dir], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Absent operations \(2\): their collection answered 404\n {2}files, jobs\n/);
      expect(r.stdout).toMatch(/traversal comparisons used only records created before \d{4}-\d\d-\d\dT.* 60 s time buffer/);
      expect(readReport(dir).lists?.absent).toEqual(['files', 'jobs']);
    });
  });

  it('--operation narrows the list checks; an unknown one is a usage error', async () => {
    await withServer({}, async (server) => {
      const dir = reportDir();
      const env = { CONFORMANCE_TOKEN: TOKEN };
      const r = await cli(['--base-url', server.url, '--grep', 'list.', '--operation', 'accounts,files', '--report-dir', dir], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      // The checks run once per list operation, narrowed; those run once per run (list.settings.*) name none.
      expect(new Set(readReport(dir).results.flatMap((x) => (x.operation ? [x.operation] : [])))).toEqual(new Set(['accounts', 'files']));
      const bad = await cli(['--base-url', server.url, '--operation', 'nope'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/unknown operation 'nope'/);
    });
  });

  it('takes catalog overrides from conformance.config.yaml: a parent id and an extra operation', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const cwd = mkdtempSync(join(tmpdir(), 'conformance-cwd-'));
      writeFileSync(
        join(cwd, 'conformance.config.yaml'),
        [
          `base-url: ${server.url}`,
          `token: ${TOKEN}`,
          'parents:',
          '  flowSlug: { value: no-such-flow }',
          'operations:',
          '  my-keys:',
          '    name: My keys',
          '    paths: { default: /v2/application-keys }',
          '',
        ].join('\n'),
      );
      const dir = reportDir();
      const r = await cli(['--check', 'list.endpoint.present', '--operation', 'entries,my-keys', '--report-dir', dir], { cwd });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const byOp = new Map(readReport(dir).results.map((x) => [x.operation, x]));
      // The configured parent is used as given: that flow does not exist, so entries are absent.
      expect(byOp.get('entries')!.reason).toBe('absent: GET /v2/flows/no-such-flow/entries answered 404');
      expect(byOp.get('my-keys')!.outcome).toBe('pass');
    });
  });
});

describe('certification, baselines, CI', () => {
  it('certifies a server where every MUST check ran and passed, with a bundle that verifies', async () => {
    await withServer({ emptyList: false }, async (server) => {
      const bundle = reportDir();
      // A certification runs every MUST check: the store's page length ones change it (and restore it).
      const r = await cli(['--base-url', server.url, '--certify', bundle, '--product', 'Reference', '--product-version', '1.0', '--change-settings'], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(/certifiable: yes/);
      const cert = JSON.parse(readFileSync(join(bundle, 'certificate.json'), 'utf8')) as Record<string, unknown>;
      expect(cert).toMatchObject({ product: 'Reference', productVersion: '1.0', certifiable: true });
      expect(cert.contractDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
      for (const line of readFileSync(join(bundle, 'SHA256SUMS'), 'utf8').trim().split('\n')) {
        const [sum, name] = line.split('  ');
        expect(
          createHash('sha256')
            .update(readFileSync(join(bundle, name!)))
            .digest('hex'),
        ).toBe(sum);
      }
    });
  });

  it('refuses to certify when a MUST check was skipped, or the run was narrowed, saying why (exit 1)', async () => {
    await withServer({}, async (server) => {
      const env = { CONFORMANCE_TOKEN: TOKEN };
      const r = await cli(['--base-url', server.url, '--certify', reportDir()], { env });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/certifiable: no \(\d+ MUST check\(s\) skipped for a reason other than a declared-absent operation \(.*catalog-rules/);
      const narrowed = await cli(['--base-url', server.url, '--certify', reportDir(), '--check', 'delete.existing.204'], { env });
      expect(narrowed.code).toBe(1);
      expect(narrowed.stdout).toMatch(/certifiable: no \(the run was narrowed by --check/);
    });
  });

  it('a baseline turns known failures into reports, and names entries that pass now as stale', async () => {
    const file = join(reportDir(), 'baseline.yaml');
    const env = { CONFORMANCE_TOKEN: TOKEN };
    const args = ['--grep', 'delete.'];
    await withServer({ faults: ['delete-not-applied'] }, async (server) => {
      const first = await cli(['--base-url', server.url, ...args, '--write-baseline', file], { env });
      expect(first.code).toBe(1);
      expect(readFileSync(file, 'utf8')).toMatch(/- id: delete\.repeat\.404/);
      const again = await cli(['--base-url', server.url, ...args, '--baseline', file], { env });
      expect(again.code, again.stdout).toBe(0);
      expect(again.stdout).toMatch(/1 known failure\(s\) reported but not counted/);
    });
    await withServer({}, async (server) => {
      const fixed = await cli(['--base-url', server.url, ...args, '--baseline', file], { env });
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).toMatch(/stale: delete\.repeat\.404 passes now; remove it from the baseline/);
    });
  });

  it('under GitHub Actions: one annotation per failed MUST check and a Markdown step summary', async () => {
    await withServer({ faults: ['delete-not-applied', 'create-202'] }, async (server) => {
      const summary = join(reportDir(), 'summary.md');
      const r = await cli(['--base-url', server.url, '--check', 'delete.repeat.404,create.valid.2xx,create.valid.201'], {
        env: { CONFORMANCE_TOKEN: TOKEN, GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary },
      });
      expect(r.code).toBe(1);
      const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
      expect(annotations).toHaveLength(1);
      expect(annotations[0]).toMatch(
        /^::error title=conformance delete\.repeat\.404::a GET still finds the Custom API after its DELETE.*%0Aexpected: status 404 \(the Custom API is gone\)%0Aactual: status 200/,
      );
      expect(readFileSync(summary, 'utf8')).toMatch(/## Conformance: ❌ exit 1: 1 MUST check\(s\) failed[\s\S]*\| `create\.valid\.201` \| SHOULD \| warn \|/);
    });
  });

  it('a shard keeps the list checks of a list the suite writes with the area that writes it', () => {
    for (const eps of [endpoints(), endpoints(['application-keys', 'custom-apis', 'accounts', 'orders'])]) {
      const all = expandChecks(paginationSettings(eps));
      for (let count = 2; count <= 8; count++) {
        const shards = Array.from({ length: count }, (_, i) => shardChecks(all, { index: i + 1, count }));
        // Each check in exactly one shard.
        expect(
          shards
            .flat()
            .map((c) => `${c.id} ${c.operation ?? ''}`)
            .sort(),
        ).toEqual(all.map((c) => `${c.id} ${c.operation ?? ''}`).sort());
        for (const [list, area] of WRITTEN_LISTS) {
          const holding = shards.filter((part) => part.some((c) => c.operation === list));
          expect(holding, `${list} in ${count} shards`).toHaveLength(1);
          expect(
            holding[0]!.some((c) => c.operation === undefined && c.area === area),
            `${list} with ${area} in ${count} shards`,
          ).toBe(true);
        }
      }
    }
  });

  it('shards split the run by area and operation, and merge gives the whole report', async () => {
    await withServer({}, async (server) => {
      const env = { CONFORMANCE_TOKEN: TOKEN };
      const [a, b, out] = [reportDir(), reportDir(), reportDir()];
      const args = ['--base-url', server.url, '--operation', 'accounts,orders,catalogs'];
      const one = await cli([...args, '--shard', '1/2', '--report-dir', a], { env });
      const two = await cli([...args, '--shard', '2/2', '--report-dir', b], { env });
      expect([one.code, two.code]).toEqual([0, 0]);
      const ra = readReport(a);
      const rb = readReport(b);
      expect(ra.shard).toBe('1/2');
      const keys = (r: RunReport) => r.results.map((x) => `${x.id} ${x.operation ?? ''}`);
      expect(keys(ra).filter((k) => keys(rb).includes(k))).toEqual([]);
      const merged = await cli(['merge', a, b, '--report-dir', out], { env });
      expect(merged.code, merged.stdout + merged.stderr).toBe(0);
      const m = readReport(out);
      expect(m.results).toHaveLength(ra.results.length + rb.results.length);
      expect(m.summary.total).toBe(m.results.length);
      expect(new Set(m.results.map((x) => x.operation).filter(Boolean))).toEqual(new Set(['accounts', 'orders', 'catalogs']));
      expect(existsSync(join(out, 'report.html'))).toBe(true);
    });
  });
});

describe('secrets', () => {
  it('never prints the token or a client_secret, even when the target echoes them everywhere', async () => {
    const token = `leak-canary-${randomUUID()}`;
    const secrets: string[] = [];
    // A hostile target: echoes the Authorization header in a header and in the body, and
    // hands out a client_secret on every answer.
    const echo = createServer((req, res) => {
      req.resume();
      const secret = `cs-${randomUUID()}`;
      secrets.push(secret);
      res.setHeader('x-echo', String(req.headers.authorization));
      res.setHeader('content-type', 'application/json');
      res.statusCode = req.method === 'DELETE' ? 500 : 201;
      res.end(
        JSON.stringify({
          data: { id: randomUUID(), name: 'x', type: 'application_key', client_secret: secret, seen: req.headers.authorization },
          errors: [{ detail: `token was ${String(req.headers.authorization)} secret ${secret}` }],
        }),
      );
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    try {
      const dir = reportDir();
      const bundle = reportDir();
      const stepSummary = join(reportDir(), 'step-summary.md');
      const baseline = join(reportDir(), 'baseline.yaml');
      const r = await cli(['--base-url', url, '--report-dir', dir, '--certify', bundle, '--write-baseline', baseline, '--operation', 'accounts'], {
        env: { CONFORMANCE_TOKEN: token, GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: stepSummary },
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^::error title=/m);
      const files = [...readdirSync(dir).map((f) => join(dir, f)), ...readdirSync(bundle).map((f) => join(bundle, f)), stepSummary, baseline];
      expect(files.map((f) => f.split('/').pop()).sort()).toEqual([
        'SHA256SUMS',
        'baseline.yaml',
        'certificate.json',
        'config.json',
        'junit.xml',
        'junit.xml',
        'report.html',
        'report.html',
        'results.json',
        'results.json',
        'step-summary.md',
      ]);
      const outputs = [r.stdout, r.stderr, ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
      expect(outputs).toContain('***');
      expect(outputs).not.toContain(token);
      expect(secrets.length).toBeGreaterThan(10);
      for (const s of secrets) expect(outputs).not.toContain(s);
    } finally {
      echo.closeAllConnections();
      await new Promise<void>((r) => echo.close(() => r()));
    }
  });
});
