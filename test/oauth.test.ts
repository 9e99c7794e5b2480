// The sandbox's login: POST /oauth/access_token on the reference server.
// A key's client_id and client_secret buy a token that works like the server's own; a client_id
// alone (implicit) buys one that only reads; every refusal is a 4xx with the Error shape and
// never repeats a secret; tokens expire, and die with their key.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate, SCHEMA } from '../lib/contract/index.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import { TOKEN, withServer } from './support.js';

interface Sent {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  json: unknown;
}

interface Key {
  id: string;
  client_id: string;
  client_secret: string;
}

interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  expires: number;
  identifier: string;
  client_id: string;
}

async function call(base: string, method: string, path: string, opts: { bearer?: string; body?: string; type?: string } = {}): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.type) headers['content-type'] = opts.type;
  const res = await request(`${base}${path}`, { method: method as 'GET', headers, body: opts.body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

const FORM = 'application/x-www-form-urlencoded';
const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();

function login(base: string, fields: Record<string, string>): Promise<Sent> {
  return call(base, 'POST', '/oauth/access_token', { body: form(fields), type: FORM });
}

async function createKey(base: string, name = 'sandbox client'): Promise<Key> {
  const r = await call(base, 'POST', '/v2/application-keys', {
    bearer: TOKEN,
    type: 'application/json',
    body: JSON.stringify({ data: { type: 'application_key', name } }),
  });
  expect(r.status, r.text).toBe(201);
  return (r.json as { data: Key }).data;
}

async function tokenFor(base: string, key: Key, grant: 'client_credentials' | 'implicit' = 'client_credentials'): Promise<string> {
  const r = await login(
    base,
    grant === 'implicit'
      ? { grant_type: 'implicit', client_id: key.client_id }
      : { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret },
  );
  expect(r.status, r.text).toBe(200);
  return (r.json as TokenAnswer).access_token;
}

function expectErrorShape(r: Sent): void {
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(validate(SCHEMA.error, r.json), r.text).toEqual([]);
  expect((r.json as { errors: Array<{ status: string }> }).errors[0]!.status).toBe(String(r.status));
}

let server: RunningServer;
let key: Key;
beforeAll(async () => {
  server = await startReferenceServer({ token: TOKEN, seed: 5 });
  key = await createKey(server.url);
});
afterAll(() => server.close());

describe('client_credentials', () => {
  it("answers the platform's token shape at the top level, not to be cached, without the secret", async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await login(server.url, { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret });
    const after = Math.floor(Date.now() / 1000);
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['cache-control']).toBe('no-store');
    const t = r.json as TokenAnswer;
    expect(Object.keys(t).sort()).toEqual(['access_token', 'client_id', 'expires', 'expires_in', 'identifier', 'token_type']);
    expect(t).toMatchObject({ token_type: 'Bearer', expires_in: 3600, identifier: 'client_credentials', client_id: key.client_id });
    expect(t.access_token).toMatch(/^[\w-]{40,}$/);
    expect(t.expires).toBeGreaterThanOrEqual(before + 3600);
    expect(t.expires).toBeLessThanOrEqual(after + 3600);
    expect(r.text).not.toContain(key.client_secret);
  });

  it('hands out a different token each time', async () => {
    const a = await tokenFor(server.url, key);
    const b = await tokenFor(server.url, key);
    expect(a).not.toBe(b);
    expect(a).not.toBe(TOKEN);
  });

  it("its token does what the server's own token does: read, create, delete", async () => {
    const token = await tokenFor(server.url, key);
    expect((await call(server.url, 'GET', '/v2/application-keys', { bearer: token })).status).toBe(200);
    expect((await call(server.url, 'GET', '/v2/accounts?page[limit]=1', { bearer: token })).status).toBe(200);
    const made = await call(server.url, 'POST', '/v2/settings/extensions/custom-apis', {
      bearer: token,
      type: 'application/json',
      body: JSON.stringify({ data: { type: 'custom_api', name: 'by oauth', slug: 'by-oauth', api_type: 'by_oauth_ext' } }),
    });
    expect(made.status, made.text).toBe(201);
    const id = (made.json as { data: { id: string } }).data.id;
    expect((await call(server.url, 'DELETE', `/v2/settings/extensions/custom-apis/${id}`, { bearer: token })).status).toBe(204);
    const other = await call(server.url, 'POST', '/v2/application-keys', {
      bearer: token,
      type: 'application/json',
      body: JSON.stringify({ data: { type: 'application_key', name: 'made by a client' } }),
    });
    expect(other.status, other.text).toBe(201);
    expect((await call(server.url, 'DELETE', `/v2/application-keys/${(other.json as { data: Key }).data.id}`, { bearer: token })).status).toBe(204);
  });

  it('a token it never handed out is refused as before', async () => {
    const r = await call(server.url, 'GET', '/v2/application-keys', { bearer: 'x'.repeat(43) });
    expect(r.status).toBe(401);
    expectErrorShape(r);
  });
});

describe('implicit', () => {
  it('takes a client_id alone and answers the same shape', async () => {
    const r = await login(server.url, { grant_type: 'implicit', client_id: key.client_id });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, identifier: 'implicit', client_id: key.client_id });
  });

  it('its token reads, and cannot create or delete (403, Error shape): the key stays', async () => {
    const token = await tokenFor(server.url, key, 'implicit');
    expect((await call(server.url, 'GET', '/v2/application-keys', { bearer: token })).status).toBe(200);
    expect((await call(server.url, 'GET', `/v2/application-keys/${key.id}`, { bearer: token })).status).toBe(200);
    expect((await call(server.url, 'GET', '/v2/accounts?page[limit]=1', { bearer: token })).status).toBe(200);
    const attempts = [
      await call(server.url, 'POST', '/v2/application-keys', {
        bearer: token,
        type: 'application/json',
        body: JSON.stringify({ data: { type: 'application_key', name: 'not allowed' } }),
      }),
      await call(server.url, 'DELETE', `/v2/application-keys/${key.id}`, { bearer: token }),
      await call(server.url, 'POST', '/v2/settings/extensions/custom-apis', {
        bearer: token,
        type: 'application/json',
        body: JSON.stringify({ data: { type: 'custom_api', name: 'x' } }),
      }),
      await call(server.url, 'DELETE', '/v2/settings/extensions/custom-apis/00000000-0000-4000-8000-000000000000', { bearer: token }),
    ];
    for (const r of attempts) {
      expect(r.status, r.text).toBe(403);
      expectErrorShape(r);
    }
    expect((await call(server.url, 'GET', `/v2/application-keys/${key.id}`, { bearer: TOKEN })).status).toBe(200);
    const names = (
      (await call(server.url, 'GET', '/v2/application-keys?page[limit]=100', { bearer: TOKEN })).json as { data: Array<{ name: string }> }
    ).data.map((k) => k.name);
    expect(names).not.toContain('not allowed');
  });
});

describe('refusals: a 4xx with the Error shape, never a secret', () => {
  it.each([
    ['a wrong secret', () => ({ grant_type: 'client_credentials', client_id: key.client_id, client_secret: `${key.client_secret}x` }), 401],
    [
      'an unknown client_id (client_credentials)',
      () => ({ grant_type: 'client_credentials', client_id: 'f'.repeat(32), client_secret: key.client_secret }),
      401,
    ],
    ['an unknown client_id (implicit)', () => ({ grant_type: 'implicit', client_id: 'f'.repeat(32) }), 401],
    ['no grant_type', () => ({ client_id: key.client_id, client_secret: key.client_secret }), 400],
    ['an empty grant_type', () => ({ grant_type: '', client_id: key.client_id, client_secret: key.client_secret }), 400],
    ['an unsupported grant_type', () => ({ grant_type: 'password', client_id: key.client_id, client_secret: key.client_secret }), 400],
    ['no client_id', () => ({ grant_type: 'client_credentials', client_secret: key.client_secret }), 400],
    ['client_credentials without a secret', () => ({ grant_type: 'client_credentials', client_id: key.client_id }), 400],
  ])('%s', async (_what, fields, status) => {
    const sent = fields() as Record<string, string>;
    const r = await login(server.url, sent);
    expect(r.status, r.text).toBe(status);
    expectErrorShape(r);
    // The token endpoint's own refusal, not the 401 of a route that wanted a bearer token.
    expect((r.json as { errors: Array<{ detail: string }> }).errors[0]!.detail).toMatch(
      status === 401 ? /client credentials/ : /grant_type|client_id|client_secret/,
    );
    expect(r.text).not.toContain(key.client_secret);
    if (sent.client_secret) expect(r.text).not.toContain(sent.client_secret);
  });

  it('a wrong secret and an unknown client get the same answer', async () => {
    const wrong = await login(server.url, { grant_type: 'client_credentials', client_id: key.client_id, client_secret: 'nope' });
    const unknown = await login(server.url, { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'nope' });
    expect(wrong.text).toBe(unknown.text);
  });

  it.each([
    [
      'a JSON body',
      () =>
        call(server.url, 'POST', '/oauth/access_token', {
          type: 'application/json',
          body: JSON.stringify({ grant_type: 'implicit', client_id: key.client_id }),
        }),
      415,
    ],
    ['no Content-Type', () => call(server.url, 'POST', '/oauth/access_token', { body: form({ grant_type: 'implicit', client_id: key.client_id }) }), 415],
    [
      'a parameter given twice',
      () => call(server.url, 'POST', '/oauth/access_token', { type: FORM, body: `grant_type=implicit&client_id=${key.client_id}&client_id=${key.client_id}` }),
      400,
    ],
    ['GET', () => call(server.url, 'GET', '/oauth/access_token'), 405],
  ])('%s', async (_what, go, status) => {
    const r = await go();
    expect(r.status, r.text).toBe(status);
    expectErrorShape(r);
  });

  it('any form at all: never a 5xx, and every refusal has the Error shape (fuzzed)', async () => {
    const value = fc.oneof(fc.constantFrom('client_credentials', 'implicit', key.client_id, key.client_secret, ''), fc.string({ maxLength: 40 }));
    const fields = fc.dictionary(fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'x'), value, { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(fields, fc.constantFrom(FORM, `${FORM}; charset=utf-8`, 'text/plain'), async (f, type) => {
        const r = await call(server.url, 'POST', '/oauth/access_token', { body: form(f), type });
        expect(r.status).toBeLessThan(500);
        if (r.status >= 400) expectErrorShape(r);
        else expect((r.json as TokenAnswer).client_id).toBe(key.client_id);
      }),
      { numRuns: 150, seed: 1010 },
    );
  });

  it('keeps the Error shape when the data API runs a fault that breaks it', async () => {
    await withServer({ faults: ['unauthorized-plain-text'] }, async (s) => {
      const k = await createKey(s.url);
      const data = await call(s.url, 'GET', '/v2/application-keys', { bearer: 'wrong' });
      expect(data.status).toBe(401);
      expect(data.json).toBeUndefined(); // the fault: plain text
      const r = await login(s.url, { grant_type: 'client_credentials', client_id: k.client_id, client_secret: 'wrong' });
      expect(r.status).toBe(401);
      expectErrorShape(r);
      expect((await call(s.url, 'GET', '/v2/application-keys', { bearer: await tokenFor(s.url, k) })).status).toBe(200);
    });
  });
});

describe('lifetime', () => {
  it('a token works until expires_in has passed, by the server clock', async () => {
    let clock = Date.UTC(2030, 0, 1);
    await withServer({ tokenLifetimeSeconds: 60, now: () => clock }, async (s) => {
      const k = await createKey(s.url);
      const r = await login(s.url, { grant_type: 'client_credentials', client_id: k.client_id, client_secret: k.client_secret });
      const t = r.json as TokenAnswer;
      expect(t.expires_in).toBe(60);
      expect(t.expires).toBe(Date.UTC(2030, 0, 1) / 1000 + 60);
      clock += 59_999;
      expect((await call(s.url, 'GET', '/v2/application-keys', { bearer: t.access_token })).status).toBe(200);
      clock += 1;
      const late = await call(s.url, 'GET', '/v2/application-keys', { bearer: t.access_token });
      expect(late.status).toBe(401);
      expectErrorShape(late);
      // A new login gets a new token that works.
      expect((await call(s.url, 'GET', '/v2/application-keys', { bearer: await tokenFor(s.url, k) })).status).toBe(200);
    });
  });

  it('deleting a key logs its clients out, and its client can no longer log in', async () => {
    await withServer({}, async (s) => {
      const k = await createKey(s.url);
      const full = await tokenFor(s.url, k);
      const read = await tokenFor(s.url, k, 'implicit');
      expect((await call(s.url, 'DELETE', `/v2/application-keys/${k.id}`, { bearer: TOKEN })).status).toBe(204);
      for (const token of [full, read]) expect((await call(s.url, 'GET', '/v2/application-keys', { bearer: token })).status).toBe(401);
      for (const fields of [
        { grant_type: 'client_credentials', client_id: k.client_id, client_secret: k.client_secret },
        { grant_type: 'implicit', client_id: k.client_id },
      ] as Array<Record<string, string>>) {
        const r = await login(s.url, fields);
        expect(r.status).toBe(401);
        expectErrorShape(r);
      }
    });
  });

  it('refuses a lifetime that is not a whole number of seconds', async () => {
    await expect(startReferenceServer({ token: TOKEN, tokenLifetimeSeconds: 0 })).rejects.toThrow(/tokenLifetimeSeconds/);
  });
});
