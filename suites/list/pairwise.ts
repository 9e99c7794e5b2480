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
import { seededRandom } from '../../lib/random.js';

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

/** Every pair of levels some row can cover, keyed `f,v,g,w` (f < g). */
function universe(levels: readonly number[], requires: readonly Requirement[]): Set<string> {
  const out = new Set<string>();
  for (let f = 0; f < levels.length; f++) {
    for (let g = f + 1; g < levels.length; g++) {
      for (let v = 0; v < levels[f]!; v++) {
        for (let w = 0; w < levels[g]!; w++) {
          const row = levels.map(() => -1);
          row[f] = v;
          row[g] = w;
          if (matters(row, f, requires) && matters(row, g, requires)) out.add(`${f},${v},${g},${w}`);
        }
      }
    }
  }
  return out;
}

/** The pairs a complete row covers. */
export function pairsOf(row: readonly number[], requires: readonly Requirement[] = []): string[] {
  const out: string[] = [];
  for (let f = 0; f < row.length; f++) {
    if (!matters(row, f, requires)) continue;
    for (let g = f + 1; g < row.length; g++) if (matters(row, g, requires)) out.push(`${f},${row[f]},${g},${row[g]}`);
  }
  return out;
}

/** How many pairs of `universe(levels)` the rows cover. */
export function coverage(rows: readonly (readonly number[])[], levels: readonly number[], requires: readonly Requirement[] = []): { pairs: number; covered: number } {
  const all = universe(levels, requires);
  const got = new Set<string>();
  for (const row of rows) for (const p of pairsOf(row, requires)) if (all.has(p)) got.add(p);
  return { pairs: all.size, covered: got.size };
}

/**
 * A covering array of strength 2 over factors of `levels[i]` levels each (a factor of one level
 * is fine; one of none is not). Seeded: the same levels and seed give the same rows.
 */
export function coveringArray(levels: readonly number[], options: CoveringOptions): Covering {
  if (levels.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`coveringArray: every factor needs at least one level, got [${levels.join(', ')}]`);
  const requires = options.requires ?? [];
  const random = seededRandom(options.seed);
  const uncovered = universe(levels, requires);
  const pairs = uncovered.size;
  const rows: number[][] = [];
  const gain = (row: readonly number[]): number => pairsOf(row, requires).filter((p) => uncovered.has(p)).length;
  const k = levels.length;
  if (k === 1) return { rows: Array.from({ length: levels[0]! }, (_, v) => [v]), pairs: 0, covered: 0 };
  while (uncovered.size) {
    const [f, v, g, w] = uncovered.values().next().value!.split(',').map(Number) as [number, number, number, number];
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
          row[h] = u;
          let n = 0;
          for (let x = 0; x < k; x++) {
            if (x === h || row[x]! < 0) continue;
            const key = x < h ? `${x},${row[x]},${h},${u}` : `${h},${u},${x},${row[x]}`;
            if (uncovered.has(key)) n++;
          }
          if (n > most) (most = n), (pick = u);
        }
        row[h] = pick;
      }
      const n = gain(row);
      if (n > bestGain) (bestGain = n), (best = row);
    }
    // The seed pair is in the universe, so some row covers it; if no candidate did, it is
    // dropped rather than tried forever (it cannot happen with the requirements as checked).
    if (bestGain <= 0) {
      uncovered.delete(`${f},${v},${g},${w}`);
      continue;
    }
    for (const p of pairsOf(best!, requires)) uncovered.delete(p);
    rows.push(best!);
  }
  return { rows, pairs, covered: coverage(rows, levels, requires).covered };
}
