// Faulty variants of the reference server (mutants). Each breaks one rule of the contract and
// names the check(s) that must catch it; the selftest runs the suite against every fault
// through the CLI and holds the catalogue to that (a fault is a MUST fault when one of the
// checks it names is a MUST: the run must then exit 1). Switch one on with `serve --fault NAME`.
//
// A fault is a transformation around the plain server (server/around.ts): of the request it
// receives, or of the answer it gives. Only where no transformation can say it does a fault set
// a knob that reaches inside (InsideKnobs, server/behaviour.ts; the reasons in
// docs/reference-server.md#knobs-that-reach-inside).
import type { Around, Asked, PageAsked } from './around.js';
import type { Behaviour } from './behaviour.js';
import { filterOf, filterTexts, parseFilter, parseInstant, SORT_FIELDS } from './collection.js';
import { bodyOf, empty, HttpError, json, restatus, withBody, type Answer } from './http.js';
import { relink } from './lists.js';
import { HARD_OFFSET_LIMIT, S } from './list-data.js';
import { keyCreation, leaking, lock500, sharedQuery } from './load.js';
import { endpointsOf, loadCatalogSpec } from '../lib/contract/index.js';

/** The query with parameter `name` as a faulty parser reads it. */
function readAs(query: URLSearchParams, name: string, read: (value: string) => string | null): URLSearchParams {
  const v = query.get(name);
  if (v === null) return query;
  const out = new URLSearchParams(query);
  const value = read(v);
  if (value === null) out.delete(name);
  else out.set(name, value);
  return out;
}

/** A run of digits read into an integer of `bits` bits, as a language without big numbers does (C, Go, Java, PHP). */
const wrapped =
  (bits: number, signed: boolean) =>
  (v: string): string =>
    /^\d+$/.test(v) ? String(signed ? BigInt.asIntN(bits, BigInt(v)) : BigInt.asUintN(bits, BigInt(v))) : v;

/** Whether the parentheses of a filter expression pair up, and no term is empty. */
const wellFormed = (filter: string): boolean => {
  let depth = 0;
  for (const c of filter) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0 && !/(^|:)(:|$)/.test(filter);
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the plain list would refuse with 400 is left as it is: the refusal is the plain server's. */
const readable = <T>(read: () => T): T | undefined => {
  try {
    return read();
  } catch {
    return undefined;
  }
};

/** The filter with each term rewritten, where this server can read it (else as sent). */
const eachTerm = (rewrite: (t: ReturnType<typeof filterTexts>[number]) => ReturnType<typeof filterTexts>[number]): Around => ({
  query: (q) =>
    readAs(q, 'filter', (f) => {
      const terms = readable(() => filterTexts(f));
      return terms ? filterOf(terms.map(rewrite)) : f;
    }),
});

/** Each timestamp value of the filter, as an instant (epoch microseconds), made another. */
const eachInstant = (make: (us: number) => number): Around =>
  eachTerm((t) => {
    if (t.field !== 'created_at' && t.field !== 'updated_at') return t;
    const values = (t.op === 'in' ? t.text.split(',') : [t.text]).map((v) => {
      const ms = make(parseInstant(v)) / 1000;
      return Number.isNaN(ms) || Number.isNaN(new Date(ms).getTime()) ? v : new Date(ms).toISOString();
    });
    return { ...t, text: values.join(',') };
  });

/** A sort this server reads (else as sent, for the plain list to refuse), made another. */
const eachSort = (rewrite: (sort: string) => string | null): Around => ({
  query: (q) => readAs(q, 'sort', (s) => ((SORT_FIELDS as readonly string[]).includes(s.startsWith('-') ? s.slice(1) : s) ? rewrite(s) : s)),
});

/** The answers with `status` that the handler of route `route` gives, rewritten. */
const onAnswer = (route: string | readonly string[], status: number, rewrite: (a: Answer, asked: Asked) => Answer): Around => ({
  answer: (a, asked) => (a.status === status && asked.handled && asked.route !== undefined && [route].flat().includes(asked.route) ? rewrite(a, asked) : a),
});

/** Every error answer (the Error shape, spec/contract/README.md#error), rewritten. */
const onErrors = (rewrite: (a: Answer) => Answer): Around => ({ answer: (a) => (a.status >= 400 ? rewrite(a) : a) });

/** The errors of an error answer, each rewritten. */
const eachError = (a: Answer, rewrite: (e: Record<string, unknown>) => unknown): Answer => {
  const body = bodyOf(a) as { errors: Array<Record<string, unknown>> };
  return withBody(a, { ...body, errors: body.errors.map(rewrite) });
};

/** The request as one with the server's own token. */
const letIn = (asked: Asked): Asked => ({ ...asked, headers: { ...asked.headers, authorization: `Bearer ${asked.token}` } });

/** The parsed body of a create of an Application Key, rewritten before the route reads it. */
const onKeyBody = (rewrite: (body: unknown) => unknown): Around => ({
  body: (v, asked) => (asked.route === 'application-keys.create' ? rewrite(v) : v),
});

/** The `data` object of a create of an Application Key, rewritten (a body without one as it is). */
const onKeyData = (rewrite: (data: Record<string, unknown>) => Record<string, unknown>): Around =>
  onKeyBody((v) => (isObject(v) && isObject(v.data) ? { ...v, data: rewrite(v.data) } : v));

/** A list page's pagination members (meta.page, meta.results). */
const metaOf = (page: Record<string, unknown>): { page: Record<string, unknown>; results: Record<string, unknown> } =>
  page.meta as { page: Record<string, unknown>; results: Record<string, unknown> };

/** A list page with records, rewritten (a page with none as it is). */
const onPageWithRecords = (rewrite: (page: Record<string, unknown>, asked: PageAsked) => unknown): Around => ({
  page: (page, asked) => (asked.total > 0 ? rewrite(page, asked) : page),
});

/** A list page's meta.page with `members` set (each in its place). */
const withPage = (p: Record<string, unknown>, members: Record<string, unknown>): Record<string, unknown> => {
  const meta = p.meta as Record<string, unknown>;
  return { ...p, meta: { ...meta, page: { ...(meta.page as object), ...members } } };
};

/** One less, for a number (null, a number JSON cannot write, stays). */
const minusOne = (x: unknown): unknown => (typeof x === 'number' ? x - 1 : x);

/** A list page with no record on it (past the end, or nothing selected), rewritten. */
const onEmptyPage = (rewrite: (page: Record<string, unknown>) => Record<string, unknown>): Around => ({
  page: (page) => (Array.isArray(page.data) && page.data.length === 0 ? rewrite(page) : page),
});

/** A filter parsed (a malformed one refused by the plain list as ever), then set empty: the list selects every record. */
const IGNORE_FILTER: Around = {
  query: (q) => readAs(q, 'filter', (f) => (readable(() => parseFilter(f)) ? '' : f)),
};

/** A filter read into a map by attribute: of two terms on one attribute, the last alone applies. */
const LAST_TERM_PER_ATTRIBUTE: Around = {
  query: (q) =>
    readAs(q, 'filter', (f) => {
      const terms = readable(() => filterTexts(f));
      if (!terms) return f;
      const last = new Map(terms.map((t) => [t.field, t]));
      return filterOf(terms.filter((t) => last.get(t.field) === t));
    }),
};

/** A list without page[limit] served at the page length the server started with, whatever the store's is now. */
const STARTING_LENGTH: Around = {
  query: (q, store) => (q.get('page[limit]') === null ? new URLSearchParams([...q, ['page[limit]', String(store.initialPageLength)]]) : q),
};

/** A sort accepted, then left out: the list comes in its default order. */
const IGNORE_SORT: Around = eachSort(() => null);

/** The routes whose handlers validate an id (server/routes.ts checkId). */
const ID_ROUTES = ['custom-apis.read', 'custom-apis.delete', 'application-keys.read', 'application-keys.delete'];

/** A status for an id that fails validation other than 400. */
const malformedId = (status: number): Around => onAnswer(ID_ROUTES, 400, (a) => restatus(a, status));

/**
 * A create of route `route` whose `data` the plain server would refuse, made valid by `repair`
 * (undefined: left as it is) so the plain server stores it, and answered as the refusal it
 * should have been (400, the Error shape): a refused create that left its resource behind.
 */
function storedThoughRefused(route: string, repair: (data: Record<string, unknown>) => Record<string, unknown> | undefined, detail: string): Around {
  const repaired = new WeakSet<Asked>();
  return {
    body: (v, asked) => {
      if (asked.route !== route || !isObject(v) || !isObject(v.data)) return v;
      const data = repair(v.data);
      if (!data) return v;
      repaired.add(asked);
      return { ...v, data };
    },
    answer: (a, asked) =>
      repaired.has(asked) && a.status >= 200 && a.status < 300 ? json(400, { errors: [{ status: '400', title: 'Bad Request', detail }] }) : a,
  };
}

/** A query parameter sent once, as digits (else undefined). */
const sentOnce = (q: URLSearchParams, name: string): number | undefined => {
  const all = q.getAll(name);
  return all.length === 1 && /^\d{1,6}$/.test(all[0]!) ? Number(all[0]) : undefined;
};

/**
 * A fast path for small results that reads page[offset] as offset - 1: the store is asked one
 * record more from one record sooner (for an offset from 1 to the hard limit and a page under
 * 100); the page keeps the records the offset names where the request selects 10 or more, and
 * those from offset - 1 where it selects fewer. meta.page and the links say what was asked.
 */
const SMALL_LIST_OFFSET: Around = {
  query: (q, store) => {
    const offset = sentOnce(q, 'page[offset]');
    const limit = q.has('page[limit]') ? sentOnce(q, 'page[limit]') : store.pageLength;
    if (offset === undefined || offset < 1 || offset > HARD_OFFSET_LIMIT || limit === undefined || limit < 1 || limit > 99) return q;
    const out = new URLSearchParams(q);
    out.set('page[offset]', String(offset - 1));
    out.set('page[limit]', String(limit + 1));
    return out;
  },
  page: (p, asked) => {
    const offset = sentOnce(asked.query, 'page[offset]');
    if (offset === undefined || offset < 1 || asked.offset !== offset - 1) return p;
    const limit = asked.limit - 1;
    const data = p.data as unknown[];
    const said = metaOf(p).page;
    const formula = Math.floor(offset / limit) + 1;
    const out = withPage(
      { ...p, data: asked.total < 10 ? data.slice(0, limit) : data.slice(1) },
      {
        offset,
        limit,
        current: asked.total > 0 || (said.current !== 0 && said.current !== 1) ? formula : said.current,
        total: asked.total > 0 ? Math.ceil(asked.total / limit) : said.total,
      },
    );
    if (!p.links) return out;
    const links = Object.fromEntries(
      Object.entries(p.links as Record<string, unknown>).map(([k, v]) => [
        k,
        typeof v === 'string' ? v.replace(/page%5Blimit%5D=\d+/, `page%5Blimit%5D=${limit}`) : v,
      ]),
    );
    const at = (o: number): Record<string, unknown> => relink(links, o, limit, asked.total);
    const self = 'self' in links ? 'self' : 'current';
    const last = Math.max(0, (Math.ceil(asked.total / limit) - 1) * limit);
    return { ...out, links: { ...at(offset), ...('last' in links ? { last: at(last)[self] } : {}) } };
  },
};

export interface Fault {
  name: string;
  /** The rule it breaks, in the contract's words where possible. */
  breaks: string;
  /** Check ids that must fail against it. */
  caughtBy: readonly string[];
  behaviour: Partial<Behaviour>;
  /** List operations (keys of spec/list-operations.yaml) the selftest must run for it to show. */
  operations?: readonly string[];
  /**
   * Written for a class of bug that only drawn requests and values reach (--explore): the
   * selftest's figure of what the model and the exploration catch alone counts these.
   */
  explored?: boolean;
  /**
   * It breaks its rule on some requests only (one in three, or those that overlap in time):
   * which of the checks it names meet such a request depends on the order and the pace the run
   * sends them at, so it is caught by some of them.
   */
  intermittent?: boolean;
  /**
   * The service stops answering under the run (connection-leak): the checks the outage leaves
   * not run, or cuts short, are its consequence, and the selftest does not count them as errors.
   */
  stops?: boolean;
}

/** A fault of the store's own lists, with a knob of its own and nothing else (suites/state/). */
const stateFault = (name: string, breaks: string, caughtBy: string[], behaviour: Partial<Behaviour>): Fault => ({ name, breaks, caughtBy, behaviour });

/** The by-release paths of spec/list-operations.yaml: the lists of a given catalog's release. */
const BY_RELEASE = endpointsOf(loadCatalogSpec())
  .filter((e) => e.variant === 'by-release')
  .map((e) => e.path);

/** The by-release paths nested under a release's own records (its hierarchies, nodes, products): filled from that release's lists alone. */
const BY_RELEASE_NESTED = BY_RELEASE.filter((path) => /\{release_id\}\/.*\{/.test(path));

export const FAULTS: readonly Fault[] = [
  // Delete a Custom API
  {
    name: 'delete-200-with-body',
    breaks: 'Delete answers 204 with an empty body',
    caughtBy: ['delete.existing.204'],
    behaviour: {
      around: [onAnswer('custom-apis.delete', 204, (_, asked) => json(200, { data: { id: asked.params[0]!.toLowerCase(), type: 'custom_api' } }))],
    },
  },
  {
    name: 'delete-204-with-body',
    breaks: 'the 204 of a delete has an empty body',
    caughtBy: ['delete.existing.204'],
    behaviour: {
      // Raw bytes: Node's HTTP layer never sends a body with a 204, some servers do.
      around: [
        onAnswer('custom-apis.delete', 204, () => ({
          ...empty(204),
          raw: 'HTTP/1.1 204 No Content\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        })),
      ],
    },
  },
  {
    name: 'delete-not-applied',
    breaks: 'a deleted Custom API is gone (second delete 404)',
    caughtBy: ['delete.repeat.404'],
    behaviour: { deleteApplies: false },
  },
  {
    name: 'delete-soft-reads-find-it',
    breaks: 'a deleted Custom API is gone (a soft delete: a second DELETE answers 404, yet a read of the id still finds it)',
    caughtBy: ['delete.repeat.404'],
    behaviour: { deleteHidesOnly: true },
  },
  {
    name: 'delete-unknown-204',
    breaks: '404 for an id that does not exist',
    caughtBy: ['delete.unknown-id.404'],
    behaviour: { around: [onAnswer('custom-apis.delete', 404, () => empty(204))] },
  },
  {
    name: 'delete-malformed-404',
    breaks: '400 for an id that fails validation',
    caughtBy: ['delete.malformed-id.rejected', 'delete.malformed-id.400'],
    behaviour: { around: [malformedId(404)] },
  },
  {
    name: 'uuid-case-sensitive',
    breaks: '404 for a well-formed UUID that does not exist (an upper-case one answered 400)',
    caughtBy: ['delete.unknown-id.404'],
    behaviour: { uuidCaseSensitive: true },
  },
  {
    name: 'uuid-partial-match',
    breaks: '400 for an id that is not UUID-shaped (one that merely contains a UUID passes validation)',
    caughtBy: ['delete.malformed-id.rejected', 'delete.malformed-id.400'],
    behaviour: { uuidPartialMatch: true },
  },
  {
    name: 'delete-without-auth',
    breaks: 'Delete requires the bearer token',
    caughtBy: ['delete.unauthenticated.refused', 'delete.unauthenticated.401'],
    behaviour: { around: [{ request: (asked) => (asked.route === 'custom-apis.delete' ? letIn(asked) : asked) }] },
  },
  {
    name: 'auth-missing-403',
    breaks: 'a missing token answers 401 (SHOULD)',
    caughtBy: ['delete.unauthenticated.401', 'auth.matrix.401'],
    behaviour: { around: [{ answer: (a, asked) => (a.status === 401 && !asked.handled && !asked.headers.authorization ? restatus(a, 403) : a) }] },
  },
  {
    name: 'no-www-authenticate',
    breaks: 'a 401 names its scheme (WWW-Authenticate: Bearer)',
    caughtBy: ['auth.matrix.www-authenticate'],
    behaviour: {
      around: [
        {
          answer: (a) => {
            if (a.status !== 401) return a;
            const { 'www-authenticate': _scheme, ...headers } = a.headers;
            return { ...a, headers };
          },
        },
      ],
    },
  },
  {
    name: 'auth-any-token',
    breaks: 'a wrong bearer token is refused (a list or a delete is never served to it)',
    caughtBy: ['delete.bad-token.refused', 'auth.matrix.refused'],
    behaviour: { around: [{ request: (asked) => (asked.headers.authorization ? letIn(asked) : asked) }] },
  },
  // A 5xx fails the check that provoked it, wherever it comes (errors.no-5xx): in a check's
  // setup, to a request without a token or with a wrong one, to an id that fails validation.
  {
    name: 'custom-api-create-500',
    breaks: 'no request gets a 5xx: the Custom API a delete check creates first answers 500',
    caughtBy: ['delete.existing.204', 'delete.repeat.404', 'delete.unauthenticated.refused'],
    behaviour: {
      around: [
        {
          body: (v, asked) => {
            if (asked.route === 'custom-apis.create') throw new HttpError(500, 'The Custom API could not be stored.');
            return v;
          },
        },
      ],
    },
  },
  {
    name: 'delete-unauthenticated-500',
    breaks: 'no request gets a 5xx: a DELETE without a token, or with a wrong one, answers 500 (it is not applied)',
    caughtBy: ['delete.unauthenticated.refused', 'delete.bad-token.refused'],
    behaviour: {
      around: [
        {
          answer: (a, asked) =>
            a.status === 401 && !asked.handled && asked.route === 'custom-apis.delete'
              ? restatus(a, 500, { detail: 'The server failed to read the credentials.', headers: {} })
              : a,
        },
      ],
    },
  },
  {
    name: 'delete-malformed-500',
    breaks: 'no request gets a 5xx: a DELETE with an id that is not UUID-shaped answers 500',
    caughtBy: ['delete.malformed-id.rejected', 'delete.malformed-id.400'],
    behaviour: { around: [malformedId(500)] },
  },

  // Errors
  {
    name: 'error-status-number',
    breaks: 'errors[].status is the status code as a string',
    caughtBy: ['delete.unknown-id.404', 'delete.repeat.404', 'delete.malformed-id.rejected', 'create.reject.missing-name'],
    behaviour: { around: [onErrors((a) => eachError(a, (e) => ({ ...e, status: Number(e.status) })))] },
  },
  {
    name: 'error-without-array',
    breaks: 'error bodies have an errors array',
    caughtBy: ['delete.unknown-id.404', 'create.name.empty.rejected'],
    behaviour: { around: [onErrors((a) => withBody(a, { error: (bodyOf(a) as { errors: unknown[] }).errors[0] }))] },
  },
  {
    name: 'error-text-plain',
    breaks: 'error bodies are served as application/json (SHOULD)',
    caughtBy: ['errors.content-type.json'],
    behaviour: { around: [onErrors((a) => ({ ...a, headers: { ...a.headers, 'content-type': 'text/plain' } }))] },
  },
  {
    name: 'unauthorized-plain-text',
    breaks: 'undocumented errors (401) keep the Error shape (SHOULD)',
    caughtBy: ['errors.undocumented.shape', 'delete.unauthenticated.401'],
    behaviour: {
      around: [
        onErrors((a) => {
          if (a.status !== 401) return a;
          const { 'content-type': _type, 'content-length': _length, ...headers } = a.headers;
          return { status: 401, headers: { ...headers, 'content-type': 'text/plain' }, body: 'Unauthorized' };
        }),
      ],
    },
  },

  // Create an Application Key: the success answer
  {
    name: 'create-requires-rate-limit',
    breaks: 'a valid body (no reserved_rate_limit) gets a 2xx',
    caughtBy: ['create.valid.2xx'],
    behaviour: { requireRateLimit: true },
  },
  {
    name: 'create-202',
    breaks: 'Created is 201 (SHOULD): answered 202 Accepted',
    caughtBy: ['create.valid.201'],
    behaviour: { around: [onAnswer('application-keys.create', 201, (a) => ({ ...a, status: 202 }))] },
  },
  { name: 'create-numeric-id', breaks: 'data.id is a UUID', caughtBy: ['create.response.schema'], behaviour: { idFormat: 'numeric' } },
  { name: 'create-wrong-type-echo', breaks: 'data.type is application_key', caughtBy: ['create.response.schema'], behaviour: { echoType: 'applicationKey' } },
  {
    name: 'create-last-used-set',
    breaks: 'last_used_at is null for a key never used',
    caughtBy: ['create.response.last-used-null'],
    behaviour: { lastUsedAtSet: true },
  },
  {
    name: 'create-top-level-links-missing',
    breaks: 'the answer has data, meta and links (SHOULD): links left out',
    caughtBy: ['create.response.top-level-parts'],
    behaviour: {
      around: [
        onAnswer('application-keys.create', 201, (a) => {
          const { links: _links, ...rest } = bodyOf(a) as Record<string, unknown>;
          return withBody(a, rest);
        }),
      ],
    },
  },
  {
    name: 'create-repeated-secret',
    breaks: 'client_secret is unique',
    caughtBy: ['create.keys.distinct', 'state.sequence.distinct'],
    behaviour: { repeatSecrets: true },
  },
  {
    name: 'rate-limit-echo-wrong',
    breaks: 'a reserved_rate_limit in the answer is the one sent',
    caughtBy: ['create.rate-limit.echo'],
    behaviour: { rateLimitEchoWrong: true },
  },
  {
    name: 'name-html-escaped',
    breaks: 'data.name is the name sent, byte for byte (not HTML-escaped)',
    caughtBy: ['create.name.verbatim'],
    behaviour: { nameHtmlEscaped: true },
  },
  {
    name: 'name-trimmed',
    breaks: 'data.name is the name sent, byte for byte (not trimmed)',
    caughtBy: ['create.name.verbatim'],
    behaviour: { nameTrimmed: true },
  },
  {
    name: 'name-normalized-nfc',
    breaks: 'data.name is the name sent, byte for byte (not normalised to NFC)',
    caughtBy: ['create.name.verbatim'],
    behaviour: { nameNormalizedNfc: true },
    explored: true,
  },
  {
    name: 'rate-limit-int32',
    breaks: 'a reserved_rate_limit in the answer is the integer sent (kept in 32 bits, 2^31 wraps)',
    caughtBy: ['create.rate-limit.echo'],
    behaviour: { rateLimitInt32: true, maxRateLimit: Number.MAX_SAFE_INTEGER },
    explored: true,
  },
  {
    name: 'client-id-from-name',
    breaks: 'client_id is unique (derived from the name, two keys named alike share it)',
    caughtBy: ['create.keys.distinct'],
    behaviour: { clientIdFromName: true },
    explored: true,
  },

  {
    name: 'create-deep-nesting-500',
    breaks: 'bodies the contract leaves open never get a 5xx (a recursive parser overflows its stack past 1,000 levels of nesting)',
    caughtBy: ['create.request.open-shapes'],
    behaviour: {
      around: [
        {
          bodyText: (text) => {
            let depth = 0;
            for (const c of text)
              if ((depth += c === '[' || c === '{' ? 1 : c === ']' || c === '}' ? -1 : 0) > 1000) throw new RangeError('Maximum call stack size exceeded');
          },
        },
      ],
    },
    explored: true,
  },
  {
    name: 'create-bom-500',
    breaks: 'bodies the contract leaves open never get a 5xx (a body after a byte order mark crashes the parser)',
    caughtBy: ['create.request.open-shapes'],
    behaviour: {
      around: [
        {
          bodyText: (text) => {
            if (text.startsWith('\ufeff')) throw new TypeError('Unexpected token \ufeff');
          },
        },
      ],
    },
    explored: true,
  },

  // Create an Application Key: name length
  { name: 'name-min-2', breaks: 'a name of 1 character is valid', caughtBy: ['create.name.1-char'], behaviour: { nameMin: 2 } },
  { name: 'name-max-254', breaks: 'a name of 255 characters is valid', caughtBy: ['create.name.255-chars'], behaviour: { nameMax: 254 } },
  { name: 'name-max-256', breaks: 'a name of 256 characters is refused', caughtBy: ['create.name.256-chars.rejected'], behaviour: { nameMax: 256 } },
  { name: 'name-empty-accepted', breaks: 'an empty name is refused', caughtBy: ['create.name.empty.rejected'], behaviour: { nameMin: 0 } },
  {
    name: 'name-counts-bytes',
    breaks: 'the name length counts characters, not bytes',
    caughtBy: ['create.name.255-non-ascii', 'create.name.astral'],
    behaviour: { nameLengthUnit: 'bytes' },
  },

  // Create an Application Key: bodies to refuse
  {
    name: 'create-accepts-unwrapped',
    breaks: 'data is required',
    caughtBy: ['create.reject.missing-data'],
    behaviour: { around: [onKeyBody((v) => (isObject(v) && !('data' in v) ? { data: v } : v))] },
  },
  {
    name: 'create-crash-on-non-object-data',
    breaks: 'data must be an object (refused with 4xx, not 5xx)',
    caughtBy: ['create.reject.data-not-object'],
    behaviour: {
      around: [
        onKeyBody((v) => {
          if (isObject(v) && 'data' in v && !isObject(v.data)) throw new HttpError(500, 'Cannot read properties of the data field.');
          return v;
        }),
      ],
    },
  },
  {
    name: 'create-name-optional',
    breaks: 'name is required',
    caughtBy: ['create.reject.missing-name'],
    behaviour: { around: [onKeyData((d) => (d.name === undefined || d.name === null ? { ...d, name: '' } : d))], nameMin: 0 },
  },
  {
    name: 'create-name-coerced',
    breaks: 'name is a string',
    caughtBy: ['create.reject.name-not-string'],
    behaviour: { around: [onKeyData((d) => (d.name === undefined || d.name === null || typeof d.name === 'string' ? d : { ...d, name: String(d.name) }))] },
  },
  {
    name: 'create-type-optional',
    breaks: 'type is required',
    caughtBy: ['create.reject.missing-type'],
    behaviour: { around: [onKeyData((d) => (d.type === undefined ? { ...d, type: 'application_key' } : d))] },
  },
  { name: 'create-type-unchecked', breaks: 'type is always application_key', caughtBy: ['create.reject.wrong-type'], behaviour: { checkTypeValue: false } },
  {
    name: 'type-case-insensitive',
    breaks: 'type is exactly application_key (not Application_Key, not with spaces around it)',
    caughtBy: ['create.reject.wrong-type'],
    behaviour: {
      around: [onKeyData((d) => (typeof d.type === 'string' && d.type.trim().toLowerCase() === 'application_key' ? { ...d, type: 'application_key' } : d))],
    },
  },
  {
    name: 'validation-403',
    breaks: 'a body that fails validation is refused with 400 or 422 (403 says nothing about the body)',
    caughtBy: ['create.reject.missing-name', 'create.name.empty.rejected'],
    behaviour: { validationStatus: 403 },
  },
  {
    name: 'null-rate-limit-500',
    breaks: 'a shape left open (reserved_rate_limit null) gets a 2xx or a 4xx, never a 5xx',
    caughtBy: ['create.request.open-shapes'],
    behaviour: { nullRateLimit: 'crash' },
  },
  {
    name: 'rate-limit-coerced',
    breaks: 'reserved_rate_limit is an integer, not a string',
    caughtBy: ['create.reject.rate-limit-string'],
    behaviour: {
      around: [
        onKeyData((d) => {
          const v = d.reserved_rate_limit;
          return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? { ...d, reserved_rate_limit: Number(v) } : d;
        }),
      ],
    },
  },
  {
    name: 'rate-limit-fraction-accepted',
    breaks: 'reserved_rate_limit is an integer',
    caughtBy: ['create.reject.rate-limit-fraction'],
    behaviour: { acceptFractionalRateLimit: true },
  },
  {
    name: 'malformed-json-500',
    breaks: 'a body that is not JSON is refused with 4xx, never 5xx',
    caughtBy: ['create.reject.not-json'],
    behaviour: {
      around: [
        {
          bodyText: (text) => {
            try {
              JSON.parse(text);
            } catch {
              throw new HttpError(500, 'The request body is not valid JSON.');
            }
          },
        },
      ],
    },
  },

  // Lists: page length
  { name: 'limit-uncapped', breaks: 'page[limit] can be set up to 100', caughtBy: ['list.limit.max'], behaviour: { maxLimit: Number.MAX_SAFE_INTEGER } },
  {
    name: 'limit-cap-50',
    breaks: 'page[limit]=100 returns 100 records (a cap set too low)',
    caughtBy: ['list.limit.exact'],
    behaviour: { around: [{ query: (q) => readAs(q, 'page[limit]', (v) => (/^\d+$/.test(v.trim()) && Number(v) > 50 ? '50' : v)) }] },
  },
  {
    name: 'default-limit-20',
    breaks: 'the default page length is 25',
    caughtBy: ['list.limit.default'],
    behaviour: { around: [{ query: (q) => (q.get('page[limit]') === null ? new URLSearchParams([...q, ['page[limit]', '20']]) : q) }] },
  },

  // Lists: offsets and page numbers
  { name: 'offset-in-pages', breaks: 'page[offset] counts records, not pages', caughtBy: ['list.offset.records'], behaviour: { offsetUnit: 'pages' } },
  {
    name: 'offset-ignored',
    breaks: 'page[offset] skips records (every page is the first; traversals must stop at once)',
    caughtBy: ['list.offset.records', 'list.offset.traversal'],
    behaviour: { offsetUnit: 'ignored' },
  },
  { name: 'offset-one-based', breaks: 'page[offset] is zero-based', caughtBy: ['list.offset.records'], behaviour: { offsetUnit: 'one-based' } },
  {
    name: 'page-total-in-records',
    breaks: 'page[total] is the page count',
    caughtBy: ['list.page.arithmetic'],
    behaviour: { around: [onPageWithRecords((p) => withPage(p, { total: metaOf(p).results.total }))] },
  },
  {
    name: 'current-from-zero',
    breaks: 'page[current] is offset/limit + 1',
    caughtBy: ['list.page.arithmetic'],
    behaviour: { around: [onPageWithRecords((p) => withPage(p, { current: minusOne(metaOf(p).page.current) }))] },
  },
  {
    name: 'drop-page-boundary',
    breaks: 'paging by offset meets every record (the first of each later page is lost)',
    caughtBy: ['list.offset.traversal', 'list.total.unfiltered'],
    behaviour: { dropPageBoundary: true },
  },
  {
    name: 'soft-offset-500',
    breaks: 'page[offset] > 10,000 on a list without the hard limit never gets a 5xx',
    caughtBy: ['list.offset.soft-limit-5xx', 'list.offset.soft-limit'],
    behaviour: { softOffsetLimit: true, hardOffsetStatus: 500 },
    operations: ['accounts'],
  },
  {
    name: 'hard-limit-missing',
    breaks: 'no record past offset 10,000 on /v2/orders and /v2/files',
    caughtBy: ['list.offset.hard-limit', 'list.offset.hard-limit-error'],
    behaviour: { hardOffsetLimit: false },
    operations: ['orders'],
  },

  // Lists: totals and empty pages
  {
    name: 'total-ignores-filter',
    breaks: 'results.total counts the records after the filter',
    caughtBy: ['list.total.filtered'],
    behaviour: { totalIgnoresFilter: true },
  },
  {
    name: 'meta-missing-when-empty',
    breaks: 'pagination fields are present when the result is empty',
    caughtBy: ['list.meta.empty-filter', 'list.meta.past-end'],
    behaviour: { around: [onEmptyPage(({ meta: _meta, ...rest }) => rest)] },
  },
  {
    name: 'meta-null-when-empty',
    breaks: 'pagination fields are present when the result is empty',
    caughtBy: ['list.meta.empty-filter', 'list.meta.past-end'],
    behaviour: { around: [onEmptyPage((p) => ({ ...p, meta: null }))] },
  },

  // Lists: sorting, filtering, keyset traversal
  {
    name: 'ge-as-gt',
    breaks: 'ge includes records equal to the value (keyset walks lose records tied on a timestamp)',
    caughtBy: ['list.filter.ge', 'list.keyset.created-at', 'list.keyset.updated-at'],
    behaviour: { around: [eachTerm((t) => (t.op === 'ge' ? { ...t, op: 'gt' } : t))] },
  },
  {
    name: 'gt-as-ge',
    breaks: 'gt excludes records equal to the value',
    caughtBy: ['list.keyset.id', 'list.filter.gt'],
    behaviour: { around: [eachTerm((t) => (t.op === 'gt' ? { ...t, op: 'ge' } : t))] },
  },
  {
    name: 'gt-hidden-precision',
    breaks: 'gt returns only records whose shown value is greater (a store comparing finer than it shows returns records shown equal)',
    caughtBy: ['list.filter.gt'],
    behaviour: { hiddenPrecision: true },
  },
  {
    name: 'filter-ignored',
    breaks: 'a filter selects records (it is parsed, then ignored)',
    caughtBy: ['list.filter.gt', 'list.filter.ge'],
    behaviour: { around: [IGNORE_FILTER] },
  },
  {
    name: 'filter-last-term-per-attribute',
    breaks: 'terms joined by : all apply (two on one attribute: only the last is applied, as a filter read into a map by attribute does)',
    caughtBy: ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'],
    behaviour: { around: [LAST_TERM_PER_ATTRIBUTE] },
    explored: true,
  },
  {
    name: 'sort-ignored',
    breaks: 'sort orders the records',
    caughtBy: ['list.sort.id', 'list.sort.updated-at', 'list.sort.descending'],
    behaviour: { around: [IGNORE_SORT] },
  },
  {
    name: 'unstable-ties',
    breaks: 'a stable order: records tied on the sort key come in the same order past offset 0 as at offset 0',
    caughtBy: ['list.offset.traversal'],
    behaviour: { unstableTies: true },
  },

  // Lists: faults of one operation, one kind of path, or one kind of request (a test of a
  // single endpoint, or of the first page, misses them)
  {
    name: 'customers-total-ignores-filter',
    breaks: 'results.total counts the records after the filter (wrong on /v2/customers only)',
    caughtBy: ['list.total.filtered'],
    behaviour: { totalIgnoresFilter: true, listFaultScope: { paths: ['/v2/customers'] } },
    operations: ['customers'],
  },
  {
    name: 'nested-drop-page-boundary',
    breaks: 'paging by offset meets every record (lost at page boundaries on nested paths only)',
    caughtBy: ['list.offset.traversal'],
    behaviour: { dropPageBoundary: true, listFaultScope: { paths: 'nested' } },
  },
  {
    name: 'sort-ignored-past-first-page',
    breaks: "sort orders every page (past offset 0 the store's natural order, newest first, comes back)",
    caughtBy: ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id'],
    behaviour: { around: [IGNORE_SORT], defaultOrder: '-created_at', listFaultScope: { when: 'offset' } },
  },
  {
    name: 'filter-offset-ignored',
    breaks: 'page[offset] skips records under a filter too (ignored when a filter is present)',
    caughtBy: ['list.filter.ge'],
    behaviour: { offsetUnit: 'ignored', listFaultScope: { when: 'filter' } },
  },

  // Lists: the classes a fixed set of probes never asks about (each shows only on requests the
  // model and the exploration draw: another shape of request, another kind of answer, a value
  // between records, a parent other than the first)
  {
    name: 'filter-ignored-without-limit',
    breaks: 'a filter selects records whether or not page[limit] is given (ignored without it)',
    caughtBy: ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'],
    behaviour: { around: [IGNORE_FILTER], listFaultScope: { when: 'no-limit' } },
    explored: true,
  },
  {
    name: 'offset-echo-page-start',
    breaks: 'meta.page.offset echoes the offset asked for (on /v2/accounts it says where the page of that number starts)',
    caughtBy: ['list.page.arithmetic'],
    behaviour: {
      around: [
        {
          page: (p, asked) => {
            const start = Math.floor(Number(asked.query.get('page[offset]') ?? 0) / asked.limit) * asked.limit;
            const out = withPage(p, { offset: Number.isFinite(start) ? start : null });
            return p.links ? { ...out, links: relink(p.links as Record<string, unknown>, start, asked.limit, asked.total) } : out;
          },
        },
      ],
      listFaultScope: { paths: ['/v2/accounts'] },
    },
    explored: true,
  },
  {
    name: 'page-total-ignores-filter',
    breaks: 'meta.page.total counts the pages of the filtered result (under a filter past offset 0 it counts the whole list)',
    caughtBy: ['list.page.arithmetic'],
    behaviour: { pageTotalIgnoresFilter: true, listFaultScope: { when: 'filter-and-offset' } },
    explored: true,
  },
  {
    name: 'total-zero-past-end',
    breaks: 'meta.results.total counts every record the request selects (past the end it says 0)',
    caughtBy: ['list.total.unfiltered', 'list.total.filtered'],
    behaviour: { totalFromOffset: true },
    explored: true,
  },
  {
    name: 'filter-value-to-second',
    breaks: 'ge and gt compare instants (a value is cut to the whole second first)',
    caughtBy: ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'],
    behaviour: { around: [eachInstant((us) => Math.floor(us / S) * S)] },
    explored: true,
  },
  {
    name: 'filter-value-offset-ignored',
    breaks: 'ge and gt compare instants (a value written with a numeric offset is read as UTC)',
    caughtBy: ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'],
    behaviour: {
      // A numeric offset dropped, the clock time read as UTC.
      around: [{ query: (q) => readAs(q, 'filter', (f) => f.replace(/(\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[+-]\d{2}:?\d{2}(?=\)(?::|$))/g, '$1Z')) }],
    },
    explored: true,
  },
  {
    name: 'nested-later-parents-total-ignores-filter',
    breaks: 'results.total counts the records after the filter (wrong on nested lists under every parent but the first, whose lists are empty)',
    caughtBy: ['list.total.filtered'],
    behaviour: { firstParentEmpty: true, totalIgnoresFilter: true, listFaultScope: { paths: 'nested', parents: 'later' } },
    explored: true,
  },
  {
    name: 'nested-later-parents-sort-ignored',
    breaks: 'sort orders the records (ignored on nested lists under every parent but the first, whose lists are empty)',
    caughtBy: ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id'],
    behaviour: { firstParentEmpty: true, around: [IGNORE_SORT], defaultOrder: '-created_at', listFaultScope: { paths: 'nested', parents: 'later' } },
    explored: true,
  },
  // In a store shaped as real ones grow (storeShape 'realistic': the first parents hold one
  // record or none, the oldest catalog was never published): a suite that judges a nested list
  // under the first parent holding any record, or calls an operation absent on the first 404, misses them
  {
    name: 'big-parents-sort-ignored',
    breaks: 'sort orders the records (ignored on nested lists under every parent but the first, in a store whose early parents hold one record or none)',
    caughtBy: ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id'],
    behaviour: { storeShape: 'realistic', around: [IGNORE_SORT], defaultOrder: '-created_at', listFaultScope: { paths: 'nested', parents: 'later' } },
  },
  {
    name: 'published-catalogs-total-ignores-filter',
    breaks: 'results.total counts the records after the filter (wrong on the by-release lists of every catalog but the oldest, which was never published)',
    caughtBy: ['list.total.filtered'],
    behaviour: { storeShape: 'realistic', totalIgnoresFilter: true, listFaultScope: { paths: BY_RELEASE, parents: 'later' } },
  },
  // In a store whose releases hold ids of their own (few-published: three catalogs published,
  // never the first): a suite that fills a by-release nested path from /catalog/hierarchies (the
  // default catalog's) gets 404 under every release and never pages these lists
  {
    name: 'by-release-offset-shift',
    breaks:
      "page[offset] skips that many records (off by one on the lists nested under a release: its hierarchies' nodes and children, its nodes' and products' children and products)",
    caughtBy: ['list.offset.records', 'list.offset.traversal'],
    behaviour: { storeShape: 'few-published', dropPageBoundary: true, listFaultScope: { paths: BY_RELEASE_NESTED } },
    operations: ['hierarchy-nodes@by-release', 'products-by-node@by-release'],
  },

  // Lists: the illegal side of the parameters (drawn by exploration: numbers past 2^64, arrays,
  // unknown sorts, malformed filters), each a fault of the request's parser (Behaviour.readQuery)
  {
    name: 'offset-overflow-500',
    breaks: 'invalid page[offset] never gets a 5xx (a number past 2^53 overflows the parser: a 500)',
    caughtBy: ['list.params.invalid'],
    behaviour: {
      around: [
        {
          query: (q) => {
            if (/^\d{16,}$/.test(q.get('page[offset]') ?? '')) throw new Error('integer overflow');
            return q;
          },
        },
      ],
    },
    explored: true,
  },
  {
    name: 'offset-wraps-uint64',
    breaks:
      'page[offset] past what the store holds is refused or read as past the end (read as an unsigned 64-bit integer, 2^64 + 5 wraps to 5 and serves records)',
    caughtBy: ['list.params.invalid'],
    behaviour: { around: [{ query: (q) => readAs(q, 'page[offset]', wrapped(64, false)) }] },
    explored: true,
  },
  {
    name: 'limit-wraps-int32',
    breaks: 'page[limit] past 100 is clamped or refused (read as a signed 32-bit integer, 2^32 + 5 wraps to 5)',
    caughtBy: ['list.params.invalid'],
    behaviour: { around: [{ query: (q) => readAs(q, 'page[limit]', wrapped(32, true)) }] },
    explored: true,
  },
  {
    name: 'paging-array-500',
    breaks: 'invalid page[limit]/page[offset] never get a 5xx (one sent as an array, page[limit][]=5, or twice, crashes the parser)',
    caughtBy: ['list.params.invalid'],
    behaviour: {
      around: [
        {
          query: (q) => {
            if ([...q.keys()].some((k) => /^page(\[\w*\])*\[\]$/.test(k)) || q.getAll('page[limit]').length > 1 || q.getAll('page[offset]').length > 1)
              throw new TypeError('Cannot convert an array to an integer');
            return q;
          },
        },
      ],
    },
    explored: true,
  },
  {
    name: 'sort-unknown-500',
    breaks: 'a sort the target cannot read is refused with a 4xx or ignored, never a 5xx (an unknown attribute crashes the query builder)',
    caughtBy: ['list.params.invalid'],
    behaviour: {
      around: [
        {
          query: (q) => {
            const s = q.get('sort');
            if (s !== null && !/^-?(created_at|updated_at|id)$/.test(s)) throw new Error(`column "${s}" does not exist`);
            return q;
          },
        },
      ],
    },
    explored: true,
  },
  {
    name: 'filter-malformed-500',
    breaks: 'a malformed filter is refused with a 4xx, never a 5xx (unbalanced parentheses or an empty term crash the filter parser)',
    caughtBy: ['list.params.invalid'],
    behaviour: {
      around: [
        {
          query: (q) => {
            const f = q.get('filter');
            if (f !== null && !wellFormed(f)) throw new RangeError('unbalanced filter expression');
            return q;
          },
        },
      ],
    },
    explored: true,
  },
  // Lists: conditions that meet only together (the covering array asks every pair of them)
  {
    name: 'hard-limit-ignored-under-filter',
    breaks: 'no record is served past the hard offset limit (the limit is checked only without a filter)',
    caughtBy: ['list.offset.hard-limit'],
    behaviour: { hardOffsetLimit: false, listFaultScope: { when: 'filter' } },
    operations: ['orders'],
    explored: true,
  },
  {
    name: 'hard-limit-plain-digits-only',
    breaks: 'no record is served past the hard offset limit (a guard that reads only plain digits lets +10040 or 010040 through to a lenient parser)',
    caughtBy: ['list.offset.hard-limit'],
    behaviour: {
      hardOffsetIn: 'plain-digits',
      around: [{ query: (q) => readAs(q, 'page[offset]', (v) => (Number.isNaN(parseInt(v.trim(), 10)) ? v : String(parseInt(v.trim(), 10)))) }],
    },
    operations: ['orders'],
    explored: true,
  },
  {
    name: 'hard-limit-in-pages',
    breaks: 'no record is served past the hard offset limit of 10,000 records (counted in pages: offset / limit)',
    caughtBy: ['list.offset.hard-limit'],
    behaviour: { hardOffsetIn: 'pages' },
    operations: ['orders'],
    explored: true,
  },
  // Lists: an order of ties that changes between pages, at page sizes no fixed probe uses
  {
    name: 'unstable-ties-filtered-short-pages',
    breaks:
      'a filter selects each record once when paged by offset (under a filter, with page[limit] of 5 or less, tied records come in another order on every other page)',
    caughtBy: ['list.filter.ge'],
    behaviour: { unstableTies: 'odd-pages', listFaultScope: { when: 'filter-and-short-pages' } },
    explored: true,
  },
  {
    name: 'unstable-ties-short-pages',
    breaks: 'paging by offset meets every record once (with page[limit] of 5 or less, tied records come in another order on every other page)',
    caughtBy: ['list.offset.traversal'],
    behaviour: { unstableTies: 'odd-pages', listFaultScope: { when: 'short-pages' } },
    explored: true,
  },

  // Lists: bad parameters
  {
    name: 'bad-paging-500',
    breaks: 'invalid page[limit]/page[offset] never get a 5xx',
    caughtBy: ['list.params.invalid'],
    behaviour: {
      around: [
        {
          query: (q) => {
            const bad = (name: string): boolean => !/^\d+$/.test((q.get(name) ?? '0').trim());
            if (bad('page[limit]')) throw new HttpError(500, 'Internal error while reading the page parameters.');
            if (Number(q.get('page[limit]') ?? 1) < 1) throw new HttpError(500, 'Division by zero.');
            if (bad('page[offset]')) throw new HttpError(500, 'Internal error while reading the page parameters.');
            return q;
          },
        },
      ],
    },
  },
  {
    name: 'past-end-500',
    breaks: 'an offset past the end gets an empty page, never a 5xx',
    caughtBy: ['list.meta.past-end', 'list.offset.soft-limit-5xx', 'list.offset.soft-limit'],
    behaviour: {
      around: [
        {
          page: (p, asked) => {
            if (asked.offset >= asked.total && asked.total > 0) throw new HttpError(500, 'Index out of range.');
            return p;
          },
        },
      ],
    },
  },
  {
    name: 'list-items-not-data',
    breaks: 'records are the array data',
    caughtBy: ['list.endpoint.present'],
    behaviour: { around: [{ page: (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k === 'data' ? 'items' : k, v])) }] },
  },
  {
    name: 'meta-as-strings',
    breaks: 'the pagination fields are integers',
    caughtBy: ['list.meta.fields', 'list.meta.empty-filter'],
    behaviour: {
      // A number JSON cannot write (null in the plain page) is a page[offset] past 1e308: Infinity, as String() writes it.
      around: [
        {
          page: (p) => {
            const asText = (x: unknown): unknown => (typeof x === 'number' ? String(x) : x === null ? 'Infinity' : x);
            const { page, results } = metaOf(p);
            const strings = Object.fromEntries(['limit', 'offset', 'current', 'total'].map((k) => [k, asText(page[k])]));
            return { ...p, meta: { ...(p.meta as object), page: strings, results: { ...results, total: asText(results.total) } } };
          },
        },
      ],
    },
  },
  // Lists: faults written on the finished page (a page transformation), with no knob of their own
  {
    name: 'page-last-record-twice',
    breaks: 'a page holds the records of its stretch, each once (the last one is sent twice)',
    caughtBy: ['list.limit.exact'],
    behaviour: {
      around: [
        {
          page: (page) =>
            Array.isArray(page.data) && page.data.length ? { ...page, data: [...(page.data as unknown[]), (page.data as unknown[]).at(-1)] } : page,
        },
      ],
    },
  },
  {
    name: 'sort-inverted',
    breaks: 'sort=attr is ascending',
    caughtBy: ['list.sort.created-at', 'list.sort.updated-at', 'list.sort.id', 'list.sort.descending'],
    behaviour: { around: [eachSort((sort) => (sort.startsWith('-') ? sort.slice(1) : `-${sort}`))] },
  },
  // A refused create leaves nothing; no list without a token.
  {
    name: 'refused-create-stores-key',
    breaks: 'a create refused with a 4xx creates nothing (a key create refused for validation, a wrong type, still stores the key)',
    caughtBy: ['create.reject.wrong-type'],
    behaviour: {
      around: [
        storedThoughRefused(
          'application-keys.create',
          (d) => (typeof d.type === 'string' && d.type !== 'application_key' ? { ...d, type: 'application_key' } : undefined),
          "The field 'type' must be 'application_key'.",
        ),
      ],
    },
  },
  {
    name: 'refused-create-stores-custom-api',
    breaks: 'a create refused with a 4xx creates nothing (a Custom API create refused for an invalid api_type still stores the Custom API)',
    caughtBy: ['state.refused-create.custom-api'],
    behaviour: {
      around: [
        storedThoughRefused(
          'custom-apis.create',
          (d) => {
            if (typeof d.api_type !== 'string' || /^[a-z0-9_]{1,59}_ext$/.test(d.api_type)) return undefined;
            const { api_type: _dropped, ...rest } = d;
            return rest;
          },
          "The field 'api_type' must match ^[a-z0-9_]{1,59}_ext$.",
        ),
      ],
    },
  },
  {
    name: 'list-without-token',
    breaks: 'a request without a valid bearer token is never served (a list is served without an Authorization header)',
    caughtBy: ['auth.matrix.refused'],
    behaviour: {
      around: [{ request: (asked) => ((asked.route === 'list' || asked.route?.endsWith('.list')) && !asked.headers.authorization ? letIn(asked) : asked) }],
    },
  },
  // The store's page length, changed through PUT /v2/settings.
  {
    name: 'settings-ignored',
    breaks: "a list without page[limit] follows the store's page length once it is changed (it keeps the length the server started with)",
    caughtBy: ['list.settings.default-follows'],
    behaviour: { around: [STARTING_LENGTH] },
  },
  {
    name: 'settings-ignored-nested',
    breaks: "every list follows the store's page length once it is changed (the lists under a parent keep the length the server started with)",
    caughtBy: ['list.settings.default-follows'],
    behaviour: { around: [STARTING_LENGTH], listFaultScope: { paths: 'nested' } },
  },
  {
    name: 'settings-override-limit',
    breaks: "page[limit] overrides the store's page length (once the length is changed, it overrides page[limit] instead)",
    caughtBy: ['list.settings.limit-overrides'],
    behaviour: {
      around: [
        {
          query: (q, store) =>
            q.get('page[limit]') !== null && store.pageLength !== store.initialPageLength ? readAs(q, 'page[limit]', () => String(store.pageLength)) : q,
        },
      ],
    },
  },
  {
    name: 'settings-over-100-served',
    breaks: 'a store page length over 100 is refused or clamped (150 is kept, and lists without page[limit] serve pages of 150)',
    caughtBy: ['list.settings.over-100'],
    behaviour: { pageLengthOverMax: 'accept' },
  },
  // States and transitions: sequences across operations held to a model (suites/state/). Knobs
  // that reach inside: what the store's own lists keep is a count over every page, which no
  // rewrite of one page can redo (docs/reference-server.md#knobs-that-reach-inside).
  stateFault('deleted-custom-api-listed', 'a deleted Custom API is gone from its list after the time buffer', ['state.sequence.deleted'], {
    deletedStaysListed: true,
  }),
  stateFault('created-key-unlisted', 'a created key appears in its list', ['state.sequence.created', 'state.sequence.total'], { keysListedOnceUsed: true }),
  // Under load: bugs that show only when requests overlap in time (server/load.ts).
  {
    name: 'shared-query-under-load',
    breaks:
      "each list request is answered for its own parameters (one request's query, kept where every request reads it, serves another that overlaps it in time)",
    caughtBy: ['list.limit.exact', 'list.offset.records', 'list.page.arithmetic'],
    behaviour: { around: [sharedQuery(2)] },
  },
  {
    name: 'lock-500',
    breaks: 'no request is answered with a 5xx (two reads of one list, or two writes, that overlap in time: the second is answered 500)',
    caughtBy: ['list.params.invalid', 'list.offset.traversal', 'create.valid.2xx'],
    behaviour: { around: [lock500(3)] },
    // Which writes overlap is the machine's moment: on a busy one, create.valid.2xx's may not.
    intermittent: true,
  },
  {
    name: 'connection-leak',
    breaks:
      'no request is answered with a 5xx (each key creation keeps a worker of a pool of four for good: once none is left, a write answers 500 and every other request waits, unanswered)',
    caughtBy: ['create.reject.not-json', 'create.request.open-shapes', 'create.keys.distinct'],
    behaviour: { around: [leaking(4, 2, keyCreation)] },
    stops: true,
  },
  // A moment of a bug rather than a bug: one instance of three behind a round-robin balancer
  // fails. The first read answers 500, then every third: no draw, so every run sees it alike.
  {
    name: 'custom-api-read-flaky-500',
    breaks:
      'no request is answered with a 5xx (one instance of three behind a round-robin balancer fails: the first read of a Custom API by its id, then every third, answers 500)',
    caughtBy: ['delete.repeat.404', 'state.sequence.created', 'state.sequence.deleted', 'state.sequence.distinct', 'state.sequence.total'],
    behaviour: { around: [everyThird500('custom-apis.read')] },
    intermittent: true,
  },
  // A fault that only a small list shows: the plain server's Custom APIs hold 2 records.
  {
    name: 'small-list-offset',
    breaks: 'page[offset] counts records from zero (where a request selects fewer than 10 records, it is read as offset - 1)',
    caughtBy: ['list.offset.records'],
    behaviour: { around: [SMALL_LIST_OFFSET] },
  },
  // Bodies as a careless client spells them, and a read after a write.
  {
    name: 'case-insensitive-members',
    breaks:
      'a required member present only in another letter case is missing (key creation and the Custom API create match member names without regard to case, as Go\'s encoding/json does by default: {"data":{"NAME":…,"TYPE":…}} creates a key)',
    caughtBy: ['create.reject.member-case', 'state.refused-create.custom-api-member-case'],
    behaviour: { around: [caseFoldingCreates()] },
  },
  {
    name: 'stale-settings-read',
    breaks:
      'GET /v2/settings shows the page_length a PUT set (it answers from a cache filled by its first read, which a PUT does not refresh; lists follow the new length)',
    caughtBy: ['list.settings.read-back'],
    behaviour: { around: [staleSettingsRead()] },
  },
  // Lists: the same request in other spellings, and filter values over an attribute's whole
  // domain (explore.ts: the spellings way of asking, and id values between and beside records).
  {
    name: 'raw-query-match',
    breaks:
      'a request means the same however a client spells it (page[limit], page[offset], sort and filter matched on the raw, undecoded query string: page%5Blimit%5D=5, as URLSearchParams writes it, is ignored)',
    caughtBy: [
      'list.limit.exact',
      'list.limit.default',
      'list.offset.records',
      'list.sort.created-at',
      'list.sort.updated-at',
      'list.sort.id',
      'list.sort.descending',
      'list.filter.ge',
      'list.filter.gt',
      'list.total.filtered',
      'list.page.arithmetic',
      'list.meta.past-end',
    ],
    behaviour: {
      around: [
        {
          query: (q, store) => {
            const spelled = new Set(
              (store.search ?? '')
                .replace(/^\?/, '')
                .split('&')
                .map((p) => p.split('=')[0]!),
            );
            const matched = ['page[limit]', 'page[offset]', 'sort', 'filter'];
            return new URLSearchParams([...q].filter(([k]) => !matched.includes(k) || spelled.has(k)));
          },
        },
      ],
    },
    explored: true,
  },
  {
    name: 'id-filter-cursor',
    breaks:
      'filter=ge(id,v) and gt(id,v) select by comparing ids, for any v (served as a cursor lookup: from the place of the record with id v; a v no record has, between two ids or past the last, matches everything)',
    caughtBy: ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'],
    behaviour: {
      around: [
        {
          // The ids the server has served: a cursor finds only those (the keyset walks' cursors are all ids served).
          fresh() {
            const served = new Set<string>();
            return {
              query: (q) =>
                readAs(q, 'filter', (f) => {
                  const terms = readable(() => filterTexts(f));
                  const kept = terms?.filter((t) => t.field !== 'id' || (t.op !== 'ge' && t.op !== 'gt') || served.has(t.text));
                  return terms && kept && kept.length < terms.length ? filterOf(kept) : f;
                }),
              page: (page) => {
                for (const r of (page.data as Array<{ id?: unknown }> | undefined) ?? []) if (typeof r.id === 'string') served.add(r.id);
                return page;
              },
            };
          },
        },
      ],
    },
    explored: true,
  },
];

/**
 * The requests route `route` takes (with a valid token: the refusals come first) answered 500
 * before it reads them, the first and then every third: what a round-robin balancer in front of
 * three instances, one of them failing, serves (a function: FAULTS is built before the constants below).
 */
function everyThird500(route: string): Around {
  return {
    fresh() {
      let n = 0;
      return {
        hold(held) {
          if (held.asked.route === route && n++ % 3 === 0) throw new HttpError(500, 'The server failed to handle the request.');
        },
      };
    },
  };
}

// --- Bodies as a careless client spells them, and a read after a write ----------------------

/**
 * An object as Go's encoding/json binds it to a struct of `fields`: a member whose name matches a
 * field in any letter case sets that field, the last one sent winning; other members stay.
 */
function foldMembers(v: unknown, fields: readonly string[]): unknown {
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[fields.find((f) => f === k.toLowerCase()) ?? k] = x;
  return out;
}

/** The members each create binds (server/routes.ts validKey, createCustomApi). */
const CREATE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'application-keys.create': ['type', 'name', 'reserved_rate_limit'],
  'custom-apis.create': ['type', 'name', 'slug', 'api_type', 'description'],
};

/** Key creation and the Custom API create reading `data` and its members in any letter case (a function: FAULTS is built before the constants below). */
function caseFoldingCreates(): Around {
  return {
    body: (v, asked) => {
      const fields = asked.route === undefined ? undefined : CREATE_FIELDS[asked.route];
      if (!fields) return v;
      const top = foldMembers(v, ['data']);
      return isObject(top) && 'data' in top ? { ...top, data: foldMembers(top.data, fields) } : top;
    },
  };
}

/** GET /v2/settings answered from a cache its first answer fills, and nothing empties (each server its own). */
function staleSettingsRead(): Around {
  return {
    fresh() {
      let cached: Answer | undefined;
      return { answer: (a, asked) => (asked.route === 'settings' && a.status === 200 ? (cached ??= a) : a) };
    },
  };
}
