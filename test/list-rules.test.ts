// Each list rule is written once, on its check, and judged by whoever asks: the check's own
// probes, the exploration, an illegal request's readings and observed traffic all reach it
// through the check (suites/list/judge.ts). A check that judges no single answer says why.
import { describe, expect, it } from 'vitest';
import { listChecks } from '../suites/list/checks.js';
import { judge, judgeInvalid, OBSERVED_LIST_CHECKS } from '../suites/list/judge.js';
import { observerModel, OPAQUE, type ListQuery } from '../suites/list/model.js';
import { PHASE, type PageRule } from '../suites/list/answer.js';
import type { ListPage } from '../suites/list/pages.js';
import type { HttpResponse } from '../lib/transport/index.js';

/** A list answer with `n` records and the numbers of a page of 25 from offset 0 over 40 records. */
function answer(n: number, status = 200): ListPage {
  const res = { status, exchange: { bodyExcerpt: '{}' }, headers: {}, isJson: false } as unknown as HttpResponse;
  return {
    res,
    ok: status === 200,
    records: Array.from({ length: n }, (_, i) => ({ id: `p${i}` })),
    meta: { page: { limit: 25, offset: 0, current: 1, total: 2 }, results: { total: 40 } },
    violations: [],
  };
}

describe('the list rules', () => {
  it('every list check carries the rule for one answer, or says why no single answer shows it', () => {
    for (const c of listChecks) {
      const carries = c.page !== undefined || c.illegal !== undefined;
      expect(carries || (typeof c.whole === 'string' && c.whole.length > 10), `${c.id}: no page rule and no reason`).toBe(true);
      expect(carries && c.whole !== undefined, `${c.id}: a rule and a reason it has none`).toBe(false);
    }
    // The one rule for invalid paging parameters.
    expect(listChecks.filter((c) => c.illegal).map((c) => c.id)).toEqual(['list.params.invalid']);
  });

  it('judge() holds an answer to every rule as the check carries it, under the check id', () => {
    const q: ListQuery = { filters: [] };
    const page = answer(25);
    const m = observerModel('/v2/products', 25, false);
    const examined = new Set<string>();
    expect(judge(m, q, page, () => OPAQUE, examined)).toEqual([]);
    // A rule added to a check (here, in place of its own): judged by judge(), under that check.
    const c = listChecks.find((x) => x.id === 'list.meta.fields')!;
    const own = c.page;
    const asked: string[] = [];
    const added: PageRule = (a) => (asked.push(a.asked), [a.finding('a finding', 'x', 'y', PHASE.answer)]);
    c.page = added;
    try {
      const found = judge(m, q, page, () => OPAQUE);
      expect(asked).toEqual(['(no parameters)']);
      expect(found.map((d) => d.checkId)).toEqual(['list.meta.fields']);
    } finally {
      c.page = own;
    }
  });

  it('what --list marks as judged from traffic is every check with a rule that needs no model', () => {
    const expected = listChecks.filter((c) => (c.page && !c.needsModel) || c.illegal).map((c) => c.id);
    expect([...OBSERVED_LIST_CHECKS].sort()).toEqual(expected.sort());
  });

  it('an answer to invalid paging parameters is held to list.params.invalid: never a 5xx', () => {
    expect(judgeInvalid(answer(3), 'GET with page[limit]=-1')).toBeUndefined();
    expect(judgeInvalid(answer(0, 503), 'GET with page[limit]=-1')?.checkId).toBe('list.params.invalid');
  });
});
