// A model of one list, built from the traversals the run reads anyway (the offset walks in the
// default order and sorted by created_at, updated_at and id), that predicts the whole answer to
// any request of the legal query space (spec/contract/README.md, "List endpoints" and
// "Pagination information in list responses"). It predicts; it does not judge: each list check's
// rule holds an answer to the prediction (answer.ts, judge.ts).
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
import { instantKey, metaInt, refusesFeature, type ListPage, type Rec } from './pages.js';
import { against, idOrdersFollowed, idShape, plainOrder, value, type Attr, type Comparator } from './collation.js';
import { offsetWalk, type Walk } from './walks.js';
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
  /**
   * Every collation of ours that listing follows (idOrder the first): an id no record has is
   * judged only where they all agree (spec/contract/README.md#list-endpoints names no collation).
   */
  idOrders?: Comparator[];
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
    const idOrders = idWalk ? (usable(idWalk) ? idOrdersFollowed(idWalk.records) : []) : (like!.idOrders ?? []);
    const idOrder = idOrders.at(0);
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
      ...(idOrder ? { idOrder, idOrders } : {}),
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
      // `+` is a space, as every mainstream parser reads a query (spec/contract/README.md#query-readings).
      k = decodeURIComponent(part.slice(0, eq).replace(/\+/g, ' '));
      v = decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
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
export function comparator(m: ListModel, attr: Attr): Comparator {
  return attr === 'id' ? (m.idOrder ?? ((a, b) => (a < b ? -1 : a > b ? 1 : 0))) : (a, b) => (a < b ? -1 : a > b ? 1 : 0);
}

/** A term's value as the model compares it: an instant key, or the id itself. */
function termKey(t: Term): string | undefined {
  return t.attr === 'id' ? t.value : instantKey(t.value);
}

/**
 * Whether a record satisfies one term (undefined: it has no value to compare, or the id
 * collations the target may use disagree on it), the term's value read once (a prediction asks
 * it of every record).
 */
export function tester(m: ListModel, t: Term): (r: Rec) => boolean | undefined {
  const v = termKey(t);
  const cmp = comparator(m, t.attr);
  const ge = t.op === 'ge';
  const holds = (c: number): boolean => (ge ? c >= 0 : c > 0);
  if (v === undefined) return () => undefined;
  const others =
    t.attr === 'id' && m.idOrders && m.idOrders.length > 1 && !(typeof v === 'string' && sharedShape(m) !== undefined && idShape(v) === sharedShape(m))
      ? m.idOrders.filter((o) => o !== cmp).map((o) => against(o, v))
      : [];
  // Instants' keys, and ids the target sorts in code units, compare as they are.
  if (others.length === 0 && (t.attr !== 'id' || m.idOrder === undefined || m.idOrder === plainOrder)) {
    const attr = t.attr;
    return ge
      ? (r) => {
          const x = value(r, attr);
          return x === undefined ? undefined : x >= v;
        }
      : (r) => {
          const x = value(r, attr);
          return x === undefined ? undefined : x > v;
        };
  }
  const here = against(cmp, v);
  return (r) => {
    const x = value(r, t.attr);
    if (x === undefined) return undefined;
    const s = holds(here(x));
    for (const o of others) if (holds(o(x)) !== s) return undefined;
    return s;
  };
}

/** The idShape every record of a model has, where they all have one (once per model). */
const shapes = new WeakMap<ListModel, string | undefined>();

function sharedShape(m: ListModel): string | undefined {
  if (shapes.has(m)) return shapes.get(m);
  let shape: string | undefined;
  for (const r of m.records.values()) {
    const s = idShape(r.id);
    if (s === undefined || (shape !== undefined && s !== shape)) {
      shape = undefined;
      break;
    }
    shape = s;
  }
  shapes.set(m, shape);
  return shape;
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

/** Records the predictions a predictor keeps may hold in all (4 MB of references), past its first few. */
const HELD_RECORDS = 500_000;

/**
 * predict, once per selection (sort and filter) while it is in use: a traversal's pages share
 * one, an exploration predicts each drawn request as it draws it and again as it judges its
 * answer, and a prediction costs a pass over the model's records and a sort. As many are kept as
 * hold HELD_RECORDS records in all, at least `keep` (a list of a million records holds tens of
 * thousands in each), and all are dropped with the exploration, so a run's memory stays set by
 * its budget.
 */
export function predictor(m: ListModel, keep = 4): (q: ListQuery) => Prediction {
  const made = new Map<string, Prediction>();
  let held = 0;
  return (q) => {
    const key = selectionKey(q);
    let p = made.get(key);
    if (!p) {
      p = predict(m, q);
      if (made.size >= keep && held + p.selected.length > HELD_RECORDS) {
        made.clear();
        held = 0;
      }
      made.set(key, p);
      held += p.selected.length;
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

// --- A model that knows nothing ---------------------------------------------------------

/** The prediction of a model that knows nothing: the rules then hold an answer only to what it shows itself. */
export const OPAQUE: Prediction = Object.freeze({ selected: [], exact: 0, low: 0, high: Number.POSITIVE_INFINITY, opaque: true }) as Prediction;

/**
 * A model that knows no record of the list at `path`, for answers the suite did not ask for
 * (suites/observed.ts) and for the fixed probes' answers: with OPAQUE, the rules hold such an answer to the paging arithmetic, the
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
