// Creating Application Keys. Any 2xx is written to the ledger at once (even for a body the
// target should have refused), so the run's cleanup deletes it.
import type { CheckContext, Session, Seen } from '../../lib/runner/index.js';
import type { Auth, HttpResponse } from '../../lib/transport/index.js';
import { SuiteError } from '../../lib/evidence/index.js';
import { describeViolations, SCHEMA, validate } from '../../lib/contract/index.js';

export const APPLICATION_KEYS = '/v2/application-keys';

/** The longest name, in characters (code points): spec/contract/README.md#limits. */
export const NAME_MAX = 255;

export function applicationKeyPath(id: string): string {
  return `${APPLICATION_KEYS}/${encodeURIComponent(id)}`;
}

export function keyBody(name: unknown, extra: Record<string, unknown> = {}): { data: Record<string, unknown> } {
  return { data: { type: 'application_key', name, ...extra } };
}

export interface KeyData {
  id?: unknown;
  name?: unknown;
  type?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
  reserved_rate_limit?: unknown;
  meta?: { timestamps?: Record<string, unknown> };
}

/**
 * A body the suite sends as valid must be valid by spec/: if a fixture drifts from the
 * contract, that is a bug of the suite (an error), never the target's failure.
 */
export function validKeyBody(name: string, extra: Record<string, unknown> = {}): { data: Record<string, unknown> } {
  const body = keyBody(name, extra);
  const violations = validate(SCHEMA.applicationKeyCreateRequest, body);
  if (violations.length) throw new SuiteError('SUITE_BUG', `a fixture meant to be valid breaks the request schema: ${describeViolations(violations)}`);
  return body;
}

/** An observed create whose body was sent compressed (a Content-Encoding other than identity). */
export function sentCompressed(seen: Pick<Seen, 'x'>): boolean {
  return (seen.x.requestHeaders['content-encoding'] ?? 'identity').trim().toLowerCase() !== 'identity';
}

/** `data` of a JSON response, or undefined. */
export function keyData(res: HttpResponse): KeyData | undefined {
  if (!res.isJson) return undefined;
  const body = res.json() as { data?: unknown } | null;
  const data = body && typeof body === 'object' ? body.data : undefined;
  return data && typeof data === 'object' && !Array.isArray(data) ? (data as KeyData) : undefined;
}

/** The name a create body carries: data.name, else the run-prefixed name somewhere in it. */
export function nameIn(spec: { json?: unknown; body?: string }, runId: string): string {
  const name = (spec.json as { data?: { name?: unknown } } | null | undefined)?.data?.name;
  if (typeof name === 'string') return name;
  const text = spec.body ?? JSON.stringify(spec.json ?? '');
  return new RegExp(`conformance-${runId}-[A-Za-z0-9._-]*`).exec(text)?.[0] ?? '';
}

/**
 * POST /v2/application-keys. The ledger has the name before the request goes out and the id
 * once a 2xx comes back (even for a body the target should have refused), so the run's cleanup,
 * or `conformance cleanup` after a crash, deletes it. A create lost on the way is sent again
 * as it was (Session.create): a key's name need not be unique. `refusal`: the check expects
 * the body refused (Session.create looks for a lost one before it sends another).
 */
export async function postApplicationKey(
  s: Session,
  spec: { json?: unknown; body?: string; contentType?: string; auth?: Auth; headers?: Record<string, string>; background?: boolean },
  options: { refusal?: boolean } = {},
): Promise<HttpResponse> {
  const sent = nameIn(spec, s.run.settings.runId);
  const { res, key } = await s.create('application-key', APPLICATION_KEYS, () => ({ name: sent, spec }), options);
  if (res.status >= 200 && res.status < 300) {
    const data = keyData(res);
    const id = typeof data?.id === 'string' ? data.id : '';
    const name = typeof data?.name === 'string' ? data.name : sent;
    s.created({ kind: 'application-key', id, name, deletePath: id ? applicationKeyPath(id) : '', key });
  } else s.run.ledger.settled(key);
  return res;
}

/** A valid key, created once per run per `slot` and inspected by several checks. */
export function validKey(ctx: CheckContext, slot: 'a' | 'b'): Promise<{ name: string; res: HttpResponse }> {
  return ctx.shared(`valid-key-${slot}`, async (s) => {
    const name = s.name();
    return { name, res: await postApplicationKey(s, { json: validKeyBody(name) }) };
  });
}

/**
 * A refusal of a body the contract rules out says the body was validated: 400 or 422
 * (spec/contract/README.md#create.invalid-bodies: both pass). A 401, 403 or 429 says nothing about
 * the body; a 2xx or 5xx is wrong outright.
 */
export const VALIDATION: readonly number[] = [400, 422];
