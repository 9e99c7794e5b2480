// The illegal side of a list's query space: page[limit], page[offset], sort and filter written in
// ways the contract does not define (spec/contract/README.md#list-endpoints: a whole number up to
// 100, a whole number from 0, an attribute, op(attribute,value) terms), drawn by fast-check,
// seeded and shrunk like the legal requests (explore.ts).
//
// What a target makes of such a value is largely its own business, and the oracle says only
// what the contract rules out (spec/contract/README.md#lists.invalid-params, #errors.no-5xx):
// - never a 5xx;
// - a refusal as invalid (400, 422) carries the Error shape;
// - a list page is right for some reading of the value a target may make: clamped (to 1..100
//   for page[limit], to 0 for a negative offset), ignored (the default), the number it spells
//   (a float cut either way, an exponent, a leading plus, a prefix a lenient parser stops at),
//   or, for a sort or filter it cannot read, any order and any selection with the page's own
//   numbers right; which of these a request's shape (repeated, an array, a bare page=) allows,
//   by the parsers that give each, is spec/contract/query-readings.yaml's (readings.ts). A value
//   read as another number (2^64 + 5 as 5, a wrapped 32-bit limit) fits none, and neither does
//   the first page served for an offset past the end that a 64-bit parser reads.
import fc from 'fast-check';
import { OPAQUE, paramsOf, queryOfUrl, type ListModel, type ListQuery, type Prediction } from './model.js';
import { judge, judgeInvalid, type Disagreement } from './judge.js';
import type { ListPage } from './pages.js';
import { readingsFor, startsWithNoNumber, undefinedPagingParts, type Shape } from './readings.js';
import { STRATA, type FilterMaker, type IllegalPlan, type IllegalStratum, type NumberText } from './invalid-params.js';

export type { FilterMaker, IllegalPlan, IllegalStratum, NumberText } from './invalid-params.js';

export type { Shape } from './readings.js';

/** A drawn illegal request, made concrete: its query string and what the contract lets a page be. */
export interface Illegal {
  /** The parameter made illegal. */
  param: IllegalPlan['param'];
  /** The query string, percent-encoded as sent (brackets unencoded, as the suite sends them). */
  query: string;
  /** The illegal part, for people: `page[limit]=18446744073709551616 (past 2^64)`. */
  what: string;
  readings: Reading[];
}

/** A reading of an illegal value a target may make, and so a page it may serve. */
export type Reading =
  | { label: string; q: ListQuery; opaque?: boolean }
  /** Past the end (or the hard limit): a page with no record, its numbers well formed. */
  | { label: string; empty: true };

/** Past 2^64 mostly (a 64-bit parser wraps them to 0, 5), past 2^63, 2^32 and 2^53 (a double's precision). */
const BIG = ['18446744073709551616', '18446744073709551621', '36893488147419103237', '9223372036854775813', '4294967301', '9007199254740993'];

const num = (text: string, numbers: number[], kind: string): NumberText => ({ text, numbers, kind });

/** Numbers written in every way the contract does not define (a whole number, as digits). */
const bigNumbers = fc.constantFrom(...BIG).map((t) => num(t, [Number(t)], 'a number past 2^32, 2^53 or 2^64'));

/**
 * The whole numbers the other spellings are made from: small ones (a page size, an offset into a
 * short list), and ones just past the hard offset limit (10,000), where a guard that reads only
 * plain digits lets a leading plus, a space or leading zeros through.
 */
const pastHard = fc.integer({ min: 10_001, max: 10_100 });
const whole: fc.Arbitrary<number> = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 150 }), weight: 3 }, { arbitrary: pastHard, weight: 1 });

/** An offset just past the hard limit, spelled otherwise than in plain digits. */
const pastHardLimit: fc.Arbitrary<NumberText> = fc
  .tuple(pastHard, fc.constantFrom('+', ' ', '00', '\t'))
  .map(([n, lead]) =>
    num(
      `${lead}${n}`,
      [n],
      lead === '+'
        ? 'a leading plus, past the hard offset limit'
        : lead === '00'
          ? 'leading zeros, past the hard offset limit'
          : 'whitespace, past the hard offset limit',
    ),
  );

export const numberTexts: fc.Arbitrary<NumberText> = fc.oneof(
  // Past what a 32- or 64-bit integer holds, where a parser wraps (2^64 + 5 read as 5): the most
  // drawn, since a wrapped offset serves records a client never asked for.
  { arbitrary: bigNumbers, weight: 3 },
  fc.integer({ min: -1000, max: -1 }).map((n) => num(String(n), [n], 'a negative number')),
  fc.constantFrom('-0', '0').map((t) => num(t, [0], 'zero')),
  fc.tuple(whole, fc.constantFrom('.5', '.0', '.999', ',5')).map(([n, f]) => num(`${n}${f}`, [Number(`${n}${f.replace(',', '.')}`), n], 'a fraction')),
  fc
    .tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 25 }), fc.constantFrom('e', 'E', 'e+'))
    .map(([d, k, e]) => num(`${d}${e}${k}`, [d * 10 ** k, d], 'an exponent')),
  whole.map((n) => num(`+${n}`, [n], 'a leading plus')),
  fc
    .tuple(whole, fc.constantFrom(' ', '\t', '\u00a0'))
    .chain(([n, w]) => fc.constantFrom(num(`${w}${n}`, [n], 'whitespace'), num(`${n}${w}`, [n], 'whitespace'))),
  whole.map((n) => num(`00${n}`, [n, ...(/^[0-7]+$/.test(String(n)) ? [parseInt(String(n), 8)] : [])], 'leading zeros')),
  whole.map((n) => num(`0x${n.toString(16)}`, [n, 0], 'hexadecimal')),
  fc.constantFrom(
    num('', [0], 'an empty value'),
    num('abc', [], 'a word'),
    num('null', [], 'a word'),
    num('true', [1], 'a word'),
    num('NaN', [], 'not a number'),
    num('Infinity', [Infinity], 'infinity'),
    num('-Infinity', [-Infinity], 'infinity'),
    num('\uff15', [5], 'a full-width digit'),
    num('1,000', [1000, 1], 'a thousands separator'),
    num('[]', [], 'brackets'),
    num('{}', [], 'braces'),
  ),
);

const SORTS: ReadonlyArray<[string, string]> = [
  ['name', 'an attribute the contract does not name'],
  ['price', 'an attribute the contract does not name'],
  ['meta.timestamps.created_at', 'a path, not an attribute'],
  ['créé', 'a non-ASCII attribute'],
  ['--id', 'two minus signs'],
  ['-', 'a minus sign alone'],
  ['', 'an empty value'],
  ['created_at,id', 'two attributes'],
  ['id,-created_at', 'two attributes'],
  ['CREATED_AT', 'another letter case'],
  ['Updated_At', 'another letter case'],
  ['+created_at', 'a leading plus'],
  [' id', 'whitespace'],
  ['created_at;drop', 'a separator'],
];

const FILTERS: readonly FilterMaker[] = [
  { kind: 'a term not closed', unclosed: true },
  { kind: 'an extra parenthesis', after: ')' },
  { kind: 'an extra opening parenthesis', before: '(' },
  { kind: 'a trailing separator', after: ':' },
  { kind: 'a leading separator', before: ':' },
  { kind: 'an empty term between two', repeat: 2, join: '::' },
  { kind: 'an unknown operator', op: 'xx' },
  { kind: 'an operator in capitals', op: 'GE' },
  { kind: 'an operator the contract does not name', op: 'lt' },
  { kind: 'an operator the contract does not name', op: 'eq' },
  { kind: 'an unknown attribute', attr: 'nope' },
  { kind: 'a non-ASCII attribute', attr: 'créé' },
  { kind: 'an attribute in capitals', attr: 'CREATED_AT' },
  { kind: 'a value that is not a timestamp', value: 'not-a-date' },
  { kind: 'a timestamp out of range', value: '2024-13-45T99:99:99Z' },
  { kind: 'an empty value', value: '' },
  { kind: 'a percent sign', value: '100%' },
  { kind: 'non-ASCII digits', value: '\u0662\u0660\u0662\u0664-01-01T00:00:00Z' },
  { kind: 'a very long value', value: '9'.repeat(1500) },
  { kind: 'a very long expression', repeat: 60 },
  { kind: 'no parentheses', raw: 'ge created_at' },
  { kind: 'parentheses alone', raw: '()' },
  { kind: 'a separator alone', raw: ':' },
  { kind: 'an empty expression', raw: '' },
  { kind: 'a nested term', raw: 'ge(created_at,gt(id,1))' },
];

/**
 * The strata the illegal draws of a list are shared out over, in order: a number past 2^32 for
 * each paging parameter first (where a parser that wraps serves records nobody asked for); on a
 * list with the hard offset limit, an offset past it in a spelling other than plain digits (a
 * guard that reads only digits lets it through); then each parameter's whole illegal space.
 */
export function illegalStrata(hardOffsetLimit: boolean): IllegalStratum[] {
  return STRATA.filter((s) => hardOffsetLimit || s !== 'page[offset] past the hard limit');
}

/**
 * The illegal requests of one parameter of a list, as plans fast-check draws and shrinks: each
 * parameter is drawn apart, so that every run asks of each (explore.ts shares the draws out).
 */
export function illegalArbitrary(stratum: IllegalStratum): fc.Arbitrary<IllegalPlan> {
  if (stratum === 'page[limit] big' || stratum === 'page[offset] big') {
    return fc.record({
      param: fc.constant(stratum === 'page[limit] big' ? ('page[limit]' as const) : ('page[offset]' as const)),
      value: bigNumbers,
      shape: fc.constant<Shape>('plain'),
      other: fc.constant(1),
    });
  }
  if (stratum === 'page[offset] past the hard limit') {
    return fc.record({ param: fc.constant('page[offset]' as const), value: pastHardLimit, shape: fc.constant<Shape>('plain'), other: fc.constant(1) });
  }
  const param = stratum;
  if (param === 'page[limit]' || param === 'page[offset]') {
    const shapes = fc.oneof(
      { arbitrary: fc.constant<Shape>('plain'), weight: 6 },
      { arbitrary: fc.constantFrom<Shape>('array', 'repeat'), weight: 2 },
      { arbitrary: fc.constantFrom<Shape>('page-scalar', 'page-scalar-before', 'page-array'), weight: 1 },
    );
    return fc.record({ param: fc.constant(param), value: numberTexts, shape: shapes, other: fc.integer({ min: 1, max: 40 }) });
  }
  const narrow = fc.oneof({ arbitrary: fc.constant<'plain'>('plain'), weight: 4 }, fc.constantFrom<'array' | 'repeat'>('array', 'repeat'));
  if (param === 'sort')
    return fc
      .record({ param: fc.constant<'sort'>('sort'), sort: fc.constantFrom(...SORTS), shape: narrow })
      .map(({ sort: [text, kind], ...p }) => ({ ...p, text, kind }));
  return fc.record({ param: fc.constant<'filter'>('filter'), make: fc.constantFrom(...FILTERS), shape: narrow });
}

/** A query string value as the suite sends one (colons and brackets as they are). */
const enc = (v: string): string => encodeURIComponent(v).replace(/%3A/gi, ':');

/** `name=value` pairs of a legal query, without `drop`. */
function legalPairs(q: ListQuery, drop: string): string[] {
  return Object.entries(paramsOf(q))
    .filter(([k]) => k !== drop)
    .map(([k, v]) => `${k}=${enc(String(v))}`);
}

/** The page[limit] a target may apply for a number it read: clamped to 1..100. */
const clampLimit = (t: number): number => Math.min(100, Math.max(1, t));

/** The whole numbers a parser may make of `x`: cut either way, or rounded. */
function wholes(x: number): number[] {
  return [...new Set([Math.floor(x), Math.ceil(x), Math.round(x)])];
}

/** The legal term an illegal filter is made from: the base's first, or one on created_at. */
function termText(base: ListQuery, m: ListModel): { op: string; attr: string; value: string } {
  const t = base.filters[0];
  if (t) return { op: t.op, attr: t.attr, value: t.value };
  const any = m.records.values().next().value;
  return { op: 'ge', attr: 'created_at', value: any?.createdRaw ?? '2020-01-01T00:00:00.000Z' };
}

function filterText(make: FilterMaker, base: ListQuery, m: ListModel): string {
  if (make.raw !== undefined) return make.raw;
  const t = termText(base, m);
  const term = `${make.op ?? t.op}(${make.attr ?? t.attr},${make.value ?? t.value}${make.unclosed ? '' : ')'}`;
  const body = Array.from({ length: make.repeat ?? 1 }, () => term).join(make.join ?? ':');
  return `${make.before ?? ''}${body}${make.after ?? ''}`;
}

/**
 * The concrete request of an illegal plan over the legal `base` (its other parameters stay as
 * they are), and the readings a page may follow.
 */
export function resolveIllegal(m: ListModel, plan: IllegalPlan, base: ListQuery, count: (q: ListQuery) => number): Illegal {
  if (plan.param === 'sort' || plan.param === 'filter') {
    const text = plan.param === 'sort' ? plan.text : filterText(plan.make, base, m);
    const kind = plan.param === 'sort' ? plan.kind : plan.make.kind;
    const pairs = legalPairs(base, plan.param);
    const name = plan.shape === 'array' ? `${plan.param}[]` : plan.param;
    pairs.push(`${name}=${enc(text)}`);
    if (plan.shape === 'repeat') pairs.push(plan.param === 'sort' ? 'sort=created_at' : `filter=${enc(filterText({ kind: '' }, base, m))}`);
    // A sort it cannot read may be ignored or read its own way: any order. A filter it cannot read
    // may select anything (an operator or attribute of its own): the page's own numbers are judged.
    const q: ListQuery = { ...base, ...(plan.param === 'sort' ? { sort: undefined } : { filters: [] }) };
    if (plan.param === 'sort') delete q.sort;
    return {
      param: plan.param,
      query: pairs.join('&'),
      what: `${plan.param}=${shorten(text)} (${kind}${plan.shape !== 'plain' ? `, ${plan.shape === 'array' ? 'as an array' : 'repeated'}` : ''})`,
      readings: [
        {
          label: plan.param === 'sort' ? 'the sort ignored, or read its own way' : 'the filter ignored, or read its own way',
          q,
          ...(plan.param === 'filter' ? { opaque: true } : {}),
        },
      ],
    };
  }
  const { param, value, shape, other } = plan;
  const pairs = legalPairs(base, param);
  const limit = param === 'page[limit]';
  const text = enc(value.text);
  if (shape === 'plain') pairs.push(`${param}=${text}`);
  else if (shape === 'array') pairs.push(`${param}[]=${text}`);
  else if (shape === 'repeat') pairs.push(`${param}=${text}`, `${param}=${other}`);
  else if (shape === 'page-scalar-before') pairs.unshift(`page=${text}`);
  else pairs.push(shape === 'page-scalar' ? `page=${text}` : `page[]=${text}`);
  // What a store may apply, by the parsers of spec/contract/query-readings.yaml.
  const kinds = readingsFor(shape, value.text, param);
  const numbers = [
    ...(kinds.has('spelled') ? value.numbers : []),
    ...(kinds.has('zero') && startsWithNoNumber(value.text) ? [0] : []),
    ...(kinds.has('other') ? [other] : []),
    ...(kinds.has('one') ? [1] : []),
  ];
  const readings: Reading[] = [];
  const seen = new Set<string>();
  const add = (v: number | undefined, label: string): void => {
    // Offset 0 is what an ignored offset serves: one reading.
    const key = !limit && v === 0 ? 'undefined' : String(v);
    if (seen.has(key)) return;
    seen.add(key);
    const q: ListQuery = { ...base };
    if (limit) {
      if (v === undefined) delete q.limit;
      else q.limit = v;
    } else if (v === undefined) delete q.offset;
    else q.offset = v;
    readings.push({ label, q });
  };
  if (kinds.has('ignored')) add(undefined, limit ? 'ignored: the default page length' : 'ignored: offset 0');
  if (kinds.has('group-ignored')) {
    const q: ListQuery = { ...base };
    delete q.limit;
    delete q.offset;
    readings.push({ label: 'the page group ignored: offset 0, the default page length', q });
  }
  // page[limit]=0 read as zero records (what some APIs answer: the counts alone, no record).
  let empty = limit && numbers.some((x) => Number.isFinite(x) && wholes(x).includes(0));
  for (const x of numbers) {
    if (Number.isNaN(x)) continue;
    if (limit) {
      if (x === Infinity) add(100, 'clamped to 100');
      else if (x === -Infinity) add(1, 'clamped to 1');
      else for (const t of wholes(x)) add(clampLimit(t), t === clampLimit(t) ? `read as ${t}` : `read as ${t}, clamped to ${clampLimit(t)}`);
      continue;
    }
    if (x === -Infinity) add(0, 'clamped to 0');
    else if (x === Infinity) empty = true;
    else {
      for (const t of wholes(x)) {
        if (t > Number.MAX_SAFE_INTEGER) empty = true;
        else add(Math.max(0, t), t < 0 ? 'clamped to 0' : `read as ${t}`);
      }
    }
  }
  // An offset read past the end (or past the hard limit) may be held at any other such offset:
  // what the page shows then is no record.
  if (!limit) {
    const selected = count({ ...base, offset: 0 });
    for (const r of readings) if ('q' in r && (r.q.offset ?? 0) >= Math.max(1, selected)) empty = true;
  }
  if (empty) readings.push({ label: limit ? 'read as 0: no record' : 'past the end: no record', empty: true });
  const how =
    shape === 'plain'
      ? ''
      : shape === 'array'
        ? ', as an array'
        : shape === 'repeat'
          ? `, repeated with ${other}`
          : shape === 'page-scalar'
            ? ', as page= after the group'
            : shape === 'page-scalar-before'
              ? ', as page= before the group'
              : ', as page[]=';
  const shownParam =
    shape === 'page-scalar' || shape === 'page-scalar-before' ? 'page' : shape === 'page-array' ? 'page[]' : shape === 'array' ? `${param}[]` : param;
  return { param, query: pairs.join('&'), what: `${shownParam}=${shorten(value.text)} (${value.kind}${how})`, readings };
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 40)}… (${s.length} characters)` : JSON.stringify(s).slice(1, -1);
}

/** The rules of a page's numbers and place, which every reading of a paging value changes: broken under each, they say only that no reading fits. */
const PAGING_RULES: ReadonlySet<string> = new Set([
  'list.page.arithmetic',
  'list.limit.exact',
  'list.limit.default',
  'list.offset.records',
  'list.meta.past-end',
]);

/** Answers too large for a front server to take: not a refusal of the value as invalid. */
const TOO_LARGE = new Set([413, 414, 431]);

/**
 * Holds the answer to an illegal request to what the contract allows (see the head of this
 * file). Disagreements are reported under list.params.invalid unless every reading breaks one
 * and the same rule (more than 100 records: list.limit.max; a legal sort beside the illegal
 * value not followed: its sort rule).
 */
export function judgeIllegal(m: ListModel, il: Illegal, path: string, page: ListPage, predicted: (q: ListQuery) => Prediction): Disagreement[] {
  const status = page.res.status;
  if (status === 429 || TOO_LARGE.has(status)) return [];
  const asked = `GET ${path}?${il.query}`;
  if (status !== 200 || !page.ok) {
    // list.params.invalid's own rule: never a 5xx, a 4xx with the Error shape.
    const broken = judgeInvalid(page, il.what);
    if (broken) return [{ ...broken, message: `${asked}: ${broken.message}` }];
    if (status !== 200) return [];
  }
  const broke: Disagreement[][] = [];
  for (const r of il.readings) {
    const dis =
      'empty' in r
        ? page.records.length === 0 && !page.violations?.length
          ? []
          : [
              {
                checkId: 'list.params.invalid',
                message: '',
                expected: 'no record',
                actual: page.records.length ? `${page.records.length} record(s)` : 'pagination fields missing or not integers',
                byModel: false,
              },
            ]
        : judge(m, r.q, page, r.opaque ? () => OPAQUE : predicted);
    if (!dis.length) return [];
    broke.push(dis);
  }
  // A rule every reading breaks is broken whatever the target made of the value (the order
  // asked for by a legal sort beside it, more than 100 records): reported under that rule.
  const shared = broke[0]!.map((d) => d.checkId).find((id) => !PAGING_RULES.has(id) && broke.every((d) => d.some((y) => y.checkId === id)));
  // The reading the page itself says it applied (its meta.page.offset and limit), when one does:
  // the rule that reading breaks is the one the page breaks (+10040 read as 10040, records served
  // past the hard offset limit: list.offset.hard-limit).
  const applied = il.readings.findIndex(
    (r) =>
      'q' in r &&
      !r.opaque &&
      r.q.offset !== undefined &&
      r.q.offset === page.meta?.page?.offset &&
      (r.q.limit === undefined || Math.min(100, r.q.limit) === page.meta?.page?.limit),
  );
  const own = applied >= 0 ? broke[applied]!.find((y) => !PAGING_RULES.has(y.checkId))?.checkId : undefined;
  // A page that says it applied an offset no reading gives (2 read as 42) misread the request:
  // the records it then lacks are of that misreading, not of a filter or sort beside it.
  const at = page.meta?.page?.offset;
  const misread = page.records.length > 0 && typeof at === 'number' && !il.readings.some((r) => 'q' in r && (r.q.offset ?? 0) === at);
  return [
    {
      checkId: misread ? 'list.params.invalid' : (shared ?? own ?? 'list.params.invalid'),
      message: `${asked}: a page right for no reading of ${il.what}`,
      expected: `a refusal (4xx with the Error shape), or a page right for one of: ${il.readings.map((r) => r.label).join('; ')}`,
      actual: il.readings
        .map((r, i) => {
          const d = broke[i]![0]!;
          const why = d.message.replace(/^.*?: /, '');
          return `as ${r.label}: ${why ? `${why} (${d.actual})` : d.actual}`;
        })
        .join('; '),
      byModel: broke.some((d) => d.some((y) => y.byModel)),
    },
  ];
}

/** The numbers a parser may read a value seen in traffic as (Number, parseInt, parseFloat, a decimal comma, full-width digits). */
function spelledNumbers(text: string): number[] {
  const t = text.normalize('NFKC').trim();
  return [...new Set([Number(t), parseInt(t, 10), parseFloat(t), Number(t.replace(',', '.'))].filter((x) => !Number.isNaN(x)))];
}

/**
 * The illegal request a URL seen in traffic is, when it is one of the shapes of
 * spec/contract/query-readings.yaml with one paging parameter sent so and the rest legal: judged
 * as the drawn ones are, under every reading of the table. Undefined for any other (judged then
 * only by list.params.invalid's own rule: never a 5xx, a refusal with the Error shape).
 */
export function illegalOfUrl(url: string, m: ListModel, selected: number): Illegal | undefined {
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  const names = [...params.keys()];
  const paging = ['page[limit]', 'page[offset]'] as const;
  const { odd, many, bad } = undefinedPagingParts(params);
  if (odd.length + many.length + bad.length !== 1 || params.getAll(odd[0] ?? '').length > 1) return undefined;
  let plan: Extract<IllegalPlan, { param: 'page[limit]' | 'page[offset]' }>;
  const number = (text: string): NumberText => ({ text, numbers: spelledNumbers(text), kind: 'as sent' });
  const rest = new URLSearchParams(params);
  if (odd[0] === 'page' || odd[0] === 'page[]') {
    // The group's parameter that is not sent is the one a bare page= stands for.
    const param = paging.find((p) => !params.has(p));
    if (!param) return undefined;
    const before = names.indexOf('page') < Math.min(...paging.map((p) => (params.has(p) ? names.indexOf(p) : Infinity)));
    plan = { param, value: number(params.get(odd[0])!), shape: odd[0] === 'page[]' ? 'page-array' : before ? 'page-scalar-before' : 'page-scalar', other: 1 };
    rest.delete(odd[0]);
  } else if (odd[0]) {
    const param = paging.find((p) => odd[0] === `${p}[]`);
    if (!param || params.has(param)) return undefined;
    plan = { param, value: number(params.get(odd[0])!), shape: 'array', other: 1 };
    rest.delete(odd[0]);
  } else if (many[0]) {
    const [first, second, ...more] = params.getAll(many[0]);
    if (more.length || !/^\d+$/.test(second!)) return undefined;
    plan = { param: many[0], value: number(first!), shape: 'repeat', other: Number(second) };
    rest.delete(many[0]);
  } else {
    plan = { param: bad[0]!, value: number(params.get(bad[0]!)!), shape: 'plain', other: 1 };
    rest.delete(bad[0]!);
  }
  const legal = [...rest].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  const base = queryOfUrl(legal ? `${url.split('?')[0]}?${legal}` : url.split('?')[0]!);
  return base && resolveIllegal(m, plan, base, () => selected);
}
