// Before any check, one authenticated read shows the target is there, answers JSON
// and takes the token. Each way it can go wrong ends the run in one line that says what to do,
// exit 2, within the request timeout plus a few seconds; never hundreds of lines.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ledgerPath } from '../lib/runner/index.js';
import { createReferenceHandler } from '../server/index.js';
import { cli, TOKEN, withServer, type Ran } from './support.js';

/** A server on port 0 answering every request with `handler`, closed after `fn`. */
async function withRaw<T>(handler: RequestListener, fn: (url: string) => Promise<T>): Promise<T> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** The run ended at the preflight: exit 2, no check ran, and a few lines, the last two of them the reason and the exit. */
function expectStopped(r: Ran, reason: RegExp): void {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  const err = r.stderr.trim().split('\n');
  expect(err).toHaveLength(2);
  expect(err[0]).toMatch(reason);
  expect(err[1]).toBe('exit 2: no check ran (the run stopped at the preflight)');
  expect(r.stdout.split('\n').length).toBeLessThan(25);
  expect(r.stdout).not.toMatch(/MUST check|✗/);
}

const LOGIN = '<!DOCTYPE html><html><head><title>Sign in \u001b[31mnow</title></head><body><form>…</form></body></html>';

describe('preflight', () => {
  it('a token the client credentials obtained, which the API refuses: the advice is about the login, not --token', async () => {
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/oauth/access_token') {
        res.end(JSON.stringify({ access_token: 'obtained-token-77aa', token_type: 'Bearer', expires_in: 3600 }));
        return;
      }
      res.statusCode = 401;
      res.end(JSON.stringify({ errors: [{ status: 401, title: 'Unauthorized' }] }));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await cli(['--base-url', url, '--client-id', 'id-1', '--grep', 'delete.'], { env: { CONFORMANCE_CLIENT_SECRET: 'secret-9f3e' } });
      expectStopped(r, /the target refused the token: .* answered 401\. The token came from the token endpoint just now/);
      expect(r.stdout + r.stderr).not.toMatch(/obtained-token-77aa|secret-9f3e/);
    } finally {
      server.close();
    }
  });

  it('a refused token: one line naming the token, never its value', async () => {
    await withServer({}, async (server) => {
      const r = await cli(['--base-url', server.url], { env: { CONFORMANCE_TOKEN: 'wrong-token-4c1d9e' } });
      expectStopped(
        r,
        /^conformance: the target refused the token: GET http:\/\/127\.0\.0\.1:\d+\/v2\/settings answered 401\. Check --token or CONFORMANCE_TOKEN/,
      );
      expect(r.stdout + r.stderr).not.toContain('wrong-token-4c1d9e');
    });
  });

  it('a 403 for the token reads the same', async () => {
    await withServer({ variants: ['auth-403'] }, async (server) => {
      expectStopped(await cli(['--base-url', server.url], { env: { CONFORMANCE_TOKEN: 'wrong-token-4c1d9e' } }), /refused the token: .* answered 403/);
    });
  });

  it('nothing listening: one line, at once', async () => {
    const r = await cli(['--base-url', 'http://127.0.0.1:9'], { env: { CONFORMANCE_TOKEN: TOKEN } });
    expectStopped(r, /^conformance: the target cannot be reached: .*ECONNREFUSED.*Check --base-url/);
  });

  it('a host that never answers: one line within the timeout plus a few seconds', async () => {
    await withRaw(
      () => undefined,
      async (url) => {
        const r = await cli(['--base-url', url, '--timeout', '800'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expectStopped(r, /^conformance: the target did not answer in time: .*800 ms/);
        // Not sent again (the first request's timeout says the target is not there): the rest is
        // the process starting and ending, which a busy machine slows by seconds.
        expect(r.ms).toBeLessThan(800 + 20_000);
      },
    );
  });

  it('a login page answered with 200: summarised in one line, its control characters escaped', async () => {
    await withRaw(
      (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(LOGIN),
      async (url) => {
        const r = await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expectStopped(
          r,
          /^conformance: the target does not answer JSON: GET .* answered 200 with text\/html: an HTML page titled "Sign in \\u001b\[31mnow" \(\d+ characters\)\. Is --base-url the API/,
        );
        expect(r.stderr).not.toContain('\u001b[31m');
      },
    );
  });

  it('a redirect: reported once, with the URL to use, and a warning when it is another host', async () => {
    await withRaw(
      (_req, res) => res.writeHead(301, { location: 'https://api.example.test/v2/settings' }).end(),
      async (url) => {
        expectStopped(
          await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } }),
          /^conformance: the target redirects: GET .* answered 301 to https:\/\/api\.example\.test\/v2\/settings\. It moved to another host \(api\.example\.test\): if that host is the API's and one you trust with the token, use --base-url https:\/\/api\.example\.test \(not http:\/\/127\.0\.0\.1:\d+\)\.$/,
        );
      },
    );
    await withRaw(
      (req, res) => res.writeHead(301, { location: `http://${req.headers.host}/api/v2/settings` }).end(),
      async (url) => {
        expectStopped(
          await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } }),
          /^conformance: the target redirects: GET .* answered 301 to http:\/\/127\.0\.0\.1:\d+\/api\/v2\/settings\. Use --base-url http:\/\/127\.0\.0\.1:\d+\/api \(not http:\/\/127\.0\.0\.1:\d+\)\.$/,
        );
      },
    );
  });

  it('a redirect to itself is called a loop, not advice to use the same URL', async () => {
    await withRaw(
      (req, res) => res.writeHead(302, { location: `http://${req.headers.host}${req.url}` }).end(),
      async (url) => {
        expectStopped(
          await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } }),
          /^conformance: the target redirects: GET .* answered 302 to http:\/\/127\.0\.0\.1:\d+\/v2\/settings\. It sends its clients back to the same address \(a redirect loop\)/,
        );
      },
    );
  });

  it('a stop at the preflight still writes results.json and junit.xml, with the reason, for CI', async () => {
    await withServer({}, async (server) => {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-stop-'));
      try {
        const r = await cli(['--base-url', server.url, '--report-dir', dir], { env: { CONFORMANCE_TOKEN: 'wrong-token-77aa1b' } });
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stdout).toContain(`reports written to ${dir}`);
        const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
          exit: { code: number; reason: string };
          suiteErrors: string[];
          results: Array<{ outcome: string; reason: string }>;
        };
        expect(results.exit).toEqual({ code: 2, reason: 'exit 2: no check ran (the run stopped at the preflight)' });
        expect(results.suiteErrors[0]).toMatch(/the target refused the token/);
        expect(results.results.length).toBeGreaterThan(50);
        expect(
          results.results.every((x) => x.outcome === 'error' && x.reason.startsWith('NOT_RUN: the run stopped at the preflight: the target refused the token')),
        ).toBe(true);
        const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
        expect(junit).toMatch(/the run stopped at the preflight/);
        for (const f of ['results.json', 'junit.xml', 'report.html']) expect(readFileSync(join(dir, f), 'utf8')).not.toContain('wrong-token-77aa1b');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('a stop at the preflight writes the formats --reporter chose, and says which', async () => {
    await withServer({}, async (server) => {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-stop-'));
      try {
        const r = await cli(['--base-url', server.url, '--report-dir', dir, '--reporter', 'junit,ctrf'], { env: { CONFORMANCE_TOKEN: 'wrong-token-77aa1b' } });
        expect(r.code).toBe(2);
        expect(r.stdout).toContain(`reports written to ${dir} (junit.xml, ctrf.json)`);
        expect(readdirSync(dir).sort()).toEqual(['ctrf.json', 'junit.xml']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('an output the run cannot write is found before anything is sent: one line, exit 2', async () => {
    const seen: string[] = [];
    await withRaw(
      (req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      async (url) => {
        const file = join(mkdtempSync(join(tmpdir(), 'conformance-out-')), 'a-file');
        writeFileSync(file, 'x');
        for (const flags of [
          ['--report-dir', join(file, 'reports')],
          ['--certify', join(file, 'bundle')],
          ['--write-baseline', join(file, 'baseline.yaml')],
        ]) {
          const r = await cli(['--base-url', url, ...flags], { env: { CONFORMANCE_TOKEN: TOKEN } });
          expect(r.code, r.stdout + r.stderr).toBe(2);
          expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^conformance: ${flags[0]} .*: cannot write there \\(ENOTDIR\\)$`));
          expect(r.stdout).toBe('');
        }
        rmSync(dirname(file), { recursive: true, force: true });
      },
    );
    expect(seen).toEqual([]);
  });

  it('a redirect to a login page: where it leads, and that the API base URL is wanted', async () => {
    await withRaw(
      (_req, res) => res.writeHead(302, { location: '/login?next=%2Fv2%2Fsettings' }).end(),
      async (url) => {
        expectStopped(
          await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } }),
          /^conformance: the target redirects: GET .* answered 302 to http:\/\/127\.0\.0\.1:\d+\/login\?next=%2Fv2%2Fsettings\. It leads to .*, not to the API: give the API's own base URL with --base-url/,
        );
      },
    );
  });

  // vitest starts its worker while the preflight runs (cli/run.ts): the checks wait for it.
  it('a refusal that comes after the checks have loaded: nothing but the preflight is sent, and no ledger is left', async () => {
    const seen: string[] = [];
    let run = '';
    await withRaw(
      (req, res) => {
        seen.push(`${req.method} ${req.url}`);
        setTimeout(() => res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"status":"401","title":"Unauthorized"}]}'), 2_500);
      },
      async (url) => {
        const r = await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expectStopped(r, /refused the token/);
        run = /, run ([0-9a-f]+),/.exec(r.stdout)?.[1] ?? '';
      },
    );
    expect(seen).toEqual(['GET /v2/settings']);
    // No check ran, so none wrote an intent to create into the run's ledger: it is gone.
    expect(run).not.toBe('');
    expect(existsSync(dirname(ledgerPath(run)))).toBe(false);
  });

  it('no check sends a request before the preflight has its answer, and its line comes first', async () => {
    const { handler } = createReferenceHandler({ token: TOKEN, seed: 7 });
    const log: Array<{ what: string; at: number }> = [];
    let answered = Infinity;
    await withRaw(
      (req, res) => {
        log.push({ what: `${req.method} ${req.url}`, at: performance.now() });
        if (log.length > 1) return handler(req, res);
        setTimeout(() => {
          answered = performance.now();
          handler(req, res);
        }, 2_500);
      },
      async (url) => {
        const r = await cli(['--base-url', url, '--check', 'errors.content-type.json', '--check', 'delete.unknown-id.404'], {
          env: { CONFORMANCE_TOKEN: TOKEN },
        });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout.indexOf('preflight: GET')).toBeGreaterThan(0);
        expect(r.stdout.indexOf('preflight: GET')).toBeLessThan(r.stdout.indexOf('✓'));
      },
    );
    expect(log[0]!.what).toBe('GET /v2/settings');
    expect(log.length).toBeGreaterThan(1);
    for (const later of log.slice(1)) expect(later.at, later.what).toBeGreaterThanOrEqual(answered);
  });

  it('a target that answers 404 to every read the contract names stops with one line (exit 2), unless --allow-all-404', async () => {
    const seen: string[] = [];
    await withRaw(
      (req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"status":"404","title":"Not Found"}]}');
      },
      async (url) => {
        const r = await cli(['--base-url', url], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expectStopped(
          r,
          /^conformance: the target answers 404 to every one of the \d+ reads the contract names \(such as GET .*\/v2\/customers answered 404\): this does not look like the API\. Check --base-url \(http:\/\/127\.0\.0\.1:\d+\): it may lack the API's path prefix\. If the server really serves none of them, --allow-all-404 runs the checks anyway\.$/,
        );
        // Only reads were sent: nothing created, nothing deleted.
        expect(seen.every((x) => x.startsWith('GET '))).toBe(true);
        expect(seen.length).toBeGreaterThan(10);
        const go = await cli(['--base-url', url, '--allow-all-404', '--check', 'delete.unknown-id.404'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(go.stdout).toMatch(
          /preflight: every one of the \d+ reads the contract names answered 404 \(such as GET .*\); the checks run all the same \(--allow-all-404\)/,
        );
        expect(go.code, go.stdout + go.stderr).toBe(1);
      },
    );
  });

  it('a target that serves one list of the contract, and none of the first reads, runs', async () => {
    await withRaw(
      (req, res) => {
        if (req.url?.startsWith('/v2/orders'))
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"data":[],"meta":{"page":{"limit":25,"offset":0,"current":1,"total":0},"results":{"total":0}}}');
        else res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"status":"404","title":"Not Found","detail":"Not found"}]}');
      },
      async (url) => {
        const r = await cli(['--base-url', url, '--check', 'delete.unknown-id.404'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toMatch(/preflight: GET .*\/v2\/orders answered 200 \(none of \/v2\/settings, \/v2\/accounts, \/v2\/customers is served\)/);
      },
    );
  });

  it('a target that serves no /v2/settings still runs: the preflight reads a list instead', async () => {
    const error = (status: number) => JSON.stringify({ errors: [{ title: 'Not Found', status: String(status), detail: 'Not found' }] });
    await withRaw(
      (req, res) => {
        if (req.url?.startsWith('/v2/accounts'))
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"data":[],"meta":{"page":{"limit":25,"offset":0,"current":1,"total":0},"results":{"total":0}}}');
        else res.writeHead(404, { 'content-type': 'application/json' }).end(error(404));
      },
      async (url) => {
        const r = await cli(['--base-url', url, '--check', 'delete.unknown-id.404'], { env: { CONFORMANCE_TOKEN: TOKEN } });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toMatch(/preflight: GET http:\/\/127\.0\.0\.1:\d+\/v2\/accounts answered 200/);
      },
    );
  });
});
