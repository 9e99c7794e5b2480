// Traffic the suite did not send, judged by the suite's own rules (conformance proxy and
// conformance judge). Each exchange on an operation of the contract is shown to every check
// that can judge it, with the predicate the check's run uses: a static check's `observe`, and
// for list pages the model's judge() with a model that knows no record (suites/list/model.ts).
// A rule is judged under its check's id, level and clause; one no exchange could show is
// reported as not exercised, never as passed.
import type { Check, CheckResult } from '../lib/check.js';
import type { Endpoint } from '../lib/catalog.js';
import { exchangeLine, toCurl } from '../lib/exchange.js';
import { learnSecrets, observedResponse, type Observed, type ObservedOperation, type Seen, type SeenBefore } from '../lib/observed.js';
import { CheckFailure, type Level } from '../lib/outcome.js';
import { SCHEMA, validate } from '../lib/schema.js';
import type { Secrets } from '../lib/secrets.js';
import { CUSTOM_APIS } from './delete/custom-api.js';
import { APPLICATION_KEYS } from './create/application-key.js';
import { judgesTraffic, listChecks, staticChecks } from './index.js';
import { orderOf } from './list/collation.js';
import { expandListChecks } from './list/list-check.js';
import { judge, observerModel, OPAQUE, queryOfUrl, type ListQuery } from './list/model.js';
import { listPageOf, type ListPage } from './list/pages.js';

/** What the judgement of observed traffic needs to know beyond the traffic. */
export interface ObservedSettings {
  /** The list operations (the catalog, with the user's overrides). */
  endpoints: readonly Endpoint[];
  /** The store's default page length; absent: read from an observed GET /v2/settings, else not judged. */
  defaultPageLength?: number;
  /** A prefix of every path before the contract's (`/api` of `https://host/api/v2/...`): left off when paths are matched. */
  basePath?: string;
}

export interface TrafficCounts {
  /** Exchanges seen. */
  exchanges: number;
  /** Of those, on an operation of the contract. */
  judged: number;
  /** Answered 429: no rule is judged on a rate-limited answer. */
  rateLimited: number;
  /** With a body not known whole (cut at --max-body-bytes, or not recorded): not judged. */
  unread: number;
}

/** A path template of the catalog as a pattern of concrete paths. */
function templatePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** Which operation of the contract an exchange falls on, if any. */
function classify(x: Observed, lists: ReadonlyArray<{ e: Endpoint; pattern: RegExp }>, basePath: string): { operation: ObservedOperation; id?: string; endpoint?: Endpoint } | undefined {
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
  if (x.method !== 'GET') return undefined;
  if (path.replace(/\/$/, '') === '/v2/settings') return { operation: 'store-settings' };
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

/** A JSON body, or undefined. */
function jsonOf(text: string | undefined): unknown {
  if (text === undefined || text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The store's page_length in an answer to GET /v2/settings, if it holds a whole number. */
function pageLengthOf(seen: Seen): number | undefined {
  if (seen.res.status !== 200 || !seen.res.isJson) return undefined;
  const v = (seen.res.json() as { data?: { page_length?: unknown } } | null)?.data?.page_length;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/** The query of a page without its offset: pages of one traversal share it. */
function traversalKey(seen: Seen, q: ListQuery): string {
  const url = new URL(seen.x.url);
  return `${url.pathname}?${[q.sort ? `sort=${q.sort.descending ? '-' : ''}${q.sort.attr}` : '', q.filters.map((t) => `${t.op}(${t.attr},${t.value})`).join(':'), `limit=${q.limit ?? ''}`].join('&')}`;
}

interface PageSeen {
  offset: number;
  total: number | undefined;
  ids: Set<string>;
  seen: Seen;
}

/**
 * Judges traffic one exchange at a time, in the order the exchanges were sent (a proxy shows
 * each when its answer has come: an exchange sent after another's answer is shown after it).
 * What it keeps is bounded by what rules across exchanges need: the Custom APIs deleted, the
 * keys created, and up to 64 pages of each sorted query.
 */
export class TrafficJudge {
  readonly counts: TrafficCounts = { exchanges: 0, judged: 0, rateLimited: 0, unread: 0 };
  readonly #settings: ObservedSettings;
  readonly #secrets: Secrets;
  readonly #lists: ReadonlyArray<{ e: Endpoint; pattern: RegExp }>;
  readonly #tallies: Tally[];
  readonly #listTallies = new Map<string, Tally>();
  readonly #deleted = new Map<string, Seen>();
  readonly #created: Seen[] = [];
  readonly #traversals = new Map<string, PageSeen[]>();
  #storePageLength: number | undefined;

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

  /** One exchange: its secrets learned, then shown to every check that can judge it. */
  see(x: Observed): void {
    const index = this.counts.exchanges++;
    learnSecrets(x, this.#secrets);
    const where = classify(x, this.#lists, this.#settings.basePath?.replace(/\/$/, '') ?? '');
    if (!where) return;
    this.counts.judged++;
    if (x.status === 429) {
      this.counts.rateLimited++;
      return;
    }
    if (x.unread) {
      // Not judged; a DELETE's success still tells later exchanges the id is gone.
      this.counts.unread++;
      if (where.operation === 'delete-custom-api' && where.id !== undefined && x.status >= 200 && x.status < 300 && !this.#deleted.has(where.id)) this.#deleted.set(where.id, { index, x, res: observedResponse(x, this.#secrets, false), operation: where.operation, id: where.id });
      return;
    }
    // Judged unmasked; the evidence of a failure is made again, masked, when it is reported (resultOf).
    const seen: Seen = { index, x, res: observedResponse(x, this.#secrets, false), operation: where.operation, ...(where.id !== undefined ? { id: where.id } : {}), sent: jsonOf(x.requestBody) };
    const before: SeenBefore = { deleted: this.#deleted, created: this.#created };
    for (const t of this.#tallies) if (t.check.observe) record(t, seen, () => t.check.observe!(seen, before));
    const ok = seen.res.status >= 200 && seen.res.status < 300;
    if (where.operation === 'store-settings') this.#storePageLength = pageLengthOf(seen) ?? this.#storePageLength;
    if (where.operation === 'delete-custom-api' && seen.id !== undefined && ok && !this.#deleted.has(seen.id)) this.#deleted.set(seen.id, seen);
    if (where.operation === 'create-application-key' && ok) this.#created.push(seen);
    if (where.operation === 'list' && where.endpoint) this.#page(seen, where.endpoint);
  }

  /** Every check's result so far, as a run reports them; a failure's replay is its request. */
  results(): ObservedResult[] {
    return [...this.#tallies, ...this.#listTallies.values()].map((t) => resultOf(t, this.#secrets));
  }

  /** A list page, held to the list rules one answer shows, and to the pages of the same query before it. */
  #page(seen: Seen, e: Endpoint): void {
    const q = queryOfUrl(seen.x.url);
    // A request outside the query space the contract defines (another parameter) is not judged.
    if (!q) return;
    const page = listPageOf(seen.res, e);
    const shown = page.meta?.page?.limit;
    const known = this.#settings.defaultPageLength ?? this.#storePageLength;
    const defaultLength = known ?? (typeof shown === 'number' && Number.isInteger(shown) && shown >= 1 && shown <= 100 ? shown : 25);
    const byId = q.sort?.attr === 'id' || q.filters.some((t) => t.attr === 'id');
    const model = observerModel(new URL(seen.x.url).pathname, defaultLength, e.hardOffsetLimit, byId ? orderOf(page.records, 'id') : undefined);
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
    this.#continuation(seen, e, q, page);
  }

  /**
   * A later page of the same query holds no record of an earlier one. Judged only where the
   * list cannot have moved between them: sorted by created_at or id (an update moves a record in
   * an order by updated_at, and the default order may be that), the same results.total on both.
   */
  #continuation(seen: Seen, e: Endpoint, q: ListQuery, page: ListPage): void {
    const t = this.#listTallies.get(`list.offset.traversal ${e.key}`);
    if (!t || !page.ok || !q.sort || q.sort.attr === 'updated_at') return;
    const key = traversalKey(seen, q);
    const offset = q.offset ?? 0;
    const total = page.meta?.results?.total;
    const mine: PageSeen = { offset, total: typeof total === 'number' ? total : undefined, ids: new Set(page.records.map((r) => r.id)), seen };
    const earlier = this.#traversals.get(key) ?? [];
    for (const p of earlier) {
      if (p.offset === offset || p.total === undefined || p.total !== mine.total) continue;
      const [first, later] = p.offset < offset ? [p, mine] : [mine, p];
      // Pages that overlap by their own numbers (the later one starts inside the earlier) say nothing.
      if (first.offset + first.ids.size > later.offset) continue;
      record(t, later.seen, () => {
        const both = [...later.ids].filter((id) => first.ids.has(id));
        if (both.length) {
          throw new CheckFailure(`a later page of the same query repeats records of an earlier one (offsets ${first.offset} and ${later.offset})`, {
            expected: 'pages of one query without overlap',
            actual: `in both: ${both.slice(0, 6).join(', ')}${both.length > 6 ? `, … (${both.length})` : ''}`,
            exchange: later.seen.res.exchange,
          });
        }
        return true;
      });
    }
    if (earlier.length < 64) this.#traversals.set(key, [...earlier, mine]);
  }
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
  const head = { id: c.id, area: c.area, clause: c.clause, clauseLink: c.clauseLink, level: c.level as Level, title: c.title, ...(c.operation ? { operation: c.operation } : {}) };
  const counted = { observed: t.exercised, durationMs: 0 };
  if (t.first) {
    const { failure, seen } = t.first;
    // The evidence is the exchange that broke the rule, masked now (judging left it unmasked).
    const x = observedResponse(seen.x, secrets).exchange;
    return {
      ...head,
      outcome: 'fail',
      reason: secrets.mask(t.broken > 1 ? `${failure.message} (${t.broken} of ${t.exercised} observed exchanges broke this rule; the first is shown)` : failure.message),
      evidence: { expected: secrets.mask(failure.expected), actual: secrets.mask(failure.actual), request: toCurl(x), status: x.status, bodyExcerpt: x.bodyExcerpt, exchanges: [`#${seen.index + 1} ${exchangeLine(x)}`] },
      replay: toCurl(x),
      ...counted,
    };
  }
  if (t.exercised > 0) return { ...head, outcome: 'pass', notes: [`${t.exercised} observed exchange(s) could show this rule; none broke it`], ...counted };
  const why = judgesTraffic(c) ? 'not exercised: no observed exchange could show this rule' : 'not exercised: an exchange the suite did not send cannot show this rule (run the suite for it)';
  return { ...head, outcome: 'skip', reason: why, ...counted };
}
