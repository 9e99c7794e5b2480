// Certification of a legitimately empty list. The vendor declares it with
// --empty OP (or the key `empty`); the checks an empty list cannot exercise then do not block
// certification, and the certificate says which they were. The declaration hides nothing: it
// excuses only skips for want of records, only on a list the run saw empty, and a declared
// list that holds records does not certify. Undeclared empty lists block as before (the CLI
// case is in test/cli.test.ts, "refuses to certify when a MUST check was skipped").
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endpointsOf, loadCatalogSpec } from '../lib/contract/index.js';
import type { CheckResult } from '../lib/runner/index.js';
import { certify, observeEmpty, type Certification } from '../reporters/verdict.js';
import type { RunReport } from '../reporters/model.js';
import { main } from '../cli/main.js';
import { cli, endpoints, runListChecks } from './support.js';
import { clauseOf, resultOf } from './fixtures/report.js';

/** The list the bundled reference server keeps empty by default (conformance serve --help, --no-empty-list). */
const EMPTY_LIST = 'catalog-rules';

describe('--empty against the bundled reference server', () => {
  it('certifies with the empty list declared, and the certificate lists what could not be exercised', async () => {
    const bundle = mkdtempSync(join(tmpdir(), 'conformance-empty-'));
    const r = await cli(['--certify', bundle, '--empty', EMPTY_LIST, '--seed', '8']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `certifiable: yes \\(.*declared empty: ${EMPTY_LIST}, seen empty; \\d+ MUST check\\(s\\) could not be exercised on it \\(list\\.offset\\.records, `,
      ),
    );

    const report = JSON.parse(readFileSync(join(bundle, 'results.json'), 'utf8')) as RunReport;
    const certificate = JSON.parse(readFileSync(join(bundle, 'certificate.json'), 'utf8')) as {
      certifiable: boolean;
      declaredEmpty: Certification['declaredEmpty'];
    };
    // The skips are still in the results: excused in the verdict, not hidden.
    const skipped = report.results.filter((x) => x.operation === EMPTY_LIST && x.outcome === 'skip');
    expect(skipped.filter((x) => x.level === 'MUST').length).toBeGreaterThan(0);
    expect(certificate.certifiable).toBe(true);
    expect(certificate.declaredEmpty).toEqual([
      {
        operation: EMPTY_LIST,
        observed: 'empty',
        evidence: expect.stringMatching(/^list\.[a-z.-]+ saw 0 records$/),
        notExercised: skipped.map((x) => ({ id: x.id, level: x.level, reason: x.reason })),
      },
    ]);
    expect((report.certification as Certification).declaredEmpty).toEqual(certificate.declaredEmpty);

    // The same results, judged without the declaration: not certifiable, as before.
    const scope = {
      declaredAbsent: [],
      extraOperations: endpointsOf(loadCatalogSpec())
        .filter((e) => e.extra)
        .map((e) => e.key),
    };
    const undeclared = certify(report.results, [], scope);
    expect(undeclared.certifiable).toBe(false);
    expect(undeclared.why).toMatch(new RegExp(`MUST check\\(s\\) skipped for a reason other than a declared-absent operation \\(.*\\[${EMPTY_LIST}\\]`));
    // And it says how to declare it: only the list the run saw empty, none of the others.
    expect(undeclared.why).toMatch(new RegExp(`; if this list is legitimately empty, declare it: --empty ${EMPTY_LIST}$`));
    // A list with records declared empty as well: the declaration is wrong, so no certificate.
    const wrong = certify(report.results, [], { ...scope, declaredEmpty: [EMPTY_LIST, 'accounts'] });
    expect(wrong.certifiable).toBe(false);
    expect(wrong.why).toMatch(/^declared empty but holding records: accounts \(list\.[a-z.-]+ saw \d+ records\); drop --empty for it$/);
  });
});

describe('--empty without --certify', () => {
  it('runs, and says the declaration counts only in a certification', async () => {
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      env: {},
      cwd: mkdtempSync(join(tmpdir(), 'conformance-empty-')),
      isTTY: false,
    };
    const code = await main(['--empty', EMPTY_LIST, '--check', 'delete.existing.204', '--seed', '8'], io);
    expect(code, lines.join('\n')).toBe(0);
    expect(lines).toContain(`  (declared empty: ${EMPTY_LIST}; this counts only in a certification, with --certify DIR)`);
    expect(lines).toContain(`  empty          ${EMPTY_LIST} (declared empty)  (flag)`);
  });
});

// Results of one list operation, as the pagination checks report them: `seen`, the records the
// check saw the list hold (CheckResult.records), where it read the list.
const result = (
  id: string,
  outcome: CheckResult['outcome'],
  reason?: string,
  level: CheckResult['level'] = 'MUST',
  operation = 'promotions',
  seen?: number,
): CheckResult => {
  const { reason: _worded, ...r } = resultOf(id, outcome, {
    ...clauseOf({ at: 'list-endpoints' }),
    level,
    title: id,
    operation,
    ...(seen !== undefined ? { records: seen } : {}),
  });
  return reason ? { ...r, reason } : r;
};
/** A skip for want of records (CheckContext.skipForRecords), the list holding `found`. */
const short = (id: string, found: number, reason: string, level: CheckResult['level'] = 'MUST', operation = 'promotions'): CheckResult => ({
  ...result(id, 'skip', reason, level, operation, found),
  wantsRecords: true,
});
/** list.endpoint.present, passed, having seen `n` records. */
const present = (n: number, operation = 'promotions'): CheckResult => result('list.endpoint.present', 'pass', undefined, 'MUST', operation, n);

const scope = { declaredAbsent: [] as string[], extraOperations: [] as string[] };

describe('what a declaration of an empty list excuses', () => {
  const empty = [
    present(0),
    short('list.offset.records', 0, 'needs 10 records, found 0'),
    short('list.sort.id', 0, 'needs 2 records, found 0'),
    short('list.keyset.id', 0, 'needs records created before the run, found none (offset traversal reached the end after 1 pages (0 records))'),
    short('list.sort.descending', 0, 'needs 2 records, found 0', 'SHOULD'),
  ];

  it('the skips for want of records on a list seen empty, every level listed', () => {
    const c = certify(empty, [], { ...scope, declaredEmpty: ['promotions'] });
    expect(c.certifiable).toBe(true);
    expect(c.declaredEmpty[0]).toMatchObject({ operation: 'promotions', observed: 'empty' });
    expect(c.declaredEmpty[0]!.notExercised.map((n) => `${n.level} ${n.id}`)).toEqual([
      'MUST list.offset.records',
      'MUST list.sort.id',
      'MUST list.keyset.id',
      'SHOULD list.sort.descending',
    ]);
    expect(c.why).toBe(
      'every MUST check passed, but for 3 that a declared-empty operation could not exercise; declared empty: promotions, seen empty; 3 MUST check(s) could not be exercised on it (list.offset.records, list.sort.id, list.keyset.id)',
    );
  });

  it('nothing without the declaration: an undeclared empty list blocks', () => {
    const c = certify(empty, [], scope);
    expect(c.certifiable).toBe(false);
    expect(c.why).toMatch(/^3 MUST check\(s\) skipped for a reason other than a declared-absent operation/);
    expect(c.declaredEmpty).toEqual([]);
  });

  it('an undeclared empty list: the verdict names --empty with the lists seen empty, and only those', () => {
    const orders = [present(0, 'orders'), short('list.sort.id', 0, 'needs 2 records, found 0', 'MUST', 'orders')];
    expect(certify([...empty, ...orders], [], scope).why).toMatch(/\); if these lists are legitimately empty, declare them: --empty promotions,orders$/);
    // A list with some records (short of what a check needs) is not empty: not named.
    const few = [present(1, 'orders'), short('list.sort.id', 1, 'needs 2 records, found 1', 'MUST', 'orders')];
    expect(certify([...empty, ...few], [], scope).why).toMatch(/; if this list is legitimately empty, declare it: --empty promotions$/);
    // Already declared: only the one left to declare, and it says "too".
    expect(certify([...empty, ...orders], [], { ...scope, declaredEmpty: ['promotions'] }).why).toMatch(
      /; if this list is legitimately empty, declare it too: --empty orders$/,
    );
    // A skip for another reason, or a SHOULD skip, names nothing.
    const other = certify(
      [
        present(0),
        result('list.filter.gt', 'skip', 'unsupported: filter=gt(created_at,x) answered 400'),
        short('list.sort.descending', 0, 'needs 2 records, found 0', 'SHOULD'),
      ],
      [],
      scope,
    );
    expect(other.certifiable).toBe(false);
    expect(other.why).not.toContain('--empty');
  });

  it('not a skip for another reason on the declared list', () => {
    const c = certify([...empty, result('list.filter.gt', 'skip', 'unsupported: filter=gt(created_at,x) answered 400')], [], {
      ...scope,
      declaredEmpty: ['promotions'],
    });
    expect(c.certifiable).toBe(false);
    expect(c.why).toMatch(
      /^1 MUST check\(s\) skipped for a reason other than a declared-absent operation or a declared-empty list \(list\.filter\.gt \[promotions\]: unsupported/,
    );
  });

  it('not the skips of another, undeclared list', () => {
    const c = certify([...empty, short('list.sort.id', 0, 'needs 2 records, found 0', 'MUST', 'orders')], [], { ...scope, declaredEmpty: ['promotions'] });
    expect(c.certifiable).toBe(false);
    expect(c.why).toMatch(/list\.sort\.id \[orders\]: needs 2 records, found 0/);
  });

  it('a failure on the declared list still fails', () => {
    const c = certify([...empty, result('list.meta.fields', 'fail', 'meta.results.total is a string')], [], { ...scope, declaredEmpty: ['promotions'] });
    expect(c.certifiable).toBe(false);
    expect(c.why).toMatch(/^1 MUST check\(s\) failed/);
  });
});

describe('a declared-empty list that holds records does not certify', () => {
  it.each([
    // The check that saw the most is the evidence, whatever its skip reason says.
    [
      'a few records (a check found some)',
      [
        result('list.endpoint.present', 'pass', undefined, 'MUST', 'promotions', 3),
        short('list.offset.records', 4, 'needs 10 records, found 4'),
        result('list.sort.id', 'pass', undefined, 'MUST', 'promotions', 4),
      ],
      'list.offset.records saw 4 records',
    ],
    [
      'records created by the run only',
      [
        present(13),
        short('list.keyset.id', 13, 'needs records created before the run, found none (offset traversal reached the end after 2 pages (13 records))'),
      ],
      'list.endpoint.present saw 13 records',
    ],
    [
      'one record, and enough for every check that ran',
      [present(1), result('list.offset.records', 'pass'), result('list.sort.id', 'pass')],
      'list.endpoint.present saw 1 record',
    ],
  ])('%s', (_, results, evidence) => {
    const c = certify(results, [], { ...scope, declaredEmpty: ['promotions'] });
    expect(c.certifiable).toBe(false);
    expect(c.declaredEmpty[0]!.observed).toBe('records');
    expect(c.declaredEmpty[0]!.evidence).toBe(evidence);
    expect(c.why).toMatch(/declared empty but holding records: promotions \(.*\); drop --empty for it$/);
  });
});

describe('what the run saw of a declared-empty list', () => {
  it('absent (404): nothing to tell by, and its skips are excused only by --absent', () => {
    const absent = [
      result('list.endpoint.present', 'skip', 'absent: GET /v2/promotions answered 404'),
      result('list.sort.id', 'skip', 'absent: GET /v2/promotions answered 404'),
    ].map((r) => ({ ...r, absent: true }));
    expect(observeEmpty(absent, 'promotions')).toMatchObject({ observed: 'unknown', evidence: 'its collection answered 404 (absent)', notExercised: [] });
    expect(certify(absent, [], { ...scope, declaredEmpty: ['promotions'] }).certifiable).toBe(false);
    expect(certify(absent, [], { ...scope, declaredAbsent: ['promotions'], declaredEmpty: ['promotions'] }).certifiable).toBe(true);
  });

  it('only a count a check reports tells: passes that read no list tell nothing, nor do skip reasons', () => {
    // Words that once told it ("found 5", "(13 records)") are no evidence without the count.
    const worded = [result('list.endpoint.present', 'pass'), result('list.offset.records', 'skip', 'needs 10 records, found 5')];
    expect(observeEmpty(worded, 'promotions')).toMatchObject({ observed: 'unknown', evidence: 'no result says whether it holds records' });
    // Seen empty with nothing skipped for want of records: empty, with nothing to excuse.
    expect(observeEmpty([present(0)], 'promotions')).toMatchObject({ observed: 'empty', notExercised: [] });
    expect(observeEmpty([present(0), short('list.sort.id', 0, 'needs 2 records, found 0')], 'promotions')).toMatchObject({
      observed: 'empty',
      evidence: 'list.endpoint.present saw 0 records',
    });
  });

  it('a nested list declared empty: the parent list its path is read from says nothing of it', async () => {
    // With records: 0 the reference server's lists hold 0 to 20 records; with seed 9 the list is
    // empty under each of the four authentication realms its path is read from (the suite looks
    // under every parent it tries before it calls a nested list empty), and the realms
    // themselves are no records of user-authentication-info.
    const { results } = await runListChecks({ records: 0, seed: 9 }, endpoints(['user-authentication-info']));
    expect(results.filter((r) => r.wantsRecords && r.level === 'MUST').length).toBeGreaterThan(0);
    expect(observeEmpty(results, 'user-authentication-info')).toMatchObject({ observed: 'empty', evidence: expect.stringMatching(/ saw 0 records$/) });
    expect(certify(results, [], { ...scope, declaredEmpty: ['user-authentication-info'] }).certifiable).toBe(true);
  });

  it('an operation no check ran on', () => {
    expect(observeEmpty([], 'promotions')).toMatchObject({ observed: 'unknown', evidence: 'no check ran on it' });
  });
});
