// A list the reference server serves, with sorted indexes: a keyset page (filter and sort on
// the same attribute) costs a binary search plus the page; an offset page slices an index
// and never copies the collection.
import { HttpError } from './http.js';

/** Kept small: a million of them must fit well under 1 GB (bench/). */
export interface ListRecord {
  id: string;
  /** Shared by the collection's records. */
  type: string;
  /** From a pool of names, shared between records. */
  name: string;
  /** Position at generation: makes the slug unique. */
  seq: number;
  /** Epoch milliseconds. */
  created: number;
  updated: number;
}

export function slugOf(r: ListRecord): string {
  return `${r.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${r.seq}`;
}

export const SORT_FIELDS = ['id', 'created_at', 'updated_at'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export const FILTER_OPS = ['eq', 'gt', 'ge', 'lt', 'le', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
const FILTER_FIELDS = ['id', 'created_at', 'updated_at', 'name', 'slug'] as const;
type FilterField = (typeof FILTER_FIELDS)[number];

export interface FilterTerm {
  op: FilterOp;
  field: FilterField;
  /** Parsed values: a string for id/name/slug, epoch ms for timestamps; several for `in`. */
  values: Array<string | number>;
}

export interface Query {
  offset: number;
  limit: number;
  sort: { field: SortField; descending: boolean };
  filters: FilterTerm[];
}

export interface Page {
  records: ListRecord[];
  total: number;
}

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

function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Order by the field, ties broken by id: a stable order for every sort. */
const BY: Record<SortField, (a: ListRecord, b: ListRecord) => number> = {
  id: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  created_at: (a, b) => a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  updated_at: (a, b) => a.updated - b.updated || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
};

function matches(r: ListRecord, t: FilterTerm): boolean {
  const v = key(r, t.field);
  const x = t.values[0]!;
  switch (t.op) {
    case 'eq':
      return v === x;
    case 'gt':
      return v > x;
    case 'ge':
      return v >= x;
    case 'lt':
      return v < x;
    case 'le':
      return v <= x;
    case 'in':
      return t.values.includes(v);
  }
}

/** The first index in `sorted` whose key is not less than (or, with `after`, greater than) x. */
function bound(sorted: readonly ListRecord[], f: SortField, x: string | number, after: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compare(key(sorted[mid]!, f), x);
    if (c < 0 || (after && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isSorted(records: readonly ListRecord[]): boolean {
  for (let i = 1; i < records.length; i++) if (records[i - 1]!.id >= records[i]!.id) return false;
  return true;
}

const RANK_BITS = 2 ** 22;

/**
 * The records ordered by a timestamp, ties by id. For whole-second timestamps the order is
 * one sort of packed numbers (seconds × 2^22 + rank by id) in a Float64Array, far faster
 * than a comparator over a million objects; otherwise (milliseconds, or over 4M records) a
 * comparator sort.
 */
function timeIndex(byId: readonly ListRecord[], field: 'created' | 'updated'): ListRecord[] {
  const n = byId.length;
  const packable = n < RANK_BITS && byId.every((r) => r[field] % 1000 === 0 && r[field] >= 0 && (r[field] / 1000) * RANK_BITS < Number.MAX_SAFE_INTEGER);
  if (!packable) return [...byId].sort(field === 'created' ? BY.created_at : BY.updated_at);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = (byId[i]![field] / 1000) * RANK_BITS + i;
  keys.sort();
  const out = new Array<ListRecord>(n);
  for (let i = 0; i < n; i++) out[i] = byId[keys[i]! % RANK_BITS]!;
  return out;
}

export class Collection {
  readonly #indexes: Record<SortField, ListRecord[]>;

  constructor(records: ListRecord[]) {
    const byId = isSorted(records) ? records : [...records].sort(BY.id);
    this.#indexes = { id: byId, created_at: timeIndex(byId, 'created'), updated_at: timeIndex(byId, 'updated') };
  }

  get size(): number {
    return this.#indexes.id.length;
  }

  find(field: 'id' | 'slug', value: string): ListRecord | undefined {
    if (field === 'slug') return this.#indexes.id.find((r) => slugOf(r) === value);
    const r = this.#indexes.id[bound(this.#indexes.id, 'id', value, false)];
    return r?.id === value ? r : undefined;
  }

  query(q: Query): Page {
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
      const x = t.values[0]!;
      if (t.op === 'gt') lo = Math.max(lo, bound(index, q.sort.field, x, true));
      else if (t.op === 'ge') lo = Math.max(lo, bound(index, q.sort.field, x, false));
      else if (t.op === 'lt') hi = Math.min(hi, bound(index, q.sort.field, x, false));
      else if (t.op === 'le') hi = Math.min(hi, bound(index, q.sort.field, x, true));
      else {
        lo = Math.max(lo, bound(index, q.sort.field, x, false));
        hi = Math.min(hi, bound(index, q.sort.field, x, true));
      }
    }
    if (hi < lo) hi = lo;
    const at = (i: number): ListRecord => (q.sort.descending ? index[hi - 1 - i]! : index[lo + i]!);
    if (scanned.length === 0) {
      const total = hi - lo;
      const records: ListRecord[] = [];
      for (let i = q.offset; i < Math.min(total, q.offset + q.limit); i++) records.push(at(i));
      return { records, total };
    }
    const records: ListRecord[] = [];
    let total = 0;
    for (let i = 0; i < hi - lo; i++) {
      const r = at(i);
      if (!scanned.every((t) => matches(r, t))) continue;
      if (total >= q.offset && records.length < q.limit) records.push(r);
      total++;
    }
    return { records, total };
  }
}

// --- Parsing the query string (READING.md: page[limit], page[offset], sort, filter) ---------

const TERM = new RegExp(`^(${FILTER_OPS.join('|')})\\(([a-z_]+),`);

/**
 * `op(field,value)` terms chained with `:`; values may themselves contain `:` (timestamps), so
 * a term ends at the first `)` that is followed by `:` or the end.
 */
export function parseFilter(raw: string): FilterTerm[] {
  const bad = (why: string): never => {
    throw new HttpError(400, `Could not parse the supplied filter: ${why}.`);
  };
  const terms: FilterTerm[] = [];
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
    const text = rest.slice(m![0].length, end);
    const parts = op === 'in' ? text.split(',') : [text];
    const values = parts.map((p) => {
      if (field === 'created_at' || field === 'updated_at') {
        const t = Date.parse(p);
        if (Number.isNaN(t)) bad(`'${p}' is not a timestamp`);
        return t;
      }
      return p;
    });
    terms.push({ op: op as FilterOp, field: field as FilterField, values });
    rest = rest.slice(end + 1);
    if (rest.startsWith(':')) {
      rest = rest.slice(1);
      if (!rest.length) bad('a trailing ":"');
    }
  }
  return terms;
}
