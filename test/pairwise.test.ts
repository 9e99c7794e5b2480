// The covering array of the exploration (suites/list/pairwise.ts): every pair of levels of two
// factors in some row, under the requirements that make a factor matter only beside some levels
// of another; the same rows for the same seed; and few rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coverage, coveringArray, pairsOf, type Requirement } from '../suites/list/pairwise.js';

/** Every pair some row can cover, enumerated the slow way: over every complete row. */
function coverable(levels: readonly number[], requires: readonly Requirement[]): Set<string> {
  const out = new Set<string>();
  const row = levels.map(() => 0);
  const walk = (i: number): void => {
    if (i === levels.length) {
      for (const p of pairsOf(row, requires)) out.add(p);
      return;
    }
    for (let v = 0; v < levels[i]!; v++) {
      row[i] = v;
      walk(i + 1);
    }
  };
  walk(0);
  return out;
}

const factors = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 2, maxLength: 5 });

describe('coveringArray', () => {
  it('covers every pair of levels of every two factors', () => {
    fc.assert(
      fc.property(factors, fc.nat(), (levels, seed) => {
        const c = coveringArray(levels, { seed });
        const all = coverable(levels, []);
        const got = new Set(c.rows.flatMap((r) => pairsOf(r)));
        for (const p of all) expect(got.has(p), `pair ${p} of [${levels}]`).toBe(true);
        expect(c.covered).toBe(all.size);
        expect(c.pairs).toBe(all.size);
        for (const r of c.rows) r.forEach((v, i) => expect(v >= 0 && v < levels[i]!).toBe(true));
      }),
      { seed: 27, numRuns: 150 },
    );
  });

  it('covers, under requirements, every pair a row can cover, and only counts pairs where both factors matter', () => {
    const withRequirement = factors
      .filter((l) => l.length >= 3 && l[0]! >= 2)
      .chain((levels) =>
        fc.record({
          levels: fc.constant(levels),
          requires: fc.subarray([...Array(levels[0]!).keys()], { minLength: 1 }).map((on): Requirement[] => [{ factor: levels.length - 1, on: 0, levels: on }]),
          seed: fc.nat(),
        }),
      );
    fc.assert(
      fc.property(withRequirement, ({ levels, requires, seed }) => {
        const c = coveringArray(levels, { seed, requires });
        const all = coverable(levels, requires);
        const got = new Set(c.rows.flatMap((r) => pairsOf(r, requires)));
        for (const p of all) expect(got.has(p), `pair ${p} of [${levels}]`).toBe(true);
        expect(coverage(c.rows, levels, requires)).toEqual({ pairs: all.size, covered: all.size });
      }),
      { seed: 28, numRuns: 100 },
    );
  });

  it('gives the same rows for the same seed', () => {
    const a = coveringArray([7, 7, 6, 6, 7], { seed: 5, requires: [{ factor: 2, on: 1, levels: [1, 2, 3, 4] }] });
    const b = coveringArray([7, 7, 6, 6, 7], { seed: 5, requires: [{ factor: 2, on: 1, levels: [1, 2, 3, 4] }] });
    expect(a.rows).toEqual(b.rows);
  });

  it('stays within a few rows of the bound (the product of the two largest factors)', () => {
    expect(coveringArray([3, 3, 3, 3], { seed: 1 }).rows.length).toBeLessThanOrEqual(11); // 9 is optimal
    expect(coveringArray([2, 2, 2, 2, 2, 2, 2, 2, 2, 2], { seed: 1 }).rows.length).toBeLessThanOrEqual(10); // 6 is optimal
    // The exploration's own dimensions: sort 7, filter 7, place 6 (with a timestamp filter), limit 6, offset 7.
    const list = coveringArray([7, 7, 6, 6, 7], { seed: 1, requires: [{ factor: 2, on: 1, levels: [1, 2, 3, 4] }] });
    expect(list.rows.length).toBeGreaterThanOrEqual(49);
    expect(list.rows.length).toBeLessThanOrEqual(75);
  });

  it('refuses a factor without levels', () => {
    expect(() => coveringArray([3, 0], { seed: 1 })).toThrow(/at least one level/);
  });
});
