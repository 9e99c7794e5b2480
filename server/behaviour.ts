// How the reference server behaves, as data. CONFORMING is what spec/contract/README.md
// asks for; every fault (server/faults.ts) and every legitimate variant (server/variants.ts)
// is a small override of it, so a mutant differs from the reference in exactly one rule.

export interface Behaviour {
  // Errors (spec/contract/README.md#error)
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
  /** A DELETE of a Custom API without a valid token (none, or a wrong one) crashes (a 500) instead of being refused. */
  crashUnauthenticatedDelete: boolean;
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
  /**
   * The delete only marks the Custom API as deleted for later DELETEs (404), while reads of its
   * id and the list still find it (a fault: a soft delete the read paths ignore).
   */
  deleteHidesOnly: boolean;
  /** Status for a well-formed UUID that does not exist. */
  deleteUnknownStatus: number;
  /** Status for an id that is not UUID-shaped. */
  malformedIdStatus: number;
  /** Creating a Custom API (the delete checks' setup) crashes (a 500). */
  crashCustomApiCreate: boolean;

  // Create an Application Key
  createStatus: number;
  /**
   * Status of a request that fails validation (spec/contract/README.md#create.invalid-bodies: 400
   * or 422 both pass; 403, a fault).
   */
  validationStatus: 400 | 422 | 403;
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
  /** type compared ignoring case and surrounding whitespace (a fault: `Application_Key` passes). */
  typeCaseInsensitive: boolean;
  /** Names stored with & < > " ' HTML-escaped (a fault: the name comes back changed). */
  nameHtmlEscaped: boolean;
  /** Names stored trimmed of surrounding whitespace (a fault). */
  nameTrimmed: boolean;
  /** `"10"` is taken as 10. */
  coerceRateLimit: boolean;
  /** Any number is taken as a rate limit (1.5 too). */
  acceptFractionalRateLimit: boolean;
  /** reserved_rate_limit is stored and echoed (the member is optional in the answer). */
  echoRateLimit: boolean;
  /** The echo is another integer than the one sent (a fault). */
  rateLimitEchoWrong: boolean;
  /**
   * `reserved_rate_limit: null`: refused with the validation status, accepted as absent (the member
   * is optional: spec/contract/README.md#create.open-bodies leaves it open), or, as a fault, a
   * crash (500).
   */
  nullRateLimit: 'refuse' | 'accept' | 'crash';
  /** Create takes a JSON body whatever its Content-Type (the reference answers 415 otherwise). */
  lenientContentType: boolean;
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
  /** Of those, the top-level links part (a fault drops it alone, keeping meta and data.links). */
  topLevelLinks: boolean;
  /**
   * Timestamps as `2026-01-01T00:00:00.000Z`, without milliseconds (`…00Z`), with `+00:00`,
   * with microseconds (`…00.123456Z`: the list data then differs below the millisecond), or
   * with a numeric offset that varies per record (`…02:00:00.000+02:00`: string order is not
   * time order). The contract leaves the format open.
   */
  timestampStyle: 'iso-ms-z' | 'seconds-z' | 'seconds-offset' | 'micros-z' | 'mixed-offsets';
  /** Extra, undocumented fields in answers, records, errors and links (a correct server may add them). */
  extraFields: boolean;
  /** links in answers (data.links.self, top-level links, list links); false: none at all. */
  links: boolean;
  /** Creating a Custom API needs slug and api_type exactly as the real platform does (patterns, unique slug). */
  customApiPlatformRules: boolean;
  /** Create needs a reserved_rate_limit (a fault: valid bodies without one are refused). */
  requireRateLimit: boolean;
  /** Names stored in Unicode normalisation form NFC (a fault: an NFD name comes back changed). */
  nameNormalizedNfc: boolean;
  /** reserved_rate_limit kept in a 32-bit signed integer (a fault: 2^31 comes back negative). */
  rateLimitInt32: boolean;
  /** client_id derived from the key's name (a fault: two keys with one name share it). */
  clientIdFromName: boolean;

  // Delete a Custom API: validating the id
  /** Only lower-case UUIDs pass validation (a fault: an upper-case well-formed UUID gets 400). */
  uuidCaseSensitive: boolean;
  /** The UUID pattern is unanchored (a fault: `x<uuid>` passes validation and gets 404). */
  uuidPartialMatch: boolean;

  // Lists (spec/contract/README.md#list-endpoints, #keyset-traversal, #limits)
  /** The store's page_length (GET /v2/settings data.page_length), the default page length. */
  pageLength: number;
  /** Largest page; page[limit] above it is clamped (or refused, with rejectOverLimit). */
  maxLimit: number;
  rejectOverLimit: boolean;
  /** Default page length; null: the store's page_length (a number: a fault unless equal to it). */
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
  /**
   * current on a zero-result page: 0, 1, or offset/limit + 1
   * (spec/contract/README.md#lists.arithmetic: all pass).
   */
  emptyCurrent: 'zero' | 'one' | 'formula';
  /**
   * total on a zero-result page: ceil(0/limit) = 0, or 1 (spec/contract/README.md#lists.arithmetic:
   * 0 or 1 both pass).
   */
  emptyPageTotal: 0 | 1;
  /** The order of a list read without sort (any stable order is allowed). */
  defaultOrder: 'created_at' | '-created_at' | 'id' | 'updated_at' | 'insertion';
  /**
   * Ids of list records: UUIDs, digit-only ids ordered as numbers (sort=id, gt(id,…)) or as
   * strings, or prefixed (`rec_00000042…`). spec/contract/README.md#resources asks UUIDs only of
   * Application Keys and Custom APIs.
   */
  listIds: 'uuid' | 'numeric' | 'numeric-as-string' | 'prefixed';
  /** List records keep created_at/updated_at at meta.timestamps (the catalog) or at attributes. */
  timestampsAt: 'meta' | 'attributes';
  geAsGt: boolean;
  gtAsGe: boolean;
  /** filter is parsed and then ignored. */
  ignoreFilter: boolean;
  /**
   * Timestamps compared finer than they are shown (a store in microseconds rendering
   * milliseconds): a record shown as equal to a filter value counts as after it (a fault:
   * spec/contract/README.md#lists.filter judges gt on the value shown).
   */
  hiddenPrecision: boolean;
  /** sort is accepted and ignored. */
  ignoreSort: boolean;
  /**
   * Records tied on the sort key come in another order past offset 0 than at offset 0 (true),
   * or on every other page (odd-pages: the page offset / limit odd), as a store whose plan, and
   * so whose order of ties, changes with the page asked for.
   */
  unstableTies: boolean | 'odd-pages';
  /** The hard offset limit on /v2/orders and /v2/files. */
  hardOffsetLimit: boolean;
  /**
   * What the hard offset limit counts: records (the contract); pages (floor(offset / limit): a
   * fault); or records, but only of a page[offset] sent as plain digits (a fault: a guard that
   * checks the text sent, before a lenient parser reads `+10040` or ` 10040` as 10040).
   */
  hardOffsetIn: 'records' | 'pages' | 'plain-digits';
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
  /** Where the list faults apply (the knobs the scoped fault sets: combineBehaviours); null: every list request. */
  listFaultScope: ListFaultScope | null;
  /**
   * A nested list under the first record of its parent list holds no records (a choice: the
   * suite must look under other parents before it calls a list empty).
   */
  firstParentEmpty: boolean;
  /**
   * How a store's records spread over the parents of its nested lists: 'even' (every nested list
   * holds a full list), or 'realistic', as stores grow: the first parents hold nothing or a single
   * record and the big ones come later, a parent's own list of children may be empty, and the
   * oldest catalog was never published (its latestPublished release answers 404). A choice.
   */
  storeShape: 'even' | 'realistic';
  /**
   * meta.page.current for an offset that is not a multiple of the limit: floor(offset/limit) + 1
   * or ceil(offset/limit) + 1 (the contract fixes the formula only for multiples).
   */
  currentRounding: 'floor' | 'ceil';
  /** meta.page.offset echoes the start of the page the offset falls in, floor(offset/limit)·limit (a fault). */
  offsetEchoPageStart: boolean;
  /** meta.page.total counts the pages of the unfiltered list under a filter (a fault; results.total stays right). */
  pageTotalIgnoresFilter: boolean;
  /** meta.results.total counts only what lies at or past the offset: 0 past the end (a fault). */
  totalFromOffset: boolean;
  /** A timestamp filter value is cut to the whole second before it is compared (a fault). */
  filterValueToSecond: boolean;
  /** A timestamp filter value with a numeric offset (+05:30) is read as if it were UTC (a fault). */
  filterValueOffsetIgnored: boolean;
  /**
   * Timestamp filter values only in the server's own spelling: a value with more fraction
   * digits than it shows, or with another zone designator, is refused with 400 (a choice).
   */
  filterValuesOwnSpelling: boolean;
  /**
   * A fault written as a function of the finished list page (null: none). A mutant of a new
   * list rule can break it here, in server/faults.ts alone, with no knob of its own: the page
   * is the JSON the server would send, and what the function returns is sent instead.
   */
  rewritePage: PageRewrite | null;
  /**
   * A list request's parameters as this server reads them before the list does (null: as sent):
   * a variant's lenient reading (server/list-query.ts lenientQuery), or a fault's parser that
   * wraps a number or crashes (what it throws is a 500). Like rewritePage, a fault written with
   * it needs no knob of its own.
   */
  readQuery: ((query: URLSearchParams) => URLSearchParams) | null;
  /**
   * A fault of the JSON body parser, written as a function of the body's text (null: none): it
   * is called before the body is parsed, and what it throws is a crash (a 500).
   */
  readBody: ((text: string) => void) | null;
}

/** What a page rewrite (Behaviour.rewritePage) is told of the request, as the server read it. */
export interface PageRewriteRequest {
  /** The path template of spec/list-operations.yaml (absent: a list of the store's own things). */
  template?: string;
  /** The request's query parameters, as sent. */
  query: URLSearchParams;
  /** page[limit] and page[offset] as the server took them (the default, the cap applied). */
  limit: number;
  offset: number;
  /** How many records the request selects (the filter applied, page[offset] and page[limit] not). */
  total: number;
}

/** The page a list answer sends, made from the one the server would (a JSON value, parsed). */
export type PageRewrite = (page: Record<string, unknown>, request: PageRewriteRequest) => unknown;

/**
 * Where a list fault shows: bugs that a test of one endpoint, or of the first page, misses.
 * Outside the scope a request gets the conforming values of the knobs the scoped fault sets.
 */
export interface ListFaultScope {
  /** Only these path templates (spec/list-operations.yaml), or only templates with a placeholder. */
  paths?: 'nested' | readonly string[];
  /**
   * Only nested paths where a placeholder takes another value than the first record of its
   * parent list ('later'): a bug a test under the first parent alone misses.
   */
  parents?: 'later';
  /** Only requests with page[offset] > 0, with a filter, with both, without page[limit], with a page[limit] of 5 or less, or with both a filter and such a limit. */
  when?: 'offset' | 'filter' | 'filter-and-offset' | 'no-limit' | 'short-pages' | 'filter-and-short-pages';
  /** The knobs held to the scope: set by combineBehaviours (every knob of the scoped piece), never by hand. */
  knobs?: ReadonlyArray<keyof Behaviour>;
}

/**
 * The behaviour named by `names` in `table` (the faults, or the variants), one piece per name in
 * order; an unknown name is refused with the known ones. One function for both tables.
 */
export function namedBehaviours(
  kind: 'fault' | 'variant',
  table: ReadonlyArray<{ name: string; behaviour: Partial<Behaviour> }>,
  names: readonly string[],
): Array<Partial<Behaviour>> {
  return names.map((name) => {
    const entry = table.find((x) => x.name === name);
    if (!entry) throw new Error(`unknown ${kind} '${name}'; known: ${table.map((x) => x.name).join(', ')}`);
    return entry.behaviour;
  });
}

/**
 * The behaviour of a server made of `pieces` (variants, then faults, then given knobs), over
 * CONFORMING. A piece with a listFaultScope is scoped as a whole: every knob it sets holds only
 * inside the scope (ListFaultScope.knobs), so no knob of a scoped fault can escape its scope by
 * being left off a list.
 */
export function combineBehaviours(pieces: ReadonlyArray<Partial<Behaviour>>): Behaviour {
  const b: Behaviour = pieces.reduce<Behaviour>((all, piece) => Object.assign(all, piece), { ...CONFORMING });
  const scoped = pieces.filter((p) => p.listFaultScope);
  if (b.listFaultScope && scoped.length) {
    const knobs = [...new Set(scoped.flatMap((p) => (Object.keys(p) as Array<keyof Behaviour>).filter((k) => k !== 'listFaultScope')))];
    b.listFaultScope = { ...b.listFaultScope, knobs };
  }
  return b;
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
  crashUnauthenticatedDelete: false,
  createWithoutAuth: false,
  deleteStatus: 204,
  deleteBody: false,
  deleteBodyOn204: false,
  deleteApplies: true,
  deleteHidesOnly: false,
  deleteUnknownStatus: 404,
  malformedIdStatus: 400,
  crashCustomApiCreate: false,
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
  typeCaseInsensitive: false,
  nameHtmlEscaped: false,
  nameTrimmed: false,
  coerceRateLimit: false,
  acceptFractionalRateLimit: false,
  echoRateLimit: true,
  rateLimitEchoWrong: false,
  nullRateLimit: 'refuse',
  lenientContentType: false,
  maxRateLimit: 1_000_000,
  repeatSecrets: false,
  lastUsedAtSet: false,
  idFormat: 'uuid',
  echoType: 'application_key',
  topLevelMetaLinks: true,
  topLevelLinks: true,
  timestampStyle: 'iso-ms-z',
  extraFields: false,
  links: true,
  customApiPlatformRules: false,
  requireRateLimit: false,
  nameNormalizedNfc: false,
  rateLimitInt32: false,
  clientIdFromName: false,
  uuidCaseSensitive: false,
  uuidPartialMatch: false,
  pageLength: 25,
  maxLimit: 100,
  rejectOverLimit: false,
  defaultLimit: null,
  offsetUnit: 'records',
  pageTotalUnit: 'pages',
  currentFromZero: false,
  totalIgnoresFilter: false,
  emptyMeta: 'present',
  emptyCurrent: 'one',
  emptyPageTotal: 0,
  defaultOrder: 'created_at',
  listIds: 'uuid',
  timestampsAt: 'meta',
  geAsGt: false,
  gtAsGe: false,
  ignoreFilter: false,
  hiddenPrecision: false,
  ignoreSort: false,
  unstableTies: false,
  hardOffsetLimit: true,
  hardOffsetIn: 'records',
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
  listFaultScope: null,
  firstParentEmpty: false,
  storeShape: 'even',
  currentRounding: 'floor',
  offsetEchoPageStart: false,
  pageTotalIgnoresFilter: false,
  totalFromOffset: false,
  filterValueToSecond: false,
  filterValueOffsetIgnored: false,
  filterValuesOwnSpelling: false,
  rewritePage: null,
  readQuery: null,
  readBody: null,
});

/**
 * The behaviour one list request sees: outside the fault's scope (another path, the first
 * page, no filter, the first parent), the conforming values of the list fault knobs.
 * `laterParent`: some placeholder of the concrete path takes another value than the first
 * record of its parent list (PageSource.laterParent in server/lists.ts).
 */
export function scopedBehaviour(b: Behaviour, template: string | undefined, query: URLSearchParams, laterParent = false): Behaviour {
  const scope = b.listFaultScope;
  if (!scope) return b;
  const offset = Number(query.get('page[offset]') ?? 0) > 0;
  const filter = (query.get('filter') ?? '') !== '';
  const onPath = scope.paths === undefined || (template !== undefined && (scope.paths === 'nested' ? template.includes('{') : scope.paths.includes(template)));
  const limit = query.get('page[limit]');
  const short = limit !== null && Number(limit) <= 5;
  const now =
    scope.when === undefined ||
    (scope.when === 'offset'
      ? offset
      : scope.when === 'filter'
        ? filter
        : scope.when === 'no-limit'
          ? limit === null
          : scope.when === 'short-pages'
            ? short
            : scope.when === 'filter-and-short-pages'
              ? filter && short
              : filter && offset);
  const parents = scope.parents === undefined || laterParent;
  if (onPath && now && parents) return b;
  const out: Behaviour = { ...b };
  for (const k of scope.knobs ?? []) (out as unknown as Record<string, unknown>)[k] = CONFORMING[k];
  return out;
}
