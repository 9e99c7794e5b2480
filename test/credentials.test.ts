// Logging in with client credentials (lib/transport/login.ts), through the CLI's main(): the
// token is obtained before the preflight, obtained again before it expires and once on a 401 to
// a token that worked, and a refused login ends the run (exit 2) before anything is sent to the
// operations. A front before the reference server counts what reaches it, and plays the token
// endpoints a run may meet: a login page, none at all, one that revokes a token mid-run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import { resolveConfig } from '../lib/configuration/index.js';
import { Ledger } from '../lib/runner/index.js';
import { DEFAULT_RETRY, HttpClient, lifetimeMs, Login, renewalTime } from '../lib/transport/index.js';
import { Secrets } from '../lib/evidence/index.js';
import type { RunReport } from '../reporters/model.js';
import { applicationKey, cli, listening, SEED, TOKEN, withServer } from './support.js';

interface Said {
  code: number;
  out: string[];
  err: string[];
  report?: RunReport;
  dir: string;
}

/** main() with `args` and `env` only, in a folder of its own, its report read back. */
async function run(args: string[], env: Record<string, string> = {}): Promise<Said> {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-credentials-'));
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), env, cwd: dir, isTTY: false };
  const code = await main([...args, '--report-dir', join(dir, 'report')], io);
  let report: RunReport | undefined;
  try {
    report = JSON.parse(readFileSync(join(dir, 'report', 'results.json'), 'utf8')) as RunReport;
  } catch {
    report = undefined;
  }
  return { code, out, err, dir, ...(report ? { report } : {}) };
}

interface Seen {
  method: string;
  url: string;
  token: string | undefined;
  status: number;
}

/**
 * A front that forwards to `upstream` and records every request but the login's. `token` plays
 * the token endpoint ('pass': the upstream's); `revokeAfter`: the first token issued is refused
 * (401, not forwarded) once that many requests carrying it were answered.
 */
async function front(upstream: string, opts: { token?: 'pass' | 'html' | 'no-token' | 'crlf' | 'echo' | '404'; revokeAfter?: number } = {}) {
  const seen: Seen[] = [];
  const issued: string[] = [];
  let firstAnswered = 0;
  const server = createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const mode = opts.token ?? 'pass';
    if (req.url === '/oauth/access_token' && mode !== 'pass') {
      if (mode === 'html') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><title>Sign in</title><form></form></html>');
      else if (mode === 'no-token') res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"message":"welcome"}}');
      else if (mode === 'echo') {
        // The refusal quotes the secret it was sent, past the length a message keeps of a body.
        const sent = new URLSearchParams(Buffer.concat(chunks).toString()).get('client_secret') ?? '';
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'invalid_client', error_description: `${'x'.repeat(60)}${sent}` }));
      } else if (mode === 'crlf')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"tok\\r\\nX-Injected: 1","token_type":"Bearer"}');
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"status":404,"title":"Not Found"}]}');
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const revoked = opts.revokeAfter !== undefined && token !== undefined && token === issued[0] && firstAnswered >= opts.revokeAfter;
    if (revoked) {
      if (req.url !== '/oauth/access_token') seen.push({ method: req.method!, url: req.url!, token, status: 401 });
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end('{"errors":[{"status":401,"title":"Unauthorized"}]}');
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
    const up = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const text = await up.text();
    if (req.url === '/oauth/access_token') {
      if (up.status === 200) issued.push((JSON.parse(text) as { access_token: string }).access_token);
    } else {
      seen.push({ method: req.method!, url: req.url!, token, status: up.status });
      if (token !== undefined && token === issued[0]) firstAnswered++;
    }
    const challenge = up.headers.get('www-authenticate');
    res
      .writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json', ...(challenge ? { 'www-authenticate': challenge } : {}) })
      .end(up.status === 204 ? undefined : text);
  }
  return { ...(await listening(server)), seen, issued };
}

/** A narrow run: one list operation, few drawn requests. */
const NARROW = ['--seed', String(SEED), '--operation', 'accounts', '--explore', '2'];

describe('a run that logs in with client credentials', () => {
  it('a token URL with a query (a policy, as Azure AD B2C asks) is logged into as given', async () => {
    await withServer({}, async (server) => {
      const k = await applicationKey(server.url);
      const tokenUrl = `${server.url}/oauth/access_token?p=b2c_1_conformance`;
      const r = await run(['--base-url', server.url, '--client-id', k.id, '--token-url', tokenUrl, '--check', 'create.valid.2xx'], {
        CONFORMANCE_CLIENT_SECRET: k.secret,
      });
      expect(r.code, [...r.out, ...r.err].join('\n')).toBe(0);
      expect(r.report!.auth!.logins).toBe(1);
      expect(r.out.join('\n')).toContain(`logged in 1 time(s) with client credentials (${tokenUrl})`);
    });
  }, 60_000);

  it('logs in again before a short-lived token expires, and passes (short-lived-tokens variant)', async () => {
    await withServer({ variants: ['short-lived-tokens'] }, async (server) => {
      const k = await applicationKey(server.url);
      const f = await front(server.url);
      try {
        const r = await run(['--base-url', f.url, '--client-id', k.id, ...NARROW], { CONFORMANCE_CLIENT_SECRET: k.secret });
        expect(r.code, [...r.out, ...r.err].join('\n')).toBe(0);
        expect(r.report!.auth!.logins).toBeGreaterThanOrEqual(2);
        expect(r.report!.auth!.logins).toBe(f.issued.length);
        expect(r.out.join('\n')).toContain(`logged in ${r.report!.auth!.logins} time(s) with client credentials`);
        // Renewed before it expired: no token the run obtained was refused.
        expect(f.seen.filter((s) => s.status === 401 && f.issued.includes(s.token!))).toEqual([]);
      } finally {
        await f.close();
      }
    });
  }, 60_000);

  it('a 401 to a token that worked: one login again for all the requests it met, each sent again with the new token', async () => {
    await withServer({}, async (server) => {
      const k = await applicationKey(server.url);
      const f = await front(server.url, { revokeAfter: 30 });
      try {
        const r = await run(['--base-url', f.url, '--client-id', k.id, ...NARROW], { CONFORMANCE_CLIENT_SECRET: k.secret });
        expect(r.code, [...r.out, ...r.err].join('\n')).toBe(0);
        const refused = f.seen.filter((s) => s.status === 401 && s.token === f.issued[0]);
        // The first login, one for all the checks' requests the revocation met at once, and
        // one for the cleanup's (the main process holds a token of its own).
        expect(r.report!.auth!.logins).toBe(f.issued.length);
        expect(f.issued.length).toBeLessThanOrEqual(3);
        expect(refused.length).toBeGreaterThan(f.issued.length);
        // Each request the revocation refused was sent again, with a new token, and answered.
        const fresh = f.issued.slice(1);
        for (const x of refused)
          expect(
            f.seen.some((s) => s.method === x.method && s.url === x.url && fresh.includes(s.token!) && s.status !== 401),
            `${x.method} ${x.url}`,
          ).toBe(true);
      } finally {
        await f.close();
      }
    });
  }, 60_000);
});

describe('a refused login: exit 2, and nothing is sent to the operations', () => {
  it.each([
    ['wrong credentials', 'pass', /the token endpoint refused the client credentials: POST http:\/\/127\.0\.0\.1:\d+\/oauth\/access_token answered 401/],
    ['a login page', 'html', /cannot log in: POST .* answered 200 with text\/html and no access_token: an HTML page titled "Sign in"/],
    ['JSON without access_token', 'no-token', /answered 200 with application\/json and no access_token/],
    ['a token no header can carry (a line break in it)', 'crlf', /answered 200 with an access_token no Authorization header can carry/],
    [
      'wrong credentials, the refusal quoting the secret where a message is cut',
      'echo',
      /the token endpoint refused the client credentials: .* answered 401: .*x{20}/,
    ],
    ['no token endpoint (404)', '404', /cannot log in: POST .* answered 404: there is no token endpoint there/],
  ] as const)(
    '%s',
    async (_name, mode, said) => {
      await withServer({}, async (server) => {
        const k = await applicationKey(server.url);
        const f = await front(server.url, { token: mode });
        try {
          const secret = mode === 'pass' ? `${k.secret}-wrong` : k.secret;
          const r = await run(['--base-url', f.url, '--client-id', k.id, ...NARROW], { CONFORMANCE_CLIENT_SECRET: secret });
          expect(r.code).toBe(2);
          expect(r.err[0]).toMatch(said);
          expect(f.seen).toEqual([]);
          expect(r.report!.exit.reason).toMatch(/no check ran \(the login failed\)/);
          expect(r.report!.auth).toEqual({ logins: 0 });
          expect(r.report!.results.every((x) => x.errorCode === 'NOT_RUN')).toBe(true);
          // Not the secret, nor any 8 characters of it (a message cut inside it).
          const shown = [...r.out, ...r.err, JSON.stringify(r.report)].join('\n');
          for (let i = 0; i + 8 <= secret.length; i++) expect(shown).not.toContain(secret.slice(i, i + 8));
        } finally {
          await f.close();
        }
      });
    },
    60_000,
  );

  it('a token endpoint that cannot be reached', async () => {
    // A port just freed: nothing listens there.
    const gone = await listening(createServer());
    await gone.close();
    const r = await run(['--base-url', gone.url, '--client-id', 'id', ...NARROW], { CONFORMANCE_CLIENT_SECRET: 's3cr3t-value' });
    expect(r.code).toBe(2);
    expect(r.report!.auth).toEqual({ logins: 0 });
    expect(r.err[0]).toBe(
      `conformance: cannot log in: the token endpoint cannot be reached: POST ${gone.url}/oauth/access_token (ECONNREFUSED). Check --token-url and --base-url.`,
    );
  });
});

describe('the settings of client credentials', () => {
  const usage = async (args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}): Promise<string> => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-credentials-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const err: string[] = [];
    const code = await main(args, { out: () => undefined, err: (l) => err.push(l), env, cwd: dir, isTTY: false });
    expect(code).toBe(2);
    expect(err[1]).toBe("Run 'conformance --help' for usage.");
    return err[0]!;
  };

  it('--client-secret on the command line is refused, saying why', async () => {
    const said = await usage(['--base-url', 'http://127.0.0.1:9', '--client-id', 'id', '--client-secret', 'sk-visible']);
    expect(said).toMatch(/^conformance: --client-secret: refused: a flag shows in process listings and shell history; set CONFORMANCE_CLIENT_SECRET/);
    expect(said).not.toContain('sk-visible');
  });

  it('a client secret in the config file is refused: the file holds a path to it', async () => {
    const said = await usage(['--base-url', 'http://127.0.0.1:9', '--client-id', 'id'], {}, { 'conformance.config.yaml': 'client-secret: sk-in-file\n' });
    expect(said).toMatch(/conformance\.config\.yaml: client-secret: refused: the file holds a path to the secret \(client-secret-file\)/);
    expect(said).not.toContain('sk-in-file');
  });

  it('a token and credentials both, credentials without a target or without a secret: refused', async () => {
    expect(await usage(['--base-url', 'http://127.0.0.1:9', '--token', 't', '--client-id', 'id'], { CONFORMANCE_CLIENT_SECRET: 's' })).toMatch(
      /--token and --client-id: give a token or client credentials, not both/,
    );
    expect(await usage(['--client-id', 'id'], { CONFORMANCE_CLIENT_SECRET: 's' })).toMatch(/client credentials log in to a target: give --base-url too/);
    expect(await usage(['--base-url', 'http://127.0.0.1:9', '--client-id', 'id'])).toMatch(/a client id needs its secret/);
    expect(await usage(['--base-url', 'http://127.0.0.1:9'])).toMatch(/a target needs a token or client credentials/);
  });

  it('the secret from a file; the token URL joined onto a base URL with a path prefix, as other paths are', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-credentials-'));
    writeFileSync(join(dir, 'secret.txt'), 'sk-from-file\n');
    const c = resolveConfig({
      flags: { 'base-url': 'https://api.example.com/prefix/', 'client-id': 'id', 'client-secret-file': 'secret.txt' },
      env: {},
      cwd: dir,
      randomSeed: 1,
    });
    expect(c.clientSecret).toBe('sk-from-file');
    expect(c.tokenUrl).toBe('https://api.example.com/prefix/oauth/access_token');
    expect(
      resolveConfig({
        flags: {},
        env: {
          CONFORMANCE_BASE_URL: 'https://a.example',
          CONFORMANCE_CLIENT_ID: 'i',
          CONFORMANCE_CLIENT_SECRET: 's',
          CONFORMANCE_TOKEN_URL: 'https://login.example/t',
        },
        cwd: dir,
        randomSeed: 1,
      }).tokenUrl,
    ).toBe('https://login.example/t');
  });

  it('a token is renewed at 80% of its life, or 30 s before its end where sooner, never before half of it', () => {
    expect(renewalTime(0, 3_600_000)).toBe(2_880_000);
    expect(renewalTime(0, 100_000)).toBe(70_000);
    expect(renewalTime(0, 3_000)).toBe(1_500);
  });
});

it('conformance cleanup logs in with client credentials, as a run does, and deletes what a run left', async () => {
  await withServer({ variants: ['short-lived-tokens'] }, async (server) => {
    const k = await applicationKey(server.url);
    const made = await fetch(`${server.url}/v2/application-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { type: 'application_key', name: 'conformance-abcd0001-k' } }),
    });
    const left = ((await made.json()) as { data: { id: string } }).data.id;
    // The ledger of a run that crashed, under the TMPDIR the command is given.
    const root = mkdtempSync(join(tmpdir(), 'conformance-ledgers-'));
    try {
      const path = join(root, 'conformance', 'abcd0001', 'ledger.jsonl');
      const ledger = new Ledger(path);
      ledger.started({ runId: 'abcd0001', baseUrl: server.url, startedAt: new Date().toISOString(), pid: 999_999_999, host: 'elsewhere' });
      ledger.created({ kind: 'application-key', id: left, name: 'conformance-abcd0001-k', deletePath: `/v2/application-keys/${left}`, createdBy: 'test' });
      const r = await cli(['cleanup', '--client-id', k.id], { env: { TMPDIR: root, CONFORMANCE_CLIENT_SECRET: k.secret } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(`run abcd0001 (${server.url}): deleted 1; 0 left over`);
      expect(server.store.applicationKeys.has(left)).toBe(false);
      expect(existsSync(path)).toBe(false);
      expect(r.stdout + r.stderr).not.toContain(k.secret);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}, 60_000);

/** An HTTP client of `url` that logs in at its /oauth/access_token, in a scope of its own. */
function loggingIn(url: string): HttpClient {
  return new HttpClient({
    baseUrl: url,
    token: '',
    timeoutMs: 5_000,
    maxBodyBytes: 1 << 20,
    concurrency: 4,
    secrets: new Secrets(),
    login: { tokenUrl: `${url}/oauth/access_token`, clientId: 'id', clientSecret: 'sk', scope: `test-${Math.random()}` },
  });
}

it('a request that sends no token or a wrong one on purpose never logs in again; one with the token, once', async () => {
  let logins = 0;
  // Every token works once, then is refused: a request with the token meets a 401 after it worked.
  const used = new Set<string>();
  const server = createServer((req, res) => {
    req.resume();
    if (req.url === '/oauth/access_token') {
      logins++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `tok-${logins}`, expires_in: 3600 }));
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const ok = token?.startsWith('tok-') && !used.has(token);
    if (ok) used.add(token!);
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end('{}');
  });
  const s = await listening(server);
  const http = loggingIn(s.url);
  try {
    expect((await http.request({ method: 'GET', path: '/v2/accounts' })).status).toBe(200);
    expect(logins).toBe(1);
    for (const auth of ['none', { bearer: 'wrong' }, { bearer: 'tok-1' }] as const)
      expect((await http.request({ method: 'GET', path: '/v2/accounts', auth })).status, JSON.stringify(auth)).toBe(401);
    expect(logins).toBe(1);
    // tok-1 worked and is now refused: one login, the request sent again with tok-2, which works.
    expect((await http.request({ method: 'GET', path: '/v2/accounts' })).status).toBe(200);
    expect(logins).toBe(2);
    // tok-2 too, at once for four requests: one login for all, each sent again once, a second 401 standing for all but one.
    const statuses = await Promise.all([1, 2, 3, 4].map(() => http.request({ method: 'GET', path: '/v2/accounts' }).then((r) => r.status)));
    expect(logins).toBe(3);
    expect(statuses.sort()).toEqual([200, 401, 401, 401]);
    expect(http.logins).toBe(3);
  } finally {
    await http.close();
    await s.close();
  }
});

describe('a witnessed re-run with client credentials', () => {
  it('verify --rerun logs in as a run does, and finds the same verdict', async () => {
    await withServer({}, async (server) => {
      const k = await applicationKey(server.url);
      const made = await run(['--base-url', server.url, '--seed', String(SEED), '--grep', 'delete.', '--certify', 'bundle'], { CONFORMANCE_TOKEN: TOKEN });
      expect(made.code, [...made.out, ...made.err].join('\n')).toBe(1);
      const again = await main(
        ['verify', join(made.dir, 'bundle'), '--rerun', '--base-url', server.url, '--client-id', k.id, '--rerun-dir', join(made.dir, 'again')],
        {
          out: () => undefined,
          err: () => undefined,
          env: { CONFORMANCE_CLIENT_SECRET: k.secret },
          cwd: made.dir,
          isTTY: false,
        },
      );
      const rerun = JSON.parse(readFileSync(join(made.dir, 'again', 'results.json'), 'utf8')) as RunReport;
      expect(rerun.auth?.logins).toBeGreaterThanOrEqual(1);
      expect(readFileSync(join(made.dir, 'again', 'results.json'), 'utf8')).not.toContain(k.secret);
      // The bundle was narrowed, so not valid as a certificate (exit 1); the re-run itself found no difference.
      expect(again).toBe(1);
      expect(rerun.results.map((r) => `${r.id} ${r.outcome}`).sort()).toEqual(made.report!.results.map((r) => `${r.id} ${r.outcome}`).sort());
    });
  }, 60_000);
});

describe('token endpoints that answer as OAuth 2 allows', () => {
  /** A token endpoint that answers each login with the next of `answers` (the last one again when they run out), recording what it was sent. */
  async function endpoint(answers: Array<(req: IncomingMessage, body: string) => { status: number; headers?: Record<string, string>; body: string }>) {
    const got: Array<{ authorization: string | undefined; body: string }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        got.push({ authorization: req.headers.authorization, body });
        const a = answers[Math.min(got.length, answers.length) - 1]!(req, body);
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body);
      });
    });
    const s = await listening(server);
    return { ...s, got, tokenUrl: `${s.url}/oauth/access_token` };
  }
  const token =
    (extra: Record<string, unknown> = {}) =>
    () => ({ status: 200, body: JSON.stringify({ access_token: 'tok-abc', token_type: 'bearer', ...extra }) });
  const login = (tokenUrl: string) =>
    new Login({ tokenUrl, clientId: 'the-id', clientSecret: 'the-secret', scope: 's' }, 5_000, undefined, {
      ...DEFAULT_RETRY,
      baseDelayMs: 10,
      maxDelayMs: 20,
      maxWaitMs: 2_000,
    });

  it('reads a lifetime from expires_in or expires, as a number or a string of one', () => {
    expect(lifetimeMs({ expires_in: 3600 }, 0)).toBe(3_600_000);
    expect(lifetimeMs({ expires_in: '3600' }, 0)).toBe(3_600_000);
    expect(lifetimeMs({ expires: 1_000_060 }, 1_000_000_000)).toBe(60_000);
    expect(lifetimeMs({ expires: '1000060' }, 1_000_000_000)).toBe(60_000);
    // An epoch in milliseconds.
    expect(lifetimeMs({ expires: 1_000_000_060_000 }, 1_000_000_000_000)).toBe(60_000);
    // Nothing said, nothing usable, or an `expires` already past (clocks that disagree): renewed after a 401.
    for (const body of [{}, { expires_in: 'soon' }, { expires_in: 0 }, { expires: 5 }, { expires: 999_999 }])
      expect(lifetimeMs(body, 1_000_000_000), JSON.stringify(body)).toBeUndefined();
  });

  it('a lifetime given as a string is renewed before it ends', async () => {
    const t = await endpoint([token({ expires_in: '3600' })]);
    try {
      const l = login(t.tokenUrl);
      const before = Date.now();
      expect(await l.token()).toBe('tok-abc');
      expect(l.renewAt).toBeGreaterThanOrEqual(before + 2_880_000);
      expect(l.renewAt).toBeLessThanOrEqual(Date.now() + 2_880_000);
    } finally {
      await t.close();
    }
  });

  it('waits out a 429 with Retry-After and a 503, then logs in', async () => {
    const t = await endpoint([
      () => ({ status: 429, headers: { 'retry-after': '1' }, body: '{}' }),
      () => ({ status: 503, body: '{}' }),
      token({ expires_in: 60 }),
    ]);
    try {
      const l = login(t.tokenUrl);
      const start = Date.now();
      expect(await l.token()).toBe('tok-abc');
      expect(t.got).toHaveLength(3);
      expect(Date.now() - start).toBeGreaterThanOrEqual(900);
      expect(l.logins).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('an endpoint that takes the credentials only as HTTP Basic: a second try so, and Basic from then on', async () => {
    const basic = `Basic ${Buffer.from('the-id:the-secret').toString('base64')}`;
    const t = await endpoint([
      (req) =>
        req.headers.authorization === basic
          ? token({ expires_in: 1 })()
          : { status: 401, headers: { 'www-authenticate': 'Basic realm="oauth"' }, body: '{"error":"invalid_client"}' },
    ]);
    try {
      const l = login(t.tokenUrl);
      expect(await l.token()).toBe('tok-abc');
      expect(t.got.map((g) => g.authorization)).toEqual([undefined, basic]);
      expect(t.got[0]!.body).toContain('client_secret=the-secret');
      expect(t.got[1]!.body).toBe('grant_type=client_credentials');
      // Due again (a 1 s token): Basic at once.
      await new Promise((r) => setTimeout(r, 600));
      expect(await l.token()).toBe('tok-abc');
      expect(t.got.map((g) => g.authorization)).toEqual([undefined, basic, basic]);
    } finally {
      await t.close();
    }
  });

  it('a token URL that asks for a bearer token itself is named as no token endpoint; a refusal names credentials and the URL', async () => {
    const api = await endpoint([
      () => ({ status: 401, headers: { 'www-authenticate': 'Bearer' }, body: '{"errors":[{"status":"401","title":"Unauthorized"}]}' }),
    ]);
    const oauth = await endpoint([() => ({ status: 401, body: '{"error":"invalid_client"}' })]);
    try {
      await expect(login(api.tokenUrl).token()).rejects.toMatchObject({
        failure: 'not-a-token',
        message: expect.stringMatching(/asking for a bearer token .*not a token endpoint\. Check --token-url/),
      });
      expect(api.got).toHaveLength(1);
      await expect(login(oauth.tokenUrl).token()).rejects.toMatchObject({
        failure: 'refused',
        message: expect.stringMatching(
          /refused the client credentials: .*invalid_client.*Check --client-id and the secret .*and that --token-url is the token endpoint/,
        ),
      });
      // Refused in the form and as Basic.
      expect(oauth.got).toHaveLength(2);
    } finally {
      await api.close();
      await oauth.close();
    }
  });

  it('a login that fails mid-run is LOGIN_FAILED for the request that needed it, and every later one fails at once', async () => {
    let logins = 0;
    const server = createServer((req, res) => {
      req.resume();
      if (req.url === '/oauth/access_token') {
        logins++;
        if (logins === 1) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'tok-1', expires_in: 1 }));
        else res.writeHead(500, { 'content-type': 'application/json' }).end('{"errors":[{"status":"500","title":"boom"}]}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
    const s = await listening(server);
    const http = loggingIn(s.url);
    try {
      expect((await http.request({ method: 'GET', path: '/v2/accounts' })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 600));
      await expect(http.request({ method: 'GET', path: '/v2/accounts' })).rejects.toMatchObject({
        code: 'LOGIN_FAILED',
        message: expect.stringMatching(/answered 500: .*boom.*\. The token endpoint failed on its side/),
      });
      await expect(http.request({ method: 'GET', path: '/v2/accounts' })).rejects.toMatchObject({ code: 'LOGIN_FAILED' });
      expect(logins).toBe(2);
    } finally {
      await http.close();
      await s.close();
    }
  });

  it('a 401 to a token that never worked stands, unless the token had reached its renewal time by then: one login again, the request sent again', async () => {
    // The API refuses the first token. Answered well within the token's life (ten seconds), that
    // refusal is the target's; held past its renewal time (a token of a second, renewed after
    // half of it; a queue, a busy machine), it may be the token's end.
    let logins = 0;
    let holdMs = 0;
    let lifeS = 0;
    const server = createServer((req, res) => {
      req.resume();
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/oauth/access_token') return json(200, { access_token: `tok-${++logins}`, expires_in: lifeS });
      const first = req.headers.authorization === 'Bearer tok-1';
      setTimeout(() => (first ? json(401, { errors: [{ status: '401', title: 'Unauthorized' }] }) : json(200, { data: [] })), first ? holdMs : 0);
    });
    const s = await listening(server);
    try {
      for (const [life, hold, status, logged] of [
        [10, 0, 401, 1],
        [1, 700, 200, 2],
      ] as const) {
        logins = 0;
        lifeS = life;
        holdMs = hold;
        const http = loggingIn(s.url);
        try {
          expect((await http.request({ method: 'GET', path: '/v2/accounts' })).status, `held ${hold} ms`).toBe(status);
          expect(logins, `held ${hold} ms`).toBe(logged);
        } finally {
          await http.close();
        }
      }
    } finally {
      await s.close();
    }
  });
});
