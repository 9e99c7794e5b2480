// Legitimate variants: servers that make other choices the contract allows. Every MUST check
// passes against each of them (the project's tests hold it); SHOULD checks may warn.
import type { Behaviour } from './behaviour.js';

export interface Variant {
  name: string;
  /** The choice it makes, and why the contract allows it. */
  choice: string;
  /** SHOULD/INFO checks expected to warn against it (never a MUST). */
  warns: readonly string[];
  behaviour: Partial<Behaviour>;
}

export const VARIANTS: readonly Variant[] = [
  { name: 'validation-422', choice: 'validation errors answer 422 instead of 400 (READING.md: both pass)', warns: ['delete.malformed-id.400'], behaviour: { validationStatus: 422, malformedIdStatus: 422 } },
  { name: 'auth-403', choice: 'a wrong token answers 403 instead of 401', warns: [], behaviour: { wrongTokenStatus: 403 } },
  { name: 'created-as-200', choice: 'Created answered as 200 (the contract leaves the code open; 201 is a SHOULD)', warns: ['create.valid.201'], behaviour: { createStatus: 200 } },
  { name: 'create-open', choice: 'Create an Application Key needs no token (the contract leaves it open)', warns: [], behaviour: { createWithoutAuth: true } },
  { name: 'timestamps-no-millis', choice: 'timestamps without milliseconds (2026-01-01T00:00:00Z; the format is open)', warns: [], behaviour: { timestampStyle: 'seconds-z' } },
  { name: 'timestamps-offset', choice: 'timestamps with a numeric offset (+00:00) instead of Z', warns: [], behaviour: { timestampStyle: 'seconds-offset' } },
  { name: 'extra-fields', choice: 'undocumented extra fields and links everywhere: answers, records, errors, list meta and links', warns: [], behaviour: { extraFields: true } },
  { name: 'no-links', choice: 'no links at all: not in answers, records or lists (the contract does not require them)', warns: ['create.response.top-level-parts'], behaviour: { links: false } },
  { name: 'custom-api-platform', choice: 'creating a Custom API needs slug and api_type exactly as the real platform (patterns, unique slug)', warns: [], behaviour: { customApiPlatformRules: true } },
  { name: 'data-only', choice: 'the create answer has only data (the real platform\'s OpenAPI file shows only data)', warns: ['create.response.top-level-parts'], behaviour: { topLevelMetaLinks: false } },
  { name: 'rate-limit-409', choice: 'a reserved_rate_limit over the allowance is refused with 409 (the real platform does)', warns: [], behaviour: { maxRateLimit: 0 } },
  { name: 'limit-over-100-refused', choice: 'page[limit] over 100 refused with 400 instead of clamped (READING.md: both pass)', warns: [], behaviour: { rejectOverLimit: true } },
  { name: 'hard-limit-422', choice: 'the hard offset limit answered with 422', warns: [], behaviour: { hardOffsetStatus: 422 } },
  { name: 'extra-list-links', choice: 'extra members in list links', warns: [], behaviour: { listLinks: 'extra' } },
  { name: 'empty-page-total-1', choice: 'a zero-result page says total 1 (READING.md: 0 or 1)', warns: [], behaviour: { emptyPageNumbers: 'one-one' } },
  { name: 'soft-limit-enforced', choice: 'offsets over 10,000 refused on every list (behaviour past the soft limit is not shown)', warns: [], behaviour: { softOffsetLimit: true } },
  { name: 'hidden-timestamp-precision', choice: 'timestamps kept finer than shown: under gt, records shown equal to the value come back', warns: [], behaviour: { hiddenPrecision: true } },
  { name: 'utf16-names', choice: 'name length in UTF-16 units (only characters outside the BMP differ: INFO)', warns: ['create.name.astral'], behaviour: { nameLengthUnit: 'utf16' } },
];

export function variantBehaviour(names: readonly string[]): Partial<Behaviour> {
  const out: Partial<Behaviour> = {};
  for (const name of names) {
    const v = VARIANTS.find((x) => x.name === name);
    if (!v) throw new Error(`unknown variant '${name}'; known: ${VARIANTS.map((x) => x.name).join(', ')}`);
    Object.assign(out, v.behaviour);
  }
  return out;
}
