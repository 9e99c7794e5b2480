// Create an Application Key: bodies that break the request schema (contract, "Resources /
// ApplicationKey", request table; READING.md: 4xx + Error shape, never 2xx, never 5xx; the
// status may be 400 or 422).
import type { Check, CheckContext } from '../../lib/check.js';
import { expectRejected } from '../../lib/expect.js';
import { keyBody, postApplicationKey } from './application-key.js';

const area = 'create-application-key';
const CLAUSE = 'Resources / ApplicationKey (request)';

export type Body = { json: unknown } | { body: string; contentType: string };

/**
 * A check that a body is refused: 4xx + Error shape, never 2xx, never 5xx. `make` builds the
 * body (and names it for the failure message) from the check's context.
 */
export function rejectionCheck(id: string, clause: string, title: string, make: (ctx: CheckContext) => { send: Body; what: string }): Check {
  return {
    id,
    area,
    clause,
    level: 'MUST',
    title,
    async run(ctx: CheckContext) {
      const { send, what } = make(ctx);
      expectRejected(await postApplicationKey(ctx, send), `Create an Application Key (${what})`);
    },
  };
}

function rejects(id: string, title: string, body: (name: string) => Body): Check {
  // Every body carries a run-prefixed name, so anything a faulty target creates is ours to find.
  return rejectionCheck(id, CLAUSE, title, (ctx) => ({ send: body(ctx.name()), what: title.replace(/ is rejected.*$/, '') }));
}

export const rejectionChecks: Check[] = [
  rejects('create.reject.missing-data', 'a body without data (fields at the top level) is rejected', (name) => ({ json: { type: 'application_key', name } })),
  rejects('create.reject.data-not-object', 'data that is not an object is rejected', (name) => ({ json: { data: name } })),
  rejects('create.reject.missing-name', 'data without name is rejected', () => ({ json: { data: { type: 'application_key' } } })),
  rejects('create.reject.name-not-string', 'a name that is not a string is rejected', () => ({ json: keyBody(12345) })),
  rejects('create.reject.missing-type', 'data without type is rejected', (name) => ({ json: { data: { name } } })),
  rejects('create.reject.wrong-type', 'a type other than application_key is rejected', (name) => ({ json: { data: { type: 'custom_api', name } } })),
  rejects('create.reject.rate-limit-string', 'a reserved_rate_limit given as a string ("10") is rejected', (name) => ({ json: keyBody(name, { reserved_rate_limit: '10' }) })),
  rejects('create.reject.rate-limit-fraction', 'a reserved_rate_limit that is not an integer (1.5) is rejected', (name) => ({ json: keyBody(name, { reserved_rate_limit: 1.5 }) })),
  rejects('create.reject.not-json', 'a body that is not JSON is rejected', (name) => ({
    body: `{"data": {"type": "application_key", "name": "${name}"`,
    contentType: 'application/json',
  })),
];
