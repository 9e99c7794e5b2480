// Reading list pages. Every page read is memoised per run (the same URL is never asked twice),
// counted against the operation's request budget, and parsed into records whose id and
// timestamps are read where the catalog says they live; and the two predicates every answer
// to a list request is held to, whoever asked it (expectListMeta, expectInvalidPagingAnswer).
import { type CheckContext, expectErrorBody, expectSchema, expectStatus, expectValid, fail } from '../../lib/runner/index.js';
import { type PaginationSettings, type Endpoint, SCHEMA, validate, type SchemaViolation } from '../../lib/contract/index.js';
import { HttpResponse, type Way } from '../../lib/transport/index.js';
import { CheckSkip, SuiteError } from '../../lib/evidence/index.js';

export interface Rec {
  id: string;
  /** Raw values as the target sent them: filters send them back as they are. */
  createdRaw?: string;
  updatedRaw?: string;
  /** The instants as exact, sortable keys (instantKey); undefined when absent or not a date. */
  created?: string;
  updated?: string;
}

/**
 * A timestamp as an exact key: string order is time order, and two keys are equal only when the
 * instants shown are. The format is open (spec/contract/README.md#list-endpoints compares instants,
 * not strings), and a target may show microseconds or nanoseconds: Date.parse drops everything past
 * the millisecond and a double cannot hold nanoseconds since 1970, so the fraction is kept apart.
 */
export function instantKey(raw: string): string | undefined {
  // The same record is read by several walks: its timestamps are parsed once. The memo is
  // bounded, so a run's memory stays set by its budget.
  let key = keys.get(raw);
  if (key === undefined && !keys.has(raw)) {
    if (keys.size >= 200_000) keys.clear();
    keys.set(raw, (key = utcKey(raw) ?? parseInstant(raw)));
  }
  return key;
}

const keys = new Map<string, string | undefined>();

export function parseInstant(raw: string): string | undefined {
  const m = /^(.*?\d{2}:\d{2}:\d{2})[.,](\d+)(.*)$/.exec(raw);
  const text = m ? `${m[1]}.${m[2]!.slice(0, 3).padEnd(3, '0')}${m[3]}` : raw;
  // A date and time without a zone is read as UTC, as servers read it: Date.parse would read it in
  // the zone of the machine the suite runs on, and a verdict must not depend on that.
  const zoneless = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/i.test(text.trim());
  const ms = Date.parse(zoneless ? `${text.trim().replace(' ', 'T')}Z` : text);
  if (Number.isNaN(ms)) return undefined;
  // Offset so that instants before 1970 still sort as fixed-width digits.
  return `${(BigInt(ms) + 10n ** 16n).toString().padStart(17, '0')}.${(m?.[2] ?? '').slice(3).padEnd(9, '0')}`;
}

/**
 * The key parseInstant gives, without a regular expression, Date.parse or a BigInt, for the
 * form nearly every target sends: YYYY-MM-DDTHH:MM:SS, an optional fraction, Z, from 1970 on.
 * Anything else (an offset, a fraction spelled with a comma, a field out of range) is
 * undefined here and goes the long way. Each distinct timestamp is read once (instantKey keeps
 * what it read): a list of 10,000 records has up to 20,000.
 */
export function utcKey(raw: string): string | undefined {
  const n = raw.length;
  if (n < 20 || raw.charCodeAt(n - 1) !== 90 /* Z */) return undefined;
  if (raw.charCodeAt(4) !== 45 || raw.charCodeAt(7) !== 45 || raw.charCodeAt(10) !== 84 || raw.charCodeAt(13) !== 58 || raw.charCodeAt(16) !== 58)
    return undefined;
  const year = digits(raw, 0, 4);
  const month = digits(raw, 5, 7);
  const day = digits(raw, 8, 10);
  const hour = digits(raw, 11, 13);
  const minute = digits(raw, 14, 16);
  const second = digits(raw, 17, 19);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
    return undefined;
  let fraction = '';
  if (n > 20) {
    if (raw.charCodeAt(19) !== 46 /* . */ || n === 21 || digits(raw, 20, n - 1) < 0) return undefined;
    fraction = raw.slice(20, n - 1);
  }
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, fraction === '' ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0')));
  return `1${String(ms).padStart(16, '0')}.${fraction.slice(3).padEnd(9, '0')}`;
}

/** The decimal number raw[from, to) spells, or -1 when a character there is not a digit. */
function digits(raw: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = raw.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

export interface PageMeta {
  page?: { limit?: unknown; offset?: unknown; current?: unknown; total?: unknown };
  results?: { total?: unknown };
}

export interface ListPage {
  /**
   * The answer. For a list (ok), its body is not kept (a run holds what its comparisons need,
   * not every page it read); the evidence keeps an excerpt. Other answers keep theirs.
   */
  res: HttpResponse;
  /** 200 with a JSON object whose `data` is an array. */
  ok: boolean;
  records: Rec[];
  meta?: PageMeta;
  /** For a list: what its body broke of the list schema (spec/), checked as it was read. */
  violations?: SchemaViolation[];
  /** For a list: its first record as sent (parent ids are read from it). */
  first?: unknown;
}

export type Params = Record<string, string | number>;

export function pagination(ctx: CheckContext): PaginationSettings {
  const p = ctx.run.settings.pagination;
  if (!p) throw new SuiteError('SUITE_BUG', 'pagination settings are missing from the run');
  return p;
}

export function dig(value: unknown, path: string): unknown {
  return digger(path)(value);
}

/** A reader of one dot path, split once (toRec keeps one per catalog path). */
function digger(path: string): (value: unknown) => unknown {
  const parts = path.split('.');
  return (value) => {
    let v = value;
    for (const part of parts) {
      if (v === null || typeof v !== 'object') return undefined;
      v = (v as Record<string, unknown>)[part];
    }
    return v;
  };
}

const readers = new WeakMap<Endpoint['record'], { id: (v: unknown) => unknown; created: (v: unknown) => unknown; updated: (v: unknown) => unknown }>();

/** A record as the suite reads it: its id and timestamps where the catalog says they live. */
export function toRec(raw: unknown, e: Endpoint): Rec {
  let read = readers.get(e.record);
  if (!read) readers.set(e.record, (read = { id: digger(e.record.id), created: digger(e.record.created_at), updated: digger(e.record.updated_at) }));
  const id = read.id(raw);
  const c = read.created(raw);
  const u = read.updated(raw);
  // One shape for every record (absent fields undefined), so the engine keeps one layout.
  return {
    id: typeof id === 'string' || typeof id === 'number' ? String(id) : JSON.stringify(id),
    createdRaw: typeof c === 'string' ? c : undefined,
    updatedRaw: typeof u === 'string' ? u : undefined,
    created: typeof c === 'string' ? instantKey(c) : undefined,
    updated: typeof u === 'string' ? instantKey(u) : undefined,
  };
}

const spent = new WeakMap<object, Map<string, number>>();

/**
 * The share of an operation's request budget its exploration's own requests may take (its drawn
 * requests, the covering array's, the tie walks'): the rest is kept for the fixed probes, which
 * a larger --explore must not starve (raise request-budget with it).
 */
export const EXPLORATION_SHARE = 1 / 4;

/**
 * Counts one request against the operation's budget; skips the check when it is used up.
 * `explored`: a request of the exploration, held to its share as well.
 */
export function spend(ctx: CheckContext, e: Endpoint, explored = false): void {
  let m = spent.get(ctx.run);
  if (!m) spent.set(ctx.run, (m = new Map<string, number>()));
  const n = (m.get(e.key) ?? 0) + 1;
  const { budget } = pagination(ctx);
  if (n > budget) throw new BudgetSpent(`not testable within the request budget: ${budget} requests to ${e.key} already sent (raise request-budget)`);
  if (explored) {
    const x = (m.get(`explore ${e.key}`) ?? 0) + 1;
    const share = Math.floor(budget * EXPLORATION_SHARE);
    if (x > share)
      throw new BudgetSpent(`not sent: the exploration of ${e.key} took its share of the request budget (${share} of ${budget}; raise request-budget)`);
    m.set(`explore ${e.key}`, x);
  }
  m.set(e.key, n);
}

export class BudgetSpent extends CheckSkip {}

export function query(params: Params): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/**
 * One page of a list, read once per run whichever checks ask for it. A page read without a
 * filter tells the check how many records the list holds (CheckContext.sawRecords). `way`: the
 * way of asking that reads it (a check's probes, or a traversal's pages: `walks`).
 */
export async function readPage(ctx: CheckContext, e: Endpoint, path: string, params: Params = {}, way: 'probes' | 'walks' = 'probes'): Promise<ListPage> {
  const page = await readOnce(ctx, e, path, params, way);
  if (page.ok && params.filter === undefined) ctx.sawRecords(Math.max(metaInt(page, 'results.total') ?? 0, page.records.length));
  return page;
}

/**
 * A page read to choose `e`'s parents: of a parent list, for the ids a placeholder of `e`'s path
 * may take, or of `e`'s list under one parent combination, for how many records it holds. Read
 * once and counted against `e`'s budget like any, but it tells no check how many records its
 * list holds: the checks read the combination chosen themselves (suites/list/target.ts).
 */
export function readParentPage(ctx: CheckContext, e: Endpoint, path: string, params: Params = {}): Promise<ListPage> {
  return readOnce(ctx, e, path, params, 'parents');
}

/** The ways of asking of the exploration (explore.ts): its requests are a batch drawn at once. */
export type ExploredWay = 'covering' | 'legal' | 'spellings' | 'illegal' | 'ties' | 'shrinking';

/**
 * A page read for the exploration (explore.ts): read once per run and counted against the
 * budget like any, but it tells no check how many records the list holds (which check's
 * result carries the exploration's reads depends on which asked first).
 */
export function readExploredPage(ctx: CheckContext, e: Endpoint, path: string, params: Params, way: ExploredWay): Promise<ListPage> {
  return readOnce(ctx, e, path, params, way);
}

/**
 * The order the suite writes its own parameters in: a request asked by two ways (a probe's and
 * a covering array's row) is then one URL, read once. Other spellings (spellings.ts) and illegal
 * requests are sent as they are written, in the path.
 */
const PARAM_ORDER = ['sort', 'filter', 'page[limit]', 'page[offset]'];

function inParamOrder(params: Params): Params {
  const keys = Object.keys(params);
  if (keys.length < 2) return params;
  const rank = (k: string): number => {
    const i = PARAM_ORDER.indexOf(k);
    return i < 0 ? PARAM_ORDER.length : i;
  };
  return Object.fromEntries(keys.sort((a, b) => rank(a) - rank(b)).map((k) => [k, params[k]!]));
}

/**
 * Every page is read once per run, by the URL as it is sent: whichever way of asking wants it
 * first sends it, and every rule that can judge its answer reads the same exchange. A way of
 * the exploration's is a batch: it is sent behind the round trips the run makes in sequence.
 */
function readOnce(ctx: CheckContext, e: Endpoint, path: string, params: Params, way: Way): Promise<ListPage> {
  const query = inParamOrder(params);
  const background = way !== 'probes' && way !== 'walks' && way !== 'parents';
  return ctx.shared(`page ${ctx.run.http.url(path, query)}`, async (s) => {
    spend(ctx, e, background);
    return listPageOf(await s.request({ method: 'GET', path, query, way, ...(background ? { background } : {}) }), e);
  });
}

/** An answer read as a page of `e`'s list: the suite's own, or one observed (suites/observed.ts). */
export function listPageOf(res: HttpResponse, e: Endpoint): ListPage {
  if (res.status === 200 && res.isJson) {
    const body = res.json() as { data?: unknown; meta?: unknown } | null;
    if (body && typeof body === 'object' && Array.isArray(body.data)) {
      const meta = body.meta && typeof body.meta === 'object' ? (body.meta as PageMeta) : undefined;
      const slim = new HttpResponse(res.status, res.headers, '', res.exchange, { ok: false });
      return { res: slim, ok: true, records: body.data.map((r) => toRec(r, e)), meta, violations: validate(SCHEMA.listResponse, body), first: body.data[0] };
    }
  }
  return { res, ok: false, records: [] };
}

/**
 * Pages that do not depend on one another, asked for at once and judged in the order given: the
 * caller awaits each in turn, so the first failure is the same as when they were read one by
 * one. A page the caller never reaches (it failed earlier) rejects into the void, not unhandled.
 */
export function readPagesAtOnce(ctx: CheckContext, e: Endpoint, path: string, list: Params[], way: 'probes' | 'walks' = 'probes'): Array<Promise<ListPage>> {
  return list.map((params) => {
    const page = readPage(ctx, e, path, params, way);
    page.catch(() => undefined);
    return page;
  });
}

/** An integer field of the page meta, or undefined. */
export function metaInt(page: ListPage, path: 'page.limit' | 'page.offset' | 'page.current' | 'page.total' | 'results.total'): number | undefined {
  const v = dig(page.meta, path);
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/**
 * spec/contract/README.md#list-endpoints: an endpoint that answers 400 to a sort or filter does not
 * support it. 422 is the other validation status a correct server uses
 * (spec/contract/README.md#create-application-key allows it for Create), so it reads the same:
 * never a failure for the target's choice not to support a feature.
 */
export function refusesFeature(page: ListPage | undefined): boolean {
  return page !== undefined && (page.res.status === 400 || page.res.status === 422);
}

/** A 200 list page must carry the pagination fields; returns nothing, fails with the path. */
export function expectListMeta(page: ListPage, what: string): void {
  expectStatus(page.res, 200, what);
  // Not a list at all: the body is still there to judge (and to fail as not JSON).
  if (!page.ok) expectSchema(page.res, SCHEMA.listResponse, what);
  expectValid(page.violations ?? [], SCHEMA.listResponse, page.res, what);
}

/**
 * The answer to invalid paging parameters (negative, 0 for page[limit], not a number): a 4xx with
 * the Error shape, or a well-formed page of at most 100 records; never a 5xx.
 */
export function expectInvalidPagingAnswer(page: ListPage, what: string): void {
  if (page.res.status >= 500)
    fail(`${what}: a server error`, { expected: '4xx with the Error shape, or a well-formed page', actual: `status ${page.res.status}`, res: page.res });
  if (page.res.status >= 400) return expectErrorBody(page.res, what);
  expectListMeta(page, what);
  if (page.records.length > 100) fail(`${what}: more than 100 records`, { expected: 'at most 100 records', actual: `${page.records.length}`, res: page.res });
}

/**
 * The values meta.page.current and meta.page.total may take for a page of `limit` at `offset`
 * over `total` records (spec/contract/README.md#pagination-information): current is offset /
 * limit + 1 (an offset between two page starts falls in either page), total is ceil(total /
 * limit); with no records, 0 and 1 are allowed too. The fixed probes and the model both judge
 * the page numbers by it.
 */
export function pageNumbersAllowed(limit: number, offset: number, total: number): { current: number[]; pages: number[] } {
  const current = new Set(offset % limit === 0 ? [offset / limit + 1] : [Math.floor(offset / limit) + 1, Math.ceil(offset / limit) + 1]);
  const pages = new Set([Math.ceil(total / limit)]);
  if (total === 0) for (const v of [0, 1]) (current.add(v), pages.add(v));
  return { current: [...current], pages: [...pages] };
}
