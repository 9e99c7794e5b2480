// junit.xml agrees with the exit code: CI marks a build unstable or red on any
// <failure>, so a run that exits 0 writes none; and the file is valid JUnit XML, checked by
// libxml2 (xmllint-wasm) against test/fixtures/junit.xsd, not by a pattern.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { renderJunit } from '../reporters/junit.js';
import type { RunReport } from '../reporters/model.js';
import { exitFor } from '../reporters/verdict.js';
import { clauseOf, reportOf, resultOf } from './fixtures/report.js';

const SCHEMA = readFileSync(resolve(import.meta.dirname, 'fixtures/junit.xsd'), 'utf8');

/** The schema's complaints about each document, validated in one call (each call starts a worker). */
async function violations(xmls: readonly string[]): Promise<string[][]> {
  const r = await validateXML({
    xml: xmls.map((contents, i) => ({ fileName: `junit-${i}.xml`, contents })),
    schema: { fileName: 'junit.xsd', contents: SCHEMA },
  });
  expect(r.valid || r.errors.length > 0).toBe(true);
  // Each complaint names its file ('junit-1.xml:3: ...', or 'junit-1.xml fails to validate');
  // the lines that quote the offending text name none, and are left out.
  return xmls.map((_, i) =>
    r.errors.filter((e) => e.loc?.fileName === `junit-${i}.xml` || e.rawMessage.startsWith(`junit-${i}.xml `)).map((e) => e.rawMessage),
  );
}

/** Elements counted in a document the schema has accepted (text there holds no raw `<`). */
const count = (xml: string, element: string): number => xml.match(new RegExp(`<${element}[\\s/>]`, 'g'))?.length ?? 0;
const attribute = (xml: string, element: string, name: string): number => Number(new RegExp(`<${element} [^>]*?\\b${name}="(\\d+)"`).exec(xml)?.[1]);

const result = (id: string, level: CheckResult['level'], outcome: CheckResult['outcome'], more: Partial<CheckResult> = {}): CheckResult =>
  resultOf(id, outcome, {
    area: 'delete-custom-api',
    ...clauseOf({ at: 'delete-custom-api' }),
    level,
    durationMs: 7,
    ...(outcome === 'fail' || outcome === 'error'
      ? {
          evidence: {
            expected: 'status 404',
            actual: 'status 204',
            request: "curl -i -X DELETE 'https://t.example/v2/x' -H 'authorization: Bearer ***'",
            status: 204,
            bodyExcerpt: '',
            exchanges: [],
          },
        }
      : {}),
    ...more,
  });

/** A report whose exit code comes from the real rule (verdict.ts exitFor), as a run makes it. */
function report(
  results: CheckResult[],
  opts: { strict?: boolean; suiteErrors?: string[]; baseline?: boolean; certification?: RunReport['certification'] } = {},
): RunReport {
  const suiteErrors = opts.suiteErrors ?? [];
  let exit = exitFor(results, suiteErrors, opts.strict ?? false);
  if (opts.certification && !opts.certification.certifiable && exit.code === 0)
    exit = { code: 1, reason: `exit 1: not certifiable: ${opts.certification.why}` };
  return reportOf(results, {
    runId: 'junit001',
    seed: 9,
    contractDigest: `sha256:${'cd'.repeat(32)}`,
    config: { baseUrl: 'https://t.example', token: '***', seed: 9, timeoutMs: 10000, strict: opts.strict ?? false },
    suiteErrors,
    ...(opts.baseline ? { baseline: { file: 'known.yaml', known: results.filter((r) => r.baselined).length, stale: [] } } : {}),
    ...(opts.certification ? { certification: opts.certification } : {}),
    exit,
  });
}

const pass = result('delete.existing.204', 'MUST', 'pass');
const nasty = 'a & b < c > d ]]> e "q" \'s\' \u0000\u0007\u001b[2J\u000b\u000c\ufffe\uffff\ud800 lone \u202e bidi \u0085 nel\r\nnext\ttab';

const CASES: Array<[string, RunReport, 0 | 1 | 2]> = [
  ['every check passes', report([pass, result('create.valid.201', 'SHOULD', 'pass', { area: 'create-application-key' })]), 0],
  ['a SHOULD warning', report([pass, result('create.valid.201', 'SHOULD', 'fail')]), 0],
  ['an INFO note', report([pass, result('create.name.astral', 'INFO', 'fail', { notes: ['accepted 255 emoji'] })]), 0],
  ['a baselined MUST failure', report([pass, result('delete.repeat.404', 'MUST', 'fail', { baselined: true })], { baseline: true }), 0],
  ['a MUST failure', report([pass, result('delete.repeat.404', 'MUST', 'fail'), result('create.valid.201', 'SHOULD', 'fail')]), 1],
  ['a SHOULD failure under --strict', report([pass, result('create.valid.201', 'SHOULD', 'fail')], { strict: true }), 1],
  [
    'a MUST failure next to an error',
    report([result('delete.repeat.404', 'MUST', 'fail'), result('list.limit.max', 'MUST', 'error', { operation: 'files', area: 'pagination' })]),
    1,
  ],
  ['an error of a check', report([pass, result('list.limit.max', 'MUST', 'error', { operation: 'files', area: 'pagination' })]), 2],
  ['an error of the suite outside any check', report([pass], { suiteErrors: ['suites/list.test.ts did not load'] }), 2],
  [
    'skips',
    report([
      pass,
      result('list.meta.fields', 'MUST', 'skip', { operation: 'jobs', area: 'pagination' }),
      result('list.filter.ge', 'SHOULD', 'skip', { operation: 'accounts', area: 'pagination' }),
    ]),
    0,
  ],
  [
    'a run that cannot certify (a MUST check skipped)',
    report([pass, result('list.meta.fields', 'MUST', 'skip', { operation: 'jobs', area: 'pagination' })], {
      certification: { certifiable: false, why: '1 MUST check(s) skipped' },
    }),
    1,
  ],
  ['a run that certifies', report([pass], { certification: { certifiable: true, why: 'every MUST check passed' } }), 0],
  [
    'what the target sent: & < > ]]> quotes, control characters, unpaired surrogates, bidi',
    report(
      [
        result('delete.repeat.404', 'MUST', 'fail', {
          area: `area ${nasty}`,
          title: `title ${nasty}`,
          reason: `reason ${nasty}`,
          evidence: {
            expected: `e ${nasty}`,
            actual: `a ${nasty}`,
            request: `r ${nasty}`,
            status: 500,
            bodyExcerpt: `<html>${nasty}</html>`,
            exchanges: [`x ${nasty}`, `y ${nasty}`],
          },
        }),
        result('create.valid.201', 'SHOULD', 'fail', { reason: `warn ${nasty}`, notes: [`note ${nasty}`] }),
        result('list.meta.fields', 'MUST', 'skip', { operation: `op ${nasty}`, reason: `skip ${nasty}` }),
        result('list.limit.max', 'MUST', 'error', { reason: `error ${nasty}` }),
      ],
      { suiteErrors: [`suite ${nasty}`] },
    ),
    1,
  ],
];

describe('junit.xml agrees with the exit code, and is valid JUnit XML', () => {
  const rendered = new Map<RunReport, { xml: string; violations: string[] }>();
  beforeAll(async () => {
    const xmls = CASES.map(([, r]) => renderJunit(r));
    const found = await violations(xmls);
    CASES.forEach(([, r], i) => rendered.set(r, { xml: xmls[i]!, violations: found[i]! }));
  });

  it.each(CASES)('%s: valid by the JUnit XSD; <failure> exactly when the exit code is 1', (_, r, code) => {
    expect(r.exit.code).toBe(code);
    const { xml, violations: found } = rendered.get(r)!;
    expect(found).toEqual([]);
    const failures = count(xml, 'failure');
    const errors = count(xml, 'error');
    // What CI reads agrees with what the shell reads: red or unstable exactly when the run failed.
    expect(failures > 0).toBe(code === 1);
    if (code === 2) expect(errors).toBeGreaterThan(0);
    if (code === 0) expect([failures, errors]).toEqual([0, 0]);
    // The counts in the attributes are the elements written.
    expect([attribute(xml, 'testsuites', 'failures'), attribute(xml, 'testsuites', 'errors'), attribute(xml, 'testsuites', 'skipped')]).toEqual([
      failures,
      errors,
      count(xml, 'skipped'),
    ]);
    expect(attribute(xml, 'testsuites', 'tests')).toBe(count(xml, 'testcase'));
    expect(count(xml, 'skipped')).toBe(r.results.filter((x) => x.outcome === 'skip').length);
  });

  it('a failure that does not fail the run is a passing testcase that says why, in properties and system-out', async () => {
    const xml = renderJunit(
      report(
        [
          result('create.valid.201', 'SHOULD', 'fail'),
          result('create.name.astral', 'INFO', 'fail'),
          result('delete.repeat.404', 'MUST', 'fail', { baselined: true }),
        ],
        { baseline: true },
      ),
    );
    expect(await violations([xml])).toEqual([[]]);
    expect(count(xml, 'failure')).toBe(0);
    expect(xml).toContain('<property name="verdict" value="SHOULD warning: it does not fail the run (--strict would)"/>');
    expect(xml).toContain('<property name="verdict" value="INFO note: it never fails the run"/>');
    expect(xml).toContain('<property name="verdict" value="known MUST failure, listed in the baseline known.yaml: reported, not counted"/>');
    expect(xml).toMatch(
      /<system-out>SHOULD warning[^<]*\nexpected: status 404\nactual: {3}status 204\n[^<]*replay: {3}npx conformance --check create\.valid\.201 /,
    );
  });

  it('a failure that fails the run carries its evidence and its replay command', () => {
    const xml = renderJunit(report([result('delete.repeat.404', 'MUST', 'fail')]));
    expect(xml).toMatch(
      /<failure message="delete\.repeat\.404 fail" type="MUST">MUST Endpoints[^<]*expected: status 404[^<]*replay: {3}npx conformance --check delete\.repeat\.404 --seed 9 --base-url https:\/\/t\.example --timeout 10000<\/failure>/,
    );
  });

  it("times: checks run side by side, so an area takes the longest of its testcases (not their sum), the whole the run's duration", async () => {
    const at = (id: string, ms: number, area = 'pagination'): CheckResult => result(id, 'MUST', 'pass', { area, durationMs: ms, operation: 'orders' });
    const r = { ...report([at('list.a', 3000), at('list.b', 9500), at('list.c', 7000), at('delete.x', 120, 'delete-custom-api')]), durationMs: 10_300 };
    const xml = renderJunit(r);
    expect(await violations([xml])).toEqual([[]]);
    expect(xml).toMatch(/<testsuites [^>]* time="10\.300">/);
    expect(xml).toMatch(/<testsuite name="pagination" [^>]* time="9\.500">/);
    expect(xml).toMatch(/<testsuite name="delete-custom-api" [^>]* time="0\.120">/);
    // No area lasts longer than the run.
    for (const [, t] of xml.matchAll(/<testsuite name="[^"]*" [^>]* time="([\d.]+)"/g)) expect(Number(t)).toBeLessThanOrEqual(10.3);
  });

  it('an error of the suite outside any check is an <error> of its own', () => {
    const xml = renderJunit(report([pass], { suiteErrors: ['a file did not load'] }));
    expect(xml).toMatch(
      /<testcase classname="conformance" name="error of the suite 1" time="0\.000">\n {6}<error message="a file did not load" type="suite-error">/,
    );
  });

  it('control characters reach the file as visible escapes, not dropped and not raw', () => {
    const xml = renderJunit(CASES.at(-1)![1]);
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/);
    expect(xml).toContain('\\u001b[2J');
    expect(xml).toContain(']]&gt;');
  });

  it('the schema refuses what JUnit readers do not expect (it can fail)', async () => {
    const good = renderJunit(CASES[4]![1]);
    // A <failure> before the properties, an unknown element, a count that is no number, an unescaped '<' in text.
    const misplaced = good.replace(
      /(<testcase [^>]*>\n)( {6}<failure[^]*?<\/failure>\n)/,
      '$1$2      <properties><property name="a" value="b"/></properties>\n',
    );
    expect(misplaced).not.toBe(good);
    const [ok, ...bad] = await violations([
      good,
      misplaced,
      good.replace('</testsuites>', '<warning/></testsuites>'),
      good.replace('tests="', 'tests="x'),
      good.replace('expected: status 404', 'expected: <status> 404'),
    ]);
    expect(ok).toEqual([]);
    expect(bad[0]!.join('\n')).toMatch(/properties.*not expected/);
    for (const v of bad) expect(v).not.toEqual([]);
  });
});
