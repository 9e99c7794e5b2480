// How the reference server behaves, as data. CONFORMING is what the contract and READING.md
// ask for; every fault (server/faults.ts) and every legitimate variant (server/variants.ts)
// is a small override of it, so a mutant differs from the reference in exactly one rule.

export interface Behaviour {
  // Errors (contract, "Error")
  /** `status` in error bodies as the contract says ("404") or as a number (404). */
  errorStatusAsNumber: boolean;
  /** Error bodies as `{ errors: [...] }`, or as `{ error: {...} }` without the array. */
  errorsArray: boolean;
  errorContentType: string;
  /** The 401 answer as the Error shape, or as a plain-text "Unauthorized". */
  unauthorizedAsJson: boolean;

  // Authentication
  /** Status for a missing Authorization header. */
  missingTokenStatus: 401 | 403;
  /** Status for a wrong bearer token. */
  wrongTokenStatus: 401 | 403;
  /** Any bearer token is accepted. */
  acceptAnyToken: boolean;
  /** DELETE of a Custom API needs no token. */
  deleteWithoutAuth: boolean;
  /** Create an Application Key needs no token (the contract leaves it open). */
  createWithoutAuth: boolean;

  // Delete a Custom API
  deleteStatus: number;
  /** A JSON body on the success answer (with deleteStatus 200). */
  deleteBody: boolean;
  /** A body on the 204 itself, written past Node's HTTP layer (which would drop it). */
  deleteBodyOn204: boolean;
  /** The delete really removes the Custom API. */
  deleteApplies: boolean;
  /** Status for a well-formed UUID that does not exist. */
  deleteUnknownStatus: number;
  /** Status for an id that is not UUID-shaped. */
  malformedIdStatus: number;

  // Create an Application Key
  createStatus: number;
  /** Status of a request that fails validation (READING.md: 400 or 422 both pass). */
  validationStatus: 400 | 422;
  malformedJsonStatus: number;
  nameMin: number;
  nameMax: number;
  /** How a name's length is counted: code points (the contract), UTF-8 bytes, or UTF-16 units. */
  nameLengthUnit: 'codepoints' | 'bytes' | 'utf16';
  /** Top-level fields are accepted when `data` is missing. */
  acceptUnwrapped: boolean;
  /** A `data` that is not an object crashes the handler (a 500). */
  crashOnNonObjectData: boolean;
  requireName: boolean;
  /** A non-string name is turned into a string instead of refused. */
  coerceName: boolean;
  requireType: boolean;
  checkTypeValue: boolean;
  /** `"10"` is taken as 10. */
  coerceRateLimit: boolean;
  /** Any number is taken as a rate limit (1.5 too). */
  acceptFractionalRateLimit: boolean;
  /** reserved_rate_limit is stored and echoed. */
  echoRateLimit: boolean;
  /** Rate limits above this are refused with 409 (the real platform's allowance). */
  maxRateLimit: number;
  /** Every key gets the same client_secret. */
  repeatSecrets: boolean;
  lastUsedAtSet: boolean;
  idFormat: 'uuid' | 'numeric';
  /** The answer's data.type. */
  echoType: string;
  /** The top-level meta and links parts of the create answer. */
  topLevelMetaLinks: boolean;
  /** Timestamps as `2026-01-01T00:00:00.000Z`, without milliseconds (`…00Z`), or with `+00:00`. */
  timestampStyle: 'iso-ms-z' | 'seconds-z' | 'seconds-offset';
  /** Extra, undocumented fields in answers, records, errors and links (a correct server may add them). */
  extraFields: boolean;
  /** links in answers (data.links.self, top-level links, list links); false: none at all. */
  links: boolean;
  /** Creating a Custom API needs slug and api_type exactly as the real platform does (patterns, unique slug). */
  customApiPlatformRules: boolean;
  /** Create needs a reserved_rate_limit (a fault: valid bodies without one are refused). */
  requireRateLimit: boolean;

  // Lists (contract, "List endpoints", "Keyset-style traversal", "Limits")
  /** Largest page; page[limit] above it is clamped (or refused, with rejectOverLimit). */
  maxLimit: number;
  rejectOverLimit: boolean;
  /** Default page length; null: the store's page_length (GET /v2/settings). */
  defaultLimit: number | null;
  /** What page[offset] counts: records (the contract), pages, records from 1, or nothing. */
  offsetUnit: 'records' | 'pages' | 'one-based' | 'ignored';
  /** meta.page.total as the number of pages (the contract) or of records. */
  pageTotalUnit: 'pages' | 'records';
  /** meta.page.current counted from 0. */
  currentFromZero: boolean;
  /** meta.results.total counts the whole collection, ignoring the filter. */
  totalIgnoresFilter: boolean;
  /** Pagination meta on a page with zero records: present, missing, or null. */
  emptyMeta: 'present' | 'missing' | 'null';
  /** total on a zero-result page: ceil(0/limit) = 0, or 1 (READING.md: 0 or 1 both pass). */
  emptyPageNumbers: 'arithmetic' | 'one-one';
  geAsGt: boolean;
  gtAsGe: boolean;
  /** filter is parsed and then ignored. */
  ignoreFilter: boolean;
  /**
   * Timestamps compared finer than they are shown (a store in microseconds rendering
   * milliseconds): a record shown as equal to a filter value counts as after it.
   */
  hiddenPrecision: boolean;
  /** sort is accepted and ignored. */
  ignoreSort: boolean;
  /** Records tied on a timestamp come in a different order on every request. */
  unstableTies: boolean;
  /** The hard offset limit on /v2/orders and /v2/files. */
  hardOffsetLimit: boolean;
  hardOffsetStatus: number;
  /** Offsets over 10,000 refused on every list (the contract leaves the soft limit open). */
  softOffsetLimit: boolean;
  /** A bad page[limit]/page[offset] crashes the handler. */
  crashOnBadPaging: boolean;
  /** An offset past the end crashes the handler. */
  crashPastEnd: boolean;
  /** The first record of every page after the first is left out. */
  dropPageBoundary: boolean;
  /** links on lists: the real platform's, or with extra members (none at all: links false). */
  listLinks: 'ep' | 'extra';
  /** The array of records is `data` (the real platform) or, as a fault, `items`. */
  listDataKey: 'data' | 'items';
  /** Pagination numbers sent as strings ("25"). */
  metaAsStrings: boolean;
  /** sort=attr sorts descending and sort=-attr ascending. */
  invertSort: boolean;
  /** List paths (templates of spec/list-operations.yaml) the server does not serve: 404. */
  absentPaths: readonly string[];
}

export const CONFORMING: Readonly<Behaviour> = Object.freeze({
  errorStatusAsNumber: false,
  errorsArray: true,
  errorContentType: 'application/json',
  unauthorizedAsJson: true,
  missingTokenStatus: 401,
  wrongTokenStatus: 401,
  acceptAnyToken: false,
  deleteWithoutAuth: false,
  createWithoutAuth: false,
  deleteStatus: 204,
  deleteBody: false,
  deleteBodyOn204: false,
  deleteApplies: true,
  deleteUnknownStatus: 404,
  malformedIdStatus: 400,
  createStatus: 201,
  validationStatus: 400,
  malformedJsonStatus: 400,
  nameMin: 1,
  nameMax: 255,
  nameLengthUnit: 'codepoints',
  acceptUnwrapped: false,
  crashOnNonObjectData: false,
  requireName: true,
  coerceName: false,
  requireType: true,
  checkTypeValue: true,
  coerceRateLimit: false,
  acceptFractionalRateLimit: false,
  echoRateLimit: true,
  maxRateLimit: 1_000_000,
  repeatSecrets: false,
  lastUsedAtSet: false,
  idFormat: 'uuid',
  echoType: 'application_key',
  topLevelMetaLinks: true,
  timestampStyle: 'iso-ms-z',
  extraFields: false,
  links: true,
  customApiPlatformRules: false,
  requireRateLimit: false,
  maxLimit: 100,
  rejectOverLimit: false,
  defaultLimit: null,
  offsetUnit: 'records',
  pageTotalUnit: 'pages',
  currentFromZero: false,
  totalIgnoresFilter: false,
  emptyMeta: 'present',
  emptyPageNumbers: 'arithmetic',
  geAsGt: false,
  gtAsGe: false,
  ignoreFilter: false,
  hiddenPrecision: false,
  ignoreSort: false,
  unstableTies: false,
  hardOffsetLimit: true,
  hardOffsetStatus: 400,
  softOffsetLimit: false,
  crashOnBadPaging: false,
  crashPastEnd: false,
  dropPageBoundary: false,
  listLinks: 'ep',
  listDataKey: 'data',
  metaAsStrings: false,
  invertSort: false,
  absentPaths: [],
});
