// One registry of secrets serves the whole run, across areas and across the vitest
// worker, and masking runs before any escaping. A front in front of the reference server hands
// out client_secrets full of characters that escape differently in HTML, XML and JSON, and then
// quotes them in every later answer: a body member, an error's detail, a header. No output of
// the run may hold one, in any spelling.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { RunContext, runCheck } from '../lib/runner/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { staticChecks } from '../suites/index.js';
import { cli, listening, settingsFor, TOKEN, withServer } from './support.js';

/** Every character but ASCII letters and digits as \uXXXX with upper-case hex, as .NET's encoder may write it. */
function dotnet(s: string): string {
  return `"${[...s]
    .map((c) =>
      /[A-Za-z0-9]/.test(c)
        ? c
        : c
            .split('')
            .map((u) => `\\u${u.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`)
            .join(''),
    )
    .join('')}"`;
}

/** The encoders a target's stack may write a secret with: each gives the text a reader would see. */
const ENCODERS: Record<string, (s: string) => string> = {
  'as is': (s) => `secret ${s} here`,
  json: (s) => JSON.stringify({ v: s }),
  'php \\/': (s) => JSON.stringify({ v: s }).replaceAll('/', '\\/'),
  '.net \\uXXXX': (s) => `{"v":${dotnet(s)}}`,
  'go \\u003c': (s) => JSON.stringify({ v: s }).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
  'json in json': (s) => JSON.stringify({ inner: JSON.stringify({ v: s }) }),
  'url, upper case': (s) => `/x?v=${encodeURIComponent(s)}`,
  'url, lower case': (s) => `/x?v=${encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`,
  'url, every byte': (s) => `/x?v=${[...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`,
  form: (s) => new URLSearchParams({ a: '1', v: s }).toString(),
  'html, decimal': (s) => `<p>${[...s].map((c) => `&#${c.codePointAt(0)};`).join('')}</p>`,
  'html, hex': (s) => `<p>${[...s].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('')}</p>`,
  // htmlspecialchars (PHP), h (Rails), escape (Django): the five named references.
  'html, named': (s) => `<p title="${s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)}">x</p>`,
  'html named, in json': (s) =>
    JSON.stringify({ detail: `bad ${s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)}` }),
};

/** Base64 encoders: the secret inside a Basic credential, at each offset modulo 3. */
const BASE64: Record<string, (s: string) => string> = {
  'basic, offset 0': (s) => `Basic ${Buffer.from(`ab:${s}`).toString('base64')}`,
  'basic, offset 1': (s) => `Basic ${Buffer.from(`abc:${s}`).toString('base64')}`,
  'basic, offset 2': (s) => `Basic ${Buffer.from(`a:${s}`).toString('base64')}`,
  base64url: (s) => `t=${Buffer.from(s).toString('base64url')}`,
};

it('a secret drawn from a wide alphabet is masked in every spelling an encoder writes, and a client_secret member whatever its length', () => {
  const char = fc.oneof(
    fc.constantFrom(...'/+ <>&\'"\\%#;=:?\u00e9\u2028'),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
    fc.integer({ min: 0xa0, max: 0xd7ff }).map((n) => String.fromCodePoint(n)),
    fc.integer({ min: 0x10000, max: 0x10ffff }).map((n) => String.fromCodePoint(n)),
  );
  fc.assert(
    fc.property(
      fc.array(char, { minLength: 4, maxLength: 24 }).map((cs) => cs.join('')),
      (secret) => {
        const s = new Secrets();
        s.add(secret);
        for (const [name, encode] of Object.entries({ ...ENCODERS, ...BASE64 })) {
          const written = encode(secret);
          const masked = s.mask(written);
          // What is left, read back, holds no secret: nothing of the secret's spelling survives.
          expect(masked, name).toContain('***');
          const inner = name in BASE64 ? written.replace(/^(Basic |t=)/, '') : written;
          expect(masked.includes(inner) && inner.length > 0, name).toBe(false);
          for (const [other, again] of Object.entries(ENCODERS))
            expect(masked.includes(again(secret).replace(/^secret | here$/g, '')), `${name} then ${other}`).toBe(false);
        }
        // By member name, whatever its length: a one-character secret too.
        expect(new Secrets().mask(`{"client_secret":${JSON.stringify(secret.slice(0, 1))}}`)).toBe('{"client_secret":"***"}');
      },
    ),
    { seed: 42, numRuns: 300 },
  );
});

it('a short secret is masked where it stands alone, not inside a longer word', () => {
  const s = new Secrets();
  s.add('x1');
  expect(s.mask('ax1b x1 "x1" =x1&')).toBe('ax1b *** "***" =***&');
});

it('an excerpt cut inside a secret masks the secret whole, whatever its spelling', () => {
  const s = new Secrets();
  const secret = 'sk/+é"secret-value';
  s.add(secret);
  for (const encode of Object.values(ENCODERS)) {
    const text = `${'x'.repeat(10)}${encode(secret)}${'y'.repeat(100)}`;
    const at = text.indexOf('secret-value');
    if (at < 0) continue; // every byte escaped: no plain letters to cut inside
    const head = s.maskedHead(text, at + 3);
    // The secret began before the cut: the excerpt ends with the mask, and nothing of it shows.
    expect(head.endsWith('***'), head).toBe(true);
    expect(head).not.toContain('sk/');
  }
});

/** A front that rewrites each new key's client_secret and quotes the latest one in every later answer. */
async function leakyFront(upstream: string) {
  const cores: string[] = [];
  const server = createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
    const up = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let text = await up.text();
    const latest = cores.length ? `sk<&"'>\\/+ ${cores.at(-1)}` : undefined;
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const b = body as { data?: { client_secret?: string }; errors?: Array<{ detail?: string }>; debug?: unknown };
      if (req.method === 'POST' && req.url === '/v2/application-keys' && up.status < 300 && b.data) {
        const core = `core${randomBytes(6).toString('hex')}`;
        cores.push(core);
        b.data.client_secret = `sk<&"'>\\/+ ${core}`;
      } else if (latest) {
        if (b.errors?.[0]) b.errors[0].detail = `${b.errors[0].detail ?? ''} (debug: key secret ${latest})`;
        else {
          // On list pages, first (where a failure's body excerpt shows it), and with
          // results.total dropped: the list checks (an area after the keys were made) fail and
          // print the body that quotes it.
          if (Array.isArray((body as { data?: unknown }).data)) delete (body as { meta?: { results?: unknown } }).meta?.results;
          body = { debug: { last_secret: latest }, ...(body as object) };
        }
      }
      text = JSON.stringify(body);
      // The same secret again as PHP's and .NET's encoders write it.
      if (latest && req.method === 'GET') text = text.replace(/^\{/, `{"php":${JSON.stringify(latest).replaceAll('/', '\\/')},"net":${dotnet(latest)},`);
    }
    const out: Record<string, string> = { 'content-type': up.headers.get('content-type') ?? 'application/json' };
    if (latest) {
      out['x-debug-secret'] = encodeURIComponent(latest).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
      out['x-debug-basic'] = `Basic ${Buffer.from(`id:${latest}`).toString('base64')}`;
    }
    res.writeHead(up.status, out).end(up.status === 204 ? undefined : text);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cores,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

it('a secret issued in one area and quoted by the target in later areas shows in no output, in no spelling', async () => {
  await withServer({ seed: 11 }, async (server) => {
    const front = await leakyFront(server.url);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-secrets-'));
      const r = await cli(
        [
          '--base-url',
          front.url,
          '--operation',
          'accounts',
          '--report-dir',
          join(dir, 'report'),
          '--certify',
          join(dir, 'bundle'),
          '--write-baseline',
          join(dir, 'baseline.yaml'),
        ],
        { env: { CONFORMANCE_TOKEN: TOKEN } },
      );
      expect(front.cores.length, r.stdout + r.stderr).toBeGreaterThan(5);
      // The failure whose evidence quotes a secret issued in another area is there, masked.
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/list\.meta\.fields \[accounts\][\s\S]*body: +\{"php":"\*\*\*","net":"\*\*\*","debug":\{"last_secret":"\*\*\*"\}/);
      const files = ['report', 'bundle'].flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
      const outputs = [r.stdout, r.stderr, readFileSync(join(dir, 'baseline.yaml'), 'utf8'), ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
      expect(files.map((f) => f.split('/').pop()).sort()).toEqual(expect.arrayContaining(['junit.xml', 'report.html', 'results.json', 'certificate.json']));
      // The random core survives every escaping (HTML, XML, JSON, \u003c): none of it may show.
      for (const core of front.cores) {
        expect(outputs).not.toContain(core);
        // Nor in base64, where the core's letters do not show as they are.
        const basic = Buffer.from(`id:sk<&"'>\\/+ ${core}`).toString('base64');
        expect(outputs).not.toContain(basic.slice(8, 20));
      }
      expect(outputs).not.toContain(TOKEN);
    } finally {
      await front.close();
    }
  });
}, 120_000);

it('the ledger holds no secret a target echoed into what it created, and is readable by its user alone', async () => {
  const secret = `sk-${randomBytes(9).toString('hex')}`;
  // A target that names each key after its client_secret, and the token after that.
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'POST') {
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: { type: 'application_key', id: 'k1', name: `${secret} ${TOKEN}`, client_id: 'c1', client_secret: secret } }));
    } else res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { settings: base, dispose } = settingsFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // In a folder of its own, as a run's ledger is (the folder made by the ledger).
  const settings = { ...base, ledgerPath: join(dirname(base.ledgerPath), 'run', 'ledger.jsonl') };
  const run = new RunContext(settings);
  try {
    run.secrets.add(TOKEN);
    const result = await runCheck(
      staticChecks.find((c) => c.id === 'create.valid.2xx')!,
      run,
    );
    expect(result.outcome).toBe('pass');
    const text = readFileSync(settings.ledgerPath, 'utf8');
    expect(text).toMatch(/"op":"created".*"id":"k1"/);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(TOKEN);
    expect(statSync(settings.ledgerPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(settings.ledgerPath)).mode & 0o777).toBe(0o700);
  } finally {
    await run.close();
    server.close();
    dispose();
  }
});

/**
 * A front that logs the run in (tokens of a second behind it: a new one every half second) and, once the run has logged in again, quotes the client secret and the latest
 * token, in every spelling an encoder writes, in every answer: list pages (their results.total
 * dropped, so that list checks fail and print the body), errors and headers. A token the checks'
 * worker obtained is then what a failure's evidence shows.
 */
async function quotingFront(upstream: string) {
  const tokens: string[] = [];
  let secret: string | undefined;
  const spellings = (s: string): Record<string, string> => Object.fromEntries(Object.entries({ ...ENCODERS, ...BASE64 }).map(([k, f]) => [k, f(s)]));
  const server = createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const sent = Buffer.concat(chunks).toString('utf8');
    if (req.url === '/oauth/access_token') secret = new URLSearchParams(sent).get('client_secret') ?? undefined;
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
    const up = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body: chunks.length ? sent : undefined });
    let text = await up.text();
    const out: Record<string, string> = { 'content-type': up.headers.get('content-type') ?? 'application/json' };
    if (req.url === '/oauth/access_token') {
      if (up.status === 200) tokens.push((JSON.parse(text) as { access_token: string }).access_token);
    } else if (secret && tokens.length >= 2 && text.startsWith('{')) {
      const body = JSON.parse(text) as { data?: unknown; meta?: { results?: unknown }; errors?: Array<{ detail?: string }> };
      // The token first: an excerpt of the body is what a failure shows.
      const quoted = { token: spellings(tokens.at(-1)!), secret: spellings(secret) };
      if (Array.isArray(body.data)) delete body.meta?.results;
      if (body.errors?.[0]) body.errors[0].detail = `${body.errors[0].detail ?? ''} (debug: ${JSON.stringify(quoted)})`;
      text = JSON.stringify({ debug: quoted, ...body });
      out['x-debug-secret'] = encodeURIComponent(secret);
      out['x-debug-token'] = `Basic ${Buffer.from(`id:${tokens.at(-1)!}`).toString('base64')}`;
    }
    res.writeHead(up.status, out).end(up.status === 204 ? undefined : text);
  }
  return { ...(await listening(server)), tokens, secret: () => secret };
}

it('with client credentials, the secret and every token obtained show in no output, in no spelling', async () => {
  // Tokens of two seconds: the run (six seconds or more) logs in again well before its list pages are
  // read, and a request held up a moment on a busy machine still reaches the target in time.
  await withServer({ seed: 12, tokenLifetimeSeconds: 2 }, async (server) => {
    const made = await fetch(`${server.url}/v2/application-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { type: 'application_key', name: 'secrets-login' } }),
    });
    const key = ((await made.json()) as { data: { client_id: string; client_secret: string } }).data;
    const front = await quotingFront(server.url);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-secrets-'));
      const r = await cli(
        ['--base-url', front.url, '--client-id', key.client_id, '--operation', 'accounts', '--explore', '2', '--report-dir', join(dir, 'report')],
        {
          env: { CONFORMANCE_CLIENT_SECRET: key.client_secret },
        },
      );
      // The list checks fail on the pages that quote them, so their bodies are shown.
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(front.secret()).toBe(key.client_secret);
      expect(front.tokens.length).toBeGreaterThanOrEqual(2);
      const report = JSON.parse(readFileSync(join(dir, 'report', 'results.json'), 'utf8')) as { auth: { logins: number } };
      expect(report.auth.logins).toBe(front.tokens.length);
      const files = readdirSync(join(dir, 'report')).map((f) => join(dir, 'report', f));
      expect(files.map((f) => f.split('/').pop()).sort()).toEqual(['junit.xml', 'report.html', 'results.json']);
      const outputs = [r.stdout, r.stderr, ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
      expect(outputs).toMatch(/"debug":\{"token":\{"as is":"secret \*\*\* here"/);
      for (const value of [key.client_secret, ...front.tokens]) {
        expect(outputs).not.toContain(value);
        for (const [name, encode] of Object.entries(ENCODERS)) expect(outputs.includes(encode(value).replace(/^secret | here$/g, '')), name).toBe(false);
        for (const [name, encode] of Object.entries(BASE64))
          expect(
            outputs.includes(
              encode(value)
                .replace(/^(Basic |t=)/, '')
                .slice(4, -4),
            ),
            name,
          ).toBe(false);
      }
    } finally {
      await front.close();
    }
  });
}, 120_000);
