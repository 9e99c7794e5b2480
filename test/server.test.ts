// The reference server: every bad input gets a 4xx with the Error shape, never a 5xx, never a
// crash, and never loses data it holds.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate, SCHEMA } from '../lib/schema.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import { TOKEN } from './support.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startReferenceServer({ token: TOKEN });
});
afterAll(() => server.close());

async function send(method: string, path: string, opts: { body?: string | Buffer; type?: string; auth?: boolean } = {}) {
  const headers: Record<string, string> = {};
  if (opts.auth !== false) headers.authorization = `Bearer ${TOKEN}`;
  if (opts.type) headers['content-type'] = opts.type;
  const res = await request(`${server.url}${path}`, { method: method as 'GET', headers, body: opts.body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

function expectErrorShape(r: { status: number; text: string; json: unknown }): void {
  expect(validate(SCHEMA.error, r.json), r.text).toEqual([]);
  expect((r.json as { errors: Array<{ status: string }> }).errors[0]!.status).toBe(String(r.status));
}

describe('bad input', () => {
  it.each([
    ['no token', () => send('GET', '/v2/settings', { auth: false }), 401],
    ['unknown route', () => send('GET', '/v2/nothing-here'), 404],
    ['wrong method', () => send('PUT', '/v2/application-keys'), 405],
    ['malformed JSON', () => send('POST', '/v2/application-keys', { body: '{"data":', type: 'application/json' }), 400],
    ['empty body', () => send('POST', '/v2/application-keys', { type: 'application/json' }), 400],
    ['wrong content type', () => send('POST', '/v2/application-keys', { body: '{"data":{}}', type: 'text/plain' }), 415],
    ['body over 1 MB', () => send('POST', '/v2/application-keys', { body: Buffer.alloc(1024 * 1024 + 10, 0x20), type: 'application/json' }), 413],
    ['bad percent-encoding', () => send('DELETE', '/v2/application-keys/%E0%A4%A'), 400],
    ['JSON that is not an object', () => send('POST', '/v2/application-keys', { body: '[1,2]', type: 'application/json' }), 400],
    ['null data', () => send('POST', '/v2/application-keys', { body: '{"data":null}', type: 'application/json' }), 400],
    ['custom API with a bad slug', () => send('POST', '/v2/settings/extensions/custom-apis', { body: '{"data":{"type":"custom_api","name":"x","slug":"Bad Slug!","api_type":"x_ext"}}', type: 'application/json' }), 400],
  ])('%s gets %s with the Error shape', async (_what, go, status) => {
    const r = await go();
    expect(r.status).toBe(status);
    expectErrorShape(r);
  });

  it('keeps its data through any random request (fuzzed)', async () => {
    const created = await send('POST', '/v2/application-keys', { body: JSON.stringify({ data: { type: 'application_key', name: 'survivor' } }), type: 'application/json' });
    expect(created.status).toBe(201);
    const id = (created.json as { data: { id: string } }).data.id;
    const paths = fc.constantFrom('/v2/application-keys', `/v2/application-keys/${id}x`, '/v2/settings/extensions/custom-apis', '/v2/settings/extensions/custom-apis/abc', '/v2/settings', '/v2', '/');
    const bodies = fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ data: v })), fc.record({ data: fc.record({ type: fc.constantFrom('application_key', 'x', 1), name: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)), reserved_rate_limit: fc.oneof(fc.integer(), fc.double(), fc.string()) }, { requiredKeys: [] }) }).map((v) => JSON.stringify(v)));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH'), paths, bodies, fc.constantFrom('application/json', 'text/plain', undefined), async (method, path, body, type) => {
        const r = await send(method, path, method === 'GET' || method === 'DELETE' ? {} : { body, type });
        expect(r.status).toBeLessThan(500);
        if (r.status >= 400) expectErrorShape(r);
      }),
      { numRuns: 300, seed: 424242 },
    );
    const still = await send('GET', `/v2/application-keys/${id}`);
    expect(still.status).toBe(200);
  });
});

describe('the store settings', () => {
  it('reports the page length', async () => {
    const r = await send('GET', '/v2/settings');
    expect((r.json as { data: { page_length: number } }).data.page_length).toBe(25);
  });
});
