// A model of one list, built from the traversals the run reads anyway (the offset walks in the
// default order and sorted by created_at, updated_at and id), that predicts the whole answer to
// any request of the legal query space (spec/contract/README.md, "List endpoints" and
// "Pagination information in list responses"), and a judge that holds an answer to it member by
// member. Every disagreement names the check whose rule it breaks, so the existing check ids,
// baselines and certification carry the verdict.
//
// What is open stays open: the order of records that tie on the sort key, the default order,
// the collation of ids (read from the target's own sort=id listing), timestamp spellings
// (instants are compared), clamp or refuse over 100, the page numbers of an empty result, and
// 400 or 422 for a request a target does not support (never judged). A live target changes
// while it is read: records newer than the horizon (the run's start less the time buffer) are
// judged only by their place in the order and by the filter, and an exact prediction is
// withdrawn for an answer that shows the list has changed since the model was read.
import type { CheckContext } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { horizon } from './compare.js';
import { instantKey, metaInt, pageNumbersAllowed, refusesFeature, type ListPage, type Rec } from './pages.js';
import { orderOf, value, type Attr, type Comparator } from './collation.js';
import { HARD_OFFSET_LIMIT, offsetWalk, type Walk } from './walks.js';
import { defaultPageLength } from './target.js';

export const ATTRS: readonly Attr[] = ['created_at', 'updated_at', 'id'];

/** One term of a filter: op(attr,value), the value as sent. */
export interface Term {
  op: 'ge' | 'gt';
  attr: Attr;
  value: string;
}

/** A request of the legal query space; an absent member is a parameter not sent. */
export interface ListQuery {
  sort?: { attr: Attr; descending: boolean };
  filters: Term[];
  limit?: number;
  offset?: number;
}

export type Params = Record<string, string | number>;

export function paramsOf(q: ListQuery): Params {
  return {
    ...(q.sort ? { sort: `${q.sort.descending ? '-' : ''}${q.sort.attr}` } : {}),
    ...(q.filters.length ? { filter: q.filters.map((t) => `${t.op}(${t.attr},${t.value})`).join(':') } : {}),
    ...(q.limit !== undefined ? { 'page[limit]': q.limit } : {}),
    ...(q.offset !== undefined ? { 'page[offset]': q.offset } : {}),
  };
}

/** The request as a query string, as the suite sends it (brackets unencoded). */
export function describeQuery(q: ListQuery): string {
  const p = Object.entries(paramsOf(q)).map(([k, v]) => `${k}=${v}`);
  return p.length ? p.join('&') : '(no parameters)';
}

export interface ListModel {
  path: string;
  /** Every record read, by id (the first reading of each). */
  records: Map<string, Rec>;
  /** meta.results.total of the first page read in the default order. */
  total: number;
  /** Every record of the list was read (a traversal reached its end). */
  complete: boolean;
  /**
   * Per attribute, the value below which every record is known (the last value the traversal
   * sorted by it read), absent where the whole list is known; null where that traversal was
   * refused or read nothing (nothing is known in that order).
   */
  known: Record<Attr, string | null | undefined>;
  /** The sort parameters the target accepted. */
  sortable: Record<Attr, boolean>;
  /** How the target collates ids (read from its sort=id listing), or undefined when unrecognised. */
  idOrder?: Comparator;
  /** The expected default page length. */
  defaultLength: number;
  hardOffsetLimit: boolean;
  /** Records created or updated at or after the horizon, or read with other values by another traversal. */
  fresh: Set<string>;
  /** Fraction digits the target shows in timestamps (the most seen). */
  digits: number;
  /** What the model could not use, for a note. */
  notes: string[];
  /** Pages of the traversals it was built from (the first four and the last two of each): held to it as drawn answers are. */
  pages: ListPage[];
}

/** Why no model could be built for a path (the traversals it rests on failed). */
export class NoModel extends Error {}

function fractionDigits(raw: string | undefined): number {
  const m = raw === undefined ? null : /\d{2}:\d{2}:\d{2}[.,](\d+)/.exec(raw);
  return m ? m[1]!.length : 0;
}

/** An id collation the target's sort=id listing follows, or undefined when none of ours does. */
function collation(sorted: readonly Rec[]): Comparator | undefined {
  const order = orderOf(sorted, 'id');
  return sorted.every((r, i) => i === 0 || order(sorted[i - 1]!.id, r.id) <= 0) ? order : undefined;
}

/**
 * The model of the list at `path`, from the traversals the fixed checks read (shared: no page is
 * asked twice). Throws NoModel when the default traversal broke or read nothing.
 *
 * `like`: the model of the same operation under another parent. Where the default traversal
 * reads the whole list, what the sorted traversals would add (which sorts the target takes, how
 * it collates ids) is taken from it instead of three more traversals.
 */
export function buildModel(ctx: CheckContext, e: Endpoint, path: string, like?: ListModel): Promise<ListModel> {
  return ctx.shared(`model ${path}`, async () => {
    const plain = await offsetWalk(ctx, e, path);
    const borrow = like !== undefined && plain.complete && !plain.broken;
    const sorted = borrow ? [] : await Promise.all(ATTRS.map((a) => offsetWalk(ctx, e, path, a)));
    const first = plain.pages[0];
    if (!first || !first.ok) throw new NoModel(`the first page of ${path} is not a list (${plain.stop})`);
    if (plain.broken) throw new NoModel(`the traversal of ${path} broke: ${plain.broken.message}`);
    const total = metaInt(first, 'results.total');
    if (total === undefined) throw new NoModel(`the first page of ${path} has no integer meta.results.total`);
    const notes: string[] = [];
    const walks = new Map<Attr, Walk | undefined>(ATTRS.map((a, i) => [a, sorted[i]]));
    const usable = (w: Walk): boolean => w.pages.length > 0 && w.pages[0]!.ok && !w.broken && !refusesFeature(w.pages[0]);
    const records = new Map<string, Rec>();
    const fresh = new Set<string>();
    for (const w of [plain, ...sorted]) {
      if (w !== plain && !usable(w)) continue;
      for (const r of w.records) {
        const had = records.get(r.id);
        if (!had) records.set(r.id, r);
        else if (had.created !== r.created || had.updated !== r.updated) fresh.add(r.id);
      }
    }
    const complete = plain.complete || sorted.some((w) => usable(w) && w.complete);
    if (!complete)
      notes.push(
        `the model of ${path} is a window: ${records.size} of ${total} records read (${plain.stop}); past it, answers are held to their order, their filter and their own numbers`,
      );
    const known = {} as Record<Attr, string | null | undefined>;
    const sortable = {} as Record<Attr, boolean>;
    for (const a of ATTRS) {
      const w = walks.get(a);
      sortable[a] = w ? usable(w) : like!.sortable[a];
      if (complete) known[a] = undefined;
      else if (!w) known[a] = null;
      else if (!usable(w) || w.records.length === 0) known[a] = null;
      else {
        const last = value(w.records.at(-1)!, a);
        known[a] = last === undefined ? null : String(last);
      }
    }
    const idWalk = walks.get('id');
    const idOrder = idWalk ? (usable(idWalk) ? collation(idWalk.records) : undefined) : like!.idOrder;
    if (sortable.id && !idOrder) notes.push('sort=id follows none of the collations the suite knows: filters on id are not drawn');
    // The horizon, as the traversal comparisons take it (compare.ts): created and updated
    // before the run's start less the time buffer, waived to the run's start where fewer than 3
    // records are older (a store seeded just now).
    const { old } = horizon(ctx, [...records.values()], 'updated_at');
    for (const r of records.values()) if (!old(r)) fresh.add(r.id);
    let digits = 0;
    for (const r of records.values()) digits = Math.max(digits, fractionDigits(r.createdRaw), fractionDigits(r.updatedRaw));
    return {
      path,
      records,
      total,
      complete,
      known,
      sortable,
      ...(idOrder ? { idOrder } : {}),
      defaultLength: (await defaultPageLength(ctx)).value,
      hardOffsetLimit: e.hardOffsetLimit,
      fresh,
      digits,
      notes,
      // A long traversal's middle pages are alike: its first ones (where a tie is split) and its
      // end are held to the model, as many as a short list has.
      pages: [plain, ...sorted].flatMap((w) => {
        const ok = w.pages.filter((p) => p.ok);
        return ok.length <= 6 ? ok : [...ok.slice(0, 4), ...ok.slice(-2)];
      }),
    };
  });
}

const TERM = /(ge|gt)\((created_at|updated_at|id),(.*?)\)(?::|$)/y;

/**
 * The request a page answered, read back from its URL, when it lies in the space the model
 * judges (sort on one attribute either way, ge/gt terms, page[limit], page[offset]); else
 * undefined.
 */
export function queryOfUrl(url: string): ListQuery | undefined {
  const at = url.indexOf('?');
  const q: ListQuery = { filters: [] };
  if (at < 0) return q;
  const named = new Set<string>();
  for (const part of url.slice(at + 1).split('&')) {
    const eq = part.indexOf('=');
    let k: string;
    let v: string;
    try {
      k = decodeURIComponent(part.slice(0, eq));
      v = decodeURIComponent(part.slice(eq + 1));
    } catch {
      // Not percent-encoding a server could read the same way: outside the space judged.
      return undefined;
    }
    // A parameter given twice: which one a server reads is not the contract's to say.
    if (named.has(k)) return undefined;
    named.add(k);
    if (k === 'sort') {
      const attr = v.replace(/^-/, '');
      if (!(ATTRS as readonly string[]).includes(attr)) return undefined;
      q.sort = { attr: attr as Attr, descending: v.startsWith('-') };
    } else if (k === 'filter') {
      TERM.lastIndex = 0;
      while (TERM.lastIndex < v.length) {
        const start = TERM.lastIndex;
        const m = TERM.exec(v);
        if (!m || m.index !== start) return undefined;
        q.filters.push({ op: m[1] as 'ge' | 'gt', attr: m[2] as Attr, value: m[3]! });
      }
    } else if (k === 'page[limit]' || k === 'page[offset]') {
      if (!/^\d+$/.test(v)) return undefined;
      if (k === 'page[limit]') q.limit = Number(v);
      else q.offset = Number(v);
    } else return undefined;
  }
  return q;
}

// --- Prediction ------------------------------------------------------------------------

/** The order a model compares `attr` in: instants as keys, ids in the target's collation. */
function comparator(m: ListModel, attr: Attr): Comparator {
  return attr === 'id' ? (m.idOrder ?? ((a, b) => (a < b ? -1 : a > b ? 1 : 0))) : (a, b) => (a < b ? -1 : a > b ? 1 : 0);
}

/** A term's value as the model compares it: an instant key, or the id itself. */
function termKey(t: Term): string | undefined {
  return t.attr === 'id' ? t.value : instantKey(t.value);
}

/** Whether `r` satisfies `t`; undefined when `r` has no value to compare. */
/** Whether a record satisfies one term (undefined: it has no value to compare), the term's value read once (a prediction asks it of every record). */
function tester(m: ListModel, t: Term): (r: Rec) => boolean | undefined {
  const v = termKey(t);
  const cmp = comparator(m, t.attr);
  const ge = t.op === 'ge';
  return (r) => {
    const x = value(r, t.attr);
    if (x === undefined || v === undefined) return undefined;
    const c = cmp(x, v);
    return ge ? c >= 0 : c > 0;
  };
}

export interface Prediction {
  /** The records the request selects that the model knows, in the requested order (ties in any order). */
  selected: Rec[];
  /** How many leading positions of `selected` are certain to be the list's (the rest may have unknown records between). */
  exact: number;
  /** meta.results.total lies in [low, high]; low = high when the model is sure. */
  low: number;
  high: number;
  /** The answer cannot be predicted record by record (a record the filter or sort cannot read). */
  opaque: boolean;
  /** The ids of `selected`, made when first asked for. */
  ids?: Set<string>;
}

/** What a prediction depends on: the sort and the filter (page[limit] and page[offset] only cut it). */
function selectionKey(q: ListQuery): string {
  return describeQuery({ ...(q.sort ? { sort: q.sort } : {}), filters: q.filters });
}

/**
 * predict, once per selection (sort and filter) while it is in use: a traversal's pages share
 * one, and a prediction costs a pass over the model's records and a sort. At most a few are
 * kept (a list of a million records holds tens of thousands in each), and all are dropped with
 * the exploration, so a run's memory stays set by its budget.
 */
export function predictor(m: ListModel, keep = 4): (q: ListQuery) => Prediction {
  const made = new Map<string, Prediction>();
  return (q) => {
    const key = selectionKey(q);
    let p = made.get(key);
    if (!p) {
      if (made.size >= keep) made.clear();
      made.set(key, (p = predict(m, q)));
    }
    return p;
  };
}

/** The records with a value of `attr`, in its ascending order, and those without one: once per model. */
const orders = new WeakMap<ListModel, Partial<Record<Attr, { sorted: Rec[]; missing: Rec[] }>>>();

export function inOrder(m: ListModel, attr: Attr): { sorted: Rec[]; missing: Rec[] } {
  let byAttr = orders.get(m);
  if (!byAttr) orders.set(m, (byAttr = {}));
  let o = byAttr[attr];
  if (!o) {
    const cmp = comparator(m, attr);
    const all = [...m.records.values()];
    const sorted = all.filter((r) => value(r, attr) !== undefined).sort((a, b) => cmp(value(a, attr)!, value(b, attr)!));
    byAttr[attr] = o = { sorted, missing: all.filter((r) => value(r, attr) === undefined) };
  }
  return o;
}

export function predict(m: ListModel, q: ListQuery): Prediction {
  let opaque = false;
  const tests = q.filters.map((t) => tester(m, t));
  const matches = (r: Rec): boolean => {
    let take = true;
    for (const test of tests) {
      const s = test(r);
      if (s === undefined) opaque = true;
      if (!s) take = false;
    }
    return take;
  };
  let selected: Rec[];
  let exact = 0;
  if (q.sort) {
    const { attr, descending } = q.sort;
    const cmp = comparator(m, attr);
    // The model's records in that order, once; a prediction only filters them.
    const { sorted, missing } = inOrder(m, attr);
    if (missing.some(matches)) opaque = true;
    selected = sorted.filter(matches);
    if (descending) selected.reverse();
    const bound = m.known[attr];
    if (bound === undefined) exact = selected.length;
    else if (bound !== null && !descending) exact = selected.findIndex((r) => cmp(value(r, attr)!, bound) >= 0);
    if (exact < 0) exact = selected.length;
  } else {
    selected = [];
    for (const r of m.records.values()) if (matches(r)) selected.push(r);
  }
  const freshMatching = selected.filter((r) => m.fresh.has(r.id)).length;
  const unknown = Math.max(0, m.total - m.records.size);
  const low = selected.length - freshMatching;
  const high = m.complete && !opaque ? selected.length : selected.length + unknown;
  // The whole list is known but not every record can be read for the filter: no count is sure.
  return opaque
    ? { selected, exact: 0, low: 0, high: Number.MAX_SAFE_INTEGER, opaque }
    : { selected, exact: freshMatching ? 0 : exact, low, high: Math.max(low, high), opaque };
}

// --- Judging ---------------------------------------------------------------------------

export interface Disagreement {
  /** The check whose rule the answer breaks. */
  checkId: string;
  /** What the answer should have been and what it was, in words. */
  message: string;
  expected: string;
  actual: string;
  /** Rests on the model's knowledge of the records (withdrawn if the list turns out to have changed). */
  byModel: boolean;
}

/**
 * The list checks whose rules judge() holds one answer to by itself, with a model that knows no
 * record (every id it passes to `examined`), list.offset.traversal, which traffic shows across
 * the pages of one query, and list.params.invalid, whose own predicate judges a request with
 * invalid paging parameters (suites/observed.ts): what `--list` marks as judged from traffic.
 * test/observed.test.ts holds it to what judge() examines.
 */
export const OBSERVED_LIST_CHECKS: ReadonlySet<string> = new Set([
  'list.meta.fields',
  'list.meta.empty-filter',
  'list.meta.past-end',
  'list.limit.max',
  'list.limit.default',
  'list.limit.exact',
  'list.page.arithmetic',
  'list.offset.hard-limit',
  'list.offset.soft-limit-5xx',
  'list.offset.traversal',
  'list.params.invalid',
  'list.filter.ge',
  'list.filter.gt',
  'list.sort.created-at',
  'list.sort.updated-at',
  'list.sort.id',
  'list.sort.descending',
]);

/** The prediction of a model that knows nothing: judge() then holds an answer only to what it shows itself. */
export const OPAQUE: Prediction = Object.freeze({ selected: [], exact: 0, low: 0, high: Number.POSITIVE_INFINITY, opaque: true }) as Prediction;

/**
 * A model that knows no record of the list at `path`, for answers the suite did not ask for
 * (suites/observed.ts): with OPAQUE, judge() holds such an answer to the paging arithmetic, the
 * limits, the filter and the order it shows, never to records it cannot know. `idOrder`: how the
 * target collates ids, read from the answer itself (orderOf), as a run reads it from its sort=id listing.
 */
export function observerModel(path: string, defaultLength: number, hardOffsetLimit: boolean, idOrder?: Comparator): ListModel {
  return {
    path,
    records: new Map(),
    total: 0,
    complete: false,
    known: { id: null, created_at: null, updated_at: null },
    sortable: { id: true, created_at: true, updated_at: true },
    ...(idOrder ? { idOrder } : {}),
    defaultLength,
    hardOffsetLimit,
    fresh: new Set(),
    digits: 3,
    notes: [],
    pages: [],
  };
}

const intOr = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** Which check a rule of the paging numbers belongs to, for this request. */
function limitRule(q: ListQuery): string {
  return q.limit === undefined ? 'list.limit.default' : q.limit > 100 ? 'list.limit.max' : 'list.limit.exact';
}

/** The check of the first filter term's operator (a filter rule broken by the answer's records). */
function filterRule(q: ListQuery): string {
  return `list.filter.${q.filters[0]!.op}`;
}

/** The check of the sort the request asked for. */
function sortRule(q: ListQuery): string {
  const s = q.sort!;
  return s.descending ? 'list.sort.descending' : `list.sort.${s.attr.replace('_', '-')}`;
}

/** A record's value of `attr` as the target wrote it (instant keys are the model's, not for people). */
function shownValue(r: Rec, attr: Attr): string {
  return (attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw) ?? '(none)';
}

function ids(rs: readonly Rec[], max = 6): string {
  const shown = rs.slice(0, max).map((r) => r.id);
  return `${shown.join(', ')}${rs.length > max ? `, … (${rs.length} in all)` : ''}`;
}

/**
 * Holds one answer to `q` to the model: every member the contract fixes. Returns what it broke,
 * each under the check of its rule; an empty list where the answer agrees, or where nothing can
 * be judged of it (a refusal of a request the target does not support, a 429). `examined`, when
 * given, gets the id of every check whose rule the answer was held to, broken or not.
 *
 * With a model that knows no record (observerModel) and the prediction OPAQUE, it judges what
 * one answer shows by itself: how judged traffic (suites/observed.ts) is held to the same rules.
 */
export function judge(
  m: ListModel,
  q: ListQuery,
  page: ListPage,
  predicted: (q: ListQuery) => Prediction = (x) => predict(m, x),
  examined?: Set<string>,
): Disagreement[] {
  const out: Disagreement[] = [];
  const held = (checkId: string): void => void examined?.add(checkId);
  const add = (checkId: string, message: string, expected: string, actual: string, byModel = false): void => {
    held(checkId);
    out.push({ checkId, message, expected, actual, byModel });
  };
  const status = page.res.status;
  const asked = describeQuery(q);
  const offset = q.offset ?? 0;
  const pastHard = m.hardOffsetLimit && offset > HARD_OFFSET_LIMIT;
  const pastSoft = !m.hardOffsetLimit && offset > HARD_OFFSET_LIMIT;
  // Past an offset limit any answer but a 5xx (and, past the hard one, any record) keeps the rule.
  if (pastHard) held('list.offset.hard-limit');
  if (pastSoft) held('list.offset.soft-limit-5xx');
  if (status >= 500) {
    const past = m.complete && offset > 0 && offset >= predicted(q).selected.length;
    const rule = pastHard
      ? 'list.offset.hard-limit'
      : pastSoft
        ? 'list.offset.soft-limit-5xx'
        : past
          ? 'list.meta.past-end'
          : q.filters.length
            ? filterRule(q)
            : q.sort
              ? sortRule(q)
              : limitRule(q);
    add(rule, `${asked}: a server error for a request of the legal query space`, 'a list page, or a refusal with a 4xx', `status ${status}`);
    return out;
  }
  // A refusal: over 100 and past an offset limit it is one of the answers allowed; elsewhere it
  // says the target does not support what was asked (a sort, a filter, a value's spelling), which
  // is never judged. A 429 was the transport's to absorb.
  if (status !== 200) return out;
  if (!page.ok) {
    add('list.meta.fields', `${asked}: a 200 answer that is not a list`, 'a JSON object whose data is an array', `${page.res.exchange.bodyExcerpt}`);
    return out;
  }
  const rs = page.records;
  const n = rs.length;
  held('list.meta.fields');
  held('list.limit.max');
  if (pastHard) {
    if (n > 0) add('list.offset.hard-limit', `${asked}: records served beyond the hard offset limit`, 'no record (a 4xx, or an empty page)', `${n} record(s)`);
    return out;
  }
  if (n > 100) add('list.limit.max', `${asked}: more than 100 records`, 'at most 100 records', `${n} records`);
  // What happens past the soft offset limit is open (INFO): only the page size is judged there.
  if (pastSoft) return out;
  if (n === 0 && q.filters.length) held('list.meta.empty-filter');
  if (n === 0 && offset > 0) held('list.meta.past-end');
  if (page.violations?.length) {
    const rule = n === 0 && q.filters.length ? 'list.meta.empty-filter' : n === 0 && offset > 0 ? 'list.meta.past-end' : 'list.meta.fields';
    add(
      rule,
      `${asked}: the pagination fields are missing or not integers`,
      'meta.page.limit/offset/current/total and meta.results.total, non-negative integers',
      page.violations
        .map((v) => `${v.path} ${v.message}`)
        .slice(0, 3)
        .join('; '),
    );
    return out;
  }
  const meta = {
    limit: intOr(page.meta?.page?.limit),
    offset: intOr(page.meta?.page?.offset),
    current: intOr(page.meta?.page?.current),
    pages: intOr(page.meta?.page?.total),
    total: intOr(page.meta?.results?.total),
  };
  const total = meta.total!;

  // The page length: the one asked for, the default without one, at most 100 over 100.
  let limit: number;
  held(q.limit === undefined ? 'list.limit.default' : q.limit > 100 ? 'list.limit.max' : 'list.limit.exact');
  held('list.page.arithmetic');
  if (q.limit === undefined) {
    limit = m.defaultLength;
    if (meta.limit !== limit)
      add('list.limit.default', `${asked}: meta.page.limit is not the default page length`, `meta.page.limit ${limit}`, `meta.page.limit ${meta.limit}`);
  } else if (q.limit > 100) {
    limit = meta.limit ?? 100;
    if (limit > 100 || limit < 1)
      add('list.limit.max', `${asked}: meta.page.limit is not clamped`, 'meta.page.limit from 1 to 100 (the limit clamped)', `meta.page.limit ${meta.limit}`);
    limit = Math.min(100, Math.max(1, limit));
  } else {
    limit = q.limit;
    if (meta.limit !== limit)
      add('list.page.arithmetic', `${asked}: meta.page.limit is not the limit asked for`, `meta.page.limit ${limit}`, `meta.page.limit ${meta.limit}`);
  }

  // results.total, against the model: exact where it knows every record the request selects.
  const p = predicted(q);
  const unknownIds = rs.filter((r) => !m.records.has(r.id));
  const changed = rs.filter((r) => {
    const k = m.records.get(r.id);
    return k !== undefined && (k.created !== r.created || k.updated !== r.updated);
  });
  // The list is not as the model read it: what rests on the model is withdrawn for this answer.
  const moved = unknownIds.length > 0 || changed.length > 0;
  if (!moved && !p.opaque && (total < p.low || total > p.high)) {
    const rule = q.filters.length ? 'list.total.filtered' : 'list.total.unfiltered';
    const expected = p.low === p.high ? `meta.results.total ${p.low}` : `meta.results.total from ${p.low} to ${p.high}`;
    add(
      rule,
      `${asked}: meta.results.total is not the number of records the request selects`,
      `${expected} (the records read by the run's traversals that ${q.filters.length ? 'the filter selects' : 'the list holds'})`,
      `meta.results.total ${total}`,
      true,
    );
  }

  // The records on the page: as many as min(limit, total - offset) says.
  const want = Math.max(0, Math.min(limit, total - offset));
  if (n !== want && n <= 100) {
    const rule =
      offset >= total && n > 0 ? 'list.meta.past-end' : q.limit === undefined ? 'list.limit.default' : q.limit > 100 ? 'list.limit.max' : 'list.limit.exact';
    add(
      rule,
      `${asked}: ${n} records where the page's own numbers say ${want}`,
      `min(limit ${limit}, results.total ${total} - offset ${offset}) = ${want} records`,
      `${n} records`,
    );
  }

  // The page numbers (with zero results, current and total may also be 0 or 1).
  if (meta.offset !== offset)
    add('list.page.arithmetic', `${asked}: meta.page.offset does not echo the offset`, `meta.page.offset ${offset}`, `meta.page.offset ${meta.offset}`);
  const allowed = pageNumbersAllowed(limit, offset, total);
  const currents = new Set(allowed.current);
  const pagesAllowed = new Set(allowed.pages);
  if (meta.current === undefined || !currents.has(meta.current))
    add(
      'list.page.arithmetic',
      `${asked}: meta.page.current is not the page the offset falls in`,
      `meta.page.current ${[...currents].join(' or ')} (offset ${offset}, limit ${limit}, results.total ${total})`,
      `meta.page.current ${meta.current}`,
    );
  if (meta.pages === undefined || !pagesAllowed.has(meta.pages))
    add(
      'list.page.arithmetic',
      `${asked}: meta.page.total is not the number of pages`,
      `meta.page.total ${[...pagesAllowed].join(' or ')} (ceil(${total} / ${limit}))`,
      `meta.page.total ${meta.pages}`,
    );

  // Each record: once on the page, matching every term, in the order asked for.
  const seen = new Set<string>();
  if (n > 1) held('list.offset.traversal');
  const twice = rs.filter((r) => (seen.has(r.id) ? true : (seen.add(r.id), false)));
  if (twice.length) add('list.offset.traversal', `${asked}: a page holds a record twice`, 'every record once', `twice: ${ids(twice)}`);
  for (const t of q.filters) {
    if (n > 0) held(`list.filter.${t.op}`);
    const test = tester(m, t);
    const wrong = rs.filter((r) => test(r) === false);
    if (wrong.length) {
      const r = wrong[0]!;
      add(
        `list.filter.${t.op}`,
        `${asked}: records that do not match ${t.op}(${t.attr},${t.value})`,
        `only records with ${t.attr} ${t.op === 'ge' ? '≥' : '>'} ${t.value}`,
        `${wrong.length} record(s), e.g. ${r.id} with ${t.attr} ${t.attr === 'id' ? r.id : t.attr === 'created_at' ? r.createdRaw : r.updatedRaw}`,
      );
    }
  }
  if (q.sort) {
    const { attr, descending } = q.sort;
    if (n > 1) held(sortRule(q));
    const cmp = comparator(m, attr);
    for (let i = 1; i < n; i++) {
      const a = value(rs[i - 1]!, attr);
      const b = value(rs[i]!, attr);
      if (a === undefined || b === undefined) continue;
      const c = cmp(a, b);
      if (descending ? c < 0 : c > 0) {
        add(
          sortRule(q),
          `${asked}: record ${i} of the page is out of order`,
          `${descending ? 'non-increasing' : 'non-decreasing'} ${attr}`,
          `${rs[i - 1]!.id} (${attr} ${shownValue(rs[i - 1]!, attr)}) then ${rs[i]!.id} (${attr} ${shownValue(rs[i]!, attr)})`,
        );
        break;
      }
    }
  }

  // Record by record, where the model knows which records stand at these positions (up to the
  // order of ties): a sorted request on a list it holds, no record newer than the horizon. Not
  // where the page already broke the filter or the order: that is the cause, named above.
  if (q.sort && !moved && !p.opaque && !out.some((d) => d.checkId.startsWith('list.filter.') || d.checkId.startsWith('list.sort.'))) {
    const attr = q.sort.attr;
    const upto = Math.min(offset + n, p.exact, p.selected.length);
    // A record of the selection with the value the prediction has at that position: the right
    // record, or one tied with it.
    const chosen = (r: Rec): boolean => (p.ids ??= new Set(p.selected.map((x) => x.id))).has(r.id);
    for (let i = offset; i < upto; i++) {
      const got = rs[i - offset]!;
      const at = p.selected[i]!;
      const k = value(at, attr);
      if (value(got, attr) === k && chosen(got)) continue;
      const tied = p.selected.filter((r) => value(r, attr) === k).length;
      const lost = p.selected.slice(offset, upto).filter((r) => !rs.some((x) => x.id === r.id));
      // Under a filter, records of the selection missing: the filter lost them; else the records
      // at an offset are not those the offset names; at offset 0, the sort put others first.
      const rule = q.filters.length && lost.length ? filterRule(q) : offset > 0 ? 'list.offset.records' : sortRule(q);
      add(
        rule,
        `${asked}: record ${i} of the ${q.filters.length ? 'filtered ' : ''}listing is not the one the model predicts`,
        `at position ${i}: ${at.id} (${attr} ${shownValue(at, attr)})${tied > 1 ? ` or another of the ${tied} records tied with it` : ''}${lost.length ? `; missing from the page: ${ids(lost)}` : ''}`,
        `${got.id} (${attr} ${shownValue(got, attr)})`,
        true,
      );
      break;
    }
  }
  // Without a sort the order is the target's own, but a result that fits on one page from offset
  // 0 is the whole selection: every record the model knows the request selects is on it.
  if (!q.sort && offset === 0 && !moved && m.complete && !p.opaque && p.low === p.selected.length && p.selected.length <= limit && n === total) {
    const lost = p.selected.filter((r) => !rs.some((x) => x.id === r.id));
    if (lost.length)
      add(
        q.filters.length ? filterRule(q) : 'list.offset.traversal',
        `${asked}: the one page of the result lacks records the request selects`,
        `all ${p.selected.length} records the request selects`,
        `missing ${ids(lost)}`,
        true,
      );
  }
  return out;
}
