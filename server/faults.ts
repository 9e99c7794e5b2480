// Faulty variants of the reference server (mutants). Each breaks one rule of the contract and
// names the check(s) that must catch it; the project's tests run every check against every
// fault and hold the catalogue to that. Switch one on with `serve --fault NAME`.
import type { Behaviour } from './behaviour.js';

export interface Fault {
  name: string;
  /** The rule it breaks, in the contract's words where possible. */
  breaks: string;
  /** Check ids that must fail against it. */
  caughtBy: readonly string[];
  behaviour: Partial<Behaviour>;
}

export const FAULTS: readonly Fault[] = [
  // Delete a Custom API
  { name: 'delete-200-with-body', breaks: 'Delete answers 204 with an empty body', caughtBy: ['delete.existing.204'], behaviour: { deleteStatus: 200, deleteBody: true } },
  { name: 'delete-not-applied', breaks: 'a deleted Custom API is gone (second delete 404)', caughtBy: ['delete.repeat.404'], behaviour: { deleteApplies: false } },
  { name: 'delete-unknown-204', breaks: '404 for an id that does not exist', caughtBy: ['delete.unknown-id.404'], behaviour: { deleteUnknownStatus: 204 } },
  { name: 'delete-malformed-404', breaks: '400 for an id that fails validation', caughtBy: ['delete.malformed-id.rejected', 'delete.malformed-id.400'], behaviour: { malformedIdStatus: 404 } },
  { name: 'delete-without-auth', breaks: 'Delete requires the bearer token', caughtBy: ['delete.unauthenticated.refused', 'delete.unauthenticated.401'], behaviour: { deleteWithoutAuth: true } },
  { name: 'auth-missing-403', breaks: 'a missing token answers 401 (SHOULD)', caughtBy: ['delete.unauthenticated.401'], behaviour: { missingTokenStatus: 403 } },
  { name: 'auth-any-token', breaks: 'a wrong bearer token is refused', caughtBy: ['delete.bad-token.refused'], behaviour: { acceptAnyToken: true } },

  // Errors
  { name: 'error-status-number', breaks: 'errors[].status is the status code as a string', caughtBy: ['delete.unknown-id.404', 'delete.repeat.404', 'delete.malformed-id.rejected', 'create.reject.missing-name'], behaviour: { errorStatusAsNumber: true } },
  { name: 'error-without-array', breaks: 'error bodies have an errors array', caughtBy: ['delete.unknown-id.404', 'create.name.empty.rejected'], behaviour: { errorsArray: false } },
  { name: 'error-text-plain', breaks: 'error bodies are served as application/json (SHOULD)', caughtBy: ['errors.content-type.json'], behaviour: { errorContentType: 'text/plain' } },
  { name: 'unauthorized-plain-text', breaks: 'undocumented errors (401) keep the Error shape (SHOULD)', caughtBy: ['errors.undocumented.shape', 'delete.unauthenticated.401'], behaviour: { unauthorizedAsJson: false } },

  // Create an Application Key: the success answer
  { name: 'create-requires-rate-limit', breaks: 'a valid body (no reserved_rate_limit) gets a 2xx', caughtBy: ['create.valid.2xx'], behaviour: { requireRateLimit: true } },
  { name: 'create-200', breaks: 'Created is 201 (SHOULD)', caughtBy: ['create.valid.201'], behaviour: { createStatus: 200 } },
  { name: 'create-numeric-id', breaks: 'data.id is a UUID', caughtBy: ['create.response.schema'], behaviour: { idFormat: 'numeric' } },
  { name: 'create-wrong-type-echo', breaks: 'data.type is application_key', caughtBy: ['create.response.schema'], behaviour: { echoType: 'applicationKey' } },
  { name: 'create-last-used-set', breaks: 'last_used_at is null for a key never used', caughtBy: ['create.response.last-used-null'], behaviour: { lastUsedAtSet: true } },
  { name: 'create-data-only', breaks: 'the answer has data, meta and links (SHOULD)', caughtBy: ['create.response.top-level-parts'], behaviour: { topLevelMetaLinks: false } },
  { name: 'create-repeated-secret', breaks: 'client_secret is unique', caughtBy: ['create.keys.distinct'], behaviour: { repeatSecrets: true } },
  { name: 'create-rate-limit-dropped', breaks: 'reserved_rate_limit is kept and echoed', caughtBy: ['create.rate-limit.echo'], behaviour: { echoRateLimit: false } },

  // Create an Application Key: name length
  { name: 'name-min-2', breaks: 'a name of 1 character is valid', caughtBy: ['create.name.1-char'], behaviour: { nameMin: 2 } },
  { name: 'name-max-254', breaks: 'a name of 255 characters is valid', caughtBy: ['create.name.255-chars'], behaviour: { nameMax: 254 } },
  { name: 'name-max-256', breaks: 'a name of 256 characters is refused', caughtBy: ['create.name.256-chars.rejected'], behaviour: { nameMax: 256 } },
  { name: 'name-empty-accepted', breaks: 'an empty name is refused', caughtBy: ['create.name.empty.rejected'], behaviour: { nameMin: 0 } },
  { name: 'name-counts-bytes', breaks: 'the name length counts characters, not bytes', caughtBy: ['create.name.255-non-ascii', 'create.name.astral'], behaviour: { nameLengthUnit: 'bytes' } },
  { name: 'name-counts-utf16', breaks: 'the name length counts characters, not UTF-16 units (INFO)', caughtBy: ['create.name.astral'], behaviour: { nameLengthUnit: 'utf16' } },

  // Create an Application Key: bodies to refuse
  { name: 'create-accepts-unwrapped', breaks: 'data is required', caughtBy: ['create.reject.missing-data'], behaviour: { acceptUnwrapped: true } },
  { name: 'create-crash-on-non-object-data', breaks: 'data must be an object (refused with 4xx, not 5xx)', caughtBy: ['create.reject.data-not-object'], behaviour: { crashOnNonObjectData: true } },
  { name: 'create-name-optional', breaks: 'name is required', caughtBy: ['create.reject.missing-name'], behaviour: { requireName: false, nameMin: 0 } },
  { name: 'create-name-coerced', breaks: 'name is a string', caughtBy: ['create.reject.name-not-string'], behaviour: { coerceName: true } },
  { name: 'create-type-optional', breaks: 'type is required', caughtBy: ['create.reject.missing-type'], behaviour: { requireType: false } },
  { name: 'create-type-unchecked', breaks: 'type is always application_key', caughtBy: ['create.reject.wrong-type'], behaviour: { checkTypeValue: false } },
  { name: 'rate-limit-coerced', breaks: 'reserved_rate_limit is an integer, not a string', caughtBy: ['create.reject.rate-limit-string'], behaviour: { coerceRateLimit: true } },
  { name: 'rate-limit-fraction-accepted', breaks: 'reserved_rate_limit is an integer', caughtBy: ['create.reject.rate-limit-fraction'], behaviour: { acceptFractionalRateLimit: true } },
  { name: 'malformed-json-500', breaks: 'a body that is not JSON is refused with 4xx, never 5xx', caughtBy: ['create.reject.not-json'], behaviour: { malformedJsonStatus: 500 } },
];

export function faultBehaviour(names: readonly string[]): Partial<Behaviour> {
  const out: Partial<Behaviour> = {};
  for (const name of names) {
    const f = FAULTS.find((x) => x.name === name);
    if (!f) throw new Error(`unknown fault '${name}'; known: ${FAULTS.map((x) => x.name).join(', ')}`);
    Object.assign(out, f.behaviour);
  }
  return out;
}
