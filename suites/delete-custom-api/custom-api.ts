// Creating and deleting the Custom APIs the delete checks work on. Every creation is in the
// ledger before the next request goes out; every confirmed deletion is written off it.
import type { HttpResponse } from '../../lib/http.js';
import type { Session } from '../../lib/check.js';
import type { Auth } from '../../lib/http.js';
import type { Faker } from '@faker-js/faker';
import { customApiBody } from '../../fixtures/custom-api.js';

export const CUSTOM_APIS = '/v2/settings/extensions/custom-apis';

export function customApiPath(id: string): string {
  return `${CUSTOM_APIS}/${encodeURIComponent(id)}`;
}

export type Creation = { ok: true; id: string; res: HttpResponse } | { ok: false; reason: string; res: HttpResponse };

/** Creates a Custom API (READING.md: the real platform's POST). Never throws for the target's answer. */
export async function createCustomApi(s: Session): Promise<Creation> {
  const name = s.name();
  const res = await s.request({ method: 'POST', path: CUSTOM_APIS, json: customApiBody(s.faker, name, s.run.settings.runId) });
  const id = res.isJson ? (res.json() as { data?: { id?: unknown } } | null)?.data?.id : undefined;
  if (res.status >= 200 && res.status < 300 && typeof id === 'string' && id.length > 0) {
    s.created({ kind: 'custom-api', id, name, deletePath: customApiPath(id) });
    return { ok: true, id, res };
  }
  if (res.status >= 200 && res.status < 300) {
    s.created({ kind: 'custom-api', id: '', name, deletePath: '' });
    return { ok: false, reason: `not testable: the Custom API create answered ${res.status} without data.id`, res };
  }
  return { ok: false, reason: `not testable: could not create a Custom API (POST returned ${res.status})`, res };
}

export async function deleteCustomApi(s: Session, id: string, auth: Auth = 'token'): Promise<HttpResponse> {
  const path = customApiPath(id);
  const res = await s.request({ method: 'DELETE', path, auth });
  if (res.status >= 200 && res.status < 300) s.deleted(path);
  return res;
}

/** An id that fails validation: not UUID-shaped (READING.md: MUST 400). */
export function malformedId(faker: Faker): string {
  return `not-a-uuid-${faker.string.alphanumeric({ length: 8, casing: 'lower' })}`;
}

/** A bearer token the target cannot have issued. */
export function wrongToken(faker: Faker): string {
  return `conformance-wrong-token-${faker.string.alphanumeric(24)}`;
}
