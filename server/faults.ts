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
  { name: 'delete-204-with-body', breaks: 'the 204 of a delete has an empty body', caughtBy: ['delete.existing.204'], behaviour: { deleteBodyOn204: true } },
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

  // Lists: page length
  { name: 'limit-uncapped', breaks: 'page[limit] can be set up to 100', caughtBy: ['list.limit.max'], behaviour: { maxLimit: Number.MAX_SAFE_INTEGER } },
  { name: 'limit-cap-50', breaks: 'page[limit]=100 returns 100 records (a cap set too low)', caughtBy: ['list.limit.exact'], behaviour: { maxLimit: 50 } },
  { name: 'default-limit-20', breaks: 'the default page length is 25', caughtBy: ['list.limit.default'], behaviour: { defaultLimit: 20 } },

  // Lists: offsets and page numbers
  { name: 'offset-in-pages', breaks: 'page[offset] counts records, not pages', caughtBy: ['list.offset.records'], behaviour: { offsetUnit: 'pages' } },
  { name: 'offset-ignored', breaks: 'page[offset] skips records (every page is the first; traversals must stop at once)', caughtBy: ['list.offset.records', 'list.offset.traversal'], behaviour: { offsetUnit: 'ignored' } },
  { name: 'offset-one-based', breaks: 'page[offset] is zero-based', caughtBy: ['list.offset.records'], behaviour: { offsetUnit: 'one-based' } },
  { name: 'page-total-in-records', breaks: 'page[total] is the page count', caughtBy: ['list.page.arithmetic'], behaviour: { pageTotalUnit: 'records' } },
  { name: 'current-from-zero', breaks: 'page[current] is offset/limit + 1', caughtBy: ['list.page.arithmetic'], behaviour: { currentFromZero: true } },
  { name: 'drop-page-boundary', breaks: 'paging by offset meets every record (the first of each later page is lost)', caughtBy: ['list.offset.traversal', 'list.total.unfiltered'], behaviour: { dropPageBoundary: true } },
  { name: 'hard-limit-missing', breaks: 'no record past offset 10,000 on /v2/orders and /v2/files', caughtBy: ['list.offset.hard-limit', 'list.offset.hard-limit-error'], behaviour: { hardOffsetLimit: false } },

  // Lists: totals and empty pages
  { name: 'total-ignores-filter', breaks: 'results.total counts the records after the filter', caughtBy: ['list.total.filtered'], behaviour: { totalIgnoresFilter: true } },
  { name: 'meta-missing-when-empty', breaks: 'pagination fields are present when the result is empty', caughtBy: ['list.meta.empty-filter', 'list.meta.past-end'], behaviour: { emptyMeta: 'missing' } },
  { name: 'meta-null-when-empty', breaks: 'pagination fields are present when the result is empty', caughtBy: ['list.meta.empty-filter', 'list.meta.past-end'], behaviour: { emptyMeta: 'null' } },

  // Lists: sorting, filtering, keyset traversal
  { name: 'ge-as-gt', breaks: 'ge includes records equal to the value (keyset walks lose records tied on a timestamp)', caughtBy: ['list.filter.ge', 'list.keyset.created-at', 'list.keyset.updated-at'], behaviour: { geAsGt: true } },
  { name: 'gt-as-ge', breaks: 'gt excludes records equal to the value', caughtBy: ['list.keyset.id'], behaviour: { gtAsGe: true } },
  { name: 'filter-ignored', breaks: 'a filter selects records (it is parsed, then ignored)', caughtBy: ['list.filter.gt', 'list.filter.ge'], behaviour: { ignoreFilter: true } },
  { name: 'sort-ignored', breaks: 'sort orders the records', caughtBy: ['list.sort.id', 'list.sort.updated-at', 'list.sort.descending'], behaviour: { ignoreSort: true } },
  { name: 'unstable-ties', breaks: 'a stable order: records tied on a timestamp keep their place between requests', caughtBy: ['list.offset.traversal'], behaviour: { unstableTies: true } },

  // Lists: bad parameters
  { name: 'bad-paging-500', breaks: 'invalid page[limit]/page[offset] never get a 5xx', caughtBy: ['list.params.invalid'], behaviour: { crashOnBadPaging: true } },
  { name: 'past-end-500', breaks: 'an offset past the end gets an empty page, never a 5xx', caughtBy: ['list.meta.past-end', 'list.offset.soft-limit'], behaviour: { crashPastEnd: true } },
  { name: 'list-items-not-data', breaks: 'records are the array data', caughtBy: ['list.endpoint.present'], behaviour: { listDataKey: 'items' } },
  { name: 'meta-as-strings', breaks: 'the pagination fields are integers', caughtBy: ['list.meta.fields', 'list.meta.empty-filter'], behaviour: { metaAsStrings: true } },
  { name: 'sort-inverted', breaks: 'sort=attr is ascending', caughtBy: ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id', 'list.sort.descending'], behaviour: { invertSort: true } },
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
