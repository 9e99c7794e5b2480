// Traffic the suite did not send, judged by the suite's own rules (conformance proxy and
// conformance judge). Each exchange on an operation of the contract is shown to every check
// that can judge it, with the predicate the check's run uses: a static check's `observe`, and
// for list pages each list check's rule (suites/list/judge.ts) with a model that knows no record.
// A rule is judged under its check's id, level and clause; one no exchange could show is
// reported as not exercised, never as passed.
import {
  type Check,
  type CheckResult,
  learnAnswer,
  learnRequest,
  observedResponse,
  type Observed,
  type ObservedOperation,
  type Seen,
  type SeenBefore,
} from '../lib/runner/index.js';
import { type Endpoint, SCHEMA, validate } from '../lib/contract/index.js';
import { exchangeLine, toCurl, CheckFailure, type Level, type Secrets } from '../lib/evidence/index.js';
import { HttpResponse } from '../lib/transport/index.js';
import { CUSTOM_APIS, deletedKey } from './delete/custom-api.js';
import { APPLICATION_KEYS } from './create/application-key.js';
import { judgesTraffic, listChecks, staticChecks } from './index.js';
import { numericOrder, orderOf, plainOrder, type Comparator } from './list/collation.js';
import { expandListChecks } from './list/expand.js';
import { observerModel, OPAQUE, queryOfUrl, type ListQuery } from './list/model.js';
import { judge, judgeInvalid } from './list/judge.js';
import { illegalOfUrl, judgeIllegal } from './list/illegal.js';
import { undefinedPaging } from './list/readings.js';
import { instantKey, listPageOf, type ListPage, type Rec } from './list/pages.js';

/** What the judgement of observed traffic needs to know beyond the traffic. */
export interface ObservedSettings {
  /** The list operations (the catalog, with the user's overrides). */
  endpoints: readonly Endpoint[];
  /** The store's default page length; absent: read from an observed GET /v2/settings, else not judged. */
  defaultPageLength?: number;
  /** A prefix of every path before the contract's (`/api` of `https://host/api/v2/...`): left off when paths are matched. */
  basePath?: string;
  /**
   * The record of the traffic holds no credentials (a sanitized HAR export): a request without an
   * Authorization header may have had one, so the rules about requests without a token are not judged.
   */
  credentialsStripped?: boolean;
}

export interface TrafficCounts {
  /** Exchanges seen. */
  exchanges: number;
  /** Of those, on an operation of the contract. */
  judged: number;
  /** Answered 429: no rule is judged on a rate-limited answer. */
  rateLimited: number;
  /** With a body not known whole (cut at --max-body-bytes, encoded in a way not decoded, or not recorded): not judged. */
  unread: number;
  /** Exchanges whose judging failed on a bug of the suite: each is said in the report (an error of the command). */
  faults: string[];
}

/** A path template of the catalog as a pattern of concrete paths. */
function templatePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** Which operation of the contract an exchange falls on, if any. */
function classify(
  x: Observed,
  lists: ReadonlyArray<{ e: Endpoint; pattern: RegExp }>,
  basePath: string,
): { operation: ObservedOperation; id?: string; endpoint?: Endpoint } | undefined {
  let path: string;
  try {
    path = new URL(x.url).pathname;
  } catch {
    return undefined;
  }
  if (basePath) {
    if (!path.startsWith(`${basePath}/`)) return undefined;
    path = path.slice(basePath.length);
  }
  const under = path.startsWith(`${CUSTOM_APIS}/`) ? path.slice(CUSTOM_APIS.length + 1) : undefined;
  if (under !== undefined && under.length > 0 && !under.includes('/')) {
    let id = under;
    try {
      id = decodeURIComponent(under);
    } catch {
      // An id that is not valid percent-encoding is judged as sent.
    }
    if (x.method === 'DELETE') return { operation: 'delete-custom-api', id };
    if (x.method === 'GET') return { operation: 'get-custom-api', id };
    return undefined;
  }
  if (x.method === 'POST' && path.replace(/\/$/, '') === APPLICATION_KEYS) return { operation: 'create-application-key' };
  // The store's settings, read or changed: a page_length set mid-traffic is the default from then on.
  if (path.replace(/\/$/, '') === '/v2/settings' && ['GET', 'PUT', 'PATCH'].includes(x.method)) return { operation: 'store-settings' };
  if (x.method !== 'GET') return undefined;
  const list = lists.find((l) => l.pattern.test(path));
  return list ? { operation: 'list', endpoint: list.e } : undefined;
}

/** How one check fared over the traffic. */
interface Tally {
  check: Check;
  exercised: number;
  broken: number;
  first?: { failure: CheckFailure; seen: Seen };
}

/** The store's page_length in an answer to GET /v2/settings, if it holds a whole number. */
function pageLengthOf(seen: Seen): number | undefined {
  if (seen.res.status !== 200 || !seen.res.isJson) return undefined;
  const v = (seen.res.json() as { data?: { page_length?: unknown } } | null)?.data?.page_length;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/**
 * The first paging parameter of a URL sent as the contract does not define it (not a whole number,
 * 0 for page[limit], past 2^64, repeated, an array, a bare page=), as sent: one of
 * spec/contract/query-readings.yaml's shapes, which parsers read several ways.
 */
function invalidPaging(url: string): string | undefined {
  try {
    return undefinedPaging(new URL(url).searchParams);
  } catch {
    return undefined;
  }
}

/** The query of a page without its offset, with the page length it has: pages of one traversal share it. */
function traversalKey(seen: Seen, q: ListQuery, limit: number): string {
  const url = new URL(seen.x.url);
  return `${url.pathname}?${[q.sort ? `sort=${q.sort.descending ? '-' : ''}${q.sort.attr}` : '', q.filters.map((t) => `${t.op}(${t.attr},${t.value})`).join(':'), `limit=${limit}`].join('&')}`;
}

interface PageSeen {
  offset: number;
  total: number | undefined;
  /** Its records' ids, each with its created_at instant key. */
  records: Map<string, string | undefined>;
  seen: Seen;
}

/**
 * Judges traffic one exchange at a time, in the order the exchanges were sent (a proxy shows
 * each when its answer has come: an exchange sent after another's answer is shown after it).
 * What it keeps is bounded by what rules across exchanges need: the Custom APIs deleted, the
 * keys created, and up to 64 pages of each sorted query.
 */
export class TrafficJudge {
  readonly counts: TrafficCounts = { exchanges: 0, judged: 0, rateLimited: 0, unread: 0, faults: [] };
  readonly #settings: ObservedSettings;
  readonly #secrets: Secrets;
  readonly #lists: ReadonlyArray<{ e: Endpoint; pattern: RegExp }>;
  readonly #tallies: Tally[];
  readonly #listTallies = new Map<string, Tally>();
  readonly #deleted = new Map<string, Seen>();
  readonly #created: Seen[] = [];
  readonly #traversals = new Map<string, PageSeen[]>();
  /** How each list operation's target collates ids, read from the sort=id pages seen (orderOf). */
  readonly #idOrders = new Map<string, Comparator>();
  /** The store's page_length as GET (or PUT) /v2/settings showed it, by the credentials that asked: one host may serve several stores. */
  readonly #storePageLength = new Map<string, number>();

  constructor(settings: ObservedSettings, secrets: Secrets) {
    this.#settings = settings;
    this.#secrets = secrets;
    this.#lists = settings.endpoints.map((e) => ({ e, pattern: templatePattern(e.path) }));
    this.#tallies = staticChecks.map((check): Tally => ({ check, exercised: 0, broken: 0 }));
    for (const c of expandListChecks(listChecks, settings.endpoints)) this.#listTallies.set(`${c.id} ${c.operation}`, { check: c, exercised: 0, broken: 0 });
  }

  /**
   * Compiles the schemas judging reads, ahead of the first exchange: a proxy calls it before it
   * listens, so the first answer through it is not held up by the compiler.
   */
  prepare(): void {
    for (const id of [SCHEMA.error, SCHEMA.applicationKeyCreateResponse, SCHEMA.listResponse]) validate(id, null);
  }

  /**
   * One exchange: its secrets learned, then shown to every check that can judge it. A bug of the
   * suite while judging it is counted (TrafficCounts.faults), never thrown: the rest is judged.
   */
  see(x: Observed): void {
    const index = this.counts.exchanges++;
    try {
      this.#see(x, index);
    } catch (e) {
      if (this.counts.faults.length < 20)
        this.counts.faults.push(`judging exchange #${index + 1} (${x.method} ${this.#secrets.mask(x.url)}) failed: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  #see(x: Observed, index: number): void {
    // Each body is parsed once: the request's here, the answer's by observedResponse (or here, when it is not read).
    const sent = learnRequest(x, this.#secrets);
    const where = classify(x, this.#lists, this.#settings.basePath?.replace(/\/$/, '') ?? '');
    if (where) this.counts.judged++;
    if (where && x.status === 429) this.counts.rateLimited++;
    if (!where || x.status === 429) return learnAnswer(x, this.#secrets);
    const credentials = x.requestHeaders.authorization !== undefined ? 'present' : this.#settings.credentialsStripped ? 'unknown' : 'absent';
    // Judged unmasked; the evidence of a failure is made again, masked, when it is reported (resultOf).
    const seen: Seen = {
      index,
      x,
      res: observedResponse(x, this.#secrets, false),
      operation: where.operation,
      ...(where.id !== undefined ? { id: where.id } : {}),
      sent,
      credentials,
    };
    const ok = seen.res.status >= 200 && seen.res.status < 300;
    // A DELETE's success tells later exchanges the id is gone, whether or not it is judged itself.
    // (Kept before the checks see this exchange: a read is held to a delete only once its answer had come, so never to its own.)
    const gone = where.operation === 'delete-custom-api' && seen.id !== undefined && ok && credentials !== 'absent' ? deletedKey(seen.id) : undefined;
    if (gone !== undefined && !this.#deleted.has(gone)) {
      this.#deleted.set(gone, slim(seen));
      if (this.#deleted.size > MAX_DELETED) this.#deleted.delete(this.#deleted.keys().next().value!);
    }
    if (x.unread || x.requestUnread) {
      this.counts.unread++;
      return;
    }
    const before: SeenBefore = { deleted: this.#deleted, created: this.#created };
    // A 401 or 403 to a request with a token (expired, another store's, read-only) says nothing of
    // any rule but the shape of errors: the request was not taken up at all.
    const refused = (x.status === 401 || x.status === 403) && credentials !== 'absent';
    for (const t of this.#tallies) if (t.check.observe && (!refused || t.check.area === 'errors')) record(t, seen, () => t.check.observe!(seen, before));
    if (where.operation === 'store-settings') {
      const length = pageLengthOf(seen);
      if (length !== undefined) this.#storePageLength.set(storeOf(x), length);
    }
    if (refused) return;
    if (where.operation === 'create-application-key' && ok && this.#created.length < MAX_CREATED) this.#created.push(slim(seen));
    if (where.operation === 'list' && where.endpoint) this.#page(seen, where.endpoint);
  }

  /** Every check's result so far, as a run reports them; a failure's replay is its request. */
  results(): ObservedResult[] {
    return [...this.#tallies, ...this.#listTallies.values()].map((t) => resultOf(t, this.#secrets));
  }

  /** A list page, held to the list rules one answer shows, and to the pages of the same query before it. */
  #page(seen: Seen, e: Endpoint): void {
    const page = listPageOf(seen.res, e);
    const shown = page.meta?.page?.limit;
    const known = this.#settings.defaultPageLength ?? this.#storePageLength.get(storeOf(seen.x));
    // Unknown, the default is taken as the page says it (and not judged itself, below).
    const defaultLength = known ?? (typeof shown === 'number' && Number.isInteger(shown) && shown >= 1 ? shown : 25);
    const invalid = invalidPaging(seen.x.url);
    if (invalid) {
      // Invalid paging parameters: judged as list.params.invalid judges its own, under the
      // readings of spec/contract/query-readings.yaml where the request is one of its shapes.
      const t = this.#listTallies.get(`list.params.invalid ${e.key}`);
      if (t)
        record(t, seen, () => {
          const d = judgeInvalid(page, `GET with ${invalid}`);
          if (d) throw new CheckFailure(d.message, { expected: d.expected, actual: d.actual, exchange: seen.res.exchange });
          const total = page.meta?.results?.total;
          const model = observerModel(new URL(seen.x.url).pathname, defaultLength, e.hardOffsetLimit);
          const il = illegalOfUrl(seen.x.url, model, typeof total === 'number' && Number.isInteger(total) ? total : Infinity);
          const [broken] = il ? judgeIllegal(model, il, new URL(seen.x.url).pathname, page, () => OPAQUE) : [];
          if (broken) throw new CheckFailure(broken.message, { expected: broken.expected, actual: broken.actual, exchange: seen.res.exchange });
          return true;
        });
      return;
    }
    const asked = queryOfUrl(seen.x.url);
    // A request outside the query space the contract defines (another parameter) is not judged.
    if (!asked) return;
    const learned = this.#idOrder(e, asked, page);
    // A page sorted by id is judged in the collation it follows, where none was learned yet.
    const idOrder = learned ?? (asked.sort?.attr === 'id' ? followedOrder(asked.sort.descending ? [...page.records].reverse() : page.records) : undefined);
    // Terms on id where the collation is not known and the ids are digits (strings and numbers
    // order them differently): not judged, as a run would not judge them without its sort=id listing.
    const q: ListQuery =
      learned === undefined && page.records.some((r) => /^\d+$/.test(r.id)) ? { ...asked, filters: asked.filters.filter((t) => t.attr !== 'id') } : asked;
    const model = observerModel(new URL(seen.x.url).pathname, defaultLength, e.hardOffsetLimit, idOrder);
    const examined = new Set<string>();
    const found = judge(model, q, page, () => OPAQUE, examined);
    // Without the store's page length (no GET /v2/settings seen, no setting), the default is not judged.
    if (known === undefined) examined.delete('list.limit.default');
    for (const id of examined) {
      const t = this.#listTallies.get(`${id} ${e.key}`);
      if (!t) continue;
      const d = found.find((f) => f.checkId === id);
      record(t, seen, () => {
        if (d) throw new CheckFailure(d.message, { expected: d.expected, actual: d.actual, exchange: seen.res.exchange });
        return true;
      });
    }
    this.#continuation(seen, e, q, page, q.limit ?? known ?? (typeof shown === 'number' ? shown : undefined));
  }

  /**
   * How `e`'s target collates ids: learned from its sort=id pages (the first collation of orderOf
   * a page follows, where it follows only one of those that differ on its ids), as a run learns it
   * from its sort=id listing. Undefined until a page shows it; a page sorted by id that shows none
   * is judged in code units, as a run judges an order it does not recognise.
   */
  #idOrder(e: Endpoint, q: ListQuery, page: ListPage): Comparator | undefined {
    const learned = this.#idOrders.get(e.key);
    if (learned || q.sort?.attr !== 'id' || !page.ok || page.records.length < 2 || q.filters.length) return learned;
    const ascending = q.sort.descending ? [...page.records].reverse() : page.records;
    const order = orderOf(ascending, 'id');
    // Learned only when the page tells the candidates apart: digits in string order and as numbers.
    const digits = ascending.every((r) => /^\d+$/.test(r.id));
    const telling = !digits || !(follows(ascending, plainOrder) && follows(ascending, numericOrder));
    if (telling && follows(ascending, order)) this.#idOrders.set(e.key, order);
    return this.#idOrders.get(e.key);
  }

  /**
   * A later page of the same query holds no record of an earlier one. Judged only where writes
   * between the two requests cannot explain a repeat: sorted by created_at ascending (a new record
   * goes to the end, an update moves nothing; in another order an insertion before the boundary
   * pushes records onto the next page), with the same results.total on both, and the repeated
   * records older than the earlier page's request. Counted once per page, against every earlier page.
   */
  #continuation(seen: Seen, e: Endpoint, q: ListQuery, page: ListPage, limit: number | undefined): void {
    const t = this.#listTallies.get(`list.offset.traversal ${e.key}`);
    // Not on nested lists: what a relationship list holds (a node's products) changes by attaching
    // old records, which land anywhere in the order.
    if (!t || !page.ok || q.sort?.attr !== 'created_at' || q.sort.descending || limit === undefined || e.placeholders.length > 0) return;
    const key = traversalKey(seen, q, limit);
    const offset = q.offset ?? 0;
    const total = page.meta?.results?.total;
    const mine: PageSeen = {
      offset,
      total: typeof total === 'number' ? total : undefined,
      records: new Map(page.records.map((r) => [r.id, r.created])),
      seen: slim(seen),
    };
    const earlier = this.#traversals.get(key) ?? [];
    const pairs = earlier
      .filter((p) => p.offset !== offset && p.total !== undefined && p.total === mine.total)
      .map((p): [PageSeen, PageSeen] => (p.offset < offset ? [p, mine] : [mine, p]))
      .filter(([first, later]) => first.offset + first.records.size <= later.offset);
    if (pairs.length) {
      record(t, seen, () => {
        for (const [first, later] of pairs) {
          // Older than the first request by a minute at least: no clock between client and store makes it new.
          const before = instantKeyOf(first.seen.x.startedAt - 60_000);
          // Not a record tied with another on created_at: the order of ties is open, and one
          // updated between the two requests may move within its tie, across the boundary.
          const times = [...first.records.values(), ...later.records.values()];
          const tied = (id: string): boolean => times.filter((v) => v === first.records.get(id)).length > 2;
          const both = [...later.records.keys()].filter((id) => first.records.has(id) && (first.records.get(id) ?? '') < before && !tied(id));
          if (both.length) {
            throw new CheckFailure(
              `a later page of the same query repeats records of an earlier one (offsets ${first.offset} and ${later.offset}, the same results.total)`,
              {
                expected: 'pages of one query without overlap',
                actual: `in both: ${both.slice(0, 6).join(', ')}${both.length > 6 ? `, … (${both.length})` : ''}`,
                exchange: seen.res.exchange,
              },
            );
          }
        }
        return true;
      });
    }
    // Bounded: 64 pages of a query, 256 queries (the oldest dropped first).
    if (earlier.length < 64) {
      this.#traversals.delete(key);
      this.#traversals.set(key, [...earlier, mine]);
      if (this.#traversals.size > 256) this.#traversals.delete(this.#traversals.keys().next().value!);
    }
  }
}

/** Whether records are in `cmp`'s ascending order of their ids. */
function follows(records: readonly Rec[], cmp: Comparator): boolean {
  return records.every((r, i) => i === 0 || cmp(records[i - 1]!.id, r.id) <= 0);
}

/** The collation (orderOf) records sorted by id follow, or code units where they follow none. */
function followedOrder(ascending: readonly Rec[]): Comparator {
  const order = orderOf(ascending, 'id');
  return follows(ascending, order) ? order : plainOrder;
}

/** Keys created, kept to compare later keys with: at most this many. */
const MAX_CREATED = 10_000;

/** Ids deleted, kept to hold later reads to: at most this many (the oldest forgotten first). */
const MAX_DELETED = 100_000;

/** Which store a request speaks to, as far as traffic tells: its credentials. */
function storeOf(x: Observed): string {
  return x.requestHeaders.authorization ?? '';
}

/** What a rule across exchanges keeps of one: its answer parsed, not its text. */
function slim(seen: Seen): Seen {
  const parsed: { ok: true; value: unknown } | { ok: false } = seen.res.isJson ? { ok: true, value: seen.res.json() } : { ok: false };
  const { responseBody: _body, ...x } = seen.x;
  return {
    ...seen,
    x: { ...x, responseBody: '' },
    res: new HttpResponse(seen.res.status, seen.res.headers, '', { ...seen.res.exchange, bodyExcerpt: '' }, parsed),
  };
}

/** The instant key (pages.ts instantKey) of epoch milliseconds: what record timestamps compare with. */
function instantKeyOf(ms: number): string {
  return instantKey(new Date(ms).toISOString()) ?? '';
}

/** Judges every exchange of `traffic`, in order (a HAR file's): the results and the counts. */
export function judgeTraffic(traffic: readonly Observed[], settings: ObservedSettings, secrets: Secrets): { results: ObservedResult[]; counts: TrafficCounts } {
  const j = new TrafficJudge(settings, secrets);
  for (const x of traffic) j.see(x);
  return { results: j.results(), counts: j.counts };
}

/** Counts an exchange for a check when it could show the rule; keeps the first that broke it. */
function record(t: Tally, seen: Seen, judgeIt: () => boolean): void {
  try {
    if (judgeIt()) t.exercised++;
  } catch (err) {
    if (!(err instanceof CheckFailure)) throw err;
    t.exercised++;
    t.broken++;
    t.first ??= { failure: err, seen };
  }
}

/** A result judged from traffic: a failure's replay is the observed request, as a command line. */
export type ObservedResult = CheckResult & { replay?: string };

/** A check's result over the traffic: failed by the first exchange that broke it, passed where some exchange kept it, else not exercised. */
function resultOf(t: Tally, secrets: Secrets): ObservedResult {
  const c = t.check;
  const head = {
    id: c.id,
    area: c.area,
    clause: c.clause,
    clauseLink: c.clauseLink,
    level: c.level as Level,
    title: c.title,
    ...(c.operation ? { operation: c.operation } : {}),
  };
  const counted = { observed: t.exercised, durationMs: 0 };
  if (t.first) {
    const { failure, seen } = t.first;
    // The evidence is the exchange that broke the rule, masked now (judging left it unmasked).
    const x = observedResponse(seen.x, secrets).exchange;
    return {
      ...head,
      outcome: 'fail',
      reason: secrets.mask(
        t.broken > 1 ? `${failure.message} (${t.broken} of ${t.exercised} observed exchanges broke this rule; the first is shown)` : failure.message,
      ),
      evidence: {
        expected: secrets.mask(failure.expected),
        actual: secrets.mask(failure.actual),
        request: toCurl(x),
        status: x.status,
        bodyExcerpt: x.bodyExcerpt,
        exchanges: [`#${seen.index + 1} ${exchangeLine(x)}`],
      },
      replay: toCurl(x),
      ...counted,
    };
  }
  if (t.exercised > 0) return { ...head, outcome: 'pass', notes: [`${t.exercised} observed exchange(s) could show this rule; none broke it`], ...counted };
  const why = judgesTraffic(c)
    ? 'not exercised: no observed exchange could show this rule'
    : 'not exercised: an exchange the suite did not send cannot show this rule (run the suite for it)';
  return { ...head, outcome: 'skip', reason: why, ...counted };
}
