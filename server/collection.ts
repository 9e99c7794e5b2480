// A list the reference server serves, with sorted indexes: a keyset page (filter and sort on
// the same attribute) costs a binary search plus the page; an offset page slices an index
// and never copies the collection. Its records do not change once it holds them (no route
// edits a list record), so their JSON is kept as bytes, per shape, for as long as it lives.
import { RecordBytes } from './bytes.js';
import { HttpError } from './http.js';

/**
 * Kept small: a million of them must fit well under 1 GB (bench/). Read-only: a collection
 * keeps its indexes and its records' JSON (server/bytes.ts) for as long as it lives, so a
 * record it holds never changes; a list that changes is a new collection.
 */
export interface ListRecord {
  readonly id: string;
  /** Shared by the collection's records. */
  readonly type: string;
  /** From a pool of names, shared between records. */
  readonly name: string;
  /** Position at generation: makes the slug unique, and is the insertion order. */
  readonly seq: number;
  /** Epoch microseconds (a double holds them exactly until the year 2255). */
  readonly created: number;
  readonly updated: number;
  /** A release's status (meta.release_status): only the records of a catalog's releases have one. */
  readonly status?: string;
}

export function slugOf(r: ListRecord): string {
  return `${r.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${r.seq}`;
}

export const SORT_FIELDS = ['id', 'created_at', 'updated_at'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
/** The orders a collection keeps: the sortable fields, and the order records were added in. */
export type OrderField = SortField | 'insertion';
export const FILTER_OPS = ['eq', 'gt', 'ge', 'lt', 'le', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
const FILTER_FIELDS = ['id', 'created_at', 'updated_at', 'name', 'slug'] as const;
type FilterField = (typeof FILTER_FIELDS)[number];

export interface FilterTerm {
  op: FilterOp;
  field: FilterField;
  /** Parsed values: a string for id/name/slug, epoch microseconds for timestamps; several for `in`. */
  values: Array<string | number>;
}

export interface Query {
  offset: number;
  limit: number;
  sort: { field: OrderField; descending: boolean };
  filters: FilterTerm[];
}

export interface Page {
  records: ListRecord[];
  total: number;
  /** The records are index[field][from], index[field][from + 1]…: a stretch of one index. */
  stretch?: { field: OrderField; from: number };
}

type Cmp = (a: string | number, b: string | number) => number;

const plain: Cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Digit-only ids as numbers (no leading zeros: shorter is smaller). */
const numeric: Cmp = (a, b) => String(a).length - String(b).length || plain(a, b);

const DIGITS = /^\d+$/;

function key(r: ListRecord, f: FilterField | SortField): string | number {
  switch (f) {
    case 'id':
      return r.id;
    case 'created_at':
      return r.created;
    case 'updated_at':
      return r.updated;
    case 'name':
      return r.name;
    case 'slug':
      return slugOf(r);
  }
}

function matches(r: ListRecord, t: FilterTerm, cmp: Cmp): boolean {
  const v = key(r, t.field);
  const c = cmp(v, t.values[0]!);
  switch (t.op) {
    case 'eq':
      return c === 0;
    case 'gt':
      return c > 0;
    case 'ge':
      return c >= 0;
    case 'lt':
      return c < 0;
    case 'le':
      return c <= 0;
    case 'in':
      return t.values.some((x) => cmp(v, x) === 0);
  }
}

/** The first index in `sorted` whose key is not less than (or, with `after`, greater than) x. */
function bound(sorted: readonly ListRecord[], f: SortField, x: string | number, after: boolean, cmp: Cmp): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = cmp(key(sorted[mid]!, f), x);
    if (c < 0 || (after && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Collections up to this size (those of a default store: 130 records, orders 10,050) keep
 * their bytes laid out in every order they are read in, 4 at most; bigger ones by id only.
 */
const LAYOUTS_UP_TO = 20_000;

const RANK_BITS = 2 ** 22;
const SECOND = 1_000_000;

/**
 * The records ordered by a timestamp, ties in their order in `records` (by id, for the
 * id index). For whole-second timestamps the order is one sort of packed numbers (seconds ×
 * 2^22 + rank in `records`) in a Float64Array, far faster than a comparator over a million
 * objects; otherwise (sub-second times, or over 4M records) a sort with `by`, which must
 * order ties the same way.
 */
export function timeIndex<R extends ListRecord>(records: readonly R[], field: 'created' | 'updated', by: (a: R, b: R) => number): R[] {
  const n = records.length;
  const packable = n < RANK_BITS && records.every((r) => r[field] % SECOND === 0 && r[field] >= 0 && (r[field] / SECOND) * RANK_BITS < Number.MAX_SAFE_INTEGER);
  if (!packable) return [...records].sort(by);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = (records[i]![field] / SECOND) * RANK_BITS + i;
  keys.sort();
  const out = new Array<R>(n);
  for (let i = 0; i < n; i++) out[i] = records[keys[i]! % RANK_BITS]!;
  return out;
}

export interface CollectionOptions {
  /** How ids compare (sort=id, filters on id): as strings, or digit-only ids as numbers. */
  idOrder?: 'string' | 'numeric';
}

export class Collection {
  readonly #indexes: Record<OrderField, ListRecord[]>;
  readonly #idCmp: Cmp;
  /** Layouts of the records' bytes, by shape and order (bytes()). */
  readonly #bytes = new Map<string, Map<OrderField, RecordBytes<ListRecord>>>();

  /** `records` in the order they were added (the insertion order). */
  constructor(records: ListRecord[], options: CollectionOptions = {}) {
    const idCmp = options.idOrder === 'numeric' ? numeric : plain;
    this.#idCmp = idCmp;
    const byIdCmp = (a: ListRecord, b: ListRecord): number => idCmp(a.id, b.id);
    let sorted = true;
    for (let i = 1; i < records.length && sorted; i++) sorted = byIdCmp(records[i - 1]!, records[i]!) < 0;
    const byId = sorted ? records : [...records].sort(byIdCmp);
    this.#indexes = {
      id: byId,
      created_at: timeIndex(byId, 'created', (a, b) => a.created - b.created || byIdCmp(a, b)),
      updated_at: timeIndex(byId, 'updated', (a, b) => a.updated - b.updated || byIdCmp(a, b)),
      insertion: records,
    };
  }

  get size(): number {
    return this.#indexes.id.length;
  }

  /**
   * The records' JSON as bytes in one shape (`shape` names the knobs `render` reads), laid
   * out in the order of `field`'s index, where a stretch of that index is one copy. The
   * first layout of a shape renders every record, the others copy its bytes. A big
   * collection keeps one layout only, by id (the way a keyset traversal goes through it):
   * the bytes of a million records weigh some 250 MB.
   */
  bytes(shape: string, render: (r: ListRecord) => string, field: OrderField): { layout: RecordBytes<ListRecord>; field: OrderField } {
    const order = this.size <= LAYOUTS_UP_TO ? field : 'id';
    let layouts = this.#bytes.get(shape);
    if (!layouts) {
      layouts = new Map();
      this.#bytes.set(shape, layouts);
    }
    let layout = layouts.get(order);
    if (!layout) {
      const base = layouts.values().next().value;
      layout = new RecordBytes(this.#indexes[order], base ?? render);
      layouts.set(order, layout);
    }
    return { layout, field: order };
  }

  #cmp(f: FilterField): Cmp {
    return f === 'id' ? this.#idCmp : plain;
  }

  find(field: 'id' | 'slug', value: string): ListRecord | undefined {
    if (field === 'slug') return this.#indexes.id.find((r) => slugOf(r) === value);
    if (this.#idCmp === numeric && !DIGITS.test(value)) return undefined;
    const r = this.#indexes.id[bound(this.#indexes.id, 'id', value, false, this.#idCmp)];
    return r?.id === value ? r : undefined;
  }

  query(q: Query): Page {
    if (this.#idCmp === numeric) {
      // Numeric ids compare as numbers; a value that is not a whole number has no place in that order.
      for (const t of q.filters) {
        if (t.field === 'id' && t.values.some((v) => !DIGITS.test(String(v))))
          throw new HttpError(
            400,
            `Could not parse the supplied filter: ids are whole numbers, got '${String(t.values.find((v) => !DIGITS.test(String(v)))).slice(0, 40)}'.`,
          );
      }
      q = { ...q, filters: q.filters.map((t) => (t.field === 'id' ? { ...t, values: t.values.map((v) => String(v).replace(/^0+(?=\d)/, '')) } : t)) };
    }
    const index = this.#indexes[q.sort.field];
    // Terms on the sorted field narrow [lo, hi) by binary search; the rest are scanned.
    let lo = 0;
    let hi = index.length;
    const scanned: FilterTerm[] = [];
    for (const t of q.filters) {
      if (t.field !== q.sort.field || t.op === 'in') {
        scanned.push(t);
        continue;
      }
      const f = t.field;
      const x = t.values[0]!;
      const cmp = this.#cmp(f);
      if (t.op === 'gt') lo = Math.max(lo, bound(index, f, x, true, cmp));
      else if (t.op === 'ge') lo = Math.max(lo, bound(index, f, x, false, cmp));
      else if (t.op === 'lt') hi = Math.min(hi, bound(index, f, x, false, cmp));
      else if (t.op === 'le') hi = Math.min(hi, bound(index, f, x, true, cmp));
      else {
        lo = Math.max(lo, bound(index, f, x, false, cmp));
        hi = Math.min(hi, bound(index, f, x, true, cmp));
      }
    }
    if (hi < lo) hi = lo;
    const at = (i: number): ListRecord => (q.sort.descending ? index[hi - 1 - i]! : index[lo + i]!);
    if (scanned.length === 0) {
      const total = hi - lo;
      const end = Math.min(total, q.offset + q.limit);
      const records = new Array<ListRecord>(end > q.offset ? end - q.offset : 0);
      for (let i = 0; i < records.length; i++) records[i] = at(q.offset + i);
      return q.sort.descending ? { records, total } : { records, total, stretch: { field: q.sort.field, from: lo + q.offset } };
    }
    const records: ListRecord[] = [];
    let total = 0;
    // Each term's order looked up once, not once per record.
    const cmps = scanned.map((t) => this.#cmp(t.field));
    const all = (r: ListRecord): boolean => {
      for (let k = 0; k < scanned.length; k++) if (!matches(r, scanned[k]!, cmps[k]!)) return false;
      return true;
    };
    for (let i = 0; i < hi - lo; i++) {
      const r = at(i);
      if (!all(r)) continue;
      if (total >= q.offset && records.length < q.limit) records.push(r);
      total++;
    }
    return { records, total };
  }
}

// --- Parsing page[limit], page[offset], sort, filter (spec/contract/README.md#list-endpoints) ---

/**
 * A timestamp as epoch microseconds, whatever its offset (`Z`, `+05:30`) and however many
 * fractional digits it has: a value shown to the microsecond compares at the microsecond
 * (Date.parse alone would drop everything past the millisecond). NaN when it is no date.
 */
export function parseInstant(raw: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?$/i.exec(raw.trim());
  if (!m) return Date.parse(raw) * 1000;
  const seconds = Date.parse(`${m[1]!.replace(' ', 'T')}${m[3] ?? 'Z'}`);
  if (Number.isNaN(seconds)) return NaN;
  const digits = m[2] ?? '';
  // Finer than a microsecond stays a fraction of one, so gt/ge still order it right.
  return seconds * 1000 + Number(digits.slice(0, 6).padEnd(6, '0')) + (digits.length > 6 ? Number(`0.${digits.slice(6)}`) : 0);
}

const TERM = new RegExp(`^(${FILTER_OPS.join('|')})\\(([a-z_]+),`);

/** A term of a filter as written: its operator, its field, and the text of its value(s). */
export interface FilterText {
  op: FilterOp;
  field: FilterField;
  text: string;
}

/**
 * `op(field,value)` terms chained with `:`; values may themselves contain `:` (timestamps), so
 * a term ends at the first `)` that is followed by `:` or the end. A filter this server cannot
 * read is refused with 400.
 */
export function filterTexts(raw: string): FilterText[] {
  return [...termsOf(raw)];
}

/** The terms of filterTexts one by one, as they are read: a refusal comes when the scan meets it. */
function* termsOf(raw: string): Generator<FilterText> {
  const bad = (why: string): never => {
    throw new HttpError(400, `Could not parse the supplied filter: ${why}.`);
  };
  let rest = raw;
  while (rest.length) {
    const m = TERM.exec(rest);
    if (!m) bad(`expected op(field,value) at '${rest.slice(0, 40)}'`);
    const [, op, field] = m!;
    if (!(FILTER_FIELDS as readonly string[]).includes(field!)) bad(`unknown field '${field}'`);
    let end = -1;
    for (let i = m![0].length; i < rest.length; i++) {
      if (rest[i] === ')' && (i + 1 === rest.length || rest[i + 1] === ':')) {
        end = i;
        break;
      }
    }
    if (end < 0) bad('a term is not closed');
    yield { op: op as FilterOp, field: field as FilterField, text: rest.slice(m![0].length, end) };
    rest = rest.slice(end + 1);
    if (rest.startsWith(':')) {
      rest = rest.slice(1);
      if (!rest.length) bad('a trailing ":"');
    }
  }
}

/** The filter written back from its terms: filterTexts(filterOf(terms)) gives the terms again. */
export const filterOf = (terms: readonly FilterText[]): string => terms.map((t) => `${t.op}(${t.field},${t.text})`).join(':');

/** The terms of a filter with their values parsed: timestamps as epoch microseconds (parseInstant). */
export function parseFilter(raw: string): FilterTerm[] {
  const terms: FilterTerm[] = [];
  for (const { op, field, text } of termsOf(raw)) {
    const parts = op === 'in' ? text.split(',') : [text];
    const values = parts.map((p) => {
      if (field !== 'created_at' && field !== 'updated_at') return p;
      const t = parseInstant(p);
      if (Number.isNaN(t)) throw new HttpError(400, `Could not parse the supplied filter: '${p}' is not a timestamp.`);
      return t;
    });
    terms.push({ op, field, values });
  }
  return terms;
}
