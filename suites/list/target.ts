// Where a list operation lives on the target: its placeholders filled from parent lists (or
// from configuration), and whether it is there at all (a 404 on the collection: absent).
//
// A nested list is not judged under one parent alone, nor under the first that has children:
// in a real store the first parent often holds nothing or a single record, the big ones come
// later, and the oldest catalog may never have been published. Its placeholders are searched
// over the records of a page of PAGE records of each parent list (spread over the page when
// there are more than the search may read), and each parent combination's list is read with
// page[limit]=1, whose meta.results.total says how many records it holds. The checks judge the
// combination that holds the most; a 404 under one parent is that parent's answer, and the
// operation is absent only when every parent tried answers 404
// (spec/contract/README.md#list-operations). At most MAX_PARENTS combinations per operation,
// read a few at a time, every read counted against its request budget and memoised like any.
import type { CheckContext } from '../../lib/runner/index.js';
import { placeholders, type Endpoint } from '../../lib/contract/index.js';
import { BudgetSpent, dig, metaInt, pagination, readPage, readParentPage, refusesFeature, type ListPage, type Params } from './pages.js';
import { cap, PAGE } from './walks.js';

export type Resolution =
  | {
      ok: true;
      /** The concrete path the checks read: for a nested list, the combination holding the most records. */
      path: string;
      /** A nested list whose parents were searched: how many combinations were read. Absent for a list without placeholders, or with fixed ones only. */
      tried?: number;
      /**
       * A nested list that held no records under any parent combination tried: how many were
       * (the path is the first that answered with a list).
       */
      emptyUnder?: number;
      /** A nested list that answered 404 under every parent combination tried: how many were. */
      absentUnder?: number;
    }
  | { ok: false; reason: string };

/** Parent combinations whose list is read per operation, at most (within an eighth of its budget, as a traversal). */
export const MAX_PARENTS = 24;
/** Parent lists read by one search, at most (a parent whose own list of children is empty yields no combination). */
const MAX_PARENT_LISTS = 12;
/** Reads of one search in flight at once: each is a round trip to a target that may be far away. */
export const IN_FLIGHT = 8;
/** Concrete paths exploredPaths gives, at most. */
const EXPLORED = 2;
/** A parent list is read a full page at a time: its candidates go past a default page. */
const PARENT_PAGE: Params = { 'page[limit]': PAGE };
/** A combination's list read for its meta.results.total alone. */
const COUNT_PAGE: Params = { 'page[limit]': 1 };
/** How to point the suite at other parents, said where the ones it found fall short. */
const ELSEWHERE = 'set parents: in conformance.config.yaml to choose others';

/**
 * A page of PARENT_PAGE records of a parent list, read for `e` (once per run, whoever asks
 * first); the list as it comes, without page[limit], where a target refuses that.
 */
async function parentPage(ctx: CheckContext, e: Endpoint, from: string): Promise<ListPage> {
  const page = await readParentPage(ctx, e, from, PARENT_PAGE);
  return refusesFeature(page) ? readParentPage(ctx, e, from) : page;
}

/** The first record of a parent list: the original resolution, and its reasons when it fails. */
async function resolveParam(ctx: CheckContext, e: Endpoint, name: string, depth = 0): Promise<{ ok: true; value: string } | { ok: false; reason: string }> {
  const source = pagination(ctx).parents[name];
  if (!source) return { ok: false, reason: `no parent id for {${name}}: set parents.${name} in conformance.config.yaml` };
  if ('value' in source) return { ok: true, value: source.value };
  if (depth > 5) return { ok: false, reason: `parents nest too deep at {${name}}` };
  let from = source.from;
  for (const inner of [...from.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]!)) {
    const r = await resolveParam(ctx, e, inner, depth + 1);
    if (!r.ok) return r;
    from = from.replace(`{${inner}}`, encodeURIComponent(r.value));
  }
  const page = await parentPage(ctx, e, from);
  if (!page.ok && source.also?.length) return { ok: true, value: source.also[0]! };
  if (page.res.status === 404)
    return { ok: false, reason: `no parent id for {${name}}: GET ${from} answered 404; set parents.${name} in conformance.config.yaml` };
  const first = page.ok ? page.first : undefined;
  const value = dig(first, source.field);
  if (typeof value !== 'string' && typeof value !== 'number') {
    return {
      ok: false,
      reason: `no parent id for {${name}}: GET ${from} gave no record with ${source.field} (status ${page.res.status}); set parents.${name} in conformance.config.yaml`,
    };
  }
  return { ok: true, value: String(value) };
}

async function firstRecordsPath(ctx: CheckContext, e: Endpoint): Promise<Resolution> {
  let path = e.path;
  for (const name of e.placeholders) {
    const r = await resolveParam(ctx, e, name);
    if (!r.ok) return r;
    path = path.replace(`{${name}}`, encodeURIComponent(r.value));
  }
  return { ok: true, path };
}

/** `e` with its records' id read at `field`: a parent list's records give that field as candidates. */
const byField = new WeakMap<Endpoint, Map<string, Endpoint>>();
function parentReader(e: Endpoint, field: string): Endpoint {
  if (e.record.id === field) return e;
  let m = byField.get(e);
  if (!m) byField.set(e, (m = new Map<string, Endpoint>()));
  let out = m.get(field);
  if (!out) m.set(field, (out = { ...e, record: { ...e.record, id: field } }));
  return out;
}

/** One parent combination, as its list answered. */
interface Candidate {
  path: string;
  status: number;
  /** It answered with a list. */
  list: boolean;
  /** The records it holds: meta.results.total, else those a page of PAGE served. */
  records: number;
}

/** Runs the work it is handed at most `n` at a time: a freed slot goes to the next in line. */
function limiter(n: number): <T>(work: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    if (active < n) active++;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/** At most `k` of `values`, spread evenly from the first to the last: the big parents may come late. */
function spread<T>(values: readonly T[], k: number): T[] {
  if (values.length <= k) return [...values];
  if (k <= 1) return values.slice(0, 1);
  return Array.from({ length: k }, (_, i) => values[Math.round((i * (values.length - 1)) / (k - 1))]!);
}

/** The placeholders of `names` whose values come from a parent list, theirs included. */
function listPlaceholders(parents: ReturnType<typeof pagination>['parents'], names: readonly string[], seen = new Set<string>(), depth = 0): Set<string> {
  for (const name of names) {
    const source = parents[name];
    if (seen.has(name) || !source || 'value' in source || depth > 5) continue;
    seen.add(name);
    listPlaceholders(parents, placeholders(source.from), seen, depth + 1);
  }
  return seen;
}

/**
 * Every parent combination of `e` the search reads, with what its list answered: the
 * combinations of the candidates of each parent list, as many of each as keep their product
 * within MAX_PARENTS (and an eighth of the budget), in the order the parent lists give them.
 * Empty when no combination could be formed (a parent list empty, absent, or not configured).
 */
async function searchParents(ctx: CheckContext, e: Endpoint): Promise<Candidate[]> {
  const parents = pagination(ctx).parents;
  const bound = Math.min(MAX_PARENTS, cap(ctx));
  const breadth = Math.max(1, Math.floor(bound ** (1 / Math.max(1, listPlaceholders(parents, e.placeholders).size)) + 1e-9));
  const gate = limiter(IN_FLIGHT);
  const lists = new Set<string>();
  let spent: BudgetSpent | undefined;
  const fill = (path: string, env: Map<string, string>): string =>
    placeholders(path).reduce((p, n) => p.replace(`{${n}}`, encodeURIComponent(env.get(n)!)), path);

  /** The values a parent list offers for its field: its page's records, spread to `breadth`. */
  async function candidates(from: string, field: string, also: readonly string[] = []): Promise<string[]> {
    const values = await listed(from, field);
    const extra = also.filter((v) => !values.includes(v));
    return [...spread(values, Math.max(1, breadth - extra.length)), ...extra];
  }

  async function listed(from: string, field: string): Promise<string[]> {
    if (!lists.has(from) && lists.size >= MAX_PARENT_LISTS) return [];
    lists.add(from);
    let page: ListPage;
    try {
      page = await gate(() => parentPage(ctx, parentReader(e, field), from));
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      spent = err;
      return [];
    }
    if (!page.ok) return [];
    const first = dig(page.first, field);
    if (typeof first !== 'string' && typeof first !== 'number') return [];
    const values = [String(first)];
    // A page is read once per run, by whichever operation asks first: its records give
    // `field` only if they were read with it as their id (the first record says so).
    if (page.records[0]?.id === values[0]) {
      for (const r of page.records.slice(1)) if (typeof r.id === 'string' && !values.includes(r.id)) values.push(r.id);
    }
    return values;
  }

  /** Every assignment of `names` extending env, the parent lists of one level read at once. */
  async function combinations(names: readonly string[], env: Map<string, string>, depth: number): Promise<Array<Map<string, string>>> {
    if (!names.length) return [env];
    const [name, ...rest] = names as [string, ...string[]];
    if (env.has(name)) return combinations(rest, env, depth);
    const source = parents[name];
    if (!source) return [];
    if ('value' in source) return combinations(rest, new Map(env).set(name, source.value), depth);
    if (depth > 5) return [];
    const inners = await combinations(placeholders(source.from), env, depth + 1);
    const each = await Promise.all(
      inners.map(async (inner) => {
        const values = await candidates(fill(source.from, inner), source.field, source.also);
        return (await Promise.all(values.map((v) => combinations(rest, new Map(inner).set(name, v), depth)))).flat();
      }),
    );
    return each.flat();
  }

  /** What the list under one combination holds: meta.results.total of a page of one record. */
  async function count(path: string): Promise<Candidate | undefined> {
    try {
      return await gate(async () => {
        const page = await readParentPage(ctx, e, path, COUNT_PAGE);
        if (!page.ok) return { path, status: page.res.status, list: false, records: 0 };
        const total = metaInt(page, 'results.total');
        if (total !== undefined && total >= 0) return { path, status: page.res.status, list: true, records: Math.max(total, page.records.length) };
        // No total to read: the records a full page serves stand for it.
        const full = await readParentPage(ctx, e, path, PARENT_PAGE);
        return { path, status: page.res.status, list: true, records: Math.max(page.records.length, full.ok ? full.records.length : 0) };
      });
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      spent = err;
      return undefined;
    }
  }

  const paths = [...new Set((await combinations(e.placeholders, new Map(), 0)).map((env) => fill(e.path, env)))].slice(0, bound);
  const read = (await Promise.all(paths.map(count))).filter((c): c is Candidate => c !== undefined);
  // Out of budget before anything was read: nothing to judge under, as for any check.
  if (!read.length && spent) throw spent;
  return read;
}

/** The search of `e`'s parents, once per run. */
function searched(ctx: CheckContext, e: Endpoint): Promise<Candidate[]> {
  return ctx.shared(`parents ${e.key}`, () => searchParents(ctx, e));
}

/** The combination holding the most records (the first of those that hold as many). */
function most(read: readonly Candidate[]): Candidate | undefined {
  return read.filter((c) => c.list).reduce<Candidate | undefined>((best, c) => (best === undefined || c.records > best.records ? c : best), undefined);
}

export function resolvePath(ctx: CheckContext, e: Endpoint): Promise<Resolution> {
  return ctx.shared(`resolve ${e.key}`, async (): Promise<Resolution> => {
    if (!e.placeholders.length) return { ok: true, path: e.path };
    const read = await searched(ctx, e);
    // No combination could be formed: the first records say why (from pages already read).
    if (!read.length) return firstRecordsPath(ctx, e);
    const best = most(read);
    if (best?.records === 0) return { ok: true, path: best.path, emptyUnder: read.length };
    // Parents given as fixed values in the configuration were chosen by the user: nothing was
    // searched, and the skips say nothing of other parents.
    const tried = listPlaceholders(pagination(ctx).parents, e.placeholders).size ? read.length : undefined;
    const counted = tried === undefined ? {} : { tried };
    if (best) return { ok: true, path: best.path, ...counted };
    // No list under any parent: absent when every one answered 404, else the first other answer is the operation's.
    const other = read.find((c) => c.status !== 404);
    return other ? { ok: true, path: other.path, ...counted } : { ok: true, path: read[0]!.path, ...(tried === undefined ? {} : { absentUnder: tried }) };
  });
}

/** `(under each of the N parents tried)`, or the one. */
function under(n: number): string {
  return n === 1 ? 'under the one parent tried' : `under each of the ${n} parents tried`;
}

/** The 404 on the resolved path: for a nested list, under how many parents it was seen. */
export function answered404(r: Extract<Resolution, { ok: true }>): string {
  return `GET ${r.path} answered 404${r.absentUnder !== undefined ? ` (${under(r.absentUnder)})` : ''}`;
}

/**
 * Up to EXPLORED (2) concrete paths of `e` (parent combinations) whose list holds records: the
 * target's own path (the most records) first, then the next largest, for exploration under
 * more than one parent. A list without placeholders has its one path; a list empty under every
 * parent tried, the one resolvePath gives; none when the operation cannot be resolved.
 */
export function exploredPaths(ctx: CheckContext, e: Endpoint): Promise<string[]> {
  return ctx.shared(`explored ${e.key}`, async () => {
    const r = await resolvePath(ctx, e);
    if (!r.ok) return [];
    if (!e.placeholders.length || r.emptyUnder !== undefined) return [r.path];
    const others = (await searched(ctx, e)).filter((c) => c.list && c.records > 0 && c.path !== r.path);
    // A stable sort: of two as large, the one the parent lists give first.
    others.sort((a, b) => b.records - a.records);
    return [r.path, ...others.map((c) => c.path)].slice(0, EXPLORED);
  });
}

export interface Target {
  path: string;
  /** The collection read with no parameters: the probe, and the default page. */
  probe: ListPage;
}

/** The operation's concrete path and its probe page; skips when it cannot be had. */
export async function target(ctx: CheckContext, e: Endpoint): Promise<Target> {
  const r = await resolvePath(ctx, e);
  if (!r.ok) ctx.skip(r.reason);
  const probe = await readPage(ctx, e, r.path);
  if (probe.res.status === 404) ctx.skipAbsent(`absent: ${answered404(r)}`);
  if (!probe.ok) ctx.skip(`not testable: GET ${r.path} answered ${probe.res.status} without a list (see list.endpoint.present)`);
  if (r.emptyUnder !== undefined) ctx.emptyWhere = `(${under(r.emptyUnder)}; ${ELSEWHERE})`;
  else if (r.tried !== undefined)
    ctx.fewWhere = `(${r.tried === 1 ? 'under the one parent tried' : `the most of the ${r.tried} parents tried`}, GET ${r.path}; ${ELSEWHERE})`;
  return { path: r.path, probe };
}

/** The expected default page length: configured, else the store's page_length, else 25. */
export function defaultPageLength(ctx: CheckContext): Promise<{ value: number; source: string }> {
  const configured = pagination(ctx).defaultPageLength;
  if (configured !== undefined) return Promise.resolve({ value: configured, source: 'configured' });
  return ctx.shared('settings page_length', async (s) => {
    const res = await s.request({ method: 'GET', path: '/v2/settings' });
    const v = res.status === 200 && res.isJson ? dig(res.json(), 'data.page_length') : undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return { value: v, source: 'GET /v2/settings page_length' };
    return { value: 25, source: 'the contract (25)' };
  });
}
