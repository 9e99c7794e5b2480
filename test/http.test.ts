// The HTTP layer: the suite's own failures are SuiteErrors (never the target's fault), a
// non-JSON body is the target's failure, a body over the cap is said to be over the cap, and
// secrets are masked by value in every record.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../lib/transport/index.js';
import { CheckFailure, SuiteError, Secrets, toCurl } from '../lib/evidence/index.js';

const TOKEN = 'tok-8d1f0c3b7a';
let server: Server | undefined;

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

function client(baseUrl: string, over: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}): HttpClient {
  return new HttpClient({ baseUrl, token: TOKEN, timeoutMs: 2_000, maxBodyBytes: 1024, concurrency: 2, secrets: new Secrets(), ...over });
}

describe('HttpClient', () => {
  it('reports a refused connection as TARGET_UNREACHABLE', async () => {
    const url = await serve((_q, s) => s.end());
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const err = await client(url)
      .request({ method: 'GET', path: '/x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SuiteError);
    expect((err as SuiteError).code).toBe('TARGET_UNREACHABLE');
  });

  it('reports a server that never answers as TIMEOUT (a POST at once; a GET once its time budget for retries is spent)', async () => {
    const url = await serve(() => undefined);
    const c = client(url, { timeoutMs: 200, retry: { maxWaitMs: 0 } });
    for (const method of ['POST', 'GET'] as const) {
      const err = await c.request({ method, path: '/x' }).catch((e: unknown) => e);
      expect((err as SuiteError).code).toBe('TIMEOUT');
      expect((err as SuiteError).message).toMatch(/no complete answer within 200 ms$/);
    }
  });

  it('caps the response size, and says so', async () => {
    // No Content-Length: the cap is found as the body is read.
    const url = await serve((_q, s) => (s.write('x'.repeat(3000)), s.end('x'.repeat(2000))));
    const err = await client(url)
      .request({ method: 'GET', path: '/x' })
      .catch((e: unknown) => e);
    expect((err as SuiteError).code).toBe('RESPONSE_TOO_LARGE');
    expect((err as SuiteError).message).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/x: the response body is over the 1024-byte cap \(--max-body-bytes\); it was not read further$/,
    );
  });

  it('refuses a body whose Content-Length is over the cap before reading it, even when the connection is then cut: over the cap, not a closed connection', async () => {
    let arrivals = 0;
    const url = await serve((_q, s) => {
      arrivals++;
      // A proxy that limits the body it relays: it says how long the body is, sends a little, and cuts the connection.
      s.writeHead(200, { 'content-type': 'application/json', 'content-length': '50000' });
      s.write('{"data":"');
      setTimeout(() => s.socket?.destroy(), 20);
    });
    const err = await client(url)
      .request({ method: 'GET', path: '/x' })
      .catch((e: unknown) => e);
    expect((err as SuiteError).code).toBe('RESPONSE_TOO_LARGE');
    expect((err as SuiteError).message).toMatch(/the response body is over the 1024-byte cap \(--max-body-bytes\) \(Content-Length: 50000\)/);
    // Not sent again as a GET cut off mid-body would be.
    expect(arrivals).toBe(1);
  });

  it('reports a non-JSON body as the target failing', async () => {
    const url = await serve((_q, s) => s.end('<html>oops</html>'));
    const res = await client(url).request({ method: 'GET', path: '/x' });
    expect(() => res.json()).toThrow(CheckFailure);
  });

  it('masks the token and every client_secret by value, wherever they appear', async () => {
    const url = await serve((q, s) => {
      s.setHeader('x-echo', String(q.headers.authorization));
      s.end(JSON.stringify({ data: { client_secret: 'sec-1234567890' }, echo: q.headers.authorization, again: 'sec-1234567890' }));
    });
    const c = client(url);
    const res = await c.request({ method: 'POST', path: `/x/${TOKEN}`, json: { note: `token ${TOKEN}` } });
    const later = await c.request({ method: 'GET', path: '/y', query: { q: 'sec-1234567890' } });
    const recorded = JSON.stringify([res.exchange, later.exchange, toCurl(res.exchange), toCurl(later.exchange)]);
    expect(recorded).not.toContain(TOKEN);
    expect(recorded).not.toContain('sec-1234567890');
    expect(recorded).toContain('Bearer ***');
  });

  it('never has more requests in flight than its concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const url = await serve((_q, s) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        s.end('{}');
      }, 20);
    });
    const c = client(url, { concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => c.request({ method: 'GET', path: '/x' })));
    expect(peak).toBe(3);
  });
});

describe('Secrets.maskedHead', () => {
  it('keeps the head of a long body code unit for code unit (a lone surrogate at the cut too), masked', () => {
    const secrets = new Secrets();
    secrets.add('s3cret-value');
    const text = `${'a'.repeat(10)}s3cret-value${'b'.repeat(76)}\ud83d${'c'.repeat(50_000)}`;
    const head = secrets.maskedHead(text, 99);
    expect(head).toBe(`${'a'.repeat(10)}***${'b'.repeat(76)}\ud83d`);
    // A secret that starts before the cut and runs past it is masked whole.
    expect(secrets.maskedHead(text, 15)).toBe(`${'a'.repeat(10)}***`);
  });
});

describe('the Authorization header in evidence', () => {
  it('keeps a known scheme as sent and hides what follows it; hides anything else whole', async () => {
    const { maskAuthorization } = await import('../lib/transport/index.js');
    expect(maskAuthorization('Bearer s3cr3t')).toBe('Bearer ***');
    expect(maskAuthorization('Bearer ')).toBe('Bearer ');
    expect(maskAuthorization('Basic dXNlcjpwYXNz')).toBe('Basic ***');
    expect(maskAuthorization('bearer  x')).toBe('bearer ***');
    // A bare token, or a scheme the suite does not know: never shown.
    expect(maskAuthorization('s3cr3tT0ken')).toBe('***');
    expect(maskAuthorization('Bearers3cr3t')).toBe('***');
  });
});
