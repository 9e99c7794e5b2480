// One answer to a list request, and what can be read from it: what kind of answer it is, its
// numbers, its records, and how it stands against what is known of the list (a model, or a
// model that knows no record). These are facts, not rules: each list check carries the rule
// (its `page`) that turns them into a verdict under its own id, and every way the suite asks
// (the fixed probes, the exploration, the illegal requests' readings, the traffic it observes)
// holds an answer to the same rules (judge.ts).
//
// Where one fact can break several rules, the rule it breaks depends on the request (a count
// wrong past the end breaks list.meta.past-end, elsewhere the page length asked for): the
// functions named ...Rule below say which, and each check's rule asks whether it is the one.
import { CheckFailure } from '../../lib/evidence/index.js';
import { fail, type CheckContext } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import {
  comparator,
  describeQuery,
  observerModel,
  OPAQUE,
  predict,
  queryOfUrl,
  tester,
  type ListModel,
  type ListQuery,
  type Prediction,
  type Term,
} from './model.js';
import type { ListPage, Rec } from './pages.js';
import { value, type Attr, type Comparator } from './collation.js';
import { HARD_OFFSET_LIMIT } from './walks.js';
import { defaultPageLength } from './target.js';

/**
 * Where a finding stands among the others one answer breaks, from the answer's shape to its
 * records: the first is the most basic cause (judge.ts orders them so, and an illegal request's
 * readings name the first).
 */
export const PHASE = { answer: 0, length: 1, fields: 2, limit: 3, total: 4, count: 5, numbers: 6, repeat: 7, filter: 8, order: 9, model: 10 } as const;

/** What one answer broke of one rule: the rule is the check's whose `page` found it. */
export interface PageFinding {
  message: string;
  expected: string;
  actual: string;
  /** Rests on the model's knowledge of the records (withdrawn if the list turns out to have changed). */
  byModel?: boolean;
  phase: number;
}

/**
 * A list check's rule, held to one answer to a request of the legal query space: undefined where
 * the answer does not bear on the rule, an empty list where it bears on it and keeps it, else what
 * it broke.
 */
export type PageRule = (a: Answer) => PageFinding[] | undefined;

/** The rule of list.params.invalid, held to one answer to a request with invalid paging parameters. */
export type IllegalRule = (page: ListPage, what: string) => PageFinding | undefined;

/**
 * What an answer is, in the order the rules read it: a server error; a refusal (4xx: of a request
 * the target does not support, or one of the answers allowed over 100 and past an offset limit;
 * never judged as a page); a 200 that is not a list; a list past the hard or the soft offset
 * limit (only the page size is judged there); a list whose pagination fields are missing or not
 * integers; a page whose numbers can be read.
 */
export type AnswerKind = 'server-error' | 'refused' | 'not-a-list' | 'past-hard' | 'past-soft' | 'malformed' | 'page';

const intOr = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** Ids of records, the first `max` of them. */
export function ids(rs: readonly Rec[], max = 6): string {
  const shown = rs.slice(0, max).map((r) => r.id);
  return `${shown.join(', ')}${rs.length > max ? `, … (${rs.length} in all)` : ''}`;
}

/** A record's value of `attr` as the target wrote it (instant keys are the model's, not for people). */
function shownValue(r: Rec, attr: Attr): string {
  return (attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw) ?? '(none)';
}

/** The check of the page length a request asks for. */
export function limitRule(q: ListQuery): string {
  return q.limit === undefined ? 'list.limit.default' : q.limit > 100 ? 'list.limit.max' : 'list.limit.exact';
}

/** The check of the first filter term's operator (a filter rule broken by the answer's records). */
export function filterRule(q: ListQuery): string {
  return `list.filter.${q.filters[0]!.op}`;
}

/** The check of the sort the request asked for. */
export function sortRule(q: ListQuery): string {
  const s = q.sort!;
  return s.descending ? 'list.sort.descending' : `list.sort.${s.attr.replace('_', '-')}`;
}

/**
 * An answer's pagination numbers, each undefined where it is not an integer: meta.page.limit,
 * offset and current, meta.page.total (pageCount: the number of pages) and meta.results.total
 * (results: the number of records the request selects).
 */
interface Numbers {
  limit?: number;
  offset?: number;
  current?: number;
  pageCount?: number;
  results?: number;
}

/** The record of a sorted answer the model predicted otherwise (see Answer.mispredicted). */
interface Mispredicted {
  position: number;
  got: Rec;
  at: Rec;
  tied: number;
  /** Records of the selection missing from the page. */
  lost: Rec[];
}

/** One answer to `q`, read once and lazily: each rule asks only what it needs. */
export class Answer {
  readonly status: number;
  readonly asked: string;
  readonly offset: number;
  readonly pastHard: boolean;
  readonly pastSoft: boolean;
  readonly kind: AnswerKind;
  readonly records: Rec[];
  readonly n: number;
  #meta?: Numbers;
  #p?: Prediction;
  #moved?: boolean;
  #inversion?: number;
  #mispredicted?: Mispredicted | null;
  readonly #wrong = new Map<Term, Rec[]>();

  constructor(
    readonly m: ListModel,
    readonly q: ListQuery,
    readonly page: ListPage,
    readonly predicted: (q: ListQuery) => Prediction = (x) => predict(m, x),
  ) {
    this.status = page.res.status;
    this.asked = describeQuery(q);
    this.offset = q.offset ?? 0;
    this.pastHard = m.hardOffsetLimit && this.offset > HARD_OFFSET_LIMIT;
    this.pastSoft = !m.hardOffsetLimit && this.offset > HARD_OFFSET_LIMIT;
    this.records = page.records;
    this.n = page.records.length;
    this.kind =
      this.status >= 500
        ? 'server-error'
        : this.status !== 200
          ? 'refused'
          : !page.ok
            ? 'not-a-list'
            : this.pastHard
              ? 'past-hard'
              : this.pastSoft
                ? 'past-soft'
                : page.violations?.length
                  ? 'malformed'
                  : 'page';
  }

  /** A 200 answer that is a list (any kind from past-hard on). */
  get listed(): boolean {
    return this.status === 200 && this.page.ok;
  }

  /** The pagination numbers as integers (read for kind 'page', where all are). */
  get meta(): Numbers {
    const m = this.page.meta;
    return (this.#meta ??= {
      limit: intOr(m?.page?.limit),
      offset: intOr(m?.page?.offset),
      current: intOr(m?.page?.current),
      pageCount: intOr(m?.page?.total),
      results: intOr(m?.results?.total),
    });
  }

  /** meta.results.total (kind 'page'). */
  get total(): number {
    return this.meta.results!;
  }

  /** The page length the answer is held to: the one asked for, the default without one, clamped to 1..100 over 100. */
  get limit(): number {
    if (this.q.limit === undefined) return this.m.defaultLength;
    if (this.q.limit > 100) return Math.min(100, Math.max(1, this.meta.limit ?? 100));
    return this.q.limit;
  }

  /** How many records the page's own numbers say it holds: min(limit, total - offset). */
  get want(): number {
    return Math.max(0, Math.min(this.limit, this.total - this.offset));
  }

  get prediction(): Prediction {
    return (this.#p ??= this.predicted(this.q));
  }

  /** The list is not as the model read it (a record it does not know, or one with other timestamps): what rests on the model is withdrawn for this answer. */
  get moved(): boolean {
    return (this.#moved ??= this.records.some((r) => {
      const k = this.m.records.get(r.id);
      return k === undefined || k.created !== r.created || k.updated !== r.updated;
    }));
  }

  finding(message: string, expected: string, actual: string, phase: number, byModel = false): PageFinding {
    return { message: `${this.asked}: ${message}`, expected, actual, phase, byModel };
  }

  /** The rule a server error breaks: the offset limits past them, past the end, else the first feature the request uses. */
  serverErrorRule(): string {
    const q = this.q;
    const past = this.m.complete && this.offset > 0 && this.offset >= this.prediction.selected.length;
    if (this.pastHard) return 'list.offset.hard-limit';
    if (this.pastSoft) return 'list.offset.soft-limit-5xx';
    if (past) return 'list.meta.past-end';
    return q.filters.length ? filterRule(q) : q.sort ? sortRule(q) : limitRule(q);
  }

  serverError(): PageFinding {
    return this.finding('a server error for a request of the legal query space', 'a list page, or a refusal with a 4xx', `status ${this.status}`, PHASE.answer);
  }

  /** A server error, where it breaks `id`'s rule. */
  serverErrorFor(id: string): PageFinding[] | undefined {
    return this.kind === 'server-error' && this.serverErrorRule() === id ? [this.serverError()] : undefined;
  }

  /** The rule missing pagination fields break: an empty filtered result's, an empty page past the end's, else the fields'. */
  malformedRule(): string {
    return this.n === 0 && this.q.filters.length ? 'list.meta.empty-filter' : this.n === 0 && this.offset > 0 ? 'list.meta.past-end' : 'list.meta.fields';
  }

  malformed(): PageFinding {
    return this.finding(
      'the pagination fields are missing or not integers',
      'meta.page.limit/offset/current/total and meta.results.total, non-negative integers',
      (this.page.violations ?? [])
        .map((v) => `${v.path} ${v.message}`)
        .slice(0, 3)
        .join('; '),
      PHASE.fields,
    );
  }

  /** Missing pagination fields, where they break `id`'s rule. */
  malformedFor(id: string): PageFinding[] {
    return this.malformedRule() === id ? [this.malformed()] : [];
  }

  /** The rule a page with another number of records than its numbers say breaks: past the end, else the page length asked for. */
  countRule(): string {
    return this.offset >= this.total && this.n > 0 ? 'list.meta.past-end' : limitRule(this.q);
  }

  /** The records on a page (kind 'page') against min(limit, total - offset), where it breaks `id`'s rule. */
  countFor(id: string): PageFinding[] {
    const want = this.want;
    if (this.n === want || this.n > 100 || this.countRule() !== id) return [];
    return [
      this.finding(
        `${this.n} records where the page's own numbers say ${want}`,
        `min(limit ${this.limit}, results.total ${this.total} - offset ${this.offset}) = ${want} records`,
        `${this.n} records`,
        PHASE.count,
      ),
    ];
  }

  /** The records that do not match term `t` (none has no value to compare); read once per term, as the filter rules and the model's place both ask. */
  wrongFor(t: Term): Rec[] {
    let wrong = this.#wrong.get(t);
    if (!wrong) {
      const test = tester(this.m, t);
      this.#wrong.set(t, (wrong = this.records.filter((r) => test(r) === false)));
    }
    return wrong;
  }

  /** The first position of a sorted page whose record comes before the one ahead of it in the order asked for, or -1. */
  inversion(): number {
    if (this.#inversion !== undefined) return this.#inversion;
    this.#inversion = -1;
    const { attr, descending } = this.q.sort!;
    const cmp = comparator(this.m, attr);
    for (let i = 1; i < this.n; i++) {
      const a = value(this.records[i - 1]!, attr);
      const b = value(this.records[i]!, attr);
      if (a === undefined || b === undefined) continue;
      const c = cmp(a, b);
      if (descending ? c < 0 : c > 0) return (this.#inversion = i);
    }
    return this.#inversion;
  }

  /** The page breaks its filter or its order by itself: the cause of any record out of the model's place. */
  #breaksFilterOrOrder(): boolean {
    return (this.n > 0 && this.q.filters.some((t) => this.wrongFor(t).length > 0)) || (this.q.sort !== undefined && this.inversion() >= 0);
  }

  /**
   * The first record of a sorted page that is not the one the model predicts at its position (up
   * to the order of ties), where the model knows which records stand there: no record newer than
   * the horizon, and not where the page already broke its filter or its order (that is the cause).
   */
  mispredicted(): Mispredicted | undefined {
    if (this.#mispredicted !== undefined) return this.#mispredicted ?? undefined;
    this.#mispredicted = null;
    const p = this.prediction;
    if (!this.q.sort || this.kind !== 'page' || this.moved || p.opaque || this.#breaksFilterOrOrder()) return undefined;
    const attr = this.q.sort.attr;
    const offset = this.offset;
    const rs = this.records;
    const upto = Math.min(offset + this.n, p.exact, p.selected.length);
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
      return (this.#mispredicted = { position: i, got, at, tied, lost });
    }
    return undefined;
  }

  /**
   * The rule a record out of the model's place breaks: under a filter, with records of the
   * selection missing, the filter lost them; else the records at an offset are not those the
   * offset names; at offset 0, the sort put others first.
   */
  mispredictedRule(): string | undefined {
    const x = this.mispredicted();
    if (!x) return undefined;
    return this.q.filters.length && x.lost.length ? filterRule(this.q) : this.offset > 0 ? 'list.offset.records' : sortRule(this.q);
  }

  /** A record out of the model's place, where it breaks `id`'s rule. */
  mispredictedFor(id: string): PageFinding[] {
    const x = this.mispredicted();
    if (!x || this.mispredictedRule() !== id) return [];
    const attr = this.q.sort!.attr;
    return [
      this.finding(
        `record ${x.position} of the ${this.q.filters.length ? 'filtered ' : ''}listing is not the one the model predicts`,
        `at position ${x.position}: ${x.at.id} (${attr} ${shownValue(x.at, attr)})${x.tied > 1 ? ` or another of the ${x.tied} records tied with it` : ''}${x.lost.length ? `; missing from the page: ${ids(x.lost)}` : ''}`,
        `${x.got.id} (${attr} ${shownValue(x.got, attr)})`,
        PHASE.model,
        true,
      ),
    ];
  }

  /**
   * Without a sort the order is the target's own, but a result that fits on one page from offset
   * 0 is the whole selection: every record the model knows the request selects is on it. Those
   * missing, where they break `id`'s rule (the filter's under one, else list.offset.traversal).
   */
  incompleteFor(id: string): PageFinding[] {
    const p = this.prediction;
    const q = this.q;
    if (q.sort || this.offset !== 0 || this.kind !== 'page' || this.moved || !this.m.complete || p.opaque) return [];
    if (p.low !== p.selected.length || p.selected.length > this.limit || this.n !== this.total) return [];
    if ((q.filters.length ? filterRule(q) : 'list.offset.traversal') !== id) return [];
    const lost = p.selected.filter((r) => !this.records.some((x) => x.id === r.id));
    if (!lost.length) return [];
    return [
      this.finding(
        'the one page of the result lacks records the request selects',
        `all ${p.selected.length} records the request selects`,
        `missing ${ids(lost)}`,
        PHASE.model,
        true,
      ),
    ];
  }

  /**
   * meta.results.total against the model, where it knows the records the request selects (exact
   * where it knows them all, else within what it does not know): where it breaks `id`'s rule (the
   * filtered or the unfiltered total). Undefined where the model cannot say, or the total agrees.
   */
  totalFor(id: string): PageFinding[] | undefined {
    const p = this.prediction;
    const filtered = this.q.filters.length > 0;
    if (this.kind !== 'page' || this.moved || p.opaque || (filtered ? 'list.total.filtered' : 'list.total.unfiltered') !== id) return undefined;
    const total = this.total;
    if (total >= p.low && total <= p.high) return undefined;
    const expected = p.low === p.high ? `meta.results.total ${p.low}` : `meta.results.total from ${p.low} to ${p.high}`;
    return [
      this.finding(
        'meta.results.total is not the number of records the request selects',
        `${expected} (the records read by the run's traversals that ${filtered ? 'the filter selects' : 'the list holds'})`,
        `meta.results.total ${total}`,
        PHASE.total,
        true,
      ),
    ];
  }

  /** Records given twice on the page. */
  twice(): Rec[] {
    const seen = new Set<string>();
    return this.records.filter((r) => (seen.has(r.id) ? true : (seen.add(r.id), false)));
  }

  /** A sorted page's pair of records out of order, in words. */
  describeInversion(): string {
    const i = this.inversion();
    const attr = this.q.sort!.attr;
    const [a, b] = [this.records[i - 1]!, this.records[i]!];
    return `${a.id} (${attr} ${shownValue(a, attr)}) then ${b.id} (${attr} ${shownValue(b, attr)})`;
  }
}

/** What a check's `run` throws as a finding of a page rule (a CheckFailure's words, in a finding). */
export function findingOf(err: unknown, phase: number): PageFinding {
  if (!(err instanceof CheckFailure)) throw err;
  return { message: err.message, expected: err.expected ?? '', actual: err.actual ?? '', phase };
}

/**
 * One answer a fixed probe read, for its rule: held to a model that knows no record of the list
 * (what one answer shows by itself), with the default page length the run expects and, for ids,
 * the collation `idOrder` (read by the probe from the target's own sort=id answers). Undefined
 * for a request outside the query space the rules judge (its URL carries another parameter).
 */
async function probeAnswer(ctx: CheckContext, e: Endpoint, path: string, page: ListPage, idOrder?: Comparator): Promise<Answer | undefined> {
  const q = queryOfUrl(page.res.exchange.url);
  if (!q) return undefined;
  const m = observerModel(path, (await defaultPageLength(ctx)).value, e.hardOffsetLimit, idOrder);
  return new Answer(m, q, page, () => OPAQUE);
}

/** A page a fixed probe read, held to `rule` as every other answer is: the check fails with what it broke (the first finding; the rest named). */
export async function expectRule(ctx: CheckContext, e: Endpoint, path: string, page: ListPage, rule: PageRule, idOrder?: Comparator): Promise<void> {
  const a = await probeAnswer(ctx, e, path, page, idOrder);
  if (!a) return;
  const found = (rule(a) ?? []).sort((x, y) => x.phase - y.phase);
  const first = found[0];
  if (!first) return;
  const more =
    found.length > 1
      ? ` (and ${found.length - 1} more: ${found
          .slice(1)
          .map((f) => f.message.replace(/^.*?: /, ''))
          .join('; ')})`
      : '';
  fail(`${first.message}${more}`, { expected: first.expected, actual: first.actual, res: a.page.res });
}
