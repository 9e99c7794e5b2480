// The invalid parameters every list is asked alone, written once: list.params.invalid (meta.ts)
// probes with them, and the exploration (explore.ts) asks them as its first illegal draws, so
// that each is one exchange both judge. The illegal side's plans are written here too (illegal.ts
// draws them): meta.ts, which the checks import, must not load the exploration's modules.
import type { Shape } from './readings.js';

/** A number written in a way the contract does not define, and the numbers it may be read as. */
export interface NumberText {
  /** The text the target receives (percent-encoded when sent). */
  text: string;
  /** The numbers a parser may read it as (besides ignoring it); NaN for none. */
  numbers: number[];
  /** Why it is illegal, for people. */
  kind: string;
}

export type IllegalPlan =
  | { param: 'page[limit]' | 'page[offset]'; value: NumberText; shape: Shape; other: number }
  | { param: 'sort'; text: string; kind: string; shape: 'plain' | 'array' | 'repeat' }
  | { param: 'filter'; make: FilterMaker; shape: 'plain' | 'array' | 'repeat' };

/**
 * A malformed filter, made from a legal term `op(attr,value)`: another operator, attribute or
 * value; text before or after it; its closing parenthesis taken off; the term repeated, joined
 * by `join`; or a fixed text.
 */
export interface FilterMaker {
  kind: string;
  op?: string;
  attr?: string;
  value?: string;
  before?: string;
  after?: string;
  unclosed?: boolean;
  repeat?: number;
  join?: string;
  raw?: string;
}

export const STRATA = ['page[limit] big', 'page[offset] big', 'page[offset] past the hard limit', 'filter', 'sort', 'page[limit]', 'page[offset]'] as const;
export type IllegalStratum = (typeof STRATA)[number];

/** A number past 2^64 that a 64-bit parser wraps to 5 (PAST_2_64_WRAPPED). */
export const PAST_2_64 = '18446744073709551621';
/** What PAST_2_64 wraps to in 64 bits. */
export const PAST_2_64_WRAPPED = 5;

/**
 * The invalid parameters every list is asked, alone (list.params.invalid's probes): negative, 0
 * for page[limit], a word, past 2^64, a sort on an attribute no list has, a filter not closed.
 * The exploration asks them as its first illegal draws of their strata, on the path the check
 * probes, so that each is one exchange both judge (the probe sends the same URL, read once).
 */
export const FIXED_ILLEGAL: ReadonlyArray<{ stratum: IllegalStratum; plan: IllegalPlan }> = [
  ...(['page[limit]', 'page[offset]'] as const).flatMap((param) => [
    ...[
      { text: '-1', numbers: [-1], kind: 'a negative number' },
      ...(param === 'page[limit]' ? [{ text: '0', numbers: [0], kind: 'zero' }] : []),
      { text: 'abc', numbers: [], kind: 'a word' },
    ].map((value) => ({
      stratum: param,
      plan: { param, value, shape: 'plain' as const, other: 1 },
    })),
    {
      stratum: param === 'page[limit]' ? ('page[limit] big' as const) : ('page[offset] big' as const),
      plan: { param, value: { text: PAST_2_64, numbers: [Number(PAST_2_64)], kind: 'a number past 2^64' }, shape: 'plain' as const, other: 1 },
    },
  ]),
  { stratum: 'sort', plan: { param: 'sort', text: 'conformance_no_such_attribute', kind: 'an attribute no list has', shape: 'plain' } },
  { stratum: 'filter', plan: { param: 'filter', make: { kind: 'a term not closed', raw: 'ge(created_at,' }, shape: 'plain' } },
];

/** The parameter and value a fixed illegal plan sends. */
export function fixedParam(plan: IllegalPlan): [param: string, value: string] {
  if (plan.param === 'sort') return ['sort', plan.text];
  if (plan.param === 'filter') return ['filter', plan.make.raw ?? ''];
  return [plan.param, plan.value.text];
}
