// Where a list operation lives on the target: its placeholders filled from parent lists (or
// from configuration), and whether it is there at all (a 404 on the collection: absent).
//
// A nested list is not judged under one parent alone, nor under the first that has children:
// in a real store the first parent often holds nothing or a single record, the big ones come
// later, few catalogs have a published release and the oldest may never have had one, and a
// release holds hierarchies, nodes and products of its own. So a placeholder is filled from the
// list that holds it under the path's own parents, as the contract's lists chain (a by-release
// path's hierarchy from that release's hierarchies, a release from its catalog's releases,
// published first, or latestPublished where none is listed), and every record of a parent list
// of up to PAGE records is a candidate (of a longer list, SPREAD spread over its first page). Each combination's list is read with page[limit]=1, whose
// meta.results.total says how many records it holds. The checks judge the combination that
// holds the most; a 404 under one parent is that parent's answer, and the operation is absent
// only when every combination the store's own lists reveal answers 404
// (spec/contract/README.md#list-operations). A wave's reads go at once (the HTTP client bounds what
// is in flight), each counted against the operation's request budget and memoised like any.
import type { CheckContext } from '../../lib/runner/index.js';
import { listPathsOf, loadCatalogSpec, parentSourceIn, placeholders, type Endpoint, type ParentSource } from '../../lib/contract/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { BudgetSpent, dig, metaInt, pagination, readPage, readParentPage, spend, type ListPage, type Params } from './pages.js';
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

/** Parents at one level whose own lists are read further: those whose lists hold the most. */
const FRONTIER = 8;
/** Lists read or counted at one level before the rest are: enough where the lists are long (inWaves). */
const WAVE = 24;
/** Concrete paths exploredPaths gives, at most. */
const EXPLORED = 2;
/** A parent list is read a full page at a time: its candidates go past a default page. */
const PARENT_PAGE: Params = { 'page[limit]': PAGE };
/** A combination's list read for its meta.results.total alone. */
const COUNT_PAGE: Params = { 'page[limit]': 1 };
/** How to point the suite at other parents, said where the ones it found fall short. */
const ELSEWHERE = 'set parents: in conformance.config.yaml to choose others';

/** What a parent list offers a placeholder: the values of `field` in a page of its records. */
interface ParentList {
  status: number;
  /** It answered with a list. */
  ok: boolean;
  /** The values of `field`, as strings, those the source tries first ahead (ParentSource.first). */
  values: string[];
  /** How many of `values` the source tries first. */
  ahead: number;
}

/**
 * A page of PARENT_PAGE records of a parent list, read as the values of `source.field` (once per
 * run and list, whichever operation asks first); the list as it comes, without page[limit],
 * where a target refuses that. Its records are read here, not as the list's own records: a
 * parent's id may sit elsewhere than the list operation's id, and a release is tried first for
 * a field that is no id (meta.release_status).
 */
function parentList(ctx: CheckContext, e: Endpoint, path: string, source: Extract<ParentSource, { from: string }>): Promise<ParentList> {
  const key = `parent list ${path} ${source.field}${source.first ? ` ${source.first.field}=${source.first.equals}` : ''}`;
  return ctx.shared(key, async (s) => {
    const read = (query: Params): Promise<HttpResponse> => {
      spend(ctx, e);
      return s.request({ method: 'GET', path, query });
    };
    let res = await read(PARENT_PAGE);
    if (res.status === 400 || res.status === 422) res = await read({});
    const data = res.status === 200 && res.isJson ? dig(res.json(), 'data') : undefined;
    if (!Array.isArray(data)) return { status: res.status, ok: false, values: [], ahead: 0 };
    const seen = new Set<string>();
    const ahead: string[] = [];
    const rest: string[] = [];
    for (const record of data as unknown[]) {
      const v = dig(record, source.field);
      if (typeof v !== 'string' && typeof v !== 'number') continue;
      const value = String(v);
      if (seen.has(value)) continue;
      seen.add(value);
      (source.first && dig(record, source.first.field) === source.first.equals ? ahead : rest).push(value);
    }
    return { status: res.status, ok: true, values: [...ahead, ...rest], ahead: ahead.length };
  });
}

/** The lists a catalog path may name before a placeholder: every operation's path and every parent list. */
const listPathsBy = new WeakMap<object, Set<string>>();
function listPaths(ctx: CheckContext): Set<string> {
  const p = pagination(ctx);
  let out = listPathsBy.get(p);
  if (!out) {
    // Without the run's own (a test's settings): the catalog's lists, the endpoints' and the parents'.
    const parents = listPathsOf({ operations: [], parents: p.parents });
    listPathsBy.set(p, (out = new Set(p.lists ?? [...listPathsOf(loadCatalogSpec()), ...p.endpoints.map((x) => x.path), ...parents])));
  }
  return out;
}

/** Where placeholder `name` of `e`'s path is filled from, its lists chained (parentSourceIn). */
function sourceOf(ctx: CheckContext, e: Endpoint, name: string): ParentSource | undefined {
  return parentSourceIn(pagination(ctx).parents, listPaths(ctx), e.path, name);
}

/** The first record of a parent list: the original resolution, and its reasons when it fails. */
async function resolveParam(
  ctx: CheckContext,
  e: Endpoint,
  name: string,
  env: Map<string, string>,
  depth = 0,
): Promise<{ ok: true; value: string } | { ok: false; reason: string }> {
  const source = sourceOf(ctx, e, name);
  if (!source) return { ok: false, reason: `no parent id for {${name}}: set parents.${name} in conformance.config.yaml` };
  if ('value' in source) return { ok: true, value: source.value };
  if (depth > 5) return { ok: false, reason: `parents nest too deep at {${name}}` };
  let from = source.from;
  for (const inner of placeholders(from)) {
    const r = env.has(inner) ? { ok: true as const, value: env.get(inner)! } : await resolveParam(ctx, e, inner, env, depth + 1);
    if (!r.ok) return r;
    from = from.replace(`{${inner}}`, encodeURIComponent(r.value));
  }
  const list = await parentList(ctx, e, from, source);
  const value = list.values[0] ?? source.also?.[0];
  if (value !== undefined) return { ok: true, value };
  if (list.status === 404) return { ok: false, reason: `no parent id for {${name}}: GET ${from} answered 404; set parents.${name} in conformance.config.yaml` };
  return {
    ok: false,
    reason: `no parent id for {${name}}: GET ${from} gave no record with ${source.field} (status ${list.status}); set parents.${name} in conformance.config.yaml`,
  };
}

async function firstRecordsPath(ctx: CheckContext, e: Endpoint): Promise<Resolution> {
  let path = e.path;
  const env = new Map<string, string>();
  for (const name of e.placeholders) {
    const r = await resolveParam(ctx, e, name, env);
    if (!r.ok) return r;
    env.set(name, r.value);
    path = path.replace(`{${name}}`, encodeURIComponent(r.value));
  }
  return { ok: true, path };
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

/** At most `k` of `values`, spread evenly from the first to the last: the big parents may come late. */
function spread<T>(values: readonly T[], k: number): T[] {
  if (values.length <= k) return [...values];
  if (k <= 0) return [];
  if (k === 1) return values.slice(0, 1);
  return Array.from({ length: k }, (_, i) => values[Math.round((i * (values.length - 1)) / (k - 1))]!);
}

/**
 * At most `k` of the values of `groups` (each a parent's candidates), as many of each group as
 * the others, each group's spread evenly from its first to its last: the big parents may come late.
 */
function spreadOver<T>(groups: ReadonlyArray<readonly T[]>, k: number): T[] {
  const total = groups.reduce((n, g) => n + g.length, 0);
  if (total <= k) return groups.flat();
  const out: T[] = [];
  // Room a short group leaves goes to the longer ones.
  for (let left = k, pending = [...groups]; left > 0 && pending.length;) {
    const share = Math.max(1, Math.floor(left / pending.length));
    const next: Array<readonly T[]> = [];
    for (const g of pending) {
      if (g.length <= share) {
        out.push(...g);
        left -= g.length;
      } else next.push(g);
    }
    if (next.length === pending.length) {
      for (const g of next) {
        if (left <= 0) break;
        const n = Math.min(share, left);
        out.push(...spread(g, n));
        left -= n;
      }
      break;
    }
    pending = next;
  }
  return out.slice(0, k);
}

/**
 * Every parent combination of `e` the search reads, with what its list answered. The lists
 * chain as the contract's do (parentSourceIn): a placeholder is filled from the list that holds
 * it under the path's own parents, level by level. Every record of a parent page (up to PAGE) is
 * a candidate: each one's list at the next level is counted with page[limit]=1, and the FRONTIER
 * that hold the most are read further; a release list is read under every catalog the waves
 * reach, as its latestPublished stands for a release even where the list itself is not served.
 * At the last level, each combination's own list is counted, at most `bound` of them, spread
 * over the parents above. Reads and counts go in waves (inWaves). Empty when no combination
 * could be formed.
 */
async function searchParents(ctx: CheckContext, e: Endpoint): Promise<Candidate[]> {
  const bound = Math.min(PAGE, cap(ctx));
  let spent: BudgetSpent | undefined;
  const sources = e.placeholders.map((name) => sourceOf(ctx, e, name));
  if (sources.some((s) => s === undefined)) return [];
  const fill = (path: string, env: ReadonlyMap<string, string>): string =>
    placeholders(path).reduce((p, n) => p.replace(`{${n}}`, encodeURIComponent(env.get(n)!)), path);
  const guarded = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      spent = err;
      return undefined;
    }
  };
  /** The index of the next placeholder after `i` filled from a list, or -1. */
  const nextList = (i: number): number => sources.findIndex((s, j) => j > i && s !== undefined && 'from' in s);
  /** Fixed values of the placeholders after `i` up to `to` (exclusive), set in `env`. */
  const fixed = (env: Map<string, string>, i: number, to: number): Map<string, string> => {
    for (let j = i + 1; j < to; j++) {
      const s = sources[j]!;
      if ('value' in s) env.set(e.placeholders[j]!, s.value);
    }
    return env;
  };

  /** What the list at `path` holds: meta.results.total of a page of one record. */
  const count = (path: string): Promise<Candidate | undefined> =>
    guarded(async () => {
      const page = await readParentPage(ctx, e, path, COUNT_PAGE);
      if (!page.ok) return { path, status: page.res.status, list: false, records: 0 };
      const total = metaInt(page, 'results.total');
      if (total !== undefined && total >= 0) return { path, status: page.res.status, list: true, records: Math.max(total, page.records.length) };
      // No total to read: the records a full page serves stand for it.
      const full = await readParentPage(ctx, e, path, PARENT_PAGE);
      return { path, status: page.res.status, list: true, records: Math.max(page.records.length, full.ok ? full.records.length : 0) };
    });

  /**
   * `work` done on `items` in waves: a first wave of WAVE (those tried first, then the others
   * spread evenly), the rest only when `enough` holds for no answer of the first: a store of long
   * lists need not be read through, and one whose records sit late still is.
   */
  const inWaves = async <T, R>(items: readonly T[], ahead: number, work: (t: T) => Promise<R>, enough: (r: R) => boolean): Promise<Array<[T, R]>> => {
    const lead = Math.min(ahead, WAVE);
    const first = new Set([...items.slice(0, lead), ...spread(items.slice(ahead), WAVE - lead)]);
    const done: Array<[T, R]> = await Promise.all([...first].map(async (t): Promise<[T, R]> => [t, await work(t)]));
    if (done.some(([, r]) => enough(r))) return done;
    return [...done, ...(await Promise.all(items.filter((t) => !first.has(t)).map(async (t): Promise<[T, R]> => [t, await work(t)])))];
  };
  /** A list long enough to show every rule a nested list can: more than a page of PAGE records. */
  const long = (c: Candidate | undefined): boolean => c !== undefined && c.list && c.records > PAGE;

  const first = nextList(-1);
  if (first < 0) {
    // Fixed values alone (given in the settings file): the one path.
    const c = await count(fill(e.path, fixed(new Map(), -1, e.placeholders.length)));
    if (!c && spent) throw spent;
    return c ? [c] : [];
  }
  // The combinations to read further, those tried first (`ahead` of them) leading.
  let frontier: Array<Map<string, string>> = [fixed(new Map(), -1, first)];
  let ahead = 0;
  for (let i = first; i >= 0;) {
    const source = sources[i] as Extract<ParentSource, { from: string }>;
    const name = e.placeholders[i]!;
    const after = nextList(i);
    const to = after < 0 ? e.placeholders.length : after;
    const lists = await inWaves(
      frontier,
      ahead,
      (env) => guarded(() => parentList(ctx, e, fill(source.from, env), source)),
      (list) => list !== undefined && (source.first ? list.ahead > 0 : list.values.length > 0),
    );
    // Each parent's candidates: its list's records, those tried first apart; latestPublished
    // where the list shows none to try first (a published release).
    const leading: Array<Map<string, string>> = [];
    const groups: Array<Array<Map<string, string>>> = [];
    for (const [env, list] of lists) {
      const values = list?.values ?? [];
      const lead = list?.ahead ?? 0;
      const rest = values.slice(lead);
      if (!lead) for (const v of source.also ?? []) if (!rest.includes(v)) rest.push(v);
      const extend = (v: string): Map<string, string> => fixed(new Map(env).set(name, v), i, to);
      leading.push(...values.slice(0, lead).map(extend));
      groups.push(rest.map(extend));
    }
    if (after < 0) {
      const paths = [...new Set([...leading, ...spreadOver(groups, Math.max(0, bound - leading.length))].map((env) => fill(e.path, env)))].slice(0, bound);
      const read = (await inWaves(paths, leading.length, count, long)).flatMap(([, c]) => (c ? [c] : []));
      // Out of budget before anything was read: nothing to judge under, as for any check.
      if (!read.length && spent) throw spent;
      return read;
    }
    const next = sources[after] as Extract<ParentSource, { from: string }>;
    const envs = [...leading, ...groups.flat()].slice(0, PAGE);
    if (next.also?.length) {
      // The next list stands for values of its own (latestPublished): every combination goes on.
      frontier = envs;
      ahead = Math.min(leading.length, envs.length);
    } else {
      const counted = await inWaves(envs, leading.length, (env) => count(fill(next.from, env)), long);
      frontier = counted
        .filter(([, c]) => c?.list && c.records > 0)
        .sort(([, a], [, b]) => b!.records - a!.records)
        .slice(0, FRONTIER)
        .map(([env]) => env);
      ahead = 0;
    }
    if (!frontier.length) {
      if (spent) throw spent;
      return [];
    }
    i = after;
  }
  return [];
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
    const tried = e.placeholders.some((n) => 'from' in (sourceOf(ctx, e, n) ?? {})) ? read.length : undefined;
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
