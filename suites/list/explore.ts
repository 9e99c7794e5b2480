// Exploration: the questions no fixed probe asks, each answer held to the model (model.ts), in
// five ways:
// - a covering array (pairwise.ts): before chance, one request for every pair of conditions
//   (sort, filter kind, filter value's place, limit kind, offset kind: the hard offset limit
//   under a filter, a sort at a page size), spread over the paths explored;
// - requests drawn at random from the legal query space (sort absent or on any sortable
//   attribute either way; filters of one to three ge/gt terms whose values lie on a record,
//   between two, one unit of the shown precision to either side, within the same second, before
//   or after every record, in UTC or with a numeric offset; page[limit] absent, 1, any, 100 or
//   over 100; page[offset] absent, 0, any, the last page, exactly the total, past the end, past
//   the hard limit); on ids, a record's own id, one no record has beside it, before the first or
//   after the last, or another parent's (idValue);
// - a quarter of those legal requests in other spellings (spellings.ts): sent exactly as a client
//   library writes them, judged as the literal request;
// - requests drawn from the illegal side (illegal.ts): numbers past 2^64, arrays, unknown sorts,
//   malformed filters, held to what the contract allows of any answer;
// - offset walks that cut ties: sorted by a timestamp, at drawn page sizes (small ones too),
//   the pages around a group of tied records must meet each of them exactly once.
// A disagreement is shrunk to a small request that still disagrees (fast-check for drawn
// requests; dropping parameters one at a time for the covering array's) and reported by the
// check whose rule it breaks. Everything comes from the run's seed and the model, so a run with
// the same seed against the same data asks the same questions.
//
// Cost: `--explore N` legal (N/4 of them spelled otherwise) and 3N/5 illegal requests per operation (shared by its paths:
// drawsPerPath; the nine fixed illegal requests of list.params.invalid among them, one exchange
// with the check's probe), the covering array's rows (about 60 per operation, shared out over its
// paths: coveringPlans), and the tie walks' pages (TIE_SIZES page sizes × TIE_GROUPS groups for
// each timestamp, shared out over the paths explored, a few pages each); all sent at once (the
// HTTP client bounds what is in flight), plus what shrinking sends (at most SHRINK_REQUESTS per
// rule broken); all count against the operation's request budget. A request the run asked
// before, by any way of asking, is read from the run's memo (pages.ts readOnce), never sent again.
import fc from 'fast-check';
import { judgedByItsRule, type CheckContext, hash32, seededRandom } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { CheckSkip, SuiteError } from '../../lib/evidence/index.js';
import {
  ATTRS,
  buildModel,
  describeQuery,
  inOrder,
  NoModel,
  paramsOf,
  predictor,
  queryOfUrl,
  type ListModel,
  type ListQuery,
  type Prediction,
  type Term,
} from './model.js';
import { judge, type Disagreement } from './judge.js';
import { dig, readExploredPage, spend, toRec, type ExploredWay, type ListPage } from './pages.js';
import { FIXED_ILLEGAL } from './invalid-params.js';
import { illegalArbitrary, illegalStrata, judgeIllegal, resolveIllegal, type Illegal, type IllegalStratum } from './illegal.js';
import { coveringArray } from './pairwise.js';
import { stepId, value, type Attr } from './collation.js';
import { spell, spelledQuery, spellingArbitrary, type Spelling } from './spellings.js';
import { exploredPaths } from './target.js';
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

type OffsetPlan =
  | { kind: 'absent' }
  | { kind: 'zero' }
  | { kind: 'any'; n: number }
  | { kind: 'last' }
  | { kind: 'total' }
  | { kind: 'past'; n: number }
  | { kind: 'beyond-hard'; n: number };

interface Plan {
  sort?: { attr: Attr; descending: boolean };
  filters: TermPlan[];
  limit?: number;
  offset: OffsetPlan;
}

/** One drawn request: the path (a parent) and the query. */
export interface Draw {
  path: string;
  /** The request, or (illegal) the legal part of it: the illegal request's other parameters. */
  q: ListQuery;
  /** A request from the illegal side: its query string and the readings it allows, and the stratum it was drawn from. */
  illegal?: Illegal;
  stratum?: IllegalStratum;
  /** The request in another spelling (spellings.ts): its query string exactly as sent, judged as `q`. */
  spelled?: { query: string; spelling: Spelling };
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
    out.push({
      raw,
      get ps(): bigint {
        return psOf(key);
      },
    });
  }
  return out;
}

/**
 * Where an id filter's value lies, by the place drawn: a record's own id, one no record has just
 * after or before it, before the first or after the last (ids have no unit or second: those
 * places name the gaps beside a record), or an id of the same operation's list under another
 * parent.
 */
const ID_PLACES: Readonly<Record<Place, 'record' | 'after' | 'before' | 'before-all' | 'after-all' | 'foreign'>> = {
  record: 'record',
  between: 'after',
  'unit-above': 'after',
  'second-later': 'after',
  'unit-below': 'before',
  'second-earlier': 'foreign',
  'before-all': 'before-all',
  'after-all': 'after-all',
};

/**
 * An id filter value for `plan`. One no record has lies strictly between the same two records in
 * every collation the target's sort=id listing allows (model.ts idOrders), so that all of them
 * agree on every record (spec/contract/README.md#list-endpoints names no collation); where no
 * such value is found, the record's own id. Another list's id may fall anywhere: the model judges
 * only the records every allowed collation places alike (tester).
 */
function idValue(m: ListModel, plan: TermPlan, c: Pick<PathContext, 'ids' | 'hex' | 'foreign'>): string | undefined {
  const { ids, hex, foreign } = c;
  if (!ids.length) return undefined;
  const i = plan.index % ids.length;
  const orders = m.idOrders ?? (m.idOrder ? [m.idOrder] : []);
  const strictly = (x: string | undefined, lo: string | undefined, hi: string | undefined): string | undefined =>
    x !== undefined && !m.records.has(x) && orders.every((o) => (lo === undefined || o(lo, x) < 0) && (hi === undefined || o(x, hi) < 0)) ? x : undefined;
  const last = ids.at(-1)!;
  const afterAll = (): string | undefined => strictly(stepId(last, 1, hex), last, undefined);
  switch (ID_PLACES[plan.place]) {
    case 'record':
      return ids[i];
    case 'after':
      return strictly(stepId(ids[i]!, 1, hex), ids[i], ids[i + 1]) ?? ids[i];
    case 'before':
      return strictly(stepId(ids[i]!, -1, hex), ids[i - 1], ids[i]) ?? ids[i];
    case 'before-all':
      return strictly(stepId(ids[0]!, -1, hex), undefined, ids[0]) ?? ids[0];
    case 'after-all':
      return afterAll() ?? last;
    case 'foreign':
      return (foreign.length ? foreign[plan.index % foreign.length] : afterAll()) ?? ids[i];
  }
}

/** A filter value for `plan`, from the model's records. */
function termValue(m: ListModel, plan: TermPlan, c: Pick<PathContext, 'ids' | 'hex' | 'foreign' | 'values'>): string | undefined {
  if (plan.attr === 'id') return idValue(m, plan, c);
  const vs = c.values[plan.attr];
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

/** The attributes a filter on the model's list can be drawn on: ids where their collation is known, timestamps some record has. */
function filterableAttrs(m: ListModel): Attr[] {
  return ATTRS.filter((a) =>
    a === 'id'
      ? m.idOrder !== undefined && m.records.size > 0
      : [...m.records.values()].some((r) => (a === 'created_at' ? r.created : r.updated) !== undefined),
  );
}

/** The requests a model's list can be asked, as plans fast-check draws and shrinks. */
function planArbitrary(m: ListModel): fc.Arbitrary<Plan> {
  const sortable = ATTRS.filter((a) => m.sortable[a]);
  const filterable = filterableAttrs(m);
  const term: fc.Arbitrary<TermPlan> | undefined = filterable.length
    ? fc.record({
        op: fc.constantFrom('ge' as const, 'gt' as const),
        attr: fc.constantFrom(...filterable),
        place: fc.oneof(
          { arbitrary: fc.constant<Place>('record'), weight: 2 },
          { arbitrary: fc.constantFrom(...PLACES.filter((p) => p !== 'record')), weight: 7 },
        ),
        index: fc.nat(),
        spelling: fc.oneof(
          { withCrossShrink: true },
          { arbitrary: fc.constant('utc' as const), weight: 2 },
          { arbitrary: fc.constant('offset' as const), weight: 2 },
          fc.constant('own' as const),
        ),
        zone: fc.nat(),
      })
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
      filters: term
        ? fc.oneof(
            { withCrossShrink: true },
            { arbitrary: fc.constant([] as TermPlan[]), weight: 3 },
            { arbitrary: fc.array(term, { minLength: 1, maxLength: 3, size: 'xsmall' }), weight: 5 },
          )
        : fc.constant([] as TermPlan[]),
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
function resolvePlan(m: ListModel, plan: Plan, c: PathContext): ListQuery {
  const { predicted } = c;
  const filters: Term[] = [];
  for (const t of plan.filters) {
    const value = termValue(m, t, c);
    if (value !== undefined) filters.push({ op: t.op, attr: t.attr, value });
  }
  const q: ListQuery = { ...(plan.sort ? { sort: plan.sort } : {}), filters, ...(plan.limit !== undefined ? { limit: plan.limit } : {}) };
  const limit = Math.min(100, plan.limit ?? m.defaultLength);
  const count = predicted(q).selected.length;
  const o = plan.offset;
  const offset =
    o.kind === 'absent'
      ? undefined
      : o.kind === 'zero'
        ? 0
        : o.kind === 'any'
          ? o.n % (count + limit + 1)
          : o.kind === 'last'
            ? limit * Math.floor(Math.max(0, count - 1) / limit)
            : o.kind === 'total'
              ? count
              : o.kind === 'past'
                ? count + o.n
                : HARD_OFFSET_LIMIT + 1 + (count > HARD_OFFSET_LIMIT + 1 ? o.n % (count - HARD_OFFSET_LIMIT - 1) : o.n);
  if (offset === undefined) return q;
  // Past the hard limit only where the plan says so: elsewhere an offset the limit refuses tells nothing.
  return { ...q, offset: m.hardOffsetLimit && o.kind !== 'beyond-hard' && offset > HARD_OFFSET_LIMIT ? offset % (HARD_OFFSET_LIMIT + 1) : offset };
}

// --- Every pair of conditions ----------------------------------------------------------

/** The places of a filter value, grouped as levels of the covering array (a level's members are drawn). */
const PLACE_LEVELS: ReadonlyArray<readonly Place[]> = [
  ['record'],
  ['between'],
  ['unit-below', 'unit-above'],
  ['second-later', 'second-earlier'],
  ['before-all'],
  ['after-all'],
];
const LIMIT_LEVELS = ['absent', 'one', 'short', 'any', 'hundred', 'over'] as const;
/**
 * Beside a filter's term, another on the same attribute that selects every record (ge the
 * smallest value), after it or before it: terms joined by `:` all apply (spec/contract/README.md#list-endpoints),
 * and a store that keeps one term per attribute (the last, or the first) answers for the looser one.
 */
const COMBINE_LEVELS = ['alone', 'looser-after', 'looser-before'] as const;
const OFFSET_LEVELS = ['absent', 'zero', 'any', 'last', 'total', 'past', 'beyond-hard'] as const;

export interface CoveringPlans {
  /** The rows that fall to this path. */
  plans: Plan[];
  /** The array's rows over every path of the operation. */
  rows: number;
  /** Pairs of levels the array had to cover, and covered, over every path of the operation. */
  pairs: number;
  covered: number;
}

/** An operation's paths (Endpoint.paths), and which of them a covering array's rows are asked on. */
export interface PathShare {
  paths: number;
  index: number;
}

/**
 * One plan per row of a covering array of strength 2 over the model's dimensions: sort (absent,
 * or each sortable attribute either way), filter kind (absent, or ge/gt on each filterable
 * attribute), the place of its value (where the filter is on a timestamp), limit kind, offset
 * kind (past the hard limit where the list has it), and the filter's term alone or beside a
 * looser one on the same attribute (COMBINE_LEVELS). The numbers a level leaves open (a short
 * limit, a record's index) are drawn from `seed`.
 *
 * An operation read at several paths (the latest release's list and a given release's) is one
 * array with the path as one more dimension: every pair of conditions is asked on some path, and
 * every condition on every path, in about as many rows as one path alone needs. `share` says
 * which path this is: it asks the rows whose path is its own (the same seed and dimensions give
 * every path the same array).
 */
export function coveringPlans(m: ListModel, seed: number, share: PathShare = { paths: 1, index: 0 }): CoveringPlans {
  const sorts: Array<Plan['sort']> = [
    undefined,
    ...ATTRS.filter((a) => m.sortable[a]).flatMap((attr) => [
      { attr, descending: false },
      { attr, descending: true },
    ]),
  ];
  const filters: Array<{ op: 'ge' | 'gt'; attr: Attr } | undefined> = [
    undefined,
    ...filterableAttrs(m).flatMap((attr) => (['ge', 'gt'] as const).map((op) => ({ op, attr }))),
  ];
  const offsets = OFFSET_LEVELS.filter((o) => o !== 'beyond-hard' || m.hardOffsetLimit);
  // A value's place matters on every attribute: on ids too (ID_PLACES), where a store that looks
  // the value up as a cursor answers only for an id some record has.
  const filtered = filters.flatMap((f, i) => (f ? [i] : []));
  const levels = [
    sorts.length,
    filters.length,
    filtered.length ? PLACE_LEVELS.length : 1,
    LIMIT_LEVELS.length,
    offsets.length,
    filtered.length ? COMBINE_LEVELS.length : 1,
    ...(share.paths > 1 ? [share.paths] : []),
  ];
  const requires = filtered.length
    ? [
        { factor: 2, on: 1, levels: filtered },
        { factor: 5, on: 1, levels: filtered },
      ]
    : [];
  const array = coveringArray(levels, { seed, requires });
  const { pairs, covered } = array;
  const rows = share.paths > 1 ? array.rows.filter((row) => row[6] === share.index) : array.rows;
  const random = seededRandom(hash32(`${seed}:covering:${share.index}`));
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const plans = rows.map(([s, f, p, l, o, c]): Plan => {
    const sort = sorts[s!];
    const filter = filters[f!];
    const limit = LIMIT_LEVELS[l!]!;
    const offset = offsets[o!]!;
    const term: TermPlan | undefined = filter && {
      ...filter,
      place: pick(PLACE_LEVELS[p!] ?? ['record']),
      index: int(0, 1 << 30),
      spelling: pick(SPELLINGS),
      zone: int(0, OFFSETS.length - 1),
    };
    // On ids, the first record's own id: ge of it selects every record in any collation.
    const looser: TermPlan | undefined = filter && {
      op: 'ge',
      attr: filter.attr,
      place: filter.attr === 'id' ? 'record' : 'before-all',
      index: 0,
      spelling: 'utc',
      zone: 0,
    };
    const combine = COMBINE_LEVELS[c ?? 0] ?? 'alone';
    return {
      ...(sort ? { sort } : {}),
      filters: !term || !looser ? [] : combine === 'alone' ? [term] : combine === 'looser-after' ? [term, looser] : [looser, term],
      ...(limit === 'absent'
        ? {}
        : { limit: limit === 'one' ? 1 : limit === 'short' ? int(2, 30) : limit === 'any' ? int(1, 100) : limit === 'hundred' ? 100 : int(101, 1000) }),
      offset:
        offset === 'any'
          ? { kind: 'any', n: int(0, 1 << 30) }
          : offset === 'past'
            ? { kind: 'past', n: int(1, 150) }
            : offset === 'beyond-hard'
              ? { kind: 'beyond-hard', n: int(1, 500) }
              : { kind: offset },
    };
  });
  return { plans, rows: array.rows.length, pairs, covered };
}

// --- Offset walks that cut ties --------------------------------------------------------

/** Page sizes drawn per timestamp and path without a filter (the first from 2 to 5; under a filter, that one alone), and tie groups walked per size. */
export const TIE_SIZES = 2;
export const TIE_GROUPS = 1;

/**
 * A group of records tied on a timestamp, at positions [start, end) of the list sorted by it (and
 * filtered, for a walk under a filter), and the pages that hold it at one page size.
 */
interface TieWalk {
  path: string;
  attr: 'created_at' | 'updated_at';
  filters: Term[];
  limit: number;
  start: number;
  end: number;
  ids: string[];
  shown: string;
  draws: Draw[];
}

/**
 * Offset walks, sorted by each timestamp at drawn page sizes, without a filter and under a `ge`
 * filter on that timestamp (a value drawn from the first half of the list, as the target wrote
 * it), over the pages that hold a group of tied records a page boundary cuts: only those pages,
 * since elsewhere the model's judgement of each page already sees any record out of place. Only
 * where the model knows the list's records in that order to past the group, and none of the
 * group is newer than the horizon.
 */
function tieWalks(m: ListModel, seed: number, predicted: (q: ListQuery) => Prediction, share: PathShare = { paths: 1, index: 0 }): TieWalk[] {
  const random = seededRandom(hash32(`${seed}:ties:${m.path}`));
  const out: TieWalk[] = [];
  for (const [i, attr] of (['created_at', 'updated_at'] as const).entries()) {
    if (!m.sortable[attr] || i % share.paths !== share.index % share.paths) continue;
    const all = predicted({ sort: { attr, descending: false }, filters: [] });
    const from = all.selected[Math.floor(random() * Math.ceil(all.selected.length / 2))];
    const raw = from && (attr === 'created_at' ? from.createdRaw : from.updatedRaw);
    const bases: Term[][] = [[], ...(raw ? [[{ op: 'ge' as const, attr, value: raw }]] : [])];
    for (const filters of bases) {
      const p = filters.length ? predicted({ sort: { attr, descending: false }, filters }) : all;
      if (p.opaque) continue;
      const groups: Array<{ start: number; end: number }> = [];
      const sorted = p.selected;
      for (let i = 0; i < Math.min(sorted.length, p.exact);) {
        let j = i + 1;
        while (j < sorted.length && value(sorted[j]!, attr) === value(sorted[i]!, attr)) j++;
        if (j - i > 1 && j <= p.exact && sorted.slice(i, j).every((r) => !m.fresh.has(r.id))) groups.push({ start: i, end: j });
        i = j;
      }
      if (!groups.length) continue;
      // A small page size always (2 to 5); unfiltered, one from 6 to 30 besides.
      const sizes = [2 + Math.floor(random() * 4), ...(filters.length ? [] : Array.from({ length: TIE_SIZES - 1 }, () => 6 + Math.floor(random() * 25)))];
      for (const limit of sizes) {
        const cut = groups.filter((g) => Math.floor(g.start / limit) !== Math.floor((g.end - 1) / limit));
        for (let k = 0; k < TIE_GROUPS && cut.length; k++) {
          // Of the groups a page boundary cuts, one over the fewest pages (drawn among those): each page of it shows the cut.
          const pages = (g: { start: number; end: number }): number => Math.floor((g.end - 1) / limit) - Math.floor(g.start / limit);
          const fewest = Math.min(...cut.map(pages));
          const least = cut.filter((g) => pages(g) === fewest);
          const g = least[Math.floor(random() * least.length)]!;
          cut.splice(cut.indexOf(g), 1);
          const draws: Draw[] = [];
          for (let offset = Math.floor(g.start / limit) * limit; offset < g.end; offset += limit)
            draws.push({ path: m.path, q: { sort: { attr, descending: false }, filters, limit, offset } });
          const first = sorted[g.start]!;
          out.push({
            path: m.path,
            attr,
            filters,
            limit,
            start: g.start,
            end: g.end,
            ids: sorted.slice(g.start, g.end).map((r) => r.id),
            shown: (attr === 'created_at' ? first.createdRaw : first.updatedRaw) ?? '?',
            draws,
          });
        }
      }
    }
  }
  return out;
}

/** Whether the pages of a tie walk meet each record of the group exactly once (undefined: a page could not be read as a list). */
function judgeTies(w: TieWalk, pages: ReadonlyArray<ListPage | undefined>): Disagreement | undefined {
  const met: string[] = [];
  for (const [i, page] of pages.entries()) {
    if (!page || page.res.status !== 200 || !page.ok) return undefined;
    const offset = w.draws[i]!.q.offset!;
    for (const [k, r] of page.records.entries()) if (offset + k >= w.start && offset + k < w.end) met.push(r.id);
  }
  const group = new Set(w.ids);
  const twice = met.filter((id, i) => met.indexOf(id) !== i);
  const missed = w.ids.filter((id) => !met.includes(id));
  if (!twice.length && !missed.length && met.every((id) => group.has(id))) return undefined;
  const q = describeQuery({ sort: { attr: w.attr, descending: false }, filters: w.filters, limit: w.limit });
  return {
    // Under a filter, each record once when paged by offset is the filter's rule (lists.filter).
    checkId: w.filters.length ? 'list.filter.ge' : 'list.offset.traversal',
    message: `${q}, page[offset] ${w.draws.map((d) => d.q.offset).join(', ')}: paging by offset across the ${w.ids.length} records tied at ${w.attr} ${w.shown} (positions ${w.start} to ${w.end - 1}) does not meet each of them once`,
    expected: `each of ${w.ids.join(', ')} once at positions ${w.start} to ${w.end - 1}`,
    actual: `${met.join(', ') || 'none of them'}${twice.length ? `; twice: ${[...new Set(twice)].join(', ')}` : ''}${missed.length ? `; never: ${missed.join(', ')}` : ''}`,
    byModel: true,
  };
}

// --- Running it ------------------------------------------------------------------------

/** Which way of asking found a disagreement (the selftest's figure splits by it). */
export type Source = 'covering' | 'legal' | 'spellings' | 'illegal' | 'ties' | 'walks';

/** How a failure's reason names each way of asking: `found by <this>`. */
export const FOUND_BY: Readonly<Record<Source, string>> = {
  covering: 'the covering array',
  legal: 'drawn legal requests',
  spellings: 'drawn requests in other spellings',
  illegal: 'drawn illegal requests',
  ties: 'offset walks that cut ties',
  walks: 'the traversals the model was built from',
};

export interface Found {
  /** The smallest request found that breaks the rule, and what broke. */
  draw: Draw;
  disagreement: Disagreement;
  page: ListPage;
  source: Source;
  /** Requests of that source (before shrinking) whose answers broke this rule, of how many. */
  drawn: number;
  of: number;
  /** Requests shrinking sent. */
  shrinkRequests: number;
  /** Found on a page that shrinking another rule's disagreement asked for (no request of the source broke this rule). */
  whileShrinking?: boolean;
  /** The other ways of asking whose requests broke this rule too: how many, of how many. */
  also: Array<{ source: Source; drawn: number; of: number }>;
}

export interface Exploration {
  /** Drawn requests (legal and illegal, the covering array's, the tie walks'), answered and judged, refused (not judged), not sent (the budget spent), and unanswered (transport). */
  drawn: number;
  judged: number;
  refused: number;
  notSent: number;
  unanswered: number;
  paths: number;
  seed: number;
  /**
   * The covering array: the rows asked here (requests), its rows over the operation's paths (`of`),
   * and the pairs of conditions it covers there.
   */
  covering: { rows: number; of: number; pairs: number; covered: number };
  /**
   * Requests drawn from the legal side (`spelled` of them in other spellings, in place of as many
   * in the suite's own), from the illegal side, and tie walks (groups of tied records walked at a
   * page size).
   */
  legal: number;
  spelled: number;
  illegal: number;
  ties: number;
  /** By check id: the disagreement found, shrunk. */
  found: Map<string, Found>;
  notes: string[];
}

const NONE = (notes: string[], seed = 0): Exploration => ({
  drawn: 0,
  judged: 0,
  refused: 0,
  notSent: 0,
  unanswered: 0,
  paths: 0,
  seed,
  covering: { rows: 0, of: 0, pairs: 0, covered: 0 },
  legal: 0,
  spelled: 0,
  illegal: 0,
  ties: 0,
  found: new Map(),
  notes,
});

/**
 * `--explore N` draws per list operation: an operation read at several paths (the latest
 * release's list and a given release's) shares them, each path at least one. Read from the
 * catalog, not from the operations a run selects, so a replay of one path draws the same.
 */
export function drawsPerPath(explore: number, e: Pick<Endpoint, 'paths'>): number {
  return explore > 0 ? Math.ceil(explore / Math.max(1, e.paths)) : 0;
}

/** A plan with one parameter taken away (or one filter term), for shrinking the covering array's requests: each candidate once. */
function smaller(q: ListQuery): ListQuery[] {
  const out: ListQuery[] = [];
  if (q.sort) out.push({ ...q, sort: undefined });
  for (let i = 0; i < q.filters.length; i++) out.push({ ...q, filters: q.filters.filter((_, k) => k !== i) });
  if (q.limit !== undefined) out.push({ ...q, limit: undefined });
  if (q.offset !== undefined) out.push({ ...q, offset: undefined });
  return out.map((x) => Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as unknown as ListQuery);
}

/** The operation's exploration, run once per run whichever check asks first. */
export function explore(ctx: CheckContext, e: Endpoint): Promise<Exploration> {
  return ctx.shared(`explore ${e.key}`, async () => {
    const n = drawsPerPath(ctx.run.settings.explore ?? 0, e);
    const seed = hash32(`${ctx.run.settings.seed}:explore:${e.key}`);
    if (n <= 0) return NONE(['exploration off (--explore 0)'], seed);
    const { models, notes } = await readModels(ctx, e);
    if (!models.length) return NONE(notes, seed);
    const spaces = drawSpaces(models, e, n, seed);
    const answers = new Answers(ctx, e, spaces.context);
    // One covering array for the operation's paths (its seed the operation's), each asking its own rows.
    const cover = coveringPlans(models[0]!, hash32(`${ctx.run.settings.seed}:covering:${e.operation}`), { paths: e.paths, index: e.pathIndex });
    const { ties, asked } = drawRequests(models, spaces, seed, cover);
    const pages = await Promise.all(asked.map(({ d, source }) => answers.ask(d, source)));
    const tally = judgeAnswers(asked, pages, ties, answers);
    judgeTraversals(models, answers, tally);
    const x: Exploration = {
      drawn: asked.length,
      judged: tally.judged,
      refused: tally.refused,
      notSent: tally.notSent,
      unanswered: tally.unanswered,
      paths: models.length,
      seed,
      covering: { rows: cover.plans.length, of: cover.rows, pairs: cover.pairs, covered: cover.covered },
      legal: n,
      spelled: spaces.spellings.runs,
      illegal: spaces.nIllegal,
      ties: ties.length,
      found: new Map(),
      notes,
    };
    if (!tally.broken.length) return x;
    const stale = await staleModels(ctx, e, models, notes, tally.broken);
    await new Shrinking(answers, spaces, tally, stale).run(x.found);
    return x;
  });
}

/**
 * The models of the paths explored, in their order (each after the first built `like` it:
 * buildModel in model.ts), and the notes their reading left: a path that cannot be modelled is
 * noted and left out; when the paths themselves cannot be found, none is explored.
 */
async function readModels(ctx: CheckContext, e: Endpoint): Promise<{ models: ListModel[]; notes: string[] }> {
  const notes: string[] = [];
  let paths: string[];
  try {
    paths = await exploredPaths(ctx, e);
  } catch (err) {
    if (err instanceof CheckSkip) return { models: [], notes: [`not explored: ${err.message}`] };
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
  return { models, notes };
}

// --- What is drawn ---------------------------------------------------------------------

/** What a path's draws read of its model: its ids in their order, its timestamps' values, and its predictions. */
interface PathContext {
  m: ListModel;
  ids: string[];
  /** Every id is hex digits and hyphens (a UUID): ids drawn beside them stay so. */
  hex: boolean;
  /** Ids of the operation's list under its other parents that this one does not hold: another list's ids. */
  foreign: string[];
  values: Record<'created_at' | 'updated_at', Array<{ ps: bigint; raw: string }>>;
  predicted: (q: ListQuery) => Prediction;
}

/** A space requests are drawn from, its seed and how many are drawn: shrinking replays the same draws. */
interface DrawnSpace {
  space: fc.Arbitrary<Draw>;
  seed: number;
  runs: number;
}

/** What an exploration draws from: each path's context, the legal side over every path, and the illegal side's strata. */
interface Spaces {
  context: Map<string, PathContext>;
  /** The concrete request of a plan on a model's list. */
  resolve: (m: ListModel, plan: Plan) => ListQuery;
  legal: DrawnSpace;
  /** Legal requests in other spellings (spellings.ts), judged as the literal request. */
  spellings: DrawnSpace;
  /** Requests drawn from the illegal side, in all (the fixed ones included). */
  nIllegal: number;
  /** The fixed illegal requests (FIXED_ILLEGAL), asked as the first of their strata. */
  fixed: Draw[];
  illegal: Array<DrawnSpace & { stratum: IllegalStratum }>;
}

/**
 * The spaces of an exploration's draws: `n` legal requests from one space over every path, and
 * three fifths as many illegal ones (two in each stratum at the default), each stratum drawn
 * apart (shared out in illegalStrata's order) over a legal request of that space.
 */
function drawSpaces(models: readonly ListModel[], e: Endpoint, n: number, seed: number): Spaces {
  const context = new Map(
    models.map((m): [string, PathContext] => {
      const ids = inOrder(m, 'id').sorted.map((r) => r.id);
      return [
        m.path,
        {
          m,
          ids,
          hex: ids.every((id) => /^[0-9a-f-]+$/i.test(id)),
          foreign: models.filter((o) => o !== m).flatMap((o) => [...o.records.keys()].filter((id) => !m.records.has(id)).slice(0, 50)),
          values: { created_at: valuesOf(m, 'created_at'), updated_at: valuesOf(m, 'updated_at') },
          predicted: predictor(m),
        },
      ];
    }),
  );
  const resolve = (m: ListModel, plan: Plan): ListQuery => resolvePlan(m, plan, context.get(m.path)!);
  const space: fc.Arbitrary<Draw> = fc.oneof(...models.map((m) => planArbitrary(m).map((plan): Draw => ({ path: m.path, q: resolve(m, plan) }))));
  // A quarter of the legal draws, in other spellings: the request count stays that of `n` draws.
  const nSpelled = Math.floor(n / 4);
  const spelled: fc.Arbitrary<Draw> = fc.oneof(
    ...models.map((m) =>
      fc.tuple(planArbitrary(m), spellingArbitrary).map(([plan, spelling]): Draw => {
        const q = spelledQuery(resolve(m, plan), spelling);
        return { path: m.path, q, spelled: { query: spell(q, spelling), spelling } };
      }),
    ),
  );
  const nIllegal = Math.ceil((n * 3) / 5);
  const strata = illegalStrata(e.hardOffsetLimit);
  // The fixed illegal requests (FIXED_ILLEGAL) are asked first, on the first path: of the strata
  // of one number past 2^64, of sorts and of filters they take the place of as many draws. The
  // strata of page[limit] and page[offset] keep theirs: the shapes and spellings are only drawn.
  const fixed = models.length ? FIXED_ILLEGAL.map(({ stratum, plan }) => ({ stratum, plan, m: models[0]! })) : [];
  const replaces = (stratum: IllegalStratum): number =>
    stratum === 'page[limit]' || stratum === 'page[offset]' ? 0 : fixed.filter((f) => f.stratum === stratum).length;
  const illegal = strata.map((stratum, i) => ({
    stratum,
    seed: hash32(`${seed}:illegal:${stratum}`),
    runs: Math.max(0, Math.floor(nIllegal / strata.length) + (i < nIllegal % strata.length ? 1 : 0) - replaces(stratum)),
    space: fc.oneof(
      ...models.map((m) =>
        fc.tuple(planArbitrary(m), illegalArbitrary(stratum)).map(([plan, twist]): Draw => {
          // Past the hard limit, over the whole list: a filter would leave no record there to serve.
          const q = resolve(m, stratum === 'page[offset] past the hard limit' ? { ...plan, filters: [] } : plan);
          return { path: m.path, q, stratum, illegal: resolveIllegal(m, twist, q, (x) => context.get(m.path)!.predicted(x).selected.length) };
        }),
      ),
    ),
  }));
  const none: ListQuery = { filters: [] };
  return {
    context,
    resolve,
    legal: { space, seed, runs: n - nSpelled },
    spellings: { space: spelled, seed: hash32(`${seed}:spellings`), runs: nSpelled },
    nIllegal: fixed.length + illegal.reduce((k, p) => k + p.runs, 0),
    fixed: fixed.map(({ stratum, plan, m }) => ({
      path: m.path,
      q: none,
      stratum,
      illegal: resolveIllegal(m, plan, none, (x) => context.get(m.path)!.predicted(x).selected.length),
    })),
    illegal,
  };
}

/** A request asked, and the way of asking it came from (and, for a tie walk's page, the walk). */
interface Asked {
  d: Draw;
  source: Exclude<Source, 'walks'>;
  walk?: TieWalk;
}

/**
 * Every request the exploration asks before shrinking, in the order asked: before chance, every
 * pair of conditions (the rows of one covering array of the operation's dimensions, spread over
 * the paths explored); then the legal draws, each illegal stratum's draws, and the tie walks'
 * pages.
 */
function drawRequests(models: readonly ListModel[], spaces: Spaces, seed: number, cover: CoveringPlans): { ties: TieWalk[]; asked: Asked[] } {
  // The timestamps' tie walks shared out over the paths explored (each timestamp on one of them).
  const ties = models.flatMap((m, index) => tieWalks(m, seed, spaces.context.get(m.path)!.predicted, { paths: models.length, index }));
  const { legal, spellings, illegal } = spaces;
  const asked: Asked[] = [
    ...cover.plans.map((plan, i) => ({
      d: { path: models[i % models.length]!.path, q: spaces.resolve(models[i % models.length]!, plan) },
      source: 'covering' as const,
    })),
    ...fc.sample(legal.space, { seed: legal.seed, numRuns: legal.runs }).map((d) => ({ d, source: 'legal' as const })),
    ...(spellings.runs ? fc.sample(spellings.space, { seed: spellings.seed, numRuns: spellings.runs }) : []).map((d) => ({ d, source: 'spellings' as const })),
    ...spaces.fixed.map((d) => ({ d, source: 'illegal' as const })),
    ...illegal.flatMap((p) => (p.runs ? fc.sample(p.space, { seed: p.seed, numRuns: p.runs }) : []).map((d) => ({ d, source: 'illegal' as const }))),
    ...ties.flatMap((walk) => walk.draws.map((d) => ({ d, source: 'ties' as const, walk }))),
  ];
  return { ties, asked };
}

// --- Asking and judging ----------------------------------------------------------------

/**
 * The answers of an exploration: every request is asked for once (shrinking asks only for what
 * the draws did not, at most SHRINK_REQUESTS per rule), and each answer is judged by the rules
 * of its path's model.
 */
class Answers {
  readonly #ctx: CheckContext;
  readonly #e: Endpoint;
  readonly #context: Map<string, PathContext>;
  readonly #memo = new Map<string, Promise<ListPage | undefined>>();
  /** Drawn requests the budget kept from being sent. */
  readonly #unsent = new Set<string>();
  #shrinking = false;
  /** Requests sent shrinking the rule shrunk last. */
  shrinkSent = 0;

  constructor(ctx: CheckContext, e: Endpoint, context: Map<string, PathContext>) {
    this.#ctx = ctx;
    this.#e = e;
    this.#context = context;
  }

  /** A request as the memo knows it: its path and query. */
  #keyOf(d: Draw): string {
    return `${d.path}?${d.illegal ? d.illegal.query : d.spelled ? `spelled ${d.spelled.query}` : describeQuery(d.q)}`;
  }

  /** Whether the request budget kept the request from being sent. */
  notSent(d: Draw): boolean {
    return this.#unsent.has(this.#keyOf(d));
  }

  /** Starts shrinking one rule: from now on a request not asked before counts against its SHRINK_REQUESTS. */
  shrinkNext(): void {
    this.#shrinking = true;
    this.shrinkSent = 0;
  }

  /** The answer to a request (undefined: not sent, refused with 429, or no answer), asked for once; `way`: the way of asking that drew it. */
  ask(d: Draw, way: ExploredWay = 'shrinking'): Promise<ListPage | undefined> {
    const key = this.#keyOf(d);
    let a = this.#memo.get(key);
    if (!a) {
      if (this.#shrinking && this.shrinkSent >= SHRINK_REQUESTS) return Promise.resolve(undefined);
      if (this.#shrinking) this.shrinkSent++;
      // A query string of its own (illegal, or in another spelling) goes in the path, sent exactly as written.
      const raw = d.illegal?.query ?? d.spelled?.query;
      a = readExploredPage(this.#ctx, this.#e, raw !== undefined ? `${d.path}?${raw}` : d.path, raw !== undefined ? {} : paramsOf(d.q), way).then(
        (page) => {
          // Its answer, a 5xx too, is judged by the rule it breaks (judged below), not by every check sharing the exploration.
          judgedByItsRule(page.res.exchange);
          return page.res.status === 429 ? undefined : page;
        },
        (err: unknown) => {
          // The budget spent, or a transport fault the client could not absorb: no answer, no verdict.
          if (err instanceof CheckSkip) this.#unsent.add(key);
          if (err instanceof CheckSkip || err instanceof SuiteError) return undefined;
          throw err;
        },
      );
      this.#memo.set(key, a);
    }
    return a;
  }

  /** The rules an answer breaks: a legal request's held to the model, an illegal one's to what the contract allows of it. */
  judged(d: Draw, page: ListPage): Disagreement[] {
    const c = this.#context.get(d.path)!;
    if (d.illegal) return judgeIllegal(c.m, d.illegal, d.path, page, c.predicted);
    const dis = judge(c.m, d.q, page, c.predicted);
    // Another spelling is the literal request: judged as it, and the message says how it was sent.
    return d.spelled ? dis.map((y) => ({ ...y, message: `${y.message} (sent spelled ?${d.spelled!.query})` })) : dis;
  }
}

/** An answer that broke a rule: the request, its page, what it broke, and the way of asking it came from. */
interface Broken {
  d: Draw;
  page: ListPage;
  dis: Disagreement[];
  source: Source;
}

/**
 * What the answers came to: how many were judged, refused, not sent and unanswered; by way of
 * asking, how many requests were asked and, by rule, how many broke it; and every answer that
 * broke a rule, in the order judged.
 */
class Tally {
  judged = 0;
  refused = 0;
  notSent = 0;
  unanswered = 0;
  /** Requests asked, by source; for tie walks, the walks (a walk breaks a rule when a page of it, or the walk across them, does). */
  readonly sent: Map<Source, number>;
  /** By rule, by source: how many requests broke it. */
  readonly counts = new Map<string, Map<Source, number>>();
  readonly broken: Broken[] = [];

  constructor(ties: number) {
    this.sent = new Map<Source, number>([['ties', ties]]);
  }

  /** One more request of `source` that broke rule `id`. */
  count(id: string, source: Source): void {
    let bySource = this.counts.get(id);
    if (!bySource) this.counts.set(id, (bySource = new Map<Source, number>()));
    bySource.set(source, (bySource.get(source) ?? 0) + 1);
  }

  /**
   * How often rule `id` was broken: by requests of `source` (the way of asking that found it),
   * of how many that way asked; and by each other way, of how many.
   */
  share(id: string, source: Source | undefined): Pick<Found, 'drawn' | 'of' | 'also'> {
    return {
      drawn: source ? (this.counts.get(id)?.get(source) ?? 0) : 0,
      of: source ? (this.sent.get(source) ?? 0) : 0,
      also: [...(this.counts.get(id) ?? new Map<Source, number>())]
        .filter(([other]) => other !== source)
        .map(([other, k]) => ({ source: other, drawn: k, of: this.sent.get(other) ?? 0 })),
    };
  }
}

/**
 * Judges every answer to the requests asked, in their order: counts it (judged, refused, not
 * sent, unanswered), and keeps those that break a rule; then each tie walk across its pages. A
 * tie walk counts once per rule broken, by any of its pages or by the walk as a whole.
 */
function judgeAnswers(asked: readonly Asked[], pages: ReadonlyArray<ListPage | undefined>, ties: readonly TieWalk[], answers: Answers): Tally {
  const tally = new Tally(ties.length);
  /** Each tie walk's pages, in its order, and the rules they broke. */
  const walks = new Map<TieWalk, { pages: Array<ListPage | undefined>; rules: Set<string> }>(ties.map((w) => [w, { pages: [], rules: new Set() }]));
  for (const [i, page] of pages.entries()) {
    const { d, source, walk } = asked[i]!;
    if (walk) walks.get(walk)!.pages.push(page);
    else tally.sent.set(source, (tally.sent.get(source) ?? 0) + 1);
    if (!page) {
      if (answers.notSent(d)) tally.notSent++;
      else tally.unanswered++;
      continue;
    }
    if (page.res.status !== 200 && page.res.status < 500) tally.refused++;
    else tally.judged++;
    const dis = answers.judged(d, page);
    if (dis.length) tally.broken.push({ d, page, dis, source });
    for (const id of new Set(dis.map((y) => y.checkId))) walk ? walks.get(walk)!.rules.add(id) : tally.count(id, source);
  }
  for (const [w, { pages: own, rules }] of walks) {
    const y = judgeTies(w, own);
    if (y) {
      tally.broken.push({ d: w.draws.at(-1)!, page: own.at(-1)!, dis: [y], source: 'ties' });
      rules.add(y.checkId);
    }
    for (const id of rules) tally.count(id, 'ties');
  }
  return tally;
}

/**
 * The pages the models were built from are answers too: each is held to its model as well, in
 * the order read (reported as read; a traversal's page is not drawn, so not shrunk).
 */
function judgeTraversals(models: readonly ListModel[], answers: Answers, tally: Tally): void {
  const walked: Array<{ d: Draw; page: ListPage }> = [];
  for (const m of models) {
    for (const page of m.pages) {
      const q = queryOfUrl(page.res.exchange.url);
      if (q) walked.push({ d: { path: m.path, q }, page });
    }
  }
  for (const { d, page } of walked) {
    const dis = answers.judged(d, page);
    if (dis.length) tally.broken.push({ d, page, dis, source: 'walks' });
  }
}

/**
 * The paths whose list changed while the run read it, each noted: what rests on the model holds
 * only if the list is still as the model read it, so when a broken rule rests on it, each list
 * is read once more (not from the memo), its total and its records updated last.
 */
async function staleModels(ctx: CheckContext, e: Endpoint, models: readonly ListModel[], notes: string[], broken: readonly Broken[]): Promise<Set<string>> {
  const stale = new Set<string>();
  if (!broken.some((b) => b.dis.some((y) => y.byModel))) return stale;
  for (const m of models) {
    const change = await changedSince(ctx, e, m);
    if (change) {
      stale.add(m.path);
      notes.push(`${m.path} changed while the run read it (${change}): what rests on the records read is not judged`);
    }
  }
  return stale;
}

// --- Shrinking -------------------------------------------------------------------------

/** The ways of asking, in the order a rule's first breaking request is looked for. */
const ORDER: readonly Source[] = ['covering', 'legal', 'spellings', 'illegal', 'ties', 'walks'];

/**
 * Each rule broken, shrunk in the way its first breaking request was asked. Drawn requests:
 * fast-check replays the same draws (from the memo) to the first that breaks it, then shrinks it
 * to the smallest request that still does. The covering array's: its parameters taken away one
 * at a time while the answer still breaks the rule. Tie walks and traversals: as read.
 */
class Shrinking {
  readonly #answers: Answers;
  readonly #spaces: Spaces;
  readonly #tally: Tally;
  readonly #stale: ReadonlySet<string>;
  /** The rules to shrink: those the answers broke, then those broken only by pages shrinking asked for. */
  readonly #rules: string[];
  /**
   * A page shrinking asks for is an answer too: a rule it breaks that no draw broke joins the
   * list (reported with that page, as found while shrinking), so no check passes on an answer
   * the run holds that breaks its rule.
   */
  readonly #byShrinking: Array<{ d: Draw; page: ListPage; dis: Disagreement[] }> = [];

  constructor(answers: Answers, spaces: Spaces, tally: Tally, stale: ReadonlySet<string>) {
    this.#answers = answers;
    this.#spaces = spaces;
    this.#tally = tally;
    this.#stale = stale;
    this.#rules = [...new Set(tally.broken.flatMap((b) => b.dis.filter((y) => this.#holds(b.d, y)).map((y) => y.checkId)))];
  }

  /** Whether a disagreement stands: it rests on no model, or on one whose list did not change. */
  #holds(d: Draw, y: Disagreement): boolean {
    return !y.byModel || !this.#stale.has(d.path);
  }

  /** Shrinks every rule in turn, those that join the list on the way too, into `found`. */
  async run(found: Map<string, Found>): Promise<void> {
    for (let k = 0; k < this.#rules.length; k++) {
      const id = this.#rules[k]!;
      this.#answers.shrinkNext();
      found.set(id, await this.#shrink(id));
    }
  }

  /** The answer to `d`, if it breaks rule `id` (and every rule it breaks that is not on the list yet, added). */
  async #breaks(id: string, d: Draw): Promise<{ page: ListPage; y: Disagreement } | undefined> {
    const page = await this.#answers.ask(d);
    const all = page ? this.#answers.judged(d, page).filter((z) => this.#holds(d, z)) : [];
    for (const other of new Set(all.map((z) => z.checkId))) {
      if (this.#rules.includes(other)) continue;
      this.#rules.push(other);
      this.#byShrinking.push({ d, page: page!, dis: all });
    }
    const y = all.find((z) => z.checkId === id);
    return page && y ? { page, y } : undefined;
  }

  /** Rule `id` shrunk from the first answer that broke it, by the way of asking it came from. */
  async #shrink(id: string): Promise<Found> {
    const first = ORDER.map((source) => this.#tally.broken.find((b) => b.source === source && b.dis.some((y) => y.checkId === id && this.#holds(b.d, y)))).find(
      (b) => b !== undefined,
    );
    const { drawn, of, also } = this.#tally.share(id, first?.source);
    if (first && (first.source === 'legal' || first.source === 'spellings' || first.source === 'illegal')) {
      const hit = await this.#shrinkDrawn(id, first);
      if (hit) return { ...hit, source: first.source, drawn, of, shrinkRequests: this.#answers.shrinkSent, also };
    }
    if (first?.source === 'covering') {
      const best = await this.#shrinkCovering(id, first);
      return { draw: best.d, disagreement: best.y, page: best.page, source: 'covering', drawn, of, shrinkRequests: this.#answers.shrinkSent, also };
    }
    // Broken by a tie walk or a page of the traversals alone, or by one shrinking asked for
    // (or shrinking could not confirm it): as read.
    const shrunk = this.#byShrinking.find((b) => b.dis.some((y) => y.checkId === id));
    const found = first ?? { ...shrunk!, source: 'walks' as const };
    return {
      draw: found.d,
      disagreement: found.dis.find((y) => y.checkId === id && this.#holds(found.d, y))!,
      page: found.page,
      source: found.source,
      drawn,
      of,
      shrinkRequests: this.#answers.shrinkSent,
      also,
      ...(first ? {} : { whileShrinking: true }),
    };
  }

  /**
   * A drawn request's rule: fast-check replays the space it was drawn from (with its seed) to
   * the first request that breaks it and shrinks that one; undefined when the smallest it finds
   * does not break it after all.
   */
  async #shrinkDrawn(id: string, first: Broken): Promise<{ draw: Draw; disagreement: Disagreement; page: ListPage } | undefined> {
    const drawnFrom =
      first.source === 'legal'
        ? this.#spaces.legal
        : first.source === 'spellings'
          ? this.#spaces.spellings
          : this.#spaces.illegal.find((p) => p.stratum === first.d.stratum)!;
    const r = await fc.check(
      fc.asyncProperty(drawnFrom.space, async (d) => (await this.#breaks(id, d)) === undefined),
      { seed: drawnFrom.seed, numRuns: drawnFrom.runs },
    );
    const hit = r.failed && r.counterexample ? await this.#breaks(id, r.counterexample[0]) : undefined;
    return hit ? { draw: r.counterexample![0], disagreement: hit.y, page: hit.page } : undefined;
  }

  /** A covering array's request: its parameters taken away one at a time (smaller) while the answer still breaks rule `id`. */
  async #shrinkCovering(id: string, first: Broken): Promise<{ d: Draw; page: ListPage; y: Disagreement }> {
    let best = { d: first.d, page: first.page, y: first.dis.find((y) => y.checkId === id)! };
    for (let again = true; again;) {
      again = false;
      for (const q of smaller(best.d.q)) {
        const d = { path: best.d.path, q };
        const hit = await this.#breaks(id, d);
        if (hit) {
          best = { d, ...hit };
          again = true;
          break;
        }
      }
    }
    return best;
  }
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
      if (r.updatedRaw !== undefined && known.updated !== r.updated)
        return `record ${r.id} updated since: updated_at ${known.updatedRaw ?? '?'}, now ${r.updatedRaw}`;
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
  const { rows, of, covered, pairs } = x.covering;
  const shared = of > rows ? `; ${of - rows} more on the operation's other path(s), the path one of the conditions` : '';
  const ways = `a covering array of ${rows} requests (${covered} of ${pairs} pairs of conditions covered${shared}), ${x.legal} legal and ${x.illegal} illegal draw(s), ${x.ties} tie walk(s)`;
  return `explored: ${x.drawn} request(s)${parents} (${ways}): ${x.judged} judged against the model, ${x.refused} refused (not judged)${x.notSent ? `, ${x.notSent} not sent (the request budget spent)` : ''}${x.unanswered ? `, ${x.unanswered} unanswered` : ''}${x.spelled ? `; ${x.spelled} of the legal draws sent in other spellings` : ''}${x.notes.length ? `; ${x.notes.join('; ')}` : ''}`;
}
