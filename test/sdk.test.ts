// The official JavaScript SDK (@elasticpath/js-sdk, a devDependency) against the bundled
// reference server, configured the way its README shows, with no custom authenticator or
// fetch: it logs in at POST /oauth/access_token with an Application Key's client_id and
// client_secret, then creates, lists, filters, sorts and deletes.
//
// Two settings beyond the README's: `protocol: 'http'` (the SDK's Config reads it, its
// TypeScript types leave it out; the sandbox serves plain HTTP) and a MemoryStorageFactory
// (the README's own advice where the default, a ./localStorage folder, is not wanted).
import { gateway, MemoryStorageFactory } from '@elasticpath/js-sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { validate, SCHEMA } from '../lib/contract/index.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import { TOKEN } from './support.js';

interface Key {
  id: string;
  client_id: string;
  client_secret: string;
}

interface CustomApi {
  id: string;
  name: string;
  slug: string;
}

interface Page<T> {
  data: T[];
  meta: { results: { total: number }; page: { limit: number; offset: number } };
}

type Sdk = ReturnType<typeof gateway>;

let server: RunningServer;
let key: Key;
let host: string;

/** The SDK as its README configures it, pointed at the sandbox. */
function sdk(credentials: { client_id: string; client_secret?: string }): Sdk {
  const options = { ...credentials, host, protocol: 'http', storage: new MemoryStorageFactory() };
  return gateway(options);
}

/** What a rejected SDK promise carries: the answer's parsed body. */
async function refusal(p: Promise<unknown>): Promise<{ errors: Array<{ status: string; title: string; detail: string }> }> {
  const outcome = await p.then(
    (v) => ({ resolved: v }),
    (e: unknown) => ({ rejected: e }),
  );
  expect(outcome, 'the SDK call was expected to be refused').toHaveProperty('rejected');
  const body = (outcome as { rejected: unknown }).rejected;
  expect(validate(SCHEMA.error, body), JSON.stringify(body)).toEqual([]);
  return body as { errors: Array<{ status: string; title: string; detail: string }> };
}

beforeAll(async () => {
  // The SDK says on the console each time it has no token yet: not this test's output.
  vi.spyOn(console, 'info').mockImplementation(() => undefined);
  server = await startReferenceServer({ token: TOKEN, seed: 7 });
  host = new URL(server.url).host;
  // The key is made with the server's own token, as a vendor's admin would.
  const res = await fetch(`${server.url}/v2/application-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'application_key', name: 'js-sdk' } }),
  });
  expect(res.status).toBe(201);
  key = ((await res.json()) as { data: Key }).data;
});

afterAll(async () => {
  vi.restoreAllMocks();
  await server.close();
});

describe('@elasticpath/js-sdk against the reference server', () => {
  it('logs in with client_credentials and keeps the token it was given', async () => {
    const ep = sdk({ client_id: key.client_id, client_secret: key.client_secret });
    const answer = (await ep.Authenticate()) as unknown as Record<string, unknown>;
    expect(answer).toMatchObject({ token_type: 'Bearer', identifier: 'client_credentials', expires_in: 3600, client_id: key.client_id });
    // Not in the SDK's type, though the SDK has it.
    expect((ep as unknown as { tokenInvalid(): boolean }).tokenInvalid()).toBe(false);
    expect(ep.credentials()).toMatchObject({ client_id: key.client_id, access_token: answer.access_token, expires: answer.expires });
  });

  it('Custom APIs: create, list, filter, sort, page and delete', async () => {
    const ep = sdk({ client_id: key.client_id, client_secret: key.client_secret });
    const names = ['sdk-alpha', 'sdk-beta', 'sdk-gamma'];
    const made: CustomApi[] = [];
    for (const name of names) {
      const r = (await ep.CustomApis.Create({
        type: 'custom_api',
        name,
        slug: name,
        api_type: `${name.replace('-', '_')}_ext`,
        description: 'made by the official SDK',
        // The SDK's type asks for fields the contract does not (allow_upserts): sent as the contract has it.
      } as never)) as unknown as { data: CustomApi };
      expect(r.data).toMatchObject({ name, slug: name });
      made.push(r.data);
    }
    const ids = made.map((c) => c.id);

    const all = (await ep.CustomApis.All()) as unknown as Page<CustomApi>;
    expect(all.data.map((c) => c.id).sort()).toEqual([...ids].sort());
    expect(all.meta.results.total).toBe(3);

    // filter=eq(name,sdk-beta), as the SDK writes it.
    const beta = (await ep.CustomApis.Filter({ eq: { name: 'sdk-beta' } }).All()) as unknown as Page<CustomApi>;
    expect(beta.data.map((c) => c.name)).toEqual(['sdk-beta']);
    expect(beta.meta.results.total).toBe(1);

    const down = (await ep.CustomApis.Sort('-id').All()) as unknown as Page<CustomApi>;
    expect(down.data.map((c) => c.id)).toEqual([...ids].sort().reverse());
    const up = (await ep.CustomApis.Sort('id').All()) as unknown as Page<CustomApi>;
    expect(up.data.map((c) => c.id)).toEqual([...ids].sort());

    // page[limit]=1&page[offset]=1, as the SDK writes it.
    const second = (await ep.CustomApis.Sort('id').Limit(1).Offset(1).All()) as unknown as Page<CustomApi>;
    expect(second.data.map((c) => c.id)).toEqual([[...ids].sort()[1]]);
    expect(second.meta.page).toMatchObject({ limit: 1, offset: 1 });

    // A 204's empty body is success to the SDK.
    await ep.CustomApis.Delete(ids[1]!);
    const left = (await ep.CustomApis.All()) as unknown as Page<CustomApi>;
    expect(left.data.map((c) => c.id).sort()).toEqual([ids[0], ids[2]].sort());
    const gone = await refusal(ep.CustomApis.Get(ids[1]!));
    expect(gone.errors[0]!.status).toBe('404');
    for (const id of [ids[0]!, ids[2]!]) await ep.CustomApis.Delete(id);
    expect(((await ep.CustomApis.All()) as unknown as Page<CustomApi>).data).toEqual([]);
  });

  it('Application Keys: create, list, filter and delete; sort through the generic request', async () => {
    const ep = sdk({ client_id: key.client_id, client_secret: key.client_secret });
    const made = (await ep.ApplicationKeys.Create({ type: 'application_key', name: 'made-by-sdk' } as never)) as unknown as { data: Key & { name: string } };
    expect(made.data).toMatchObject({ name: 'made-by-sdk' });
    expect(made.data.client_secret).toEqual(expect.any(String));

    const listed = (await ep.ApplicationKeys.All()) as unknown as Page<Key>;
    expect(listed.data.map((k) => k.id)).toEqual(expect.arrayContaining([key.id, made.data.id]));
    const filtered = (await ep.ApplicationKeys.Filter({ eq: { name: 'made-by-sdk' } } as never).All()) as unknown as Page<Key>;
    expect(filtered.data.map((k) => k.id)).toEqual([made.data.id]);

    // ApplicationKeys.All() sends no sort (the SDK leaves it out): its generic request does.
    const sorted = (await ep.request.send('application-keys?sort=-id', 'GET')) as Page<Key>;
    const sortedIds = sorted.data.map((k) => k.id);
    expect(sortedIds).toEqual([...sortedIds].sort().reverse());
    expect(sortedIds).toEqual(expect.arrayContaining([key.id, made.data.id]));

    await ep.ApplicationKeys.Delete(made.data.id);
    const after = (await ep.ApplicationKeys.All()) as unknown as Page<Key>;
    expect(after.data.map((k) => k.id)).not.toContain(made.data.id);
  });

  it('a wrong secret is refused with the Error shape, at login and on any call', async () => {
    const wrong = `${key.client_secret.slice(0, -1)}${key.client_secret.endsWith('A') ? 'B' : 'A'}`;
    const ep = sdk({ client_id: key.client_id, client_secret: wrong });
    const atLogin = await refusal(ep.Authenticate());
    // The token endpoint's own refusal, not the 401 of a route that wanted a bearer token.
    expect(atLogin.errors[0]).toMatchObject({ status: '401', title: 'Unauthorized', detail: expect.stringMatching(/client credentials/) });
    const onCall = await refusal(ep.CustomApis.All());
    expect(onCall.errors[0]!.status).toBe('401');
    for (const body of [atLogin, onCall]) {
      expect(JSON.stringify(body)).not.toContain(wrong);
      expect(JSON.stringify(body)).not.toContain(key.client_secret);
    }
    expect(ep.credentials()).toBeNull();
  });

  it('implicit (a client_id alone): reads, and is refused a create with the Error shape', async () => {
    const ep = sdk({ client_id: key.client_id });
    expect(await ep.Authenticate()).toMatchObject({ identifier: 'implicit' });
    const read = (await ep.CustomApis.All()) as unknown as Page<CustomApi>;
    expect(Array.isArray(read.data)).toBe(true);
    const refused = await refusal(
      ep.CustomApis.Create({ type: 'custom_api', name: 'not-allowed', slug: 'not-allowed', api_type: 'not_allowed_ext', description: '' } as never),
    );
    expect(refused.errors[0]!.status).toBe('403');
  });
});
