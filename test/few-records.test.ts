// Each list check needs only the records that can show its rule (ListCheck.fewest), and adapts
// its requests to what the list holds: on a list of 0, 1, 2 and 3 records, a check runs where it
// has its fewest and skips below, the skip naming both numbers (and, on a nested list, the
// parent that held the most).
import { describe, expect, it } from 'vitest';
import type { Endpoint } from '../lib/contract/index.js';
import { hash32 } from '../lib/runner/index.js';
import { listChecks } from '../suites/index.js';
import { byId, endpoints, runListChecks } from './support.js';

const [LIST] = endpoints(['promotions']) as [Endpoint];
const counted = listChecks.filter((c) => c.fewest !== undefined && (!c.appliesTo || c.appliesTo(LIST)));

/** The server's `records` that gives LIST `n` records: it sizes an ordinary list records - 20 + hash32(path) % 41 (server/list-data.ts). */
const sized = (n: number): number => n + 20 - (hash32(LIST.path) % 41);

describe('a list of few records', () => {
  it('declares a fewest for the checks it counts records for', () => {
    expect(Object.fromEntries(counted.map((c) => [c.id, c.fewest]))).toMatchInlineSnapshot(`
      {
        "list.filter.ge": 1,
        "list.filter.gt": 1,
        "list.keyset.created-at": 1,
        "list.keyset.id": 1,
        "list.keyset.updated-at": 1,
        "list.offset.records": 2,
        "list.sort.created-at": 2,
        "list.sort.id": 2,
        "list.sort.updated-at": 2,
        "list.total.filtered": 1,
      }
    `);
  });

  it.each([0, 1, 2, 3])('with %i record(s), each check runs or skips as its fewest says', async (n) => {
    const { results } = await runListChecks({ records: sized(n), seed: 5 }, [LIST]);
    const got = byId(results);
    expect(got.get('list.endpoint.present')!.records).toBe(n);
    for (const c of counted) {
      const r = got.get(c.id)!;
      if (n < c.fewest!) {
        expect(r, c.id).toMatchObject({ outcome: 'skip', wantsRecords: true, records: n });
        expect(r.reason, c.id).toMatch(new RegExp(`^needs ${c.fewest} records?\\b.*, found ${n}\\b`));
      } else expect([c.id, r.outcome, r.reason]).toEqual([c.id, 'pass', undefined]);
    }
    // No other check skips for want of records.
    expect(results.filter((r) => r.wantsRecords && !counted.some((c) => c.id === r.id)).map((r) => r.id)).toEqual([]);
  });
});

describe('on its fewest records, a check still shows its rule', () => {
  it.each([
    [1, 'ge-as-gt', 'list.filter.ge'],
    [1, 'gt-as-ge', 'list.filter.gt'],
    [2, 'sort-inverted', 'list.sort.created-at'],
    [2, 'small-list-offset', 'list.offset.records'],
    [3, 'small-list-offset', 'list.offset.records'],
  ])('%i record(s), fault %s: %s fails', async (n, fault, id) => {
    const { results } = await runListChecks({ records: sized(n), seed: 5, faults: [fault] }, [LIST]);
    expect(byId(results).get(id)!.outcome).toBe('fail');
  });
});

describe('one record newer than the time buffer', () => {
  it('seeded just before the run: judged as the buffer is waived, and ge/gt still hold to it', async () => {
    const { results } = await runListChecks({ records: sized(1), seed: 5, recentRecords: true }, [LIST]);
    const got = byId(results);
    for (const id of ['list.filter.ge', 'list.filter.gt', 'list.total.filtered']) expect([id, got.get(id)!.outcome]).toEqual([id, 'pass']);
    const broken = byId((await runListChecks({ records: sized(1), seed: 5, recentRecords: true, faults: ['gt-as-ge'] }, [LIST])).results);
    expect(broken.get('list.filter.gt')!.outcome).toBe('fail');
  });

  it('created after the run started: not judged missing, a skip naming the record the list holds', async () => {
    const { results } = await runListChecks({ records: sized(1), seed: 5 }, [LIST], { startedAt: Date.now() - 400 * 24 * 3600 * 1000 });
    const got = byId(results);
    for (const id of ['list.filter.ge', 'list.filter.gt', 'list.total.filtered'])
      expect(got.get(id), id).toMatchObject({
        outcome: 'skip',
        reason: 'needs 1 record with a parseable created_at created before the run, found 0 of the 1 the list holds',
      });
  });
});
