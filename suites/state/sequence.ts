// Sends the sequences of suites/state/model.ts and holds every answer to the model. Each
// sequence runs in a session of its own (its records named `conformance-<run id>-state-<hash>-<n>`,
// each in the ledger before its create goes out: suites/create and suites/delete's helpers),
// its steps one after another; the sequences run side by side. A list that disagrees with the
// model is asked again, at growing intervals, until the run's time buffer has passed (eventual
// consistency: spec/contract/README.md#states), a read for the two seconds a run's reads of a
// deleted id get (spec/contract/README.md#delete.applied); only then is it a violation. Once a
// step has broken a rule, a list that still disagrees is not waited for.
//
// A violation is shrunk with fast-check, as the create exploration does (suites/create/explore.ts):
// fc.check with the run's seed meets the same sequences first (their outcomes are kept), then
// tries shorter ones, each sent anew, at most SHRINK_RUNS per rule; a shorter sequence is given
// SHRINK_SETTLE_MS to settle (the verdict rests on the drawn one, which had the whole buffer).
// Loaded by the checks with a dynamic import: the check catalogue never loads fast-check.
import fc from 'fast-check';
import { type CheckContext, hash32, Session } from '../../lib/runner/index.js';
import { CheckFailure, toCurl, type Exchange } from '../../lib/evidence/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { APPLICATION_KEYS, applicationKeyPath, keyData, postApplicationKey, validKeyBody } from '../create/application-key.js';
import { createCustomApi, CUSTOM_APIS, customApiPath, deleteCustomApi, READS_SETTLE_MS } from '../delete/custom-api.js';
import {
  describeStep,
  DRAWN,
  EDGE,
  judgeDistinct,
  judgeList,
  judgeRead,
  KIND_NAME,
  type Kind,
  type Made,
  type Rule,
  sequenceArb,
  type Step,
  type Violation,
  type Walked,
} from './model.js';

/** The time buffer when the run has none (no list operation selected): the default of --time-buffer. */
export const DEFAULT_SETTLE_MS = 60_000;
/** How long a shorter sequence tried while shrinking is given to settle (at most the run's buffer). */
export const SHRINK_SETTLE_MS = 3_000;
/** The most shorter sequences shrinking one violation sends. */
export const SHRINK_RUNS = 6;
/** Records per page of a walk, and the most pages it reads (a longer list is not counted: its total is not judged). */
const PAGE = 100;
const MOST_PAGES = 10;

/** The fast-check seed of the sequences: the run's seed and a fixed key. */
export function sequenceSeed(runSeed: number): number {
  return hash32(`${runSeed}:state:sequences`) | 0;
}

/** The sequences of a run: EDGE, then DRAWN drawn from the seed. The same seed draws the same. */
export function drawSequences(runSeed: number): Step[][] {
  return [[...EDGE], ...fc.sample(sequenceArb, { seed: sequenceSeed(runSeed), numRuns: DRAWN })];
}

/** A step that sent something, as the report shows it. */
export interface Shown {
  what: string;
  exchanges: readonly Exchange[];
}

/** A violation, at the step (1-based, among the steps shown) whose answer showed it. */
export type Located = Violation & { at: number; exchange?: Exchange };

/** What one sequence gave. */
export interface Ran {
  steps: readonly Step[];
  shown: Shown[];
  violations: Located[];
  /** The rules some answer was held to. */
  exercised: Set<Rule>;
  notes: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const is2xx = (status: number): boolean => status >= 200 && status < 300;

/**
 * Asks until `done` says the answer agrees, or `settleMs` have passed since the first ask, at
 * growing intervals (a quarter second, doubling, at most 8 s apart), or `given` says to give up
 * waiting (another step already broke a rule); returns the last answer.
 */
async function settle<T>(settleMs: number, ask: () => Promise<T>, done: (t: T) => boolean, given: () => boolean = () => false): Promise<T> {
  const until = Date.now() + settleMs;
  for (let n = 0; ; n++) {
    const t = await ask();
    const left = until - Date.now();
    if (done(t) || left <= 0 || given()) return t;
    await sleep(Math.min(left, 250 * 2 ** n, 8_000));
  }
}

/** Every page of a list, PAGE at a time; undefined `walked` when an answer is not a page (its status says why). */
async function walk(s: Session, path: string): Promise<{ walked?: Walked; res: HttpResponse }> {
  const records: Array<{ id: string; name?: string }> = [];
  let total: number | undefined;
  let same = true;
  for (let page = 0; ; page++) {
    const res = await s.request({ method: 'GET', path, query: { 'page[limit]': PAGE, ...(page ? { 'page[offset]': page * PAGE } : {}) } });
    const body = res.status === 200 && res.isJson ? (res.json() as { data?: unknown; meta?: { results?: { total?: unknown } } } | null) : undefined;
    if (!body || !Array.isArray(body.data)) return { res };
    const t = typeof body.meta?.results?.total === 'number' ? body.meta.results.total : undefined;
    if (page === 0) total = t;
    else if (t !== total) same = false;
    for (const r of body.data as Array<{ id?: unknown; name?: unknown } | null>) {
      if (r && typeof r.id === 'string') records.push({ id: r.id, ...(typeof r.name === 'string' ? { name: r.name } : {}) });
    }
    const last = body.data.length < PAGE;
    if (last || page + 1 >= MOST_PAGES) {
      const whole = last && same && total !== undefined;
      return { walked: { records, ...(whole ? { total } : {}), whole }, res };
    }
  }
}

/** What one step sent and saw, before it joins the sequence (in step order: SequenceRun.record). */
interface Done {
  /** Undefined: nothing to pick, nothing sent. */
  what?: string;
  s: Session;
  violations: Violation[];
  /** A create: what it made (undefined when it made nothing), and its kind. */
  created?: { kind: Kind; data?: Record<string, unknown>; failed?: string };
}

/**
 * One sequence under way: the model (what it made, and what is gone) and what it saw. Steps that
 * do not depend on one another go out together: a run of creates, a run of reads and lists; a
 * delete goes alone. Each step has a session of its own (its exchanges are its evidence; its
 * names carry the sequence's label), and joins the model in step order.
 */
class SequenceRun {
  readonly made: Made[] = [];
  readonly #data: Array<Record<string, unknown>> = [];
  readonly ran: Ran;
  /** Every exchange of every step, in step order (also of a step that came too late to count). */
  readonly sent: Exchange[] = [];
  stopped = false;
  /**
   * A step has broken a rule: the sequence fails whatever else it shows, so a list that still
   * disagrees is not waited for (its disagreement, not settled, is not reported).
   */
  #broken = false;

  constructor(
    readonly base: Session,
    readonly label: string,
    readonly settleMs: number,
    steps: readonly Step[],
  ) {
    this.ran = { steps, shown: [], violations: [], exercised: new Set(), notes: [] };
  }

  /** The steps, a phase at a time: consecutive creates, consecutive reads and lists, each delete. */
  async all(steps: readonly Step[]): Promise<void> {
    const phase = (x: Step): string => (x.do === 'create' ? 'create' : x.do === 'delete' ? 'delete' : 'observe');
    for (let i = 0; i < steps.length && !this.stopped;) {
      let j = i + 1;
      while (j < steps.length && phase(steps[j]!) === phase(steps[i]!) && phase(steps[i]!) !== 'delete') j++;
      const done = await Promise.all(
        steps.slice(i, j).map((step, k) => this.#send(step, new Session(this.base.run, `${this.label}-${i + k + 1}`, this.base.transport))),
      );
      for (const d of done) {
        this.sent.push(...d.s.exchanges);
        this.#record(d);
      }
      i = j;
    }
  }

  #record(d: Done): void {
    if (this.stopped || d.what === undefined) return;
    let what = d.what;
    if (d.created) {
      const { kind, data, failed } = d.created;
      if (failed !== undefined || !data) {
        this.ran.notes.push(`not testable: the create of a ${KIND_NAME[kind]} answered ${failed ?? ''}; the sequence stopped there`);
        this.stopped = true;
      } else {
        const before = this.#data.filter((_, i) => this.made[i]!.kind === kind);
        if (before.length) this.ran.exercised.add('distinct');
        const v = judgeDistinct(kind, data, before, before.length + 1);
        if (v) d.violations.push(v);
        this.made.push({ kind, id: data.id as string, name: typeof data.name === 'string' ? data.name : '', gone: false });
        this.#data.push(data);
        what = `${what} (#${before.length + 1})`;
      }
    }
    const exchanges = d.s.exchanges;
    this.ran.shown.push({ what, exchanges });
    for (const v of d.violations) {
      this.ran.exercised.add(v.rule);
      this.ran.violations.push({ ...v, at: this.ran.shown.length, ...(exchanges.length ? { exchange: exchanges.at(-1) } : {}) });
    }
  }

  #send(step: Step, s: Session): Promise<Done> {
    switch (step.do) {
      case 'create':
        return this.#create(step.kind, s);
      case 'read':
        return this.#read(step.kind, step.pick, s);
      case 'list':
        return this.#list(step.kind, s);
      case 'delete':
        return this.#delete(step.pick, s);
    }
  }

  async #create(kind: Kind, s: Session): Promise<Done> {
    let res: HttpResponse;
    let data: Record<string, unknown> | undefined;
    if (kind === 'key') {
      res = await postApplicationKey(s, { json: validKeyBody(s.name()) });
      data = keyData(res) as Record<string, unknown> | undefined;
    } else {
      const made = await createCustomApi(s);
      res = made.res;
      data = made.ok ? { id: made.id, ...(keyData(res) ?? {}) } : undefined;
    }
    const what = describeStep({ do: 'create', kind });
    const id = data?.id;
    if (!is2xx(res.status) || typeof id !== 'string' || id === '')
      return { what, s, violations: [], created: { kind, failed: `${res.status}${is2xx(res.status) ? ' without data.id' : ''}` } };
    return { what, s, violations: [], created: { kind, data: data! } };
  }

  async #read(kind: Kind, pick: number, s: Session): Promise<Done> {
    const mine = this.made.filter((m) => m.kind === kind);
    if (mine.length === 0) return { s, violations: [] };
    const m = mine[pick % mine.length]!;
    const path = kind === 'key' ? applicationKeyPath(m.id) : customApiPath(m.id);
    // A read settles as a run's reads of a deleted id do (spec/contract/README.md#delete.applied).
    const res = await settle(
      Math.min(READS_SETTLE_MS, this.settleMs),
      () => s.request({ method: 'GET', path }),
      (r) => typeof judgeRead(m, r.status) !== 'object',
    );
    const v = judgeRead(m, res.status);
    if (typeof v === 'object') this.#broken = true;
    if (v === 'untestable') this.ran.notes.push(`the read of a ${KIND_NAME[kind]} answered ${res.status}: it says nothing of the model`);
    else this.ran.exercised.add(m.gone ? 'deleted' : 'created');
    const what = `read ${KIND_NAME[kind]} #${(pick % mine.length) + 1} of the sequence${m.gone ? ' (deleted)' : ''}`;
    return { what, s, violations: typeof v === 'object' ? [{ ...v, actual: `${v.actual}, asked again for ${this.settleMs / 1000} s` }] : [] };
  }

  async #list(kind: Kind, s: Session): Promise<Done> {
    const path = kind === 'key' ? APPLICATION_KEYS : CUSTOM_APIS;
    const agrees = (w: { walked?: Walked }): boolean => !w.walked || judgeList(kind, this.made, w.walked).length === 0;
    const got = await settle(
      this.settleMs,
      () => walk(s, path),
      agrees,
      () => this.#broken,
    );
    if (!agrees(got) && this.#broken) {
      this.ran.notes.push(`${path} still disagreed with the model when another step had already broken a rule: not waited for, not judged`);
      return { what: describeStep({ do: 'list', kind }), s, violations: [] };
    }
    const what = describeStep({ do: 'list', kind });
    if (!got.walked) {
      this.ran.notes.push(`${path} answered ${got.res.status}, not a page: the list says nothing of the model`);
      return { what, s, violations: [] };
    }
    const mine = this.made.filter((m) => m.kind === kind);
    if (mine.some((m) => !m.gone)) this.ran.exercised.add('created');
    if (mine.some((m) => m.gone)) this.ran.exercised.add('deleted');
    if (got.walked.whole) this.ran.exercised.add('total');
    const violations = judgeList(kind, this.made, got.walked).map((v) => ({
      ...v,
      actual: `${v.actual}, listed again for ${this.settleMs / 1000} s`,
    }));
    if (violations.length) this.#broken = true;
    return { what, s, violations };
  }

  async #delete(pick: number, s: Session): Promise<Done> {
    const live = this.made.filter((m) => m.kind === 'api' && !m.gone);
    if (live.length === 0) return { s, violations: [] };
    const m = live[pick % live.length]!;
    const res = await deleteCustomApi(s, m.id);
    // A 2xx (or a 404: it is not there) makes it deleted in the model; any other answer leaves it live.
    if (is2xx(res.status) || res.status === 404) m.gone = true;
    else this.ran.notes.push(`a DELETE of a Custom API answered ${res.status}: the model keeps it`);
    const n = this.made.filter((x) => x.kind === 'api').indexOf(m) + 1;
    return { what: `delete Custom API #${n} of the sequence`, s, violations: [] };
  }
}

/** Runs one sequence, labelled by its steps (so its names are its own: `conformance-<run id>-state-<hash>-<step>-<n>`). */
export async function runSequence(base: Session, steps: readonly Step[], settleMs: number): Promise<Ran> {
  const label = `state-${hash32(JSON.stringify(steps)).toString(16).padStart(8, '0')}`;
  const run = new SequenceRun(base, label, settleMs, steps);
  await run.all(steps);
  // The exchanges join the session that ran it (a check's or the shared work's): its evidence, and its 5xx.
  for (const x of run.sent) if (!base.exchanges.includes(x)) base.exchanges.push(x);
  return run.ran;
}

/** A step's requests as the report shows them: the first as a command line, and how often it was asked. */
function stepLines(shown: Shown, n: number): string {
  const [first, last] = [shown.exchanges[0], shown.exchanges.at(-1)];
  if (!first || !last) return `  ${n}. ${shown.what}: nothing sent`;
  const more = shown.exchanges.length > 1 ? ` (${shown.exchanges.length} requests; the last answered ${last.status})` : '';
  return `  ${n}. ${shown.what}: ${toCurl(first)} -> ${first.status}${more}`;
}

/** The sequences of a run, what they gave, and the shrinking of a violation. */
export class Sequences {
  readonly runSeed: number;
  readonly drawn: Step[][];
  readonly settleMs: number;
  readonly #memo = new Map<string, Promise<Ran>>();
  readonly #spent = new Map<Rule, number>();

  constructor(runSeed: number, settleMs: number) {
    this.runSeed = runSeed;
    this.settleMs = settleMs;
    this.drawn = drawSequences(runSeed);
  }

  /** Sends every sequence at once (each distinct one once). */
  async send(s: Session): Promise<Ran[]> {
    return Promise.all(this.drawn.map((steps) => this.ran(s, steps, this.settleMs)));
  }

  ran(s: Session, steps: readonly Step[], settleMs: number): Promise<Ran> {
    const key = JSON.stringify(steps);
    let r = this.#memo.get(key);
    if (!r) this.#memo.set(key, (r = runSequence(s, steps, settleMs)));
    return r;
  }

  /** A digest of the sequences drawn: two runs with one seed show the same. */
  digest(): string {
    return hash32(this.drawn.map((x) => JSON.stringify(x)).join('\u0000'))
      .toString(16)
      .padStart(8, '0');
  }

  /** The smallest sequence fast-check finds that breaks `rule`, from the drawn ones; undefined when none does. */
  async smallest(ctx: CheckContext, rule: Rule): Promise<{ ran: Ran; first: Ran; shrinks: number } | undefined> {
    const outcomes = await Promise.all(this.drawn.map((steps) => this.ran(ctx, steps, this.settleMs)));
    const first = outcomes.find((o) => o.violations.some((v) => v.rule === rule));
    if (!first) return undefined;
    const breaks = (o: Ran): boolean => o.violations.some((v) => v.rule === rule);
    const property = fc.asyncProperty(sequenceArb, async (steps) => {
      const key = JSON.stringify(steps);
      if (!this.#memo.has(key)) {
        const spent = this.#spent.get(rule) ?? 0;
        if (spent >= SHRINK_RUNS) return true;
        this.#spent.set(rule, spent + 1);
      }
      try {
        return !breaks(await this.ran(ctx, steps, Math.min(SHRINK_SETTLE_MS, this.settleMs)));
      } catch {
        return true;
      }
    });
    const details = await fc.check(property, { seed: sequenceSeed(this.runSeed), numRuns: 1 + DRAWN, examples: [[[...EDGE]]] });
    const shrunk = details.failed && details.counterexample ? await this.ran(ctx, details.counterexample[0], this.settleMs) : first;
    return { ran: breaks(shrunk) ? shrunk : first, first, shrinks: details.failed ? details.numShrinks : 0 };
  }

  /** Fails the check with the smallest sequence that breaks `rule`, each step a command line. */
  report(rule: Rule, found: { ran: Ran; first: Ran; shrinks: number }): never {
    const { ran, first } = found;
    const v = ran.violations.find((x) => x.rule === rule)!;
    const from =
      ran === first
        ? `a drawn sequence of ${first.shown.length} steps; shrinking found none shorter`
        : `shrunk in ${found.shrinks} steps from a drawn sequence of ${first.shown.length} steps`;
    const steps = ran.shown.map((x, i) => stepLines(x, i + 1)).join('\n');
    throw new CheckFailure(
      `${v.message}, at step ${v.at} of this sequence (${from}; drawn with seed ${this.runSeed}: replay with --seed ${this.runSeed}):\n${steps}`,
      { expected: v.expected, actual: v.actual, ...(v.exchange ? { exchange: v.exchange } : {}) },
    );
  }

  /** "5 sequences (1 fixed, 4 drawn; seed …, draw …): 31 steps sent, …" */
  summary(outcomes: readonly Ran[]): string {
    const steps = outcomes.reduce((n, o) => n + o.shown.length, 0);
    const notes = [...new Set(outcomes.flatMap((o) => o.notes))];
    return `${outcomes.length} sequences (1 fixed, ${DRAWN} drawn; seed ${this.runSeed}, draw ${this.digest()}): ${steps} steps sent${notes.length ? `; ${notes.join('; ')}` : ''}`;
  }
}
