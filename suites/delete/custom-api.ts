// Creating and deleting the Custom APIs the delete checks work on. Every creation is in the
// ledger before the next request goes out; a deletion is written off it once an answer shows
// the Custom API gone.
import type { HttpResponse, Auth, RequestSpec } from '../../lib/transport/index.js';
import type { Session } from '../../lib/runner/index.js';
import type { Faker } from '@faker-js/faker';
import { customApiBody, type CustomApiCreateBody } from '../../fixtures/custom-api.js';

export const CUSTOM_APIS = '/v2/settings/extensions/custom-apis';

export function customApiPath(id: string): string {
  return `${CUSTOM_APIS}/${encodeURIComponent(id)}`;
}

export type Creation = { ok: true; id: string; res: HttpResponse; name: string } | { ok: false; reason: string; res: HttpResponse; name: string };

/**
 * Creates a Custom API (the real platform's POST, spec/contract "Delete a Custom API"). Never
 * throws for the target's answer. A create lost on the way is sent again with a new name and
 * slug (Session.create). `send`: how the request goes out besides (the credentials of a check
 * about their absence); by default with the token.
 */
export async function createCustomApi(s: Session, send: Pick<RequestSpec, 'auth' | 'headers' | 'background'> = {}): Promise<Creation> {
  const { res, name, key } = await s.create('custom-api', CUSTOM_APIS, () => {
    const name = s.name();
    return { name, spec: { json: customApiBody(s.faker, name, s.run.settings.runId), ...send } };
  });
  const id = res.isJson ? (res.json() as { data?: { id?: unknown } } | null)?.data?.id : undefined;
  if (res.status >= 200 && res.status < 300 && typeof id === 'string' && id.length > 0) {
    s.created({ kind: 'custom-api', id, name, deletePath: customApiPath(id), key });
    return { ok: true, id, res, name };
  }
  if (res.status >= 200 && res.status < 300) {
    s.created({ kind: 'custom-api', id: '', name, deletePath: '', key });
    return { ok: false, reason: `not testable: the Custom API create answered ${res.status} without data.id`, res, name };
  }
  s.run.ledger.settled(key);
  return { ok: false, reason: `not testable: could not create a Custom API (POST returned ${res.status})`, res, name };
}

/**
 * A create of a Custom API whose body the platform refuses (spec/contract/README.md#custom-api:
 * api_type must match ^[a-z0-9_]{1,59}_ext$; this one has capitals and spaces and no `_ext`),
 * carrying a name of its own traced to the run. In the ledger by name before it goes out, by id
 * if the target takes it after all.
 */
export function createInvalidCustomApi(s: Session): Promise<{ res: HttpResponse; name: string }> {
  return createRefusedCustomApi(s, (body) => ({ data: { ...body.data, api_type: 'Not A Valid API Type' } }));
}

/**
 * A create of a Custom API with the valid body rewritten by `reshape` into one the check expects
 * refused: in the ledger by name (the run-tagged name, wherever the body carries it) before it
 * goes out, by id if the target takes it after all, so the run's cleanup deletes it.
 */
export async function createRefusedCustomApi(s: Session, reshape: (body: CustomApiCreateBody) => unknown): Promise<{ res: HttpResponse; name: string }> {
  const { res, name, key } = await s.create(
    'custom-api',
    CUSTOM_APIS,
    () => {
      const name = s.name();
      return { name, spec: { json: reshape(customApiBody(s.faker, name, s.run.settings.runId)) } };
    },
    { refusal: true },
  );
  const id = res.isJson ? (res.json() as { data?: { id?: unknown } } | null)?.data?.id : undefined;
  if (res.status >= 200 && res.status < 300) {
    const known = typeof id === 'string' && id.length > 0;
    s.created({ kind: 'custom-api', id: known ? id : '', name, deletePath: known ? customApiPath(id) : '', key });
  } else s.run.ledger.settled(key);
  return { res, name };
}

/**
 * A DELETE of a Custom API. A 2xx is not taken as proof that it is gone (a target may answer
 * 204 and keep it): it stays in the ledger until an answer shows it gone, a 404 here or the
 * end-of-run cleanup's own deletes, which believe a 2xx only when the DELETE after it finds
 * nothing.
 */
export async function deleteCustomApi(s: Session, id: string, auth: Auth = 'token'): Promise<HttpResponse> {
  const path = customApiPath(id);
  const res = await s.request({ method: 'DELETE', path, auth });
  if (res.status === 404 && auth === 'token') s.deleted(path);
  return res;
}

/**
 * How long a store's reads may lag a DELETE it answered with a success: a read of the id within
 * this time that still finds it is no failure (spec/contract/README.md#delete.applied). A run's
 * read waits it out (stillFound); traffic is judged only after it (suites/delete/checks.ts).
 */
export const READS_SETTLE_MS = 2000;

/** An id as the deleted ids of traffic are kept: a UUID in lower case (RFC 9562 reads hex digits in either case). */
export function deletedKey(id: string): string {
  return UUID.test(id) ? id.toLowerCase() : id;
}

/** A well-formed UUID, in either case. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a Custom API can still be read after its DELETE was answered 2xx: GET of its id (the
 * real platform's read, spec/contract/README.md#custom-api), asked again, at growing intervals,
 * while it is found, until READS_SETTLE_MS have passed (a store whose reads lag its writes
 * settles; one that only hides the id from DELETE does not). Returns the last answer when it is
 * still found, undefined when it is not (404, 410) or the read says nothing (another status: a
 * target without the read).
 */
export async function stillFound(s: Session, id: string): Promise<HttpResponse | undefined> {
  const until = Date.now() + READS_SETTLE_MS;
  for (let attempt = 0; ; attempt++) {
    const res = await s.request({ method: 'GET', path: customApiPath(id) });
    if (res.status < 200 || res.status >= 300) return undefined;
    const left = until - Date.now();
    if (left <= 0) return res;
    await new Promise((r) => setTimeout(r, Math.min(left, 250 * 2 ** attempt)));
  }
}

/**
 * Ids that fail validation: not UUID-shaped (spec/contract/README.md#delete-custom-api: 400).
 * Besides a plain word, the near misses a careless validator lets through: a UUID with something
 * before or after it (an unanchored match), with surrounding whitespace (a trimming one), or with a
 * lookalike letter O in place of a hex digit 0. Surrounding whitespace is `lenient`: widely used
 * UUID parsers trim it (Spring's string-to-UUID converter, .NET's Guid.TryParse), so those ids are
 * held to 400 only by the SHOULD check.
 */
export function malformedIds(faker: Faker): Array<{ id: string; what: string; lenient?: boolean }> {
  const uuid = faker.string.uuid();
  const lookalike = uuid.includes('0') ? uuid.replace('0', 'O') : `O${uuid.slice(1)}`;
  return [
    { id: `not-a-uuid-${faker.string.alphanumeric({ length: 8, casing: 'lower' })}`, what: 'a word' },
    { id: `x${uuid}`, what: 'a UUID with a character before it' },
    { id: `${uuid}0`, what: 'a UUID with a digit after it' },
    { id: ` ${uuid}`, what: 'a UUID with a leading space', lenient: true },
    { id: `${uuid} `, what: 'a UUID with a trailing space', lenient: true },
    { id: lookalike, what: 'a UUID with the letter O in place of a 0' },
  ];
}

/**
 * Well-formed UUIDs nobody has: one in lower case, one in upper case (RFC 9562 reads hex
 * digits in either case, so both are valid ids and both are unknown: 404).
 */
export function unknownIds(faker: Faker): Array<{ id: string; what: string }> {
  return [
    { id: faker.string.uuid(), what: 'a random UUID' },
    { id: faker.string.uuid().toUpperCase(), what: 'a random UUID in upper case' },
  ];
}

/** A bearer token the target cannot have issued. */
export function wrongToken(faker: Faker): string {
  return `conformance-wrong-token-${faker.string.alphanumeric(24)}`;
}
