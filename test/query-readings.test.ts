// The readings of requests the contract does not define (spec/contract/query-readings.yaml,
// spec/contract/README.md#query-readings): the table read once, each parser of
// server/query-parsers.ts giving the readings the table names it for, and the variants built on
// them held to exit 0 with no MUST failure on seeds in a row (20 for PHP's, Rack's and qs's),
// through the CLI, on one list operation with list.params.invalid alone (where the illegal draws
// are judged).
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { pool, runThroughCli } from '../selftest/index.js';
import { goQuery, phpQuery, qsQuery, rackQuery } from '../server/query-parsers.js';
import { queryReadings, readingsFor, SHAPES, undefinedPaging } from '../suites/list/readings.js';

const seeds = (n: number): number[] => Array.from({ length: Number(process.env.QUERY_READINGS_SEEDS ?? n) }, (_, i) => i + 1);
/** Each variant and its seeds: query-go reads like the others' subsets (ignored, the first), so fewer keep the test under a minute. */
const VARIANTS: ReadonlyArray<[string, number[]]> = [
  ['query-php', seeds(20)],
  ['query-rack', seeds(20)],
  ['query-qs', seeds(20)],
  ['query-go', seeds(5)],
];

/** What a parser's store applies to a query: its paging numbers, or the status it refuses with. */
function applied(read: (q: URLSearchParams) => URLSearchParams, query: string): string {
  try {
    return read(new URLSearchParams(query)).toString().replace(/%5B/g, '[').replace(/%5D/g, ']');
  } catch (err) {
    return `refused ${(err as { status?: number }).status}`;
  }
}

describe('spec/contract/query-readings.yaml', () => {
  it('names every shape the suite sends once, each reading with the parsers that give it', () => {
    expect(
      queryReadings()
        .map((s) => s.shape)
        .sort(),
    ).toEqual([...SHAPES].sort());
    for (const s of queryReadings()) for (const r of s.readings) expect(r.parsers.length, `${s.shape} ${r.reading}`).toBeGreaterThan(0);
  });

  it('lets a store ignore an offset past 2^64 in plain digits, not one a 64-bit integer holds', () => {
    expect(readingsFor('plain', '18446744073709551621', 'page[offset]').has('ignored')).toBe(true);
    expect(readingsFor('plain', '4294967301', 'page[offset]').has('ignored')).toBe(false);
    expect(readingsFor('plain', '4294967301', 'page[limit]').has('ignored')).toBe(true);
  });

  it('judges as undefined the traffic sent in its shapes, and legal paging as legal', () => {
    for (const q of [
      'page[limit]=5&page[limit]=7',
      'page[limit][]=5',
      'page=2&page[offset]=5',
      'page[]=x',
      'page[offset]=18446744073709551621',
      'page[limit]=0',
    ])
      expect(undefinedPaging(new URLSearchParams(q)), q).toBeDefined();
    for (const q of ['page[limit]=5&page[offset]=4294967301', 'sort=id&filter=ge(id,1)']) expect(undefinedPaging(new URLSearchParams(q)), q).toBeUndefined();
  });
});

describe('the parsers of the variants', () => {
  it('read a bare page= beside the group each as its parser does', () => {
    expect(
      ['page[offset]=5&page=x', 'page=x&page[offset]=5'].map((q) => [applied(phpQuery, q), applied(rackQuery, q), applied(qsQuery, q), applied(goQuery, q)]),
    ).toEqual([
      ['', 'refused 400', 'page[offset]=5', 'page[offset]=5'],
      ['page[offset]=5', 'refused 400', '', 'page[offset]=5'],
    ]);
  });

  it('read a repeat, an array and a word each as its parser does', () => {
    const rows = ['page[limit]=abc&page[limit]=7', 'page[limit][]=7', 'page[limit]=abc', 'page[offset]=18446744073709551621'];
    expect(rows.map((q) => [applied(phpQuery, q), applied(rackQuery, q), applied(qsQuery, q), applied(goQuery, q)])).toEqual([
      ['page[limit]=7', 'page[limit]=7', '', ''],
      ['page[limit]=1', '', 'page[limit]=7', ''],
      ['page[limit]=1', 'page[limit]=1', '', ''],
      ['page[offset]=9223372036854775807', 'page[offset]=18446744073709551621', 'page[offset]=18446744073709551616', ''],
    ]);
  });
});

describe('the variants that parse the query as mainstream parsers do', () => {
  it(`exit 0 with no MUST failure on seeds in a row (${VARIANTS.map(([v, s]) => `${v}: 1 to ${s.length}`).join(', ')})`, async () => {
    const started = performance.now();
    const jobs = VARIANTS.flatMap(([variant, list]) => list.map((seed) => ({ variant, seed })));
    const runs = await pool(jobs, 2, async ({ variant, seed }) => {
      const run = await runThroughCli(main, { variants: [variant] }, ['accounts'], seed, ['--check', 'list.params.invalid']);
      const must = run.results.filter((r) => r.level === 'MUST' && r.outcome === 'fail').map((r) => `${r.id}: ${r.reason ?? ''}`);
      return { variant, seed, exit: run.code, must, ran: run.results.filter((r) => r.id === 'list.params.invalid' && r.outcome === 'pass').length };
    });
    console.log(`query readings: ${runs.length} runs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(runs.filter((r) => r.exit !== 0 || r.must.length || r.ran === 0)).toEqual([]);
  }, 240_000);
});
