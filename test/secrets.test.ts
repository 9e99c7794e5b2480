// Issue 8: one registry of secrets serves the whole run, across areas and across the vitest
// worker, and masking runs before any escaping. A front in front of the reference server hands
// out client_secrets full of characters that escape differently in HTML, XML and JSON, and then
// quotes them in every later answer: a body member, an error's detail, a header. No output of
// the run may hold one, in any spelling.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cli, TOKEN, withServer } from './support.js';

/** A front that rewrites each new key's client_secret and quotes the latest one in every later answer. */
async function leakyFront(upstream: string) {
  const cores: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
    const up = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let text = await up.text();
    const latest = cores.length ? `sk<&"'>\\${cores.at(-1)}` : undefined;
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
        b.data.client_secret = `sk<&"'>\\${core}`;
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
    }
    const out: Record<string, string> = { 'content-type': up.headers.get('content-type') ?? 'application/json' };
    if (latest) out['x-debug-secret'] = latest;
    res.writeHead(up.status, out).end(up.status === 204 ? undefined : text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, cores, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

it('a secret issued in one area and quoted by the target in later areas shows in no output, in no spelling', async () => {
  await withServer({ seed: 11 }, async (server) => {
    const front = await leakyFront(server.url);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'conformance-secrets-'));
      const r = await cli(['--base-url', front.url, '--operation', 'accounts', '--report-dir', join(dir, 'report'), '--certify', join(dir, 'bundle'), '--write-baseline', join(dir, 'baseline.yaml')], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(front.cores.length, r.stdout + r.stderr).toBeGreaterThan(5);
      // The failure whose evidence quotes a secret issued in another area is there, masked.
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/list\.meta\.fields \[accounts\][\s\S]*body: +\{"debug":\{"last_secret":"\*\*\*"\}/);
      const files = ['report', 'bundle'].flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
      const outputs = [r.stdout, r.stderr, readFileSync(join(dir, 'baseline.yaml'), 'utf8'), ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
      expect(files.map((f) => f.split('/').pop()).sort()).toEqual(expect.arrayContaining(['junit.xml', 'report.html', 'results.json', 'certificate.json']));
      // The random core survives every escaping (HTML, XML, JSON, \u003c): none of it may show.
      for (const core of front.cores) expect(outputs).not.toContain(core);
      expect(outputs).not.toContain(TOKEN);
    } finally {
      await front.close();
    }
  });
}, 120_000);
