// Sequences across operations, and the model that predicts every answer in them
// (spec/contract/README.md#states). The contract names no states, but create, read, list and
// delete imply them: a record created is served by its read and listed; a Custom API deleted
// reads 404 and is gone from its list; what a sequence creates is distinct; a list's
// meta.results.total counts what the sequence left there. Pure: what is drawn, and how one
// answer is held to the model; suites/state/sequence.ts sends and waits.
import fc from 'fast-check';

/** The two kinds of record the suite may create: an Application Key, a Custom API. */
export type Kind = 'key' | 'api';

/**
 * One step: create a record, read the `pick`-th record of a kind the sequence created (live or
 * deleted), list a kind, or delete the `pick`-th live Custom API. A pick past the end wraps; a
 * step with nothing to pick sends nothing (and is not shown).
 */
export type Step = { do: 'create'; kind: Kind } | { do: 'read'; kind: Kind; pick: number } | { do: 'list'; kind: Kind } | { do: 'delete'; pick: number };

/** The rules a sequence is held to, each the key of one check (suites/state/checks.ts). */
export const RULES = ['created', 'deleted', 'distinct', 'total'] as const;
export type Rule = (typeof RULES)[number];

/** The most steps of a sequence: up to 3 creates, up to 4 steps of any kind, a list to end with. */
export const MAX_STEPS = 8;

/** Sequences drawn per run, besides EDGE: with it, 5 sequences of at most 8 steps. */
export const DRAWN = 4;

const kindArb: fc.Arbitrary<Kind> = fc.constantFrom<Kind>('key', 'api');

/**
 * Unmappers (fast-check's map(mapper, unmapper)) read a step back into what was drawn, so that
 * fast-check can shrink a sequence it did not draw itself: EDGE. Each throws for what it cannot read.
 */
const field = (v: unknown, name: string): unknown => {
  if (typeof v !== 'object' || v === null || !(name in v)) throw new Error(`not a step: no ${name}`);
  return (v as Record<string, unknown>)[name];
};
const stepOf =
  (what: Step['do'], read: string) =>
  (v: unknown): unknown => {
    if (field(v, 'do') !== what) throw new Error(`not a ${what} step`);
    return field(v, read);
  };

const createArb: fc.Arbitrary<Step> = kindArb.map((kind) => ({ do: 'create' as const, kind }), stepOf('create', 'kind') as (v: unknown) => Kind);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  createArb,
  fc.record({ do: fc.constant('read' as const), kind: kindArb, pick: fc.nat({ max: 3 }) }),
  kindArb.map((kind) => ({ do: 'list' as const, kind }), stepOf('list', 'kind') as (v: unknown) => Kind),
  fc.nat({ max: 3 }).map((pick) => ({ do: 'delete' as const, pick }), stepOf('delete', 'pick') as (v: unknown) => number),
);

const MOST_CREATES = 3;
const MOST_MIDDLE = MAX_STEPS - MOST_CREATES - 1;

/** A sequence read back into its creates, its middle and the kind of its last list (see stepOf). */
function unsequence(v: unknown): [Step[], Step[], Kind] {
  if (!Array.isArray(v) || v.length < 2) throw new Error('not a sequence');
  const steps = v as Step[];
  const last = steps.at(-1)!;
  if (last.do !== 'list') throw new Error('a sequence ends with a list');
  let creates = 0;
  while (creates < MOST_CREATES && creates < steps.length - 1 && steps[creates]!.do === 'create') creates++;
  const middle = steps.slice(creates, -1);
  if (creates === 0 || middle.length > MOST_MIDDLE) throw new Error('not a sequence of this shape');
  return [steps.slice(0, creates), middle, last.kind];
}

/** A sequence: 1 to 3 creates, up to 4 steps of any kind, then a list; fast-check shrinks toward fewer steps and keys. */
export const sequenceArb: fc.Arbitrary<Step[]> = fc
  .tuple(fc.array(createArb, { minLength: 1, maxLength: MOST_CREATES }), fc.array(stepArb, { maxLength: MOST_MIDDLE }), kindArb)
  .map(([creates, middle, last]) => [...creates, ...middle, { do: 'list' as const, kind: last }], unsequence);

/**
 * Sent in every run before the drawn ones, so that every rule is exercised whatever the seed:
 * two keys and a Custom API created, a key read, the Custom API deleted and read, both lists.
 */
export const EDGE: readonly Step[] = [
  { do: 'create', kind: 'key' },
  { do: 'create', kind: 'api' },
  { do: 'create', kind: 'key' },
  { do: 'read', kind: 'key', pick: 1 },
  { do: 'delete', pick: 0 },
  { do: 'read', kind: 'api', pick: 0 },
  { do: 'list', kind: 'api' },
  { do: 'list', kind: 'key' },
];

export const KIND_NAME: Record<Kind, string> = { key: 'Application Key', api: 'Custom API' };

/** A step as the report shows it, without its request. */
export function describeStep(step: Step): string {
  switch (step.do) {
    case 'create':
      return `create ${step.kind === 'key' ? 'an Application Key' : 'a Custom API'}`;
    case 'read':
      return `read ${step.kind === 'key' ? 'Application Key' : 'Custom API'} #${step.pick + 1} of the sequence`;
    case 'list':
      return `list the ${KIND_NAME[step.kind]}s`;
    case 'delete':
      return `delete live Custom API #${step.pick + 1} of the sequence`;
  }
}

/** A record the sequence created, as the model knows it. */
export interface Made {
  kind: Kind;
  id: string;
  name: string;
  /** Deleted: a DELETE of it was answered 2xx (or 404). */
  gone: boolean;
}

/** What an answer broke: the rule, and what was expected and came back (values of secrets never quoted). */
export interface Violation {
  rule: Rule;
  message: string;
  expected: string;
  actual: string;
}

/** A list as one walk of its pages read it. */
export interface Walked {
  records: ReadonlyArray<{ id: string; name?: string }>;
  /** meta.results.total, when every page gave the same number. */
  total?: number;
  /** Every page was read (the list was not cut at the most pages a walk reads), and every page gave the same total. */
  whole: boolean;
}

/**
 * A list held to the model: every live record of the kind listed once, none deleted, and
 * meta.results.total counting the sequence's records as the model does: the total less the
 * records of others served is the number of live ones (others' records, created or deleted
 * meanwhile, are counted as served, so their writes never move the verdict).
 */
export function judgeList(kind: Kind, made: readonly Made[], walked: Walked): Violation[] {
  const mine = made.filter((m) => m.kind === kind);
  const ids = new Set(walked.records.map((r) => r.id));
  const out: Violation[] = [];
  const missing = mine.filter((m) => !m.gone && !ids.has(m.id));
  if (missing.length)
    out.push({
      rule: 'created',
      message: `${missing.length} ${KIND_NAME[kind]}(s) created in the sequence missing from their list`,
      expected: `the list holds ${missing.map((m) => m.id).join(', ')}`,
      actual: `not among the ${walked.records.length} records listed`,
    });
  const kept = mine.filter((m) => m.gone && ids.has(m.id));
  if (kept.length)
    out.push({
      rule: 'deleted',
      message: `${kept.length} Custom API(s) deleted in the sequence still in their list`,
      expected: `the list no longer holds ${kept.map((m) => m.id).join(', ')}`,
      actual: `still listed`,
    });
  if (walked.whole && walked.total !== undefined) {
    // The sequence's own records are those it created, by id: a record named like them that it
    // did not create (one left by another run of the same id) is another's.
    const madeIds = new Set(mine.map((m) => m.id));
    const own = walked.records.filter((r) => madeIds.has(r.id)).length;
    const others = walked.records.length - own;
    const live = mine.filter((m) => !m.gone).length;
    if (walked.total - others !== live)
      out.push({
        rule: 'total',
        message: `meta.results.total does not count the sequence's ${KIND_NAME[kind]}s as it left them`,
        expected: `results.total ${others + live}: ${others} record(s) of others listed and the ${live} live one(s) of the sequence`,
        actual: `results.total ${walked.total} (${own} of the sequence's record(s) listed)`,
      });
  }
  return out;
}

/**
 * A read held to the model: a live record is served (2xx), a deleted Custom API is not found
 * (404 or 410). Undefined when the answer says nothing of the rule (a target without the read:
 * another 4xx; a 5xx fails the check by the rule of no 5xx).
 */
export function judgeRead(m: Made, status: number): Violation | undefined | 'untestable' {
  const found = status >= 200 && status < 300;
  const notFound = status === 404 || status === 410;
  if (!found && !notFound) return 'untestable';
  if (!m.gone && notFound)
    return {
      rule: 'created',
      message: `the ${KIND_NAME[m.kind]} created in the sequence is not served by its read`,
      expected: 'status 2xx',
      actual: `status ${status}`,
    };
  if (m.gone && found)
    return {
      rule: 'deleted',
      message: 'the Custom API deleted in the sequence is still served by its read',
      expected: 'status 404',
      actual: `status ${status}`,
    };
  return undefined;
}

/** The fields that must differ between two records a sequence created (create.unique): their values are never quoted. */
export const DISTINCT_FIELDS: Record<Kind, readonly string[]> = { key: ['id', 'client_id', 'client_secret'], api: ['id'] };

/** A created record's data held to those created before it in the sequence: a field they share is a violation. */
export function judgeDistinct(kind: Kind, data: Record<string, unknown>, before: ReadonlyArray<Record<string, unknown>>, n: number): Violation | undefined {
  for (const field of DISTINCT_FIELDS[kind]) {
    const value = data[field];
    if (value === undefined) continue;
    const i = before.findIndex((b) => JSON.stringify(b[field]) === JSON.stringify(value));
    if (i >= 0)
      return {
        rule: 'distinct',
        message: `two ${KIND_NAME[kind]}s created in the sequence share their ${field}`,
        expected: `each ${KIND_NAME[kind]} created with its own ${field}`,
        actual: `${KIND_NAME[kind]} #${n} has the ${field} of #${i + 1}`,
      };
  }
  return undefined;
}
