// A list request's query read as the stores of mainstream frameworks read it (the variants
// query-php, query-rack and query-qs): the parser's own structure of the query, then the paging
// numbers as such a store casts them. Each reading is one spec/contract/query-readings.yaml lists
// (spec/contract/README.md#query-readings); the plain server then reads what is left.
import { HttpError } from './http.js';

/** A parsed query value: a string, a group by name, or a list. */
type Value = string | Value[] | { [k: string]: Value | true };
type Group = { [k: string]: Value | true };

const isGroup = (v: Value | true | undefined): v is Group => typeof v === 'object' && !Array.isArray(v);

/** `page[limit][]` as `page` and its path `['limit', '']`; a name without brackets has none. */
function splitName(name: string): { base: string; path: string[] } {
  const at = name.indexOf('[');
  if (at <= 0 || !name.endsWith(']')) return { base: name, path: [] };
  return { base: name.slice(0, at), path: name.slice(at + 1, -1).split('][') };
}

/** What the store applies: the paging numbers (absent: not given), clamped as the plain server's lenient reading does, and a sort and filter given as text. */
function storeQuery(limit: bigint | undefined, offset: bigint | undefined, sort: Value | true | undefined, filter: Value | true | undefined): URLSearchParams {
  const out = new URLSearchParams();
  if (limit !== undefined) out.set('page[limit]', String(limit < 1n ? 1n : limit > 100n ? 100n : limit));
  if (offset !== undefined) out.set('page[offset]', String(offset < 0n ? 0n : offset));
  // A sort or filter that is not a string (an array, a group) is one the store does not read.
  if (typeof sort === 'string') out.set('sort', sort);
  if (typeof filter === 'string') out.set('filter', filter);
  return out;
}

const INT64_MAX = 2n ** 63n - 1n;
const saturate = (n: bigint): bigint => (n > INT64_MAX ? INT64_MAX : n < -INT64_MAX - 1n ? -INT64_MAX - 1n : n);

/** PHP's (int) of a string: the number it starts with (after whitespace; a fraction or exponent cut), 0 when none, held to 64 bits. */
function phpInt(s: string): bigint {
  const m = /^[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)/.exec(s);
  if (!m) return 0n;
  if (/^[+-]?\d+$/.test(m[1]!)) return saturate(BigInt(m[1]!));
  const x = Math.trunc(Number(m[1]));
  return Number.isFinite(x) ? saturate(BigInt(x)) : x > 0 ? INT64_MAX : -INT64_MAX - 1n;
}

/**
 * PHP ($_GET, parse_str): each name sets its place in order, the last one wins, and a scalar
 * given after a group replaces it (and a group after a scalar the scalar); the store casts
 * $_GET['page']['limit'] with (int) (an array is 1), and ignores what is not there.
 */
export function phpQuery(query: URLSearchParams): URLSearchParams {
  const root: Group = {};
  for (const [name, value] of query) {
    const { base, path } = splitName(name);
    let at: Group = root;
    let key = base;
    for (const part of path) {
      if (!isGroup(at[key]) && !Array.isArray(at[key])) at[key] = {};
      const next = at[key] as Group;
      key = part === '' ? String(Object.keys(next).length) : part;
      at = next;
    }
    at[key] = value;
  }
  const page = root.page;
  const read = (k: string): bigint | undefined => {
    const v = isGroup(page) || Array.isArray(page) ? (page as Group)[k] : undefined;
    if (v === undefined || v === true) return undefined;
    if (typeof v === 'string') return phpInt(v);
    return Object.keys(v).length ? 1n : 0n;
  };
  return storeQuery(read('limit'), read('offset'), root.sort, root.filter);
}

/** Ruby's String#to_i: the whole number it starts with (after whitespace, underscores between digits), 0 when none. */
function rubyToI(s: string): bigint {
  const m = /^[ \t\n\r\v\f]*([+-]?\d+(?:_\d+)*)/.exec(s);
  return m ? BigInt(m[1]!.replace(/_/g, '')) : 0n;
}

/**
 * Rack (Rails): a name used as a scalar and as a group, or as a group and as a list, is refused
 * with 400; otherwise the last one wins; the store casts params[:page][:limit] with to_i, and
 * ignores a list it cannot cast.
 */
export function rackQuery(query: URLSearchParams): URLSearchParams {
  const root: Group = {};
  const refuse = (name: string, expected: string, got: Value | true): never => {
    throw new HttpError(
      400,
      `Invalid query parameters: expected ${expected} (got ${Array.isArray(got) ? 'Array' : typeof got === 'object' ? 'Hash' : 'String'}) for param \`${name}'.`,
    );
  };
  for (const [name, value] of query) {
    const { base, path } = splitName(name);
    let at: Group = root;
    let key = base;
    for (const [i, part] of path.entries()) {
      const last = i === path.length - 1;
      if (part === '' && last) {
        const list = (at[key] ??= []);
        if (!Array.isArray(list)) refuse(key, 'Array', list);
        (list as Value[]).push(value);
        key = '';
        break;
      }
      const group = (at[key] ??= {});
      if (!isGroup(group)) refuse(key, 'Hash', group);
      at = group as Group;
      key = part;
    }
    if (key === '') continue;
    // A scalar given where a group or a list is: a conflict Rack's parser does not settle either.
    if (at[key] !== undefined && typeof at[key] !== 'string') refuse(key, 'String', at[key]);
    at[key] = value;
  }
  const page = root.page;
  const read = (k: string): bigint | undefined => {
    const v = isGroup(page) ? page[k] : undefined;
    return typeof v === 'string' ? rubyToI(v) : undefined;
  };
  return storeQuery(read('limit'), read('offset'), root.sort, root.filter);
}

/** qs's merge of a parsed name into what the names before it made (a scalar after a group becomes its key; a group after a scalar makes a list of both). */
function qsMerge(target: Value | true | undefined, source: Value): Value {
  if (target === undefined || target === true) return source;
  if (typeof source === 'string') {
    if (source === '') return target;
    if (Array.isArray(target)) return [...target, source];
    if (isGroup(target)) return { ...target, [source]: true };
    return [target, source];
  }
  if (typeof target === 'string') return [target, ...(Array.isArray(source) ? source : [source])];
  if (Array.isArray(target) && Array.isArray(source)) return [...target, ...source];
  const into: Group = Array.isArray(target) ? Object.fromEntries(target.entries()) : { ...target };
  for (const [k, v] of Object.entries(source)) into[k] = k in into && v !== true ? qsMerge(into[k], v) : v;
  return into;
}

/**
 * Express's qs: a name given twice makes a list of both, `name[]` a list, a scalar after a group
 * a key of the group, a group after a scalar a list of both (page.offset then reads nothing);
 * the store reads page.limit with Math.trunc(Number(...)) (a list of one is its value, of two NaN)
 * and ignores what is not a finite number.
 */
export function qsQuery(query: URLSearchParams): URLSearchParams {
  const byName = new Map<string, string[]>();
  for (const [name, value] of query) byName.set(name, [...(byName.get(name) ?? []), value]);
  const root: Group = {};
  for (const [name, values] of byName) {
    const { base, path } = splitName(name);
    let leaf: Value = values.length === 1 ? values[0]! : values;
    for (const part of [...path].reverse()) leaf = part === '' ? ([] as Value[]).concat(leaf) : { [part]: leaf };
    root[base] = qsMerge(root[base], leaf);
  }
  const page = root.page;
  const read = (k: string): bigint | undefined => {
    const v = isGroup(page) ? page[k] : undefined;
    if (v === undefined || v === true || isGroup(v)) return undefined;
    const n = Math.trunc(Number(Array.isArray(v) ? v.join(',') : v));
    if (Number.isNaN(n) || n === -Infinity) return Number.isNaN(n) ? undefined : -1n;
    return n === Infinity ? (k === 'limit' ? 100n : undefined) : BigInt(n);
  };
  return storeQuery(read('limit'), read('offset'), root.sort, root.filter);
}

/**
 * Go (net/url, strconv.Atoi): names are flat strings, so page, page[] and page[limit][] are
 * names of their own the store never asks for; Get gives the first of a repeated name; a value
 * Atoi refuses (not an integer, out of 64 bits) is ignored.
 */
export function goQuery(query: URLSearchParams): URLSearchParams {
  const atoi = (name: string): bigint | undefined => {
    const v = query.get(name);
    if (v === null || !/^[+-]?\d+$/.test(v)) return undefined;
    const n = BigInt(v);
    return saturate(n) === n ? n : undefined;
  };
  return storeQuery(atoi('page[limit]'), atoi('page[offset]'), query.get('sort') ?? undefined, query.get('filter') ?? undefined);
}
