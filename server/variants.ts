// Legitimate variants: servers that make other choices the contract allows. The selftest runs
// the suite against each through the CLI: every one must exit 0 (no MUST failure), warning
// only where it declares. `allowedBy` names the clause that leaves the choice open, in our
// own words.
import type { Behaviour } from './behaviour.js';
import { lenientQuery } from './list-query.js';
import { capacity } from './load.js';
import { goQuery, phpQuery, qsQuery, rackQuery } from './query-parsers.js';
import type { StoreAsked } from './around.js';

export interface Variant {
  name: string;
  /** The choice it makes. */
  choice: string;
  /** Where the contract, or its reading (spec/contract/README.md), allows it: the section, and a paraphrase. */
  allowedBy: string;
  /** SHOULD/INFO checks expected to warn against it (never a MUST). */
  warns: readonly string[];
  behaviour: Partial<Behaviour>;
  /** List operations (keys of spec/list-operations.yaml) the selftest must run for it to show. */
  operations?: readonly string[];
  /**
   * The selftest runs it logged in with client credentials (an Application Key it creates first),
   * not with the server's own token: the choice is about tokens obtained that way.
   */
  credentials?: boolean;
}

const TIMESTAMPS =
  'contract § Resources: the timestamp format is not shown; the reading (spec/contract/README.md#list-endpoints): sorts and filters compare instants, not strings';
const EMPTY_PAGE = 'the reading (spec/contract/README.md#list-endpoints): when nothing matches, current and total may each be 0 or 1';
const DEFAULT_ORDER =
  'the reading (spec/contract/README.md#list-endpoints): no order is fixed for a list read without sort; offset traversal only needs it to be stable';
const QUERY_READINGS =
  'the reading (spec/contract/README.md#query-readings): a request the contract does not define (a paging parameter repeated, as an array, beside a bare page=) may be read as any mainstream parser reads it, or refused with a 4xx and the Error shape';
const LIST_IDS =
  'the reading (spec/contract/README.md#create-application-key) and #delete-custom-api: only those ids must be UUIDs; the id format of list records is open, and sort=id is judged in the order the target sorts them';

/** The capacity variant's pool: a run at 16 requests in flight stays within it, one that climbs to 64 does not (measured). */
export const CAPACITY = { workers: 4, deadlineMs: 500, baseMs: 2, perRecordMs: 0.005 } as const;

export const VARIANTS: readonly Variant[] = [
  {
    name: 'validation-422',
    choice: 'validation errors answer 422 instead of 400',
    allowedBy: 'the reading (spec/contract/README.md#create-application-key): a refused body may get 400 or 422',
    warns: ['delete.malformed-id.400'],
    behaviour: { validationStatus: 422, malformedIdStatus: 422 },
  },
  {
    name: 'auth-403',
    choice: 'a wrong token answers 403 instead of 401',
    allowedBy:
      'contract § Authentication: the answer to a wrong token is not shown; the reading (spec/contract) asks 401 only for a missing header, as a SHOULD',
    // auth.matrix.401 asks 401 of every refusal for want of a valid token (403 warned: spec/contract/README.md#auth.status-401).
    warns: ['auth.matrix.401'],
    behaviour: { wrongTokenStatus: 403 },
  },
  {
    name: 'created-as-200',
    choice: 'Created answered as 200',
    allowedBy: 'contract § Create an Application Key: the numeric status of Created is not shown; the reading (spec/contract) asks 201 as a SHOULD',
    warns: ['create.valid.201'],
    behaviour: { createStatus: 200 },
  },
  {
    name: 'create-open',
    choice: 'Create an Application Key needs no token',
    allowedBy: 'contract § Authentication: whether Create needs a token is not shown',
    warns: [],
    behaviour: { createWithoutAuth: true },
  },
  {
    name: 'short-lived-tokens',
    choice: 'a token from POST /oauth/access_token lives 3 seconds (the platform: an hour), and says so in expires_in and expires',
    allowedBy:
      'contract § Authentication: how a token is obtained, and how long it lives, is not shown; a client logs in again as the answer says (spec/contract/README.md#authentication)',
    warns: [],
    behaviour: { tokenLifetimeSeconds: 3 },
    credentials: true,
  },
  {
    name: 'timestamps-no-millis',
    choice: 'timestamps without milliseconds (2026-01-01T00:00:00Z)',
    allowedBy: TIMESTAMPS,
    warns: [],
    behaviour: { timestampStyle: 'seconds-z' },
  },
  {
    name: 'timestamps-offset',
    choice: 'timestamps with a numeric offset (+00:00) instead of Z',
    allowedBy: TIMESTAMPS,
    warns: [],
    behaviour: { timestampStyle: 'seconds-offset' },
  },
  {
    name: 'timestamps-micros',
    choice: 'timestamps to the microsecond (…00.123456Z), records apart only below the millisecond, filters compared to the microsecond',
    allowedBy: TIMESTAMPS,
    warns: [],
    behaviour: { timestampStyle: 'micros-z' },
  },
  {
    name: 'timestamps-mixed-offsets',
    choice: "each record's timestamps with its own numeric offset (+02:00, -05:00, +05:30…): string order is not time order",
    allowedBy: TIMESTAMPS,
    warns: [],
    behaviour: { timestampStyle: 'mixed-offsets' },
  },
  {
    name: 'timestamps-elsewhere',
    choice: 'list records keep created_at/updated_at among their attributes, not at meta.timestamps',
    allowedBy:
      'the reading (spec/contract/README.md#list-endpoints): where records keep their timestamps is a fact of the real platform (EP), and the reading says such facts are no requirement: checks that need them skip',
    warns: [],
    behaviour: { timestampsAt: 'attributes' },
  },
  {
    name: 'extra-fields',
    choice: 'undocumented extra fields and links everywhere: answers, records, errors, list meta and links',
    allowedBy:
      'the reading (spec/contract/README.md#create-application-key) and #errors: fields are held to their types when present; nothing rules out others',
    warns: [],
    behaviour: { extraFields: true },
  },
  {
    name: 'no-links',
    choice: 'no links at all: not in answers, records or lists',
    allowedBy: 'contract § Resources: links.self is optional; the reading (spec/contract) asks the top-level links part only as a SHOULD',
    warns: ['create.response.top-level-parts'],
    behaviour: { links: false },
  },
  {
    name: 'custom-api-platform',
    choice: 'creating a Custom API needs slug and api_type exactly as the real platform (patterns, unique slug)',
    allowedBy: "the reading (spec/contract/README.md#delete-custom-api): the suite creates its Custom API with the real platform's slug and api_type rules",
    warns: [],
    behaviour: { customApiPlatformRules: true },
  },
  {
    name: 'data-only',
    choice: 'the create answer has only data',
    allowedBy:
      "the reading (spec/contract/README.md#create-application-key): the top-level meta and links parts are a SHOULD, since the platform's own OpenAPI file shows only data",
    warns: ['create.response.top-level-parts'],
    behaviour: { topLevelMetaLinks: false },
  },
  {
    name: 'rate-limit-409',
    choice: 'a reserved_rate_limit over the allowance is refused with 409',
    allowedBy:
      'the reading (spec/contract/README.md#create-application-key): a valid reserved_rate_limit may be refused with 409, and the echo check then skips',
    warns: [],
    behaviour: { maxRateLimit: 0 },
  },
  {
    name: 'rate-limit-not-echoed',
    choice: 'the create answer leaves out reserved_rate_limit',
    allowedBy:
      'contract § Resources: data.reserved_rate_limit is optional in the answer; the reading (spec/contract) holds only a present one to the value sent',
    warns: [],
    behaviour: { echoRateLimit: false },
  },
  {
    name: 'null-rate-limit-accepted',
    choice: 'reserved_rate_limit null is taken as absent',
    allowedBy:
      'contract § Resources: reserved_rate_limit is optional; the reading (spec/contract/README.md#create-application-key) does not list null for it among the bodies to refuse',
    warns: [],
    behaviour: { nullRateLimit: 'accept' },
  },
  {
    name: 'lenient-content-type',
    choice: 'Create takes a JSON body whatever its Content-Type (text/plain, none)',
    allowedBy:
      'the reading (spec/contract/README.md#create-application-key): the bodies to refuse are those that are not JSON; the media type a JSON body is sent with is left open',
    warns: [],
    behaviour: { lenientContentType: true },
  },
  {
    name: 'utf16-names',
    choice: 'name length in UTF-16 units (only characters outside the BMP differ)',
    allowedBy: 'the reading (spec/contract/README.md#create-application-key): names outside the Basic Multilingual Plane are INFO only',
    warns: ['create.name.astral'],
    behaviour: { nameLengthUnit: 'utf16' },
  },
  {
    name: 'page-length-40',
    choice: "the store's page_length is 40 (GET /v2/settings), the default page length",
    allowedBy:
      "contract § Limits: the default page length can be changed for a project; the reading (spec/contract/README.md#list-endpoints): the default is then the store's page_length",
    warns: [],
    behaviour: { pageLength: 40 },
  },
  {
    name: 'limit-over-100-refused',
    choice: 'page[limit] over 100 refused with 400 instead of clamped',
    allowedBy: 'the reading (spec/contract/README.md#list-endpoints): over 100 a target may clamp or refuse with a 4xx',
    warns: [],
    behaviour: { rejectOverLimit: true },
  },
  {
    name: 'hard-limit-422',
    choice: 'the hard offset limit answered with 422',
    allowedBy:
      'the reading (spec/contract/README.md#list-endpoints): past the hard offset limit no record may be served, and the 4xx asked for is any 4xx with the Error shape',
    warns: [],
    behaviour: { hardOffsetStatus: 422 },
    operations: ['orders'],
  },
  {
    name: 'soft-limit-enforced',
    choice: 'offsets over 10,000 refused on every list',
    allowedBy: 'contract § Limits: what happens past the soft offset limit is not shown; the reading (spec/contract): INFO only',
    warns: [],
    behaviour: { softOffsetLimit: true },
  },
  {
    name: 'extra-list-links',
    choice: 'extra members in list links',
    allowedBy:
      "the reading (spec/contract/README.md#list-endpoints): the list links described are the platform's, not a closed set, and no check asks for them",
    warns: [],
    behaviour: { listLinks: 'extra' },
  },
  { name: 'empty-page-total-1', choice: 'a zero-result page says current 1, total 1', allowedBy: EMPTY_PAGE, warns: [], behaviour: { emptyPageTotal: 1 } },
  { name: 'empty-page-zero', choice: 'a zero-result page says current 0, total 0', allowedBy: EMPTY_PAGE, warns: [], behaviour: { emptyCurrent: 'zero' } },
  {
    name: 'empty-page-current-formula',
    choice: 'a zero-result page says current offset/limit + 1 (5 at offset 100, limit 25), total 0',
    allowedBy: `${EMPTY_PAGE}; current = offset/limit + 1 holds for any offset that is a multiple of the limit`,
    warns: [],
    behaviour: { emptyCurrent: 'formula' },
  },
  {
    name: 'default-order-newest-first',
    choice: 'without sort, newest created first',
    allowedBy: DEFAULT_ORDER,
    warns: [],
    behaviour: { defaultOrder: '-created_at' },
  },
  { name: 'default-order-id', choice: 'without sort, by id', allowedBy: DEFAULT_ORDER, warns: [], behaviour: { defaultOrder: 'id' } },
  { name: 'default-order-updated', choice: 'without sort, by updated_at', allowedBy: DEFAULT_ORDER, warns: [], behaviour: { defaultOrder: 'updated_at' } },
  {
    name: 'list-ids-numeric',
    choice: 'list records with digit-only ids, sorted and compared as numbers (9 before 10)',
    allowedBy: LIST_IDS,
    warns: [],
    behaviour: { listIds: 'numeric' },
  },
  {
    name: 'list-ids-numeric-as-string',
    choice: 'list records with digit-only ids, sorted and compared as strings (10 before 9)',
    allowedBy: LIST_IDS,
    warns: [],
    behaviour: { listIds: 'numeric-as-string' },
  },
  {
    name: 'current-rounds-up',
    choice: 'for an offset that is not a multiple of the limit, meta.page.current is ceil(offset/limit) + 1',
    allowedBy:
      'the reading (spec/contract/README.md#pagination-information): current = offset/limit + 1 is fixed for offsets that are multiples of the limit only; between them floor and ceiling both pass',
    warns: [],
    behaviour: { currentRounding: 'ceil' },
  },
  {
    name: 'filter-values-own-spelling',
    choice: 'timestamp filter values accepted only as the server writes them (no finer fraction, the same zone designator); others refused with 400',
    allowedBy:
      'the reading (spec/contract/README.md#list-endpoints): which spellings of a value a filter takes is not stated; a refusal (400 or 422) is never judged as a wrong answer',
    warns: [],
    behaviour: { filterValuesOwnSpelling: true },
  },
  {
    name: 'first-parent-empty',
    choice: 'nested lists under the first record of each parent list hold no records',
    allowedBy:
      'the reading (spec/contract/README.md#list-operations): a placeholder is filled from a record of its parent list, and nothing says the first one has children',
    warns: [],
    behaviour: { firstParentEmpty: true },
  },
  {
    name: 'lenient-parameters',
    choice:
      'list parameters read leniently: a paging number is the integer its text starts with (5.5 as 5, +7 as 7, 1e3 as 1), clamped to 1 or 0, ignored when there is none; arrays and repeats give their first value; an unknown sort or a filter it cannot parse is ignored',
    allowedBy:
      'the reading (spec/contract/README.md#list-endpoints): how a target reads a value the contract does not define is open (#lists.invalid-params: never a 5xx, and a page for it right for the reading made)',
    warns: [],
    behaviour: { readQuery: lenientQuery },
  },
  {
    name: 'realistic-store',
    choice:
      "records spread as in a real store: nested lists under the first parents hold nothing or one record and the big ones come later, a hierarchy's first list of nodes is empty, and the oldest catalog was never published (its latestPublished release answers 404, with the Error shape, on every by-release path), nor the next; of the later catalogs a third have published releases, whose newest may have failed or be pending; each release holds hierarchies, nodes and products of its own",
    allowedBy:
      "the reading (spec/contract/README.md#list-operations): a placeholder is filled from a record of its parent list, and nothing says which parents hold records or that every catalog has a published release; a 404 under one parent is that parent's answer, not the operation's",
    warns: [],
    behaviour: { storeShape: 'realistic' },
    operations: ['hierarchies@by-release', 'node-products', 'prices'],
  },
  {
    name: 'few-published',
    choice:
      'a store of many catalogs of which three alone have a published release (the 2nd, 4th and 7th of their list, never the first), each with two or three releases whose newest may have failed or be pending; every by-release path of another catalog, or of a release not published, answers 404 with the Error shape; each release holds hierarchies, nodes and products of its own (ids that /catalog/hierarchies and the other releases do not hold), and its nested lists hold nothing or one record under its first parents, the big ones later',
    allowedBy:
      "the reading (spec/contract/README.md#list-operations): a placeholder is filled from a record of its parent list, under the path's own parents (a release's hierarchy from that release's hierarchies); nothing says which catalogs were published, which release is the newest published one, or which parents hold records; a 404 under one parent is that parent's answer, not the operation's",
    warns: [],
    behaviour: { storeShape: 'few-published' },
    operations: ['hierarchies@by-release', 'hierarchy-nodes@by-release', 'products-by-node@by-release'],
  },
  { name: 'list-ids-prefixed', choice: 'list records with prefixed ids (rec_00000042…)', allowedBy: LIST_IDS, warns: [], behaviour: { listIds: 'prefixed' } },

  // The store's page length, changed through PUT /v2/settings.
  {
    name: 'no-settings-endpoint',
    choice: "no settings endpoint: GET and PUT /v2/settings answer 404 (the default page length is the contract's 25)",
    allowedBy:
      'contract § Limits: the default page length can be changed through a settings endpoint whose path and payload are not shown (spec/contract/README.md#limits)',
    warns: [],
    behaviour: { settingsEndpoint: false, pageLength: 25 },
  },
  {
    name: 'settings-over-100-refused',
    choice: 'a store page_length over 100 refused with 422 and the Error shape',
    allowedBy: 'the reading (spec/contract/README.md#limits): a store page length over 100 is refused with a 4xx, or clamped (lists.default-max)',
    warns: [],
    behaviour: { pageLengthOverMax: 422 },
  },
  {
    name: 'settings-over-100-clamped',
    choice: 'a store page_length over 100 taken as 100 (answered 200, GET /v2/settings then shows 100)',
    allowedBy: 'the reading (spec/contract/README.md#limits): a store page length over 100 is refused with a 4xx, or clamped (lists.default-max)',
    warns: [],
    behaviour: { pageLengthOverMax: 'clamp' },
  },
  // States and transitions (suites/state/)
  {
    name: 'list-visibility-delayed',
    choice: 'a created Application Key or Custom API shows in its list only a second after its creation (its read serves it at once)',
    allowedBy:
      'the reading (spec/contract/README.md#keyset-traversal): timestamps close to the present may be incomplete (eventual consistency); the suite waits out its time buffer (spec/contract/README.md#states)',
    warns: [],
    behaviour: { listedAfterMs: 1000 },
  },
  // Capacity: a service that serves so many requests at once, and fails the rest after a deadline.
  {
    name: 'capacity',
    choice: `a pool of ${CAPACITY.workers} workers, each request holding one ${CAPACITY.baseMs} ms plus ${CAPACITY.perRecordMs} ms per record it scans; a request that waited ${CAPACITY.deadlineMs} ms for one answers 500 with the Error shape`,
    allowedBy:
      'contract § Limits: how many requests a client may send is not stated (spec/contract/README.md#limits, limits.request-rate); § Errors: 500 with the Error shape is the answer of a platform that failed (spec/contract/README.md#errors), as one that keeps a query deadline does under overload',
    warns: [],
    behaviour: { around: [capacity(CAPACITY)] },
  },
  // The query as mainstream frameworks parse it (server/query-parsers.ts)
  {
    name: 'query-php',
    choice:
      'the query parsed as PHP does: the last of a name wins, a bare page= after page[...] replaces the group (and a group after it the scalar); page[limit] and page[offset] cast with (int) (a word is 0, an array 1, past 2^63 held at 2^63 - 1)',
    allowedBy: QUERY_READINGS,
    warns: [],
    behaviour: { readQuery: phpQuery },
  },
  {
    name: 'query-rack',
    choice:
      'the query parsed as Rack does: a name used as a scalar and as a group (page=x beside page[limit]) or as a group and a list refused with 400 and the Error shape; otherwise the last wins; paging numbers cast with to_i, an array ignored',
    allowedBy: QUERY_READINGS,
    warns: [],
    behaviour: { readQuery: rackQuery },
  },
  {
    name: 'query-qs',
    choice:
      "the query parsed as Express's qs does: a repeated name and name[] make arrays, page= before page[...] makes an array of both (page.offset reads nothing), after it a key of the group; paging numbers read with Number (an array of two is NaN: ignored)",
    allowedBy: QUERY_READINGS,
    warns: [],
    behaviour: { readQuery: qsQuery },
  },
  {
    name: 'query-go',
    choice:
      "the query read as Go's net/url and strconv.Atoi do: page, page[] and page[limit][] are names of their own (ignored), the first of a repeated name wins, a number Atoi refuses (a word, past 2^63) is ignored: an offset past 2^64 serves the first page",
    allowedBy: QUERY_READINGS,
    warns: [],
    behaviour: { readQuery: goQuery },
  },
  // A query decoded as RFC 3986 reads it, not as a form: `+` is a plus (a timestamp whose T a
  // client wrote as a `+`-encoded space then cannot be read, and is refused with 400).
  {
    name: 'query-plus-literal',
    choice: "the query percent-decoded with `+` kept a plus, as a decoder of RFC 3986 (decodeURIComponent) reads it, not as a form's space",
    allowedBy: QUERY_READINGS,
    warns: [],
    behaviour: { around: [{ query: plusKeptPlus }] },
  },
];

/** The query percent-decoded with `+` kept a plus (the variant query-plus-literal); a query that does not decode is left as it was read. */
export function plusKeptPlus(q: URLSearchParams, store: StoreAsked): URLSearchParams {
  if (!store.search?.includes('+')) return q;
  try {
    const decode = (s: string): string => decodeURIComponent(s);
    return new URLSearchParams(
      store.search
        .slice(1)
        .split('&')
        .map((p): [string, string] => (p.includes('=') ? [decode(p.slice(0, p.indexOf('='))), decode(p.slice(p.indexOf('=') + 1))] : [decode(p), ''])),
    );
  } catch {
    return q;
  }
}
