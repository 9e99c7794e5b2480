// The reference server against slow clients and floods (server/listen.ts, server/store.ts):
// slow or idle sockets are cut off, no more than maxConnections sockets are open at once (the
// idle ones go first, so a client that sends requests is still answered), and the records the
// API creates are capped, past which a create gets 409 with the Error shape. The limits are set
// small here, so each test takes at most a second or two; waits are generous, never asserted.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validate, SCHEMA } from '../lib/contract/index.js';
import {
  DEFAULT_MAX_RECORDS,
  DEFAULT_SOCKET_LIMITS,
  serveOn,
  startReferenceServer,
  type ReferenceServerOptions,
  type RunningServer,
  type SocketLimits,
} from '../server/index.js';
import { listen, type Listening } from '../server/listen.js';
import { MAX_DESCRIPTION } from '../server/routes.js';
import { TOKEN } from './support.js';

/** Everything a test opened, closed after it. */
const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function start(options: Partial<ReferenceServerOptions> & SocketLimits = {}): Promise<RunningServer> {
  const s = await startReferenceServer({ token: TOKEN, seed: 3, ...options });
  opened.push(s);
  return s;
}

/** A listening socket with the server on it, as `conformance run` has it (the socket's Server at hand). */
async function startOn(limits: SocketLimits, options: Partial<ReferenceServerOptions> = {}): Promise<{ listening: Listening; server: RunningServer }> {
  const listening = await listen(limits);
  opened.push(listening);
  return { listening, server: serveOn(listening, { token: TOKEN, seed: 3, ...options }) };
}

/** A connected socket that reads (and drops) what it is sent, so that it sees the server close it. */
function socketTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1');
    opened.push({ close: () => c.destroy() });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
    c.on('error', () => {});
  });
}

/** Whether `socket` is closed within `ms` (generous: a timeout, not a measure). */
async function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.closed) return true;
  const timer = delay(ms).then(() => false);
  return Promise.race([once(socket, 'close').then(() => true), timer]);
}

/** What the server sends on `socket` until it closes it (or `ms` pass). */
async function readUntilClosed(socket: Socket, ms: number): Promise<{ text: string; closed: boolean }> {
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const closed = await closedWithin(socket, ms);
  return { text, closed };
}

/** One answer on a kept-alive socket: the status line and headers, and a Content-Length body. */
function answerOn(socket: Socket, ms = 5_000): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no whole answer within ${ms} ms: ${JSON.stringify(text)}`)), ms);
    const onData = (d: Buffer): void => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = text.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      clearTimeout(timer);
      socket.off('data', onData);
      resolve({ status: Number(head.split(' ')[1]), head, body: text.slice(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
  });
}

const GET_SETTINGS = `GET /v2/settings HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;

async function send(base: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json';
  const res = await request(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

function expectErrorShape(r: { status: number; text: string; json: unknown }, status: number): void {
  expect(r.status, r.text).toBe(status);
  expect(validate(SCHEMA.error, r.json), r.text).toEqual([]);
  expect((r.json as { errors: Array<{ status: string }> }).errors[0]!.status).toBe(String(status));
}

describe('socket limits', () => {
  it('defaults: headers 10 s, request 30 s, kept alive 5 s (advertised), 30 s without a byte, 512 sockets, checked every second', async () => {
    expect(DEFAULT_SOCKET_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      socketTimeoutMs: 30_000,
      maxConnections: 512,
    });
    const { listening, server } = await startOn({});
    expect(listening.server.headersTimeout).toBe(10_000);
    expect(listening.server.requestTimeout).toBe(30_000);
    expect(listening.server.keepAliveTimeout).toBe(5_000);
    expect(listening.server.timeout).toBe(30_000);
    // Node's own default is 30 s, which let a slow client hold its socket some 35 s.
    expect((listening.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval).toBe(1_000);
    const res = await request(`${server.url}/v2/settings`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await res.body.text();
    expect(res.headers['keep-alive']).toBe('timeout=5');
  });

  it('refuses limits that are not whole numbers of at least 1, and headers allowed longer than the request', async () => {
    for (const bad of [
      { maxConnections: 0 },
      { headersTimeoutMs: -1 },
      { keepAliveTimeoutMs: 1.5 },
      { socketTimeoutMs: Number.NaN },
      { requestTimeoutMs: '30' as unknown as number },
    ]) {
      await expect(startReferenceServer({ token: TOKEN, ...bad })).rejects.toThrow(TypeError);
    }
    await expect(startReferenceServer({ token: TOKEN, headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 })).rejects.toThrow(
      /headersTimeoutMs \(2000\) must not be more than requestTimeoutMs \(1000\)/,
    );
    await expect(startReferenceServer({ token: TOKEN, maxRecords: 0 })).rejects.toThrow(/maxRecords must be a whole number/);
  });

  /** A socket that sent `head` and goes on sending a little every 25 ms is answered 408 and closed. */
  async function expectCutOffWhileTrickling(port: number, head: string, more: (n: number) => string): Promise<void> {
    const slow = await socketTo(port);
    slow.write(head);
    let n = 0;
    const trickle = setInterval(() => slow.writable && slow.write(more(n++)), 25);
    try {
      const seen = await readUntilClosed(slow, 5_000);
      expect(seen.closed).toBe(true);
      expect(seen.text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
  }

  it('a client that sends its headers slowly (slowloris) is cut off with 408, though it keeps sending', async () => {
    const s = await start({ headersTimeoutMs: 200, requestTimeoutMs: 1_000 });
    await expectCutOffWhileTrickling(s.port, 'GET /v2/settings HTTP/1.1\r\nHost: localhost\r\n', (n) => `X-Slow-${n}: 1\r\n`);
  });

  it('a socket that never sends a byte is closed', async () => {
    const s = await start({ headersTimeoutMs: 200, requestTimeoutMs: 1_000 });
    const idle = await socketTo(s.port);
    expect((await readUntilClosed(idle, 5_000)).closed).toBe(true);
  });

  it('a body sent slowly is cut off once the request has taken requestTimeoutMs', async () => {
    const s = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    await expectCutOffWhileTrickling(
      s.port,
      `POST /v2/application-keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      () => ' ',
    );
  });

  it('an answered socket kept alive is closed once idle for keepAliveTimeoutMs', async () => {
    const s = await start({ keepAliveTimeoutMs: 100 });
    const socket = await socketTo(s.port);
    socket.write(GET_SETTINGS);
    expect((await answerOn(socket)).status).toBe(200);
    // Node closes it a second after the advertised time (its margin against a client's race).
    expect((await readUntilClosed(socket, 5_000)).closed).toBe(true);
  });

  it('a socket whose request waits and that sends nothing more is closed after socketTimeoutMs', async () => {
    // No handler on the socket yet (as while `conformance run` loads the server): the request waits.
    const listening = await listen({ socketTimeoutMs: 300 });
    opened.push(listening);
    const socket = await socketTo(listening.port);
    socket.write(GET_SETTINGS);
    expect((await readUntilClosed(socket, 5_000)).closed).toBe(true);
  });
});

describe('the cap on open sockets', () => {
  it('idle sockets past the cap are closed, oldest first, and a client that sends a request is still answered', async () => {
    const { listening, server } = await startOn({ maxConnections: 8 });
    // One after the other: the server accepts them in this order.
    const idle: Socket[] = [];
    for (let i = 0; i < 30; i++) idle.push(await socketTo(server.port));
    // The 22 oldest were closed (each by a newer one); the 8 newest are open.
    await expect.poll(() => idle.filter((c) => c.closed).length, { timeout: 5_000 }).toBe(22);
    expect(idle.slice(0, 22).every((c) => c.closed)).toBe(true);
    expect(idle.slice(22).some((c) => c.closed)).toBe(false);
    const count = await new Promise<number>((resolve, reject) => listening.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    expect(count).toBeLessThanOrEqual(8);
    const r = await send(server.url, 'GET', '/v2/settings');
    expect(r.status).toBe(200);
  });

  it('a kept-alive socket that was answered outlives newer sockets that never sent a request', async () => {
    const s = await start({ maxConnections: 4 });
    const client = await socketTo(s.port);
    client.write(GET_SETTINGS);
    expect((await answerOn(client)).status).toBe(200);
    const idle: Socket[] = [];
    for (let i = 0; i < 12; i++) idle.push(await socketTo(s.port));
    await expect.poll(() => idle.filter((c) => c.closed).length, { timeout: 5_000 }).toBe(9);
    expect(client.closed).toBe(false);
    client.write(GET_SETTINGS);
    expect((await answerOn(client)).status).toBe(200);
  });

  it('when every socket has a request under way, a new one gets 503 with Retry-After and the Error shape, and none under way is cut', async () => {
    const s = await start({ maxConnections: 2 });
    const body = JSON.stringify({ data: { type: 'application_key', name: 'under way' } });
    const busy = await Promise.all([socketTo(s.port), socketTo(s.port)]);
    // Headers and part of the body: each request is under way, its route reading the body.
    for (const c of busy)
      c.write(
        `POST /v2/application-keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
    await delay(100);
    const late = await socketTo(s.port);
    // It may send its request before it reads the refusal: the server stays up all the same.
    late.write(GET_SETTINGS);
    const seen = await readUntilClosed(late, 5_000);
    expect(seen.closed).toBe(true);
    expect(seen.text).toMatch(/^HTTP\/1\.1 503 /);
    expect(seen.text).toMatch(/\r\nRetry-After: 1\r\n/i);
    const json = JSON.parse(seen.text.slice(seen.text.indexOf('\r\n\r\n') + 4)) as unknown;
    expect(validate(SCHEMA.error, json)).toEqual([]);
    const answers = busy.map((c) => answerOn(c));
    for (const c of busy) c.write(body.slice(5));
    expect((await Promise.all(answers)).map((a) => a.status)).toEqual([201, 201]);
  });
});

describe('the cap on stored records', () => {
  it('defaults to 10,000 of each kind', () => {
    expect(DEFAULT_MAX_RECORDS).toBe(10_000);
  });

  const key = (name: string): unknown => ({ data: { type: 'application_key', name } });
  const customApi = (slug: string, description = 'made by a test'): unknown => ({
    data: { type: 'custom_api', name: slug, slug, api_type: `${slug.replace(/-/g, '_')}_ext`, description },
  });

  it.each([
    ['Application Keys', '/v2/application-keys', (i: number) => key(`key ${i}`)],
    ['Custom APIs', '/v2/settings/extensions/custom-apis', (i: number) => customApi(`api-${i}`)],
  ])('%s: past the cap a create gets 409 with the Error shape (a bad body still 400), and a delete makes room', async (_kind, path, body) => {
    const s = await start({ maxRecords: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(s.url, 'POST', path, body(i));
      expect(r.status, r.text).toBeLessThan(300);
      ids.push((r.json as { data: { id: string } }).data.id);
    }
    const full = await send(s.url, 'POST', path, body(3));
    expectErrorShape(full, 409);
    expect((full.json as { errors: Array<{ detail: string }> }).errors[0]!.detail).toMatch(/at most 3 .*delete one/);
    expectErrorShape(await send(s.url, 'POST', path, { data: null }), 400);
    expect((await send(s.url, 'DELETE', `${path}/${ids[0]!}`)).status).toBe(204);
    expect((await send(s.url, 'POST', path, body(4))).status).toBeLessThan(300);
    expectErrorShape(await send(s.url, 'POST', path, body(5)), 409);
  });

  it('tokens: past the cap a login gets 409 with the Error shape, until tokens stop working', async () => {
    const s = await start({ maxRecords: 2 });
    const made = await send(s.url, 'POST', '/v2/application-keys', key('login'));
    const { id, client_id, client_secret } = (made.json as { data: { id: string; client_id: string; client_secret: string } }).data;
    const login = (clientId: string, secret: string): Promise<{ status: number; json: unknown; text: string }> =>
      send(s.url, 'POST', '/oauth/access_token', `grant_type=client_credentials&client_id=${clientId}&client_secret=${encodeURIComponent(secret)}`);
    expect((await login(client_id, client_secret)).status).toBe(200);
    expect((await login(client_id, client_secret)).status).toBe(200);
    expectErrorShape(await login(client_id, client_secret), 409);
    // Deleting the key logs its tokens out: the next login (another key's) clears them away.
    expect((await send(s.url, 'DELETE', `/v2/application-keys/${id}`)).status).toBe(204);
    const other = (await send(s.url, 'POST', '/v2/application-keys', key('other'))).json as { data: { client_id: string; client_secret: string } };
    expect((await login(other.data.client_id, other.data.client_secret)).status).toBe(200);
  });

  it(`a Custom API keeps a description of at most ${MAX_DESCRIPTION} characters: a longer one gets 400`, async () => {
    const s = await start();
    const path = '/v2/settings/extensions/custom-apis';
    expect((await send(s.url, 'POST', path, customApi('long-enough', '€'.repeat(MAX_DESCRIPTION)))).status).toBe(201);
    expectErrorShape(await send(s.url, 'POST', path, customApi('too-long', 'x'.repeat(MAX_DESCRIPTION + 1))), 400);
    expectErrorShape(await send(s.url, 'POST', path, customApi('far-too-long', 'x'.repeat(500_000))), 400);
  });
});
