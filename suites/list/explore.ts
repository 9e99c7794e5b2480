// Exploration: requests drawn at random from the legal query space of a list operation (sort
// absent or on any sortable attribute either way; filters of one to three ge/gt terms whose
// values lie on a record, between two, one unit of the shown precision to either side, within
// the same second, before or after every record, in UTC or with a numeric offset; page[limit]
// absent, 1, any, 100 or over 100; page[offset] absent, 0, any, the last page, exactly the
// total, past the end, past the hard limit), each answer held to the model (model.ts). A
// disagreement is shrunk by fast-check to the smallest request that still disagrees, and is
// reported by the check whose rule it breaks. The draws come from the run's seed and the model,
// so a run with the same seed against the same data asks the same questions.
//
// Cost: `--explore N` requests per operation (shared by its paths: drawsPerPath), sent at once (the HTTP client bounds what is in
// flight), plus what shrinking sends (at most SHRINK_REQUESTS per rule broken); all count
// against the operation's request budget.
import fc from 'fast-check';
import type { CheckContext } from '../../lib/check.js';
import type { Endpoint } from '../../lib/catalog.js';
import { CheckSkip, SuiteError } from '../../lib/outcome.js';
import { hash32 } from '../../lib/random.js';
import { ATTRS, buildModel, describeQuery, inOrder, judge, NoModel, paramsOf, predictor, queryOfUrl, type Disagreement, type ListModel, type ListQuery, type Prediction, type Term } from './model.js';
import { dig, readExploredPage, spend, toRec, type ListPage } from './pages.js';
import { exploredPaths } from './target.js';
import type { Attr } from './collation.js';
import { HARD_OFFSET_LIMIT } from './walks.js';

/** Most requests shrinking one disagreement may send. */
export const SHRINK_REQUESTS = 40;

// --- Timestamps as picoseconds ---------------------------------------------------------

const PS_PER_MS = 10n ** 9n;
const PS_PER_S = 10n ** 12n;
const DAY = 86_400n * PS_PER_S;

/** An instant key (pages.ts instantKey) as picoseconds since 1970. */
function psOf(key: string): bigint {
  const [ms, sub] = key.split('.');
  return (BigInt(ms!) - 10n ** 16n) * PS_PER_MS + BigInt(sub!);
}

/**
 * An instant written as ISO 8601: in UTC with Z, or at a numeric offset (minutes); with at
 * least `digits` fraction digits and as many more as the instant needs.
 */
export function isoAt(ps: bigint, digits: number, offsetMinutes?: number): string {
  const shifted = ps + BigInt(offsetMinutes ?? 0) * 60n * PS_PER_S;
  let ms = shifted / PS_PER_MS;
  let sub = shifted % PS_PER_MS;
  if (sub < 0n) {
    sub += PS_PER_MS;
    ms -= 1n;
  }
  const iso = new Date(Number(ms)).toISOString();
  let fraction = `${iso.slice(20, 23)}${sub.toString().padStart(9, '0')}`.replace(/0+$/, '');
  if (fraction.length < digits) fraction = fraction.padEnd(digits, '0');
  const clock = `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}`;
  if (offsetMinutes === undefined) return `${clock}Z`;
  const a = Math.abs(offsetMinutes);
  return `${clock}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

// --- The space of requests -------------------------------------------------------------

/** Where a filter value lies with respect to the records' values. */
const PLACES = ['record', 'between', 'unit-below', 'unit-above', 'second-later', 'second-earlier', 'before-all', 'after-all'] as const;
type Place = (typeof PLACES)[number];
/** How it is written: UTC, at a numeric offset, or (a record's own value) as the target wrote it. */
const SPELLINGS = ['utc', 'offset', 'own'] as const;
const OFFSETS = [330, -300, 120, -600, 545, 60];

interface TermPlan {
  op: 'ge' | 'gt';
  attr: Attr;
  place: Place;
  /** Which record (modulo how many there are). */
  index: number;
  spelling: (typeof SPELLINGS)[number];
  zone: number;
}

type OffsetPlan = { kind: 'absent' } | { kind: 'zero' } | { kind: 'any'; n: number } | { kind: 'last' } | { kind: 'total' } | { kind: 'past'; n: number } | { kind: 'beyond-hard'; n: number };

interface Plan {
  sort?: { attr: Attr; descending: boolean };
  filters: TermPlan[];
  limit?: number;
  offset: OffsetPlan;
}

/** One drawn request: the path (a parent) and the query. */
export interface Draw {
  path: string;
  q: ListQuery;
}

/**
 * The distinct values of `attr` the model knows, in time order (the model's own order of its
 * records), each with a spelling the target used for it; picoseconds are read only for the few
 * values a draw uses.
 */
function valuesOf(m: ListModel, attr: 'created_at' | 'updated_at'): Array<{ ps: bigint; raw: string }> {
  const out: Array<{ ps: bigint; raw: string }> = [];
  let last: string | undefined;
  for (const r of inOrder(m, attr).sorted) {
    const key = attr === 'created_at' ? r.created! : r.updated!;
    const raw = attr === 'created_at' ? r.createdRaw : r.updatedRaw;
    if (key === last || raw === undefined) continue;
    last = key;
    out.push({ raw, get ps(): bigint { return psOf(key); } });
  }
  return out;
}

/** A filter value for `plan`, from the model's records. */
function termValue(m: ListModel, plan: TermPlan, ids: readonly string[], values: Record<'created_at' | 'updated_at', Array<{ ps: bigint; raw: string }>>): string | undefined {
  if (plan.attr === 'id') return ids.length ? ids[plan.index % ids.length] : undefined;
  const vs = values[plan.attr];
  if (!vs.length) return undefined;
  const i = plan.index % vs.length;
  const v = vs[i]!;
  const unit = 10n ** BigInt(12 - Math.min(12, m.digits));
  let ps = v.ps;
  switch (plan.place) {
    case 'record':
      if (plan.spelling === 'own') return v.raw;
      break;
    case 'between': {
      const next = vs[i + 1];
      const mid = next ? ((v.ps + next.ps) / 2n / unit) * unit : v.ps;
      ps = next && mid > v.ps && mid < next.ps ? mid : v.ps;
      break;
    }
    case 'unit-below':
      ps = v.ps - unit;
      break;
    case 'unit-above':
      ps = v.ps + unit;
      break;
    case 'second-later': {
      const start = v.ps - (((v.ps % PS_PER_S) + PS_PER_S) % PS_PER_S);
      const later = v.ps + ((start + PS_PER_S - v.ps) / 2n / PS_PER_MS) * PS_PER_MS;
      ps = later > v.ps && later < start + PS_PER_S ? later : v.ps + PS_PER_MS;
      break;
    }
    case 'second-earlier': {
      const into = ((v.ps % PS_PER_S) + PS_PER_S) % PS_PER_S;
      const start = v.ps - into;
      const earlier = start + (into / 2n / PS_PER_MS) * PS_PER_MS;
      ps = into > 0n && earlier < v.ps ? earlier : v.ps - 500n * PS_PER_MS;
      break;
    }
    case 'before-all':
      ps = vs[0]!.ps - DAY;
      break;
    case 'after-all':
      ps = vs.at(-1)!.ps + DAY;
      break;
  }
  return isoAt(ps, Math.min(12, m.digits), plan.spelling === 'offset' ? OFFSETS[plan.zone % OFFSETS.length] : undefined);
}

/** The requests a model's list can be asked, as plans fast-check draws and shrinks. */
function planArbitrary(m: ListModel): fc.Arbitrary<Plan> {
  const sortable = ATTRS.filter((a) => m.sortable[a]);
  const filterable = ATTRS.filter((a) => (a === 'id' ? m.idOrder !== undefined && m.records.size > 0 : [...m.records.values()].some((r) => (a === 'created_at' ? r.created : r.updated) !== undefined)));
  const term: fc.Arbitrary<TermPlan> | undefined = filterable.length
    ? fc.record({ op: fc.constantFrom('ge' as const, 'gt' as const), attr: fc.constantFrom(...filterable), place: fc.oneof({ arbitrary: fc.constant<Place>('record'), weight: 2 }, { arbitrary: fc.constantFrom(...PLACES.filter((p) => p !== 'record')), weight: 7 }), index: fc.nat(), spelling: fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant('utc' as const), weight: 2 }, { arbitrary: fc.constant('offset' as const), weight: 2 }, fc.constant('own' as const)), zone: fc.nat() })
    : undefined;
  const offsets: Array<fc.Arbitrary<OffsetPlan>> = [
    fc.constant({ kind: 'absent' as const }),
    fc.constant({ kind: 'zero' as const }),
    fc.nat().map((n) => ({ kind: 'any' as const, n })),
    fc.constant({ kind: 'last' as const }),
    fc.constant({ kind: 'total' as const }),
    fc.integer({ min: 1, max: 150 }).map((n) => ({ kind: 'past' as const, n })),
  ];
  if (m.hardOffsetLimit) offsets.push(fc.integer({ min: 1, max: 500 }).map((n) => ({ kind: 'beyond-hard' as const, n })));
  return fc.record(
    {
      sort: fc.option(fc.record({ attr: fc.constantFrom(...(sortable.length ? sortable : ATTRS)), descending: fc.boolean() }), { nil: undefined, freq: 4 }),
      // Mostly one term (each term narrows the result; three rarely leave a page to judge); one
      // array of one to three, so that shrinking can drop a term.
      filters: term ? fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant([] as TermPlan[]), weight: 3 }, { arbitrary: fc.array(term, { minLength: 1, maxLength: 3, size: 'xsmall' }), weight: 5 }) : fc.constant([] as TermPlan[]),
      // Mostly short pages: a page's cost grows with its records, and what a page can break
      // (its numbers, its order, its filter, its place) shows on a short one as well.
      limit: fc.oneof(
        { withCrossShrink: true },
        { arbitrary: fc.constant(undefined), weight: 2 },
        { arbitrary: fc.constant(1), weight: 1 },
        { arbitrary: fc.integer({ min: 2, max: 30 }), weight: 3 },
        { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 1 },
        { arbitrary: fc.constant(100), weight: 1 },
        { arbitrary: fc.integer({ min: 101, max: 1000 }), weight: 1 },
      ),
      offset: fc.oneof({ withCrossShrink: true }, ...offsets),
    },
    { requiredKeys: ['filters', 'offset'] },
  );
}

/** The concrete request of a plan: values from the model's records, offsets from its counts. */
function resolvePlan(m: ListModel, plan: Plan, ids: readonly string[], values: Record<'created_at' | 'updated_at', Array<{ ps: bigint; raw: string }>>, predicted: (q: ListQuery) => Prediction): ListQuery {
  const filters: Term[] = [];
  for (const t of plan.filters) {
    const value = termValue(m, t, ids, values);
    if (value !== undefined) filters.push({ op: t.op, attr: t.attr, value });
  }
  const q: ListQuery = { ...(plan.sort ? { sort: plan.sort } : {}), filters, ...(plan.limit !== undefined ? { limit: plan.limit } : {}) };
  const limit = Math.min(100, plan.limit ?? m.defaultLength);
  const count = predicted(q).selected.length;
  const o = plan.offset;
  const offset = o.kind === 'absent' ? undefined
    : o.kind === 'zero' ? 0
    : o.kind === 'any' ? o.n % (count + limit + 1)
    : o.kind === 'last' ? limit * Math.floor(Math.max(0, count - 1) / limit)
    : o.kind === 'total' ? count
    : o.kind === 'past' ? count + o.n
    : HARD_OFFSET_LIMIT + 1 + (count > HARD_OFFSET_LIMIT + 1 ? o.n % (count - HARD_OFFSET_LIMIT - 1) : o.n);
  if (offset === undefined) return q;
  // Past the hard limit only where the plan says so: elsewhere an offset the limit refuses tells nothing.
  return { ...q, offset: m.hardOffsetLimit && o.kind !== 'beyond-hard' && offset > HARD_OFFSET_LIMIT ? offset % (HARD_OFFSET_LIMIT + 1) : offset };
}

// --- Running it ------------------------------------------------------------------------

export interface Found {
  /** The smallest request found that breaks the rule, and what broke. */
  draw: Draw;
  disagreement: Disagreement;
  page: ListPage;
  /** Drawn requests (before shrinking) whose answers broke this rule. */
  drawn: number;
  /** Requests shrinking sent. */
  shrinkRequests: number;
  /** Found on a page that shrinking another rule's disagreement asked for (no draw broke this rule). */
  whileShrinking?: boolean;
}

export interface Exploration {
  /** Drawn requests, answered and judged, refused (not judged), not sent (the budget spent), and unanswered (transport). */
  drawn: number;
  judged: number;
  refused: number;
  notSent: number;
  unanswered: number;
  paths: number;
  seed: number;
  /** By check id: the disagreement found, shrunk. */
  found: Map<string, Found>;
  notes: string[];
}

const NONE = (notes: string[], seed = 0): Exploration => ({ drawn: 0, judged: 0, refused: 0, notSent: 0, unanswered: 0, paths: 0, seed, found: new Map(), notes });

/**
 * `--explore N` draws per list operation: an operation read at several paths (the latest
 * release's list and a given release's) shares them, each path at least one. Read from the
 * catalog, not from the operations a run selects, so a replay of one path draws the same.
 */
export function drawsPerPath(explore: number, e: Pick<Endpoint, 'paths'>): number {
  return explore > 0 ? Math.ceil(explore / Math.max(1, e.paths)) : 0;
}

/** The operation's exploration, run once per run whichever check asks first. */
export function explore(ctx: CheckContext, e: Endpoint): Promise<Exploration> {
  return ctx.shared(`explore ${e.key}`, async () => {
    const n = drawsPerPath(ctx.run.settings.explore ?? 0, e);
    const seed = hash32(`${ctx.run.settings.seed}:explore:${e.key}`);
    if (n <= 0) return NONE(['exploration off (--explore 0)'], seed);
    const notes: string[] = [];
    let paths: string[];
    try {
      paths = await exploredPaths(ctx, e);
    } catch (err) {
      if (err instanceof CheckSkip) return NONE([`not explored: ${err.message}`], seed);
      throw err;
    }
    const models: ListModel[] = [];
    for (const path of paths) {
      try {
        const m = await buildModel(ctx, e, path, models[0]);
        models.push(m);
        notes.push(...m.notes);
      } catch (err) {
        if (err instanceof NoModel || err instanceof CheckSkip) notes.push(`${path} not explored: ${err.message}`);
        else if (err instanceof SuiteError) notes.push(`${path} not explored: ${err.code}: ${err.message}`);
        else throw err;
      }
    }
    if (!models.length) return NONE(notes, seed);
    const context = new Map(models.map((m) => [m.path, { m, ids: inOrder(m, 'id').sorted.map((r) => r.id), values: { created_at: valuesOf(m, 'created_at'), updated_at: valuesOf(m, 'updated_at') }, predicted: predictor(m) }]));
    const space: fc.Arbitrary<Draw> = fc.oneof(
      ...models.map((m) => {
        const c = context.get(m.path)!;
        return planArbitrary(m).map((plan): Draw => ({ path: m.path, q: resolvePlan(m, plan, c.ids, c.values, c.predicted) }));
      }),
    );

    // Every answer is asked for once; shrinking asks only for what the draws did not.
    const answers = new Map<string, Promise<ListPage | undefined>>();
    /** Drawn requests the budget kept from being sent. */
    const unsent = new Set<string>();
    let shrinking = false;
    let shrinkSent = 0;
    const keyOf = (d: Draw): string => `${d.path}?${describeQuery(d.q)}`;
    const ask = (d: Draw): Promise<ListPage | undefined> => {
      const key = keyOf(d);
      let a = answers.get(key);
      if (!a) {
        if (shrinking && shrinkSent >= SHRINK_REQUESTS) return Promise.resolve(undefined);
        if (shrinking) shrinkSent++;
        a = readExploredPage(ctx, e, d.path, paramsOf(d.q)).then(
          (page) => (page.res.status === 429 ? undefined : page),
          (err: unknown) => {
            // The budget spent, or a transport fault the client could not absorb: no answer, no verdict.
            if (err instanceof CheckSkip) unsent.add(key);
            if (err instanceof CheckSkip || err instanceof SuiteError) return undefined;
            throw err;
          },
        );
        answers.set(key, a);
      }
      return a;
    };
    const judged = (d: Draw, page: ListPage): Disagreement[] => {
      const c = context.get(d.path)!;
      return judge(c.m, d.q, page, c.predicted);
    };

    const draws = fc.sample(space, { seed, numRuns: n });
    const pages = await Promise.all(draws.map(ask));
    // The pages the models were built from are answers too: each is held to its model as well
    // (reported as read; a traversal's page is not drawn, so not shrunk).
    const walked: Array<{ d: Draw; page: ListPage }> = [];
    for (const m of models) {
      for (const page of m.pages) {
        const q = queryOfUrl(page.res.exchange.url);
        if (q) walked.push({ d: { path: m.path, q }, page });
      }
    }
    const x: Exploration = { drawn: draws.length, judged: 0, refused: 0, notSent: 0, unanswered: 0, paths: models.length, seed, found: new Map(), notes };
    const counts = new Map<string, number>();
    const broken: Array<{ d: Draw; page: ListPage; dis: Disagreement[] }> = [];
    for (const [i, page] of pages.entries()) {
      if (!page) {
        if (unsent.has(keyOf(draws[i]!))) x.notSent++;
        else x.unanswered++;
        continue;
      }
      if (page.res.status !== 200 && page.res.status < 500) x.refused++;
      else x.judged++;
      const dis = judged(draws[i]!, page);
      if (dis.length) broken.push({ d: draws[i]!, page, dis });
      for (const id of new Set(dis.map((y) => y.checkId))) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const fromWalks: typeof broken = [];
    for (const { d, page } of walked) {
      const dis = judged(d, page);
      if (dis.length) fromWalks.push({ d, page, dis });
    }
    broken.push(...fromWalks);
    if (!broken.length) return x;

    // What rests on the model holds only if the list is still as the model read it: read it
    // once more (not from the memo), its total and its records updated last.
    const stale = new Set<string>();
    if (broken.some((b) => b.dis.some((y) => y.byModel))) {
      for (const m of models) {
        const change = await changedSince(ctx, e, m);
        if (change) {
          stale.add(m.path);
          notes.push(`${m.path} changed while the run read it (${change}): what rests on the records read is not judged`);
        }
      }
    }
    const holds = (d: Draw, y: Disagreement): boolean => !y.byModel || !stale.has(d.path);

    // Each rule broken: fast-check replays the same draws (from the memo) to the first that
    // breaks it, then shrinks it to the smallest request that still does.
    const rules = [...new Set(broken.flatMap((b) => b.dis.filter((y) => holds(b.d, y)).map((y) => y.checkId)))];
    shrinking = true;
    // A page shrinking asks for is an answer too: a rule it breaks that no draw broke joins the
    // list (reported with that page, as found while shrinking), so no check passes on an answer
    // the run holds that breaks its rule.
    const byShrinking: Array<{ d: Draw; page: ListPage; dis: Disagreement[] }> = [];
    for (let k = 0; k < rules.length; k++) {
      const id = rules[k]!;
      shrinkSent = 0;
      const breaks = async (d: Draw): Promise<{ page: ListPage; y: Disagreement } | undefined> => {
        const page = await ask(d);
        const all = page ? judged(d, page).filter((z) => holds(d, z)) : [];
        for (const other of new Set(all.map((z) => z.checkId))) {
          if (rules.includes(other)) continue;
          rules.push(other);
          byShrinking.push({ d, page: page!, dis: all });
        }
        const y = all.find((z) => z.checkId === id);
        return page && y ? { page, y } : undefined;
      };
      const r = (counts.get(id) ?? 0) > 0 ? await fc.check(fc.asyncProperty(space, async (d) => (await breaks(d)) === undefined), { seed, numRuns: n }) : undefined;
      if (r?.failed && r.counterexample) {
        const hit = await breaks(r.counterexample[0]);
        if (hit) {
          x.found.set(id, { draw: r.counterexample[0], disagreement: hit.y, page: hit.page, drawn: counts.get(id)!, shrinkRequests: shrinkSent });
          continue;
        }
      }
      // Broken by a page of the traversals alone, or by one shrinking asked for (or shrinking
      // could not confirm it): as read.
      const shrunk = byShrinking.find((b) => b.dis.some((y) => y.checkId === id));
      const first = broken.find((b) => b.dis.some((y) => y.checkId === id && holds(b.d, y))) ?? shrunk!;
      x.found.set(id, { draw: first.d, disagreement: first.dis.find((y) => y.checkId === id && holds(first.d, y))!, page: first.page, drawn: counts.get(id) ?? 0, shrinkRequests: shrinkSent, ...(first === shrunk ? { whileShrinking: true } : {}) });
    }
    shrinking = false;
    return x;
  });
}


/**
 * How the list differs now from what the model read, or undefined: its total (records created
 * or deleted), and, where the target sorts by it, the records updated last (a record changed
 * since, which may now match a filter it did not). Read now, never from the memo; an answer
 * that cannot be read counts as a change (nothing is reported on a list the suite cannot see).
 */
async function changedSince(ctx: CheckContext, e: Endpoint, m: ListModel): Promise<string | undefined> {
  const read = async (query: Record<string, string | number>): Promise<unknown> => {
    spend(ctx, e);
    const res = await ctx.request({ method: 'GET', path: m.path, query });
    return res.status === 200 && res.isJson ? res.json() : undefined;
  };
  try {
    const total = dig(await read({ 'page[limit]': 1 }), 'meta.results.total');
    if (total !== m.total) return `results.total ${m.total}, now ${typeof total === 'number' ? total : 'unreadable'}`;
    if (!m.sortable.updated_at) return undefined;
    const latest = dig(await read({ sort: '-updated_at', 'page[limit]': 100 }), 'data');
    if (!Array.isArray(latest)) return undefined;
    for (const raw of latest) {
      const r = toRec(raw, e);
      const known = m.records.get(r.id);
      // A window of a list does not hold every record: one it never read says nothing there.
      if (!known) {
        if (m.complete) return `a record read now that the model never read: ${r.id}`;
        continue;
      }
      if (r.updatedRaw !== undefined && known.updated !== r.updated) return `record ${r.id} updated since: updated_at ${known.updatedRaw ?? '?'}, now ${r.updatedRaw}`;
    }
    return undefined;
  } catch (err) {
    if (err instanceof CheckSkip || err instanceof SuiteError) return `not read again (${err.message})`;
    throw err;
  }
}

/** A one-line account of an exploration, for a check's notes. */
export function explorationNote(x: Exploration): string {
  if (!x.drawn) return x.notes[0] ?? 'not explored';
  const parents = x.paths > 1 ? ` under ${x.paths} parents` : '';
  return `explored: ${x.drawn} drawn request(s)${parents}: ${x.judged} judged against the model, ${x.refused} refused (not judged)${x.notSent ? `, ${x.notSent} not sent (the request budget spent)` : ''}${x.unanswered ? `, ${x.unanswered} unanswered` : ''}${x.notes.length ? `; ${x.notes.join('; ')}` : ''}`;
}
