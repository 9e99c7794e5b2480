// A covering array of strength 2: rows of factor levels such that every pair of levels of two
// factors occurs together in at least one row. A bug that shows only where two conditions meet
// (the hard offset limit checked only without a filter, a sort lost at one page size) is met by
// some row for certain, where random draws meet it by chance.
//
// The construction is the greedy one of AETG (Cohen et al., 1997): each new row starts from a
// pair not yet covered and fills the other factors, one at a time in a random order, with the
// level that covers the most pairs not yet covered; of a few such candidate rows the best is
// kept. It is not minimal (no construction of reasonable cost is), but within a few rows of the
// known bounds for small factor sets; test/pairwise.test.ts holds it to full coverage.
//
// A factor may matter only when another takes some levels (a filter's place only when there is a
// timestamp filter): `requires` says so, and a row covers a pair only where both of its factors
// matter. Pairs that no row can cover are left out of the count.
import { seededRandom } from '../../lib/runner/index.js';

/** Factor `factor` matters only in rows where factor `on` takes one of `levels`. */
export interface Requirement {
  factor: number;
  on: number;
  levels: readonly number[];
}

export interface CoveringOptions {
  seed: number;
  requires?: readonly Requirement[];
  /** Candidate rows built per row kept (more: fewer rows, more time). */
  candidates?: number;
}

export interface Covering {
  rows: number[][];
  /** Pairs of levels that some row can cover, and how many the rows cover (all of them). */
  pairs: number;
  covered: number;
}

/** Whether factor `f` matters in `row` (a level of -1 is not yet chosen, and counts as matching). */
function matters(row: readonly number[], f: number, requires: readonly Requirement[]): boolean {
  for (const r of requires) {
    if (r.factor !== f) continue;
    const v = row[r.on]!;
    if (v >= 0 && !r.levels.includes(v)) return false;
  }
  return true;
}

/** Where each pair of factors (f < g) starts in the flat numbering of pairs of levels: pair (f,v,g,w) is base[f][g] + v·levels[g] + w. */
function pairIndex(levels: readonly number[]): { base: number[][]; size: number } {
  const base = levels.map(() => levels.map(() => 0));
  let size = 0;
  for (let f = 0; f < levels.length; f++) {
    for (let g = f + 1; g < levels.length; g++) {
      base[f]![g] = size;
      size += levels[f]! * levels[g]!;
    }
  }
  return { base, size };
}

/** Every pair of levels some row can cover: true at its index. */
function universe(levels: readonly number[], requires: readonly Requirement[], index = pairIndex(levels)): Uint8Array {
  const out = new Uint8Array(index.size);
  const row = levels.map(() => -1);
  for (let f = 0; f < levels.length; f++) {
    for (let g = f + 1; g < levels.length; g++) {
      for (let v = 0; v < levels[f]!; v++) {
        for (let w = 0; w < levels[g]!; w++) {
          row.fill(-1);
          row[f] = v;
          row[g] = w;
          if (matters(row, f, requires) && matters(row, g, requires)) out[index.base[f]![g]! + v * levels[g]! + w] = 1;
        }
      }
    }
  }
  return out;
}

/** The pairs a complete row covers, as `f,v,g,w` (f < g). */
export function pairsOf(row: readonly number[], requires: readonly Requirement[] = []): string[] {
  const out: string[] = [];
  for (let f = 0; f < row.length; f++) {
    if (!matters(row, f, requires)) continue;
    for (let g = f + 1; g < row.length; g++) if (matters(row, g, requires)) out.push(`${f},${row[f]},${g},${row[g]}`);
  }
  return out;
}

/** The indexes of the pairs a complete row covers. */
function coveredBy(row: readonly number[], levels: readonly number[], requires: readonly Requirement[], index: { base: number[][] }): number[] {
  const out: number[] = [];
  const on = row.map((_, f) => matters(row, f, requires));
  for (let f = 0; f < row.length; f++) {
    if (!on[f]) continue;
    for (let g = f + 1; g < row.length; g++) if (on[g]) out.push(index.base[f]![g]! + row[f]! * levels[g]! + row[g]!);
  }
  return out;
}

/** How many pairs of `universe(levels)` the rows cover. */
export function coverage(
  rows: readonly (readonly number[])[],
  levels: readonly number[],
  requires: readonly Requirement[] = [],
): { pairs: number; covered: number } {
  const index = pairIndex(levels);
  const all = universe(levels, requires, index);
  const got = new Uint8Array(index.size);
  for (const row of rows) for (const p of coveredBy(row, levels, requires, index)) got[p] = all[p]!;
  return { pairs: all.reduce((n, x) => n + x, 0), covered: got.reduce((n, x) => n + x, 0) };
}

/**
 * A covering array of strength 2 over factors of `levels[i]` levels each (a factor of one level
 * is fine; one of none is not). Seeded: the same levels and seed give the same rows.
 */
export function coveringArray(levels: readonly number[], options: CoveringOptions): Covering {
  if (levels.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`coveringArray: every factor needs at least one level, got [${levels.join(', ')}]`);
  const requires = options.requires ?? [];
  const random = seededRandom(options.seed);
  const k = levels.length;
  if (k === 1) return { rows: Array.from({ length: levels[0]! }, (_, v) => [v]), pairs: 0, covered: 0 };
  const index = pairIndex(levels);
  const uncovered = universe(levels, requires, index);
  let left = uncovered.reduce((n, x) => n + x, 0);
  const pairs = left;
  const rows: number[][] = [];
  const at = (f: number, v: number, g: number, w: number): number =>
    f < g ? index.base[f]![g]! + v * levels[g]! + w : index.base[g]![f]! + w * levels[f]! + v;
  const gain = (row: readonly number[]): number => coveredBy(row, levels, requires, index).reduce((n, p) => n + uncovered[p]!, 0);
  let next = 0;
  while (left > 0) {
    // The first pair not yet covered starts the row.
    while (!uncovered[next]) next++;
    let f = 0;
    let g = 1;
    while (!(next >= index.base[f]![g]! && next < index.base[f]![g]! + levels[f]! * levels[g]!)) {
      if (++g === k) g = ++f + 1;
    }
    const v = Math.floor((next - index.base[f]![g]!) / levels[g]!);
    const w = (next - index.base[f]![g]!) % levels[g]!;
    let best: number[] | undefined;
    let bestGain = -1;
    for (let c = 0; c < (options.candidates ?? 12); c++) {
      const row = levels.map(() => -1);
      row[f] = v;
      row[g] = w;
      // A factor the seed pair depends on is set first, to a level under which it matters.
      for (const r of requires) {
        if ((r.factor === f || r.factor === g) && row[r.on]! < 0) row[r.on] = r.levels[Math.floor(random() * r.levels.length)]!;
      }
      const order = [...Array(k).keys()].filter((h) => row[h]! < 0);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const h of order) {
        let pick = 0;
        let most = -1;
        const start = Math.floor(random() * levels[h]!);
        for (let step = 0; step < levels[h]!; step++) {
          const u = (start + step) % levels[h]!;
          let n = 0;
          for (let x = 0; x < k; x++) if (x !== h && row[x]! >= 0) n += uncovered[at(x, row[x]!, h, u)]!;
          if (n > most) ((most = n), (pick = u));
        }
        row[h] = pick;
      }
      const n = gain(row);
      if (n > bestGain) ((bestGain = n), (best = row));
    }
    // The seed pair is in the universe, so some row covers it; if no candidate did, it is
    // dropped rather than tried forever (it cannot happen with the requirements as checked).
    if (bestGain <= 0) {
      uncovered[next] = 0;
      left--;
      continue;
    }
    for (const p of coveredBy(best!, levels, requires, index)) {
      left -= uncovered[p]!;
      uncovered[p] = 0;
    }
    rows.push(best!);
  }
  return { rows, pairs, covered: coverage(rows, levels, requires).covered };
}
