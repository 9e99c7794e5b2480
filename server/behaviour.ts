// How the reference server behaves, as data. CONFORMING is what spec/contract/README.md
// asks for. The plain server reads its Options: the choices the contract leaves open, which the
// legitimate variants (server/variants.ts) make. Every fault (server/faults.ts) is a
// transformation around the plain server (server/around.ts: of the request it receives, or of
// the answer it gives), or, where it must, a knob that reaches inside (InsideKnobs, each
// listed with its reason in docs/reference-server.md#knobs-that-reach-inside). A mutant
// differs from the reference in exactly one rule.
import type { Around } from './around.js';

/**
 * The choices of a correct server. A few take a value no correct server has (marked: a
 * fault), where a fault is that value and nothing else.
 */
export interface Options {
  // Authentication
  /** Status for a wrong bearer token. */
  wrongTokenStatus: 401 | 403;
  /** Create an Application Key needs no token (the contract leaves it open). */
  createWithoutAuth: boolean;
  /**
   * How long a token from POST /oauth/access_token lives, in seconds (null: the server's option,
   * else the platform's hour: server/oauth.ts). The contract does not say.
   */
  tokenLifetimeSeconds: number | null;

  // Delete a Custom API
  /** Status for an id that is not UUID-shaped (spec/contract/README.md#delete-custom-api: 400; 422, a choice). */
  malformedIdStatus: 400 | 422;

  // Create an Application Key
  /** Status of a created key: 201, or 200 (the numeric status of Created is not shown). */
  createStatus: 201 | 200;
  /**
   * Status of a request that fails validation (spec/contract/README.md#create.invalid-bodies: 400
   * or 422 both pass; 403, a fault).
   */
  validationStatus: 400 | 422 | 403;
  /** How a name's length is counted: code points (the contract), UTF-16 units, or UTF-8 bytes (a fault). */
  nameLengthUnit: 'codepoints' | 'utf16' | 'bytes';
  /** reserved_rate_limit is stored and echoed (the member is optional in the answer). */
  echoRateLimit: boolean;
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
  /** The top-level meta and links parts of the create answer. */
  topLevelMetaLinks: boolean;
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

  // Lists (spec/contract/README.md#list-endpoints, #keyset-traversal, #limits)
  /** The store's page_length (GET /v2/settings data.page_length), the default page length. */
  pageLength: number;
  /** page[limit] above the largest page refused with 400 instead of clamped. */
  rejectOverLimit: boolean;
  /**
   * GET and PUT /v2/settings are served (false: 404, a store whose settings endpoint is not
   * shown: spec/contract/README.md#limits).
   */
  settingsEndpoint: boolean;
  /**
   * A page_length over 100 in PUT /v2/settings: refused with this status and the Error shape,
   * or clamped to 100 (both a choice); 'accept', a fault: kept as sent, and lists without
   * page[limit] served in pages that long (docs/reference-server.md#knobs-that-reach-inside).
   */
  pageLengthOverMax: 400 | 422 | 'clamp' | 'accept';
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
  /** Status of an offset past the hard (or soft) offset limit: any 4xx with the Error shape; 500, a fault. */
  hardOffsetStatus: 400 | 422 | 500;
  /** Offsets over 10,000 refused on every list (the contract leaves the soft limit open). */
  softOffsetLimit: boolean;
  /** links on lists: the real platform's, or with extra members (none at all: links false). */
  listLinks: 'ep' | 'extra';
  /** List paths (templates of spec/list-operations.yaml) the server does not serve: 404. */
  absentPaths: readonly string[];
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
   * 'few-published': as 'realistic', but three catalogs alone have a published release, at places
   * 1, 3 and 6 of their list, each with a history of releases whose newest may not be published.
   * In every shape a release holds lists of its own: their ids are not the default catalog's.
   */
  storeShape: 'even' | 'realistic' | 'few-published';
  /**
   * meta.page.current for an offset that is not a multiple of the limit: floor(offset/limit) + 1
   * or ceil(offset/limit) + 1 (the contract fixes the formula only for multiples).
   */
  currentRounding: 'floor' | 'ceil';
  /**
   * Timestamp filter values only in the server's own spelling: a value with more fraction
   * digits than it shows, or with another zone designator, is refused with 400 (a choice).
   */
  filterValuesOwnSpelling: boolean;
  /**
   * A list request's parameters as this server reads them before the list does (null: as sent):
   * the lenient-parameters variant's reading (server/list-query.ts lenientQuery).
   */
  readQuery: ((query: URLSearchParams) => URLSearchParams) | null;

  // States and transitions (spec/contract/README.md#states)
  /**
   * A created Application Key or Custom API shows in its list only this many milliseconds after
   * its creation (0: at once). A choice, within the run's time buffer: its read serves it at once.
   */
  listedAfterMs: number;
}

/**
 * Faults that no transformation of the request or the answer can express: each changes what
 * the store keeps, how it counts or orders, or a rule inside a validation, and
 * docs/reference-server.md#knobs-that-reach-inside gives the reason for each. Conforming values
 * in CONFORMING.
 */
export interface InsideKnobs {
  // Delete a Custom API
  /** The delete really removes the Custom API. */
  deleteApplies: boolean;
  /**
   * The delete only marks the Custom API as deleted for later DELETEs (404), while reads of its
   * id and the list still find it (a fault: a soft delete the read paths ignore).
   */
  deleteHidesOnly: boolean;
  /** Only lower-case UUIDs pass validation (a fault: an upper-case well-formed UUID gets 400). */
  uuidCaseSensitive: boolean;
  /** The UUID pattern is unanchored (a fault: `x<uuid>` passes validation and gets 404). */
  uuidPartialMatch: boolean;

  // Create an Application Key: the rules of validation
  nameMin: number;
  nameMax: number;
  /** type must be application_key (false: any type is taken, and kept as sent). */
  checkTypeValue: boolean;
  /** Any number is taken as a rate limit (1.5 too). */
  acceptFractionalRateLimit: boolean;
  /** Create needs a reserved_rate_limit (a fault: valid bodies without one are refused). */
  requireRateLimit: boolean;

  // Create an Application Key: what the store keeps, and shows on every read
  /** Names stored with & < > " ' HTML-escaped (a fault: the name comes back changed). */
  nameHtmlEscaped: boolean;
  /** Names stored trimmed of surrounding whitespace (a fault). */
  nameTrimmed: boolean;
  /** Names stored in Unicode normalisation form NFC (a fault: an NFD name comes back changed). */
  nameNormalizedNfc: boolean;
  /** reserved_rate_limit kept in a 32-bit signed integer (a fault: 2^31 comes back negative). */
  rateLimitInt32: boolean;
  /** The echo of reserved_rate_limit is another integer than the one kept (a fault). */
  rateLimitEchoWrong: boolean;
  /** Every key gets the same client_secret. */
  repeatSecrets: boolean;
  /** client_id derived from the key's name (a fault: two keys with one name share it). */
  clientIdFromName: boolean;
  /** last_used_at set when the key is created (a fault: it was never used). */
  lastUsedAtSet: boolean;
  idFormat: 'uuid' | 'numeric';
  /** The kept data.type. */
  echoType: string;

  // Lists: the data query and the count
  /** Largest page; page[limit] above it is clamped (or refused, with rejectOverLimit). */
  maxLimit: number;
  /** What page[offset] counts: records (the contract), pages, records from 1, or nothing. */
  offsetUnit: 'records' | 'pages' | 'one-based' | 'ignored';
  /** The first record of every page after the first is left out. */
  dropPageBoundary: boolean;
  /**
   * Records tied on the sort key come in another order past offset 0 than at offset 0 (true),
   * or on every other page (odd-pages: the page offset / limit odd), as a store whose plan, and
   * so whose order of ties, changes with the page asked for.
   */
  unstableTies: boolean | 'odd-pages';
  /**
   * Timestamps compared finer than they are shown (a store in microseconds rendering
   * milliseconds): a record shown as equal to a filter value counts as after it (a fault:
   * spec/contract/README.md#lists.filter judges gt on the value shown).
   */
  hiddenPrecision: boolean;
  /** meta.results.total counts the whole collection, ignoring the filter. */
  totalIgnoresFilter: boolean;
  /** meta.page.total counts the pages of the unfiltered list under a filter (a fault; results.total stays right). */
  pageTotalIgnoresFilter: boolean;
  /** meta.results.total counts only what lies at or past the offset: 0 past the end (a fault). */
  totalFromOffset: boolean;
  /** The hard offset limit on /v2/orders and /v2/files. */
  hardOffsetLimit: boolean;
  /**
   * What the hard offset limit counts: records (the contract); pages (floor(offset / limit): a
   * fault); or records, but only of a page[offset] sent as plain digits (a fault: a guard that
   * checks the text sent, before a lenient parser reads `+10040` or ` 10040` as 10040).
   */
  hardOffsetIn: 'records' | 'pages' | 'plain-digits';

  // States and transitions: what the lists of the store's own records keep
  /** A deleted Custom API stays in its list (a fault: its read and a second DELETE find nothing, the list still shows it). */
  deletedStaysListed: boolean;
  /** The list of Application Keys shows only keys used once (a fault: a created key is missing from its list, its read finds it). */
  keysListedOnceUsed: boolean;
}

export interface Behaviour extends Options, InsideKnobs {
  /** The transformations around the plain server, in order (server/around.ts); none for CONFORMING. */
  around: readonly Around[];
  /** Where the list faults apply (the knobs the scoped fault sets: combineBehaviours); null: every list request. */
  listFaultScope: ListFaultScope | null;
}

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
 * CONFORMING; the transformations of all of them (`around`), one after another. A piece with a listFaultScope is scoped as a whole: every knob it sets holds only
 * inside the scope (ListFaultScope.knobs), so no knob of a scoped fault can escape its scope by
 * being left off a list.
 */
export function combineBehaviours(pieces: ReadonlyArray<Partial<Behaviour>>): Behaviour {
  const b: Behaviour = pieces.reduce<Behaviour>((all, piece) => Object.assign(all, piece, { around: [...all.around, ...(piece.around ?? [])] }), {
    ...CONFORMING,
  });
  const scoped = pieces.filter((p) => p.listFaultScope);
  if (b.listFaultScope && scoped.length) {
    const knobs = [...new Set(scoped.flatMap((p) => (Object.keys(p) as Array<keyof Behaviour>).filter((k) => k !== 'listFaultScope')))];
    b.listFaultScope = { ...b.listFaultScope, knobs };
  }
  return b;
}

export const CONFORMING: Readonly<Behaviour> = Object.freeze({
  wrongTokenStatus: 401,
  createWithoutAuth: false,
  tokenLifetimeSeconds: null,
  malformedIdStatus: 400,
  createStatus: 201,
  validationStatus: 400,
  nameLengthUnit: 'codepoints',
  echoRateLimit: true,
  nullRateLimit: 'refuse',
  lenientContentType: false,
  maxRateLimit: 1_000_000,
  topLevelMetaLinks: true,
  timestampStyle: 'iso-ms-z',
  extraFields: false,
  links: true,
  customApiPlatformRules: false,
  pageLength: 25,
  rejectOverLimit: false,
  settingsEndpoint: true,
  pageLengthOverMax: 400,
  emptyCurrent: 'one',
  emptyPageTotal: 0,
  defaultOrder: 'created_at',
  listIds: 'uuid',
  timestampsAt: 'meta',
  hardOffsetStatus: 400,
  softOffsetLimit: false,
  listLinks: 'ep',
  absentPaths: [],
  firstParentEmpty: false,
  storeShape: 'even',
  currentRounding: 'floor',
  filterValuesOwnSpelling: false,
  readQuery: null,
  listedAfterMs: 0,

  deleteApplies: true,
  deleteHidesOnly: false,
  uuidCaseSensitive: false,
  uuidPartialMatch: false,
  nameMin: 1,
  nameMax: 255,
  checkTypeValue: true,
  acceptFractionalRateLimit: false,
  requireRateLimit: false,
  nameHtmlEscaped: false,
  nameTrimmed: false,
  nameNormalizedNfc: false,
  rateLimitInt32: false,
  rateLimitEchoWrong: false,
  repeatSecrets: false,
  clientIdFromName: false,
  lastUsedAtSet: false,
  idFormat: 'uuid',
  echoType: 'application_key',
  maxLimit: 100,
  offsetUnit: 'records',
  dropPageBoundary: false,
  unstableTies: false,
  hiddenPrecision: false,
  totalIgnoresFilter: false,
  pageTotalIgnoresFilter: false,
  totalFromOffset: false,
  hardOffsetLimit: true,
  hardOffsetIn: 'records',
  deletedStaysListed: false,
  keysListedOnceUsed: false,

  around: [],
  listFaultScope: null,
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
