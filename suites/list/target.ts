// Where a list operation lives on the target: its placeholders filled from parent lists (or
// from configuration), and whether it is there at all (a 404 on the collection: absent).
//
// A nested list is not judged under one parent alone: the first record of a parent list may
// have no children while others do (and a bug may live only there). Its placeholders are
// searched, depth first, over the records of the first page of each parent list, in order,
// for a parent combination whose list holds records; at most MAX_PARENTS combinations per
// operation, every read counted against its request budget and memoised like any.
import type { CheckContext } from '../../lib/check.js';
import { placeholders, type Endpoint } from '../../lib/catalog.js';
import { BudgetSpent, dig, metaInt, pagination, readPage, readParentPage, type ListPage } from './pages.js';

export type Resolution =
  | {
      ok: true;
      path: string;
      /**
       * A nested list that held no records under any parent combination tried: how many were
       * (the path is the first of them). Absent for a list with records, or not nested.
       */
      emptyUnder?: number;
    }
  | { ok: false; reason: string };

/** Parent combinations tried per operation, at most, before a nested list is called empty. */
export const MAX_PARENTS = 6;
/** Parent lists read by one search, at most (a parent whose own list of children is empty yields no combination). */
const MAX_PARENT_LISTS = 12;
/** Concrete paths exploredPaths gives, at most. */
const EXPLORED = 2;

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
  const page = await readParentPage(ctx, e, from);
  if (page.res.status === 404) return { ok: false, reason: `no parent id for {${name}}: GET ${from} answered 404; set parents.${name} in conformance.config.yaml` };
  const first = page.ok ? page.first : undefined;
  const value = dig(first, source.field);
  if (typeof value !== 'string' && typeof value !== 'number') {
    return { ok: false, reason: `no parent id for {${name}}: GET ${from} gave no record with ${source.field} (status ${page.res.status}); set parents.${name} in conformance.config.yaml` };
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
  if (!m) byField.set(e, (m = new Map()));
  let out = m.get(field);
  if (!out) m.set(field, (out = { ...e, record: { ...e.record, id: field } }));
  return out;
}

/** Whether a read of a list shows it holding records (results.total > 0, or records on the page). */
function holdsRecords(page: ListPage): boolean {
  return page.ok && ((metaInt(page, 'results.total') ?? 0) > 0 || page.records.length > 0);
}

interface Search {
  /** Concrete paths whose list holds records, in the order found. */
  found: string[];
  /** The first combination tried, if any could be formed. */
  first?: string;
  /** How many combinations were tried (their lists read). */
  tried: number;
  /** The first combination's answer was no list (absent, broken): the search stopped there. */
  noList?: boolean;
}

class Halt extends Error {}

/**
 * Parent combinations for `e`'s placeholders, depth first over the records of each parent
 * list's first page in order, until `want` of them hold records or MAX_PARENTS were tried.
 * Iterative broadening keeps the search from spending itself under the first parent: pass k
 * takes the first k records of each parent list (pass 1 is the first records alone, the
 * original resolution), so a combination of a second catalog and a second hierarchy comes
 * before the sixth hierarchy of the first catalog.
 */
async function searchParents(ctx: CheckContext, e: Endpoint, want: number): Promise<Search> {
  const parents = pagination(ctx).parents;
  const out: Search = { found: [], tried: 0 };
  const tried = new Set<string>();
  const lists = new Set<string>();
  let truncated = false;
  const fill = (path: string, env: Map<string, string>): string => placeholders(path).reduce((p, n) => p.replace(`{${n}}`, encodeURIComponent(env.get(n)!)), path);

  /** The values a parent list offers for its field: its first page's records, in order. */
  async function candidates(from: string, field: string, breadth: number): Promise<string[]> {
    if (!lists.has(from) && lists.size >= MAX_PARENT_LISTS) throw new Halt();
    lists.add(from);
    const page = await readParentPage(ctx, parentReader(e, field), from);
    if (!page.ok) return [];
    const first = dig(page.first, field);
    if (typeof first !== 'string' && typeof first !== 'number') return [];
    const values = [String(first)];
    // A page is read once per run, by whichever operation asks first: its records give
    // `field` only if they were read with it as their id (the first record says so).
    if (page.records[0]?.id === values[0]) {
      for (const r of page.records.slice(1)) if (typeof r.id === 'string' && !values.includes(r.id)) values.push(r.id);
    }
    if (values.length > breadth) truncated = true;
    return values.slice(0, breadth);
  }

  /** Calls visit on each assignment of `names` extending env; true: stop. */
  async function each(names: readonly string[], env: Map<string, string>, breadth: number, depth: number, visit: (env: Map<string, string>) => Promise<boolean>): Promise<boolean> {
    if (!names.length) return visit(env);
    const [name, ...rest] = names as [string, ...string[]];
    if (env.has(name)) return each(rest, env, breadth, depth, visit);
    const source = parents[name];
    if (!source) return false;
    if ('value' in source) return each(rest, new Map(env).set(name, source.value), breadth, depth, visit);
    if (depth > 5) return false;
    return each(placeholders(source.from), env, breadth, depth + 1, async (inner) => {
      for (const v of await candidates(fill(source.from, inner), source.field, breadth)) {
        if (await each(rest, new Map(inner).set(name, v), breadth, depth, visit)) return true;
      }
      return false;
    });
  }

  const visit = async (env: Map<string, string>): Promise<boolean> => {
    const path = fill(e.path, env);
    if (tried.has(path)) return false;
    if (out.tried >= MAX_PARENTS) return true;
    tried.add(path);
    const page = await readParentPage(ctx, e, path);
    out.tried++;
    if (out.first === undefined) {
      out.first = path;
      // Not a list at all under the first parent (absent, broken): the operation's answer,
      // which target() reports; no other parent changes it.
      if (!page.ok) return (out.noList = true);
    }
    if (holdsRecords(page)) out.found.push(path);
    return out.found.length >= want || out.tried >= MAX_PARENTS;
  };

  try {
    for (let breadth = 1; ; breadth++) {
      truncated = false;
      if ((await each(e.placeholders, new Map(), breadth, 0, visit)) || !truncated) break;
    }
  } catch (err) {
    // Out of lists to read, or of budget once something was tried: what was found stands.
    if (!(err instanceof Halt) && !(err instanceof BudgetSpent && out.first !== undefined)) throw err;
  }
  return out;
}

export function resolvePath(ctx: CheckContext, e: Endpoint): Promise<Resolution> {
  return ctx.shared(`resolve ${e.key}`, async () => {
    if (!e.placeholders.length) return { ok: true, path: e.path } as Resolution;
    const s = await searchParents(ctx, e, 1);
    if (s.found.length) return { ok: true, path: s.found[0]! } as Resolution;
    // No combination could be formed: the first records say why (from pages already read).
    if (s.first === undefined) return firstRecordsPath(ctx, e);
    return (s.noList ? { ok: true, path: s.first } : { ok: true, path: s.first, emptyUnder: s.tried }) as Resolution;
  });
}

/**
 * Up to EXPLORED (2) concrete paths of `e` (parent combinations) whose list holds records, the target's
 * own path first: for exploration under more than one parent. A list without placeholders has
 * its one path; a list empty under every parent tried, the one resolvePath gives; none when
 * the operation cannot be resolved.
 */
export function exploredPaths(ctx: CheckContext, e: Endpoint): Promise<string[]> {
  return ctx.shared(`explored ${e.key}`, async () => {
    const r = await resolvePath(ctx, e);
    if (!r.ok) return [];
    if (!e.placeholders.length || r.emptyUnder !== undefined) return [r.path];
    const s = await searchParents(ctx, e, EXPLORED);
    return [r.path, ...s.found.filter((p) => p !== r.path)].slice(0, EXPLORED);
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
  if (probe.res.status === 404) ctx.skipAbsent(`absent: GET ${r.path} answered 404`);
  if (!probe.ok) ctx.skip(`not testable: GET ${r.path} answered ${probe.res.status} without a list (see list.endpoint.present)`);
  if (r.emptyUnder !== undefined) ctx.emptyWhere = r.emptyUnder === 1 ? '(under the one parent tried)' : `(under each of the ${r.emptyUnder} parents tried)`;
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
