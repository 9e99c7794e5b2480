// The illegal side of a list's parameters (suites/list/illegal.ts): the readings the contract
// lets a target make of a value it does not define, and the judgement of an answer against
// them: never a 5xx, a refusal with the Error shape, or a page right for some reading (clamped,
// ignored, the number it spells), never for a number it was wrapped to.
import { describe, expect, it } from 'vitest';
import { HttpResponse } from '../lib/transport/index.js';
import { illegalOfUrl, judgeIllegal, resolveIllegal, type IllegalPlan, type Illegal } from '../suites/list/illegal.js';
import { predictor, type ListQuery } from '../suites/list/model.js';
import { listPageOf, toRec, type ListPage } from '../suites/list/pages.js';
import { endpoints, listModelOf } from './support.js';

const e = endpoints(['accounts'])[0]!;
const at = (i: number): string => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
const RAW = Array.from({ length: 30 }, (_, i) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  type: 'account',
  meta: { timestamps: { created_at: at(i), updated_at: at(i) } },
}));
const model = listModelOf(
  RAW.map((r) => toRec(r, e)),
  { path: '/v2/accounts' },
);
const predicted = predictor(model);
const count = (q: ListQuery): number => predicted(q).selected.length;

function answer(status: number, body: unknown): ListPage {
  const text = JSON.stringify(body);
  const exchange = {
    method: 'GET',
    url: 'http://target/v2/accounts?x',
    requestHeaders: {},
    status,
    responseHeaders: { 'content-type': 'application/json' },
    bodyExcerpt: text.slice(0, 600),
    bodyBytes: text.length,
    durationMs: 1,
  };
  return listPageOf(new HttpResponse(status, { 'content-type': 'application/json' }, text, exchange, { ok: true, value: body }), e);
}

/** A page of the model's list in created order: `offset` and `limit` as served, the numbers right for them. */
function served(offset: number, limit: number, echo = offset): ListPage {
  const data = RAW.slice(offset, offset + limit);
  return answer(200, {
    data,
    meta: { page: { limit, offset: echo, current: Math.floor(echo / limit) + 1, total: Math.ceil(RAW.length / limit) }, results: { total: RAW.length } },
  });
}

const error = (status: number): ListPage =>
  answer(status, { errors: [{ title: 'Bad Request', status: String(status), detail: 'page[offset] is not a whole number' }] });

function illegal(plan: IllegalPlan, base: ListQuery = { filters: [] }): Illegal {
  return resolveIllegal(model, plan, base, count);
}

const number = (
  param: 'page[limit]' | 'page[offset]',
  text: string,
  numbers: number[],
  shape: 'plain' | 'array' | 'repeat' = 'plain',
  other = 7,
): IllegalPlan => ({ param, value: { text, numbers, kind: 'test' }, shape, other });

describe('the readings of an illegal value', () => {
  it('a number past 2^64 as an offset: past the end, or ignored (a 64-bit parser refuses it); one past 2^32 only past the end', () => {
    const il = illegal(number('page[offset]', '18446744073709551621', [Number('18446744073709551621')]));
    expect(il.query).toBe('page[offset]=18446744073709551621');
    expect(il.readings.map((r) => r.label)).toEqual(['ignored: offset 0', 'past the end: no record']);
    expect(illegal(number('page[offset]', '4294967301', [4294967301])).readings.map((r) => r.label)).toEqual(['read as 4294967301', 'past the end: no record']);
  });

  it('a bare page= after the group may replace it (PHP), before it may make it unreadable (qs); an array may be read as 1 (PHP)', () => {
    const base: ListQuery = { filters: [], offset: 5 };
    const after = illegal({ param: 'page[limit]', value: { text: 'x', numbers: [], kind: 'test' }, shape: 'page-scalar', other: 1 }, base);
    const before = illegal({ param: 'page[limit]', value: { text: 'x', numbers: [], kind: 'test' }, shape: 'page-scalar-before', other: 1 }, base);
    expect([after.query, before.query]).toEqual(['page[offset]=5&page=x', 'page=x&page[offset]=5']);
    for (const il of [after, before])
      expect(il.readings.flatMap((r) => ('q' in r ? [[r.q.limit, r.q.offset]] : []))).toEqual([
        [undefined, 5],
        [undefined, undefined],
      ]);
    const array = illegal(number('page[limit]', '7', [7], 'array'));
    expect(array.readings.flatMap((r) => ('q' in r ? [r.q.limit] : []))).toEqual([undefined, 7, 1]);
  });

  it('a word as an offset may be ignored; a fraction read either way; a repeat read as either value', () => {
    expect(illegal(number('page[offset]', 'abc', [])).readings.map((r) => r.label)).toEqual(['ignored: offset 0']);
    const fraction = illegal(number('page[offset]', '5.5', [5.5, 5])).readings.flatMap((r) => ('q' in r ? [r.q.offset] : []));
    expect(fraction.sort()).toEqual([undefined, 5, 6].sort());
    const repeat = illegal(number('page[limit]', '-3', [-3], 'repeat', 7));
    expect(repeat.query).toBe('page[limit]=-3&page[limit]=7');
    expect(repeat.readings.flatMap((r) => ('q' in r ? [r.q.limit] : []))).toEqual([undefined, 1, 7]);
  });

  it('a limit past 2^32 is clamped to 100 or ignored, never read as what it wraps to', () => {
    const il = illegal(number('page[limit]', '4294967301', [4294967301]));
    expect(il.readings.flatMap((r) => ('q' in r ? [r.q.limit] : []))).toEqual([undefined, 100]);
  });

  it('keeps the legal parameters of the request it is drawn over', () => {
    const il = illegal(
      { param: 'sort', text: 'name', kind: 'test', shape: 'array' },
      { filters: [{ op: 'ge', attr: 'created_at', value: at(3) }], limit: 5, sort: { attr: 'id', descending: false } },
    );
    expect(il.query).toBe(`filter=ge(created_at%2C${at(3)})&page[limit]=5&sort[]=name`);
  });
});

describe('judging the answer to an illegal value', () => {
  const offset = illegal(number('page[offset]', '18446744073709551621', [Number('18446744073709551621')]));
  const limit = illegal(number('page[limit]', '4294967301', [4294967301]));

  it('fails a 5xx, and a refusal without the Error shape, under list.params.invalid', () => {
    expect(
      judgeIllegal(model, offset, '/v2/accounts', answer(500, { errors: [{ title: 'x', status: '500', detail: 'x' }] }), predicted).map((d) => d.checkId),
    ).toEqual(['list.params.invalid']);
    expect(judgeIllegal(model, offset, '/v2/accounts', answer(400, { message: 'bad' }), predicted).map((d) => d.checkId)).toEqual(['list.params.invalid']);
    expect(judgeIllegal(model, offset, '/v2/accounts', error(400), predicted)).toEqual([]);
    expect(judgeIllegal(model, offset, '/v2/accounts', error(422), predicted)).toEqual([]);
  });

  it('passes an offset past 2^64 answered as past the end or ignored, fails one wrapped to 5', () => {
    expect(judgeIllegal(model, offset, '/v2/accounts', served(Number('18446744073709551621'), 25), predicted)).toEqual([]);
    expect(judgeIllegal(model, offset, '/v2/accounts', served(0, 25), predicted)).toEqual([]);
    const wrapped = judgeIllegal(model, offset, '/v2/accounts', served(5, 25), predicted);
    expect(wrapped.map((d) => d.checkId)).toEqual(['list.params.invalid']);
    expect(wrapped[0]!.message).toMatch(/no reading of page\[offset\]=18446744073709551621/);
  });

  it('passes a limit past 2^32 clamped to 100 or ignored, fails one read as 5', () => {
    expect(judgeIllegal(model, limit, '/v2/accounts', served(0, 100), predicted)).toEqual([]);
    expect(judgeIllegal(model, limit, '/v2/accounts', served(0, 25), predicted)).toEqual([]);
    expect(judgeIllegal(model, limit, '/v2/accounts', served(0, 5), predicted).map((d) => d.checkId)).toEqual(['list.params.invalid']);
  });

  it('passes a sort it cannot read served in any order, with the page numbers right', () => {
    const sort = illegal({ param: 'sort', text: 'name', kind: 'test', shape: 'plain' });
    const shuffled = answer(200, {
      data: [...RAW].reverse().slice(0, 25),
      meta: { page: { limit: 25, offset: 0, current: 1, total: 2 }, results: { total: 30 } },
    });
    expect(judgeIllegal(model, sort, '/v2/accounts', shuffled, predicted)).toEqual([]);
    const wrongTotal = answer(200, { data: RAW.slice(0, 25), meta: { page: { limit: 25, offset: 0, current: 1, total: 2 }, results: { total: 31 } } });
    expect(judgeIllegal(model, sort, '/v2/accounts', wrongTotal, predicted).length).toBe(1);
  });

  it('passes a malformed filter answered with any selection whose own numbers are right', () => {
    const filter = illegal({ param: 'filter', make: { kind: 'test', unclosed: true }, shape: 'plain' });
    expect(filter.query).toMatch(/^filter=ge\(created_at%2C[^)]*$/);
    const some = answer(200, { data: RAW.slice(0, 3), meta: { page: { limit: 25, offset: 0, current: 1, total: 1 }, results: { total: 3 } } });
    expect(judgeIllegal(model, filter, '/v2/accounts', some, predicted)).toEqual([]);
    const tooMany = answer(200, { data: RAW.slice(0, 10), meta: { page: { limit: 25, offset: 0, current: 1, total: 1 }, results: { total: 3 } } });
    expect(judgeIllegal(model, filter, '/v2/accounts', tooMany, predicted).length).toBe(1);
  });
});

describe('an illegal request seen in traffic (conformance proxy, judge)', () => {
  const seen = (query: string): Illegal => illegalOfUrl(`http://target/v2/accounts?${query}`, model, RAW.length)!;

  it('is the drawn request of the same shape, judged under the same readings', () => {
    const plan = number('page[offset]', '18446744073709551621', [Number('18446744073709551621')]);
    expect(seen('page[limit]=5&page[offset]=18446744073709551621').readings.map((r) => r.label)).toEqual(
      illegal(plan, { filters: [], limit: 5 }).readings.map((r) => r.label),
    );
    expect(judgeIllegal(model, seen('page[offset]=18446744073709551621'), '/v2/accounts', served(0, 25), predicted)).toEqual([]);
    expect(judgeIllegal(model, seen('page[offset]=18446744073709551621'), '/v2/accounts', served(5, 25), predicted).map((d) => d.checkId)).toEqual([
      'list.params.invalid',
    ]);
    expect(seen('page=x&page[offset]=5').readings.map((r) => r.label)).toEqual([
      'ignored: the default page length',
      'the page group ignored: offset 0, the default page length',
    ]);
    expect(seen('page[limit]=abc&page[limit]=7').what).toMatch(/repeated with 7/);
  });

  it('is none for a query the table has no single shape for', () => {
    expect(illegalOfUrl('http://target/v2/accounts?page[limit]=a&page[offset]=b', model, RAW.length)).toBeUndefined();
    expect(illegalOfUrl('http://target/v2/accounts?page=x&page[limit]=5&page[offset]=5', model, RAW.length)).toBeUndefined();
  });
});
