// Every renderer is a pure function of the results model: snapshot each on a fixed model.
import { describe, expect, it } from 'vitest';
import { interrupted, notRun, renderSummary, unanswered } from '../reporters/console.js';
import { githubAnnotations, renderMarkdown } from '../reporters/github.js';
import { renderHtml } from '../reporters/html.js';
import { renderJson } from '../reporters/json.js';
import { renderJunit } from '../reporters/junit.js';
import { exitFor, renderBaseline } from '../reporters/verdict.js';
import type { CheckResult } from '../lib/runner/index.js';
import { bundleFiles, reportFiles, validateReport } from '../reporters/write.js';
import { renderCtrf } from '../reporters/ctrf.js';
import { unknownReporter } from '../reporters/registry.js';
import { REPORT_FORMATS } from '../reporters/formats.js';
import { absentOperations, failsRun } from '../reporters/model.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LoadRecorder } from '../lib/transport/index.js';
import { fixedReport, resultOf } from './fixtures/report.js';

const same = (s: string): string => s;

describe('renderers on a fixed results model', () => {
  it('the model is valid by spec/results.schema.yaml', () => {
    expect(() => validateReport(fixedReport())).not.toThrow();
  });

  it('a model that breaks the schema is refused as a bug of the suite', () => {
    const bad = { ...fixedReport(), seed: -1 };
    expect(() => validateReport(bad)).toThrow(/SUITE_BUG|breaks spec\/results.schema.yaml/);
  });

  it('console', () => {
    expect(renderSummary(fixedReport(), { color: false })).toMatchSnapshot();
  });

  it('console with colours only when asked', () => {
    expect(renderSummary(fixedReport(), { color: false })).not.toMatch(/\u001b\[/);
    expect(renderSummary(fixedReport(), { color: true })).toMatch(/\u001b\[31m/);
  });

  it('results.json', () => {
    expect(renderJson(fixedReport())).toMatchSnapshot();
  });

  it('junit.xml', () => {
    expect(renderJunit(fixedReport())).toMatchSnapshot();
  });

  it('report.html', () => {
    expect(renderHtml(fixedReport())).toMatchSnapshot();
  });

  it('how hard the run pushed: a line of the summary, results.json by its schema, an SVG in report.html and no script of its own', () => {
    const r = new LoadRecorder(64, 50);
    for (let i = 0; i < 300; i++) {
      r.sent(i * 10, Math.min(64, 4 + i), Math.min(64, 4 + i));
      r.answered(i * 10 + 5, i < 100 ? 20 : 400, i === 150 ? 429 : 200);
    }
    r.backedOff(1_500, 'rate-limited', 32);
    r.backedOff(2_500, 'latency', 24);
    const report = { ...fixedReport(), load: r.report() };
    expect(() => validateReport(report)).not.toThrow();
    expect(renderSummary(report, { color: false })).toMatch(
      /^load: at most 64 request\(s\) in flight \(ceiling 64, at most 50 a second\); latency p50\/p95 \d+\/\d+ ms at the start, \d+\/\d+ ms at the peak; backed off 2 time\(s\) \(1 on latency, 1 on 429s\)$/m,
    );
    const html = renderHtml(report);
    const svg = /<section id="load">.*?<\/section>/s.exec(html)?.[0] ?? '';
    expect(svg).toMatch(/<svg [^>]*id="load-chart"/);
    expect(svg.match(/<polyline /g)).toHaveLength(4);
    expect(svg).toContain('<title>1 × 429</title>');
    expect(svg).not.toMatch(/<script|on[a-z]+=/i);
    expect(renderHtml(fixedReport())).not.toContain('id="load"');
  });

  it('report.html: each cell of the checks × operations grid links to its result, with its evidence', () => {
    const html = renderHtml(fixedReport());
    const links = [...html.matchAll(/<td class="cell [^>]*><a href="#([^"]+)">/g)].map((m) => m[1]);
    const rows = new Set([...html.matchAll(/<tr id="([^"]+)" class="result /g)].map((m) => m[1]));
    expect(links).toHaveLength(fixedReport().results.length);
    expect(links.filter((l) => !rows.has(l))).toEqual([]);
    expect(rows.size).toBe(links.length);
  });

  it('ctrf.json: a CTRF document, one test per result; failed counts exactly what fails the run', () => {
    const report = fixedReport();
    const doc = JSON.parse(renderCtrf(report)) as {
      reportFormat: string;
      specVersion: string;
      results: {
        tool: { name: string };
        summary: Record<string, number>;
        tests: Array<{ name: string; status: string; duration: number; rawStatus?: string }>;
      };
    };
    // The CTRF schema's requirements (ctrf.io): the envelope, the summary's counts and times, each test's name, status and duration.
    const ajv = new Ajv2020({ strict: false });
    const status = { enum: ['passed', 'failed', 'skipped', 'pending', 'other'] };
    const int = { type: 'integer' };
    const valid = ajv.validate(
      {
        type: 'object',
        required: ['reportFormat', 'specVersion', 'results'],
        properties: {
          reportFormat: { const: 'CTRF' },
          specVersion: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$' },
          results: {
            type: 'object',
            required: ['tool', 'summary', 'tests'],
            properties: {
              tool: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
              summary: {
                type: 'object',
                required: ['tests', 'passed', 'failed', 'skipped', 'pending', 'other', 'start', 'stop'],
                properties: Object.fromEntries(['tests', 'passed', 'failed', 'skipped', 'pending', 'other', 'start', 'stop', 'duration'].map((k) => [k, int])),
                additionalProperties: false,
              },
              tests: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'status', 'duration'],
                  properties: { name: { type: 'string', minLength: 1 }, status, duration: int, suite: { type: 'array', minItems: 1 } },
                },
              },
            },
          },
        },
      },
      doc,
    );
    expect(valid, ajv.errorsText()).toBe(true);
    expect(doc.results.tests).toHaveLength(report.results.length);
    const { summary, tests } = doc.results;
    for (const k of ['passed', 'failed', 'skipped', 'other']) expect(summary[k], k).toBe(tests.filter((t) => t.status === k).length);
    expect(summary.failed).toBe(report.results.filter((r) => failsRun(r, false)).length);
    expect(
      tests
        .filter((t) => t.status === 'other')
        .map((t) => t.rawStatus)
        .sort(),
    ).toEqual(['error', 'warn', 'warn']);
  });

  it('the report files are the formats asked for, by name; an unknown name is refused with the nearest', () => {
    expect(reportFiles(fixedReport(), (x) => x).map((f) => f.name)).toEqual(['results.json', 'junit.xml', 'report.html']);
    expect(reportFiles(fixedReport(), (x) => x, ['ctrf', 'json']).map((f) => f.name)).toEqual(['results.json', 'ctrf.json']);
    expect(unknownReporter(['json', 'ctfr'])).toBe(`unknown reporter 'ctfr' (did you mean 'ctrf'?) (known: ${REPORT_FORMATS.map((f) => f.name).join(', ')})`);
    // Every format listed has its renderer, and writes its own file.
    const all = reportFiles(
      fixedReport(),
      (x) => x,
      REPORT_FORMATS.map((f) => f.name),
    );
    expect(all.map((f) => f.name)).toEqual(REPORT_FORMATS.map((f) => f.file));
    for (const f of all) expect(f.content.length, f.name).toBeGreaterThan(0);
    expect(unknownReporter(['junit'])).toBeUndefined();
  });

  it('GitHub annotations: one per failed MUST check that is not baselined', () => {
    const lines = githubAnnotations(fixedReport());
    expect(lines).toHaveLength(1);
    expect(lines).toMatchSnapshot();
  });

  it('GitHub step summary (Markdown)', () => {
    expect(renderMarkdown(fixedReport())).toMatchSnapshot();
  });

  it('baseline file', () => {
    expect(renderBaseline(fixedReport().results)).toMatchSnapshot();
  });

  it('the certification bundle lists a checksum for every file', () => {
    const files = bundleFiles(fixedReport(), same);
    expect(files.map((f) => f.name)).toEqual(['results.json', 'junit.xml', 'report.html', 'config.json', 'certificate.json', 'SHA256SUMS']);
    const sums = files.at(-1)!.content.trim().split('\n');
    expect(sums.map((l) => l.split('  ')[1])).toEqual(files.slice(0, -1).map((f) => f.name));
    expect(JSON.parse(files.find((f) => f.name === 'certificate.json')!.content)).toMatchObject({
      product: 'Acme Commerce',
      productVersion: '5.1',
      contractDigest: fixedReport().contractDigest,
      certifiable: false,
    });
  });

  it('escapes what the target sent in HTML and XML', () => {
    const html = renderHtml(fixedReport());
    expect(html).toContain('&lt;returns&gt; &quot;every&quot; record &amp; no other');
    expect(html).not.toContain('<returns>');
    expect(renderJunit(fixedReport())).toContain('&lt;returns&gt;');
  });
});

describe('the exit code', () => {
  const result = (id: string, level: CheckResult['level'], outcome: CheckResult['outcome']): CheckResult => resultOf(id, outcome, { level });

  it('a MUST failure is a verdict: exit 1 even when other checks ended in error, and the reason says the results are incomplete', () => {
    const exit = exitFor([result('x', 'MUST', 'fail'), result('y', 'MUST', 'error')], [], false);
    expect(exit.code).toBe(1);
    expect(exit.reason).toMatch(/1 MUST check\(s\) failed.*results are incomplete/);
  });

  it('errors without a MUST failure: exit 2; a clean run: exit 0; SHOULD failures fail only with --strict', () => {
    expect(exitFor([result('x', 'MUST', 'pass'), result('y', 'SHOULD', 'error')], [], false).code).toBe(2);
    expect(exitFor([result('x', 'MUST', 'pass')], ['a file did not load'], false).code).toBe(2);
    expect(exitFor([result('x', 'MUST', 'pass'), result('y', 'SHOULD', 'fail')], [], false).code).toBe(0);
    expect(exitFor([result('x', 'MUST', 'pass'), result('y', 'SHOULD', 'fail'), result('z', 'MUST', 'error')], [], true).code).toBe(1);
  });
});

describe('outcome kinds are members of a result, never read from its wording', () => {
  const head = { id: 'list.sort.id', area: 'pagination', clause: 'c', clauseLink: '', level: 'MUST' as const, title: 't', operation: 'jobs', durationMs: 0 };
  it('an error is told by its errorCode: a reason worded otherwise, or one that only looks like a code, changes nothing', () => {
    const down: CheckResult = { ...head, outcome: 'error', errorCode: 'TARGET_DOWN', reason: 'the target went quiet' };
    const worded: CheckResult = { ...head, outcome: 'error', errorCode: 'SUITE_BUG', reason: 'TARGET_DOWN: looks like one' };
    expect([notRun(down), notRun(worded)]).toEqual([true, false]);
    expect([unanswered({ ...down, errorCode: 'TIMEOUT' }), unanswered({ ...worded, reason: 'TIMEOUT: no' })]).toEqual([true, false]);
    expect([interrupted({ ...down, errorCode: 'INTERRUPTED' }), interrupted({ ...worded, reason: 'INTERRUPTED: no' })]).toEqual([true, false]);
  });

  it('an absent operation is told by the absent member, whatever the skip says', () => {
    expect(
      absentOperations([
        { ...head, outcome: 'skip', reason: 'its collection is not served', absent: true },
        { ...head, operation: 'files', outcome: 'skip', reason: 'absent: GET /v2/files answered 404' },
      ]),
    ).toEqual(['jobs']);
  });
});

describe('what the target sent reaches the terminal inert', () => {
  it('control characters and bidi overrides show as escapes; an HTML body as one line', () => {
    const base = fixedReport();
    const evil = '\u001b]0;pwned\u0007\u001b[2J\u202eevil\r\nnext';
    const r: CheckResult = {
      id: 'x',
      area: 'a',
      clause: 'c',
      clauseLink: '',
      level: 'MUST',
      title: 't',
      outcome: 'fail',
      durationMs: 0,
      reason: `bad ${evil}`,
      evidence: {
        expected: 'e',
        actual: evil,
        request: "curl -i -X GET 'http://t/'",
        status: 200,
        bodyExcerpt: '<!DOCTYPE html><html><head><title>Sign in</title></head><body>\n<script>…</script></body></html>',
        exchanges: [],
      },
    };
    const text = renderSummary({ ...base, results: [r], suiteErrors: [evil] }, { color: false });
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(text).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\u202eevil\\u000d\\u000anext');
    expect(text).toContain('body:     an HTML page titled "Sign in"');
    expect(text).not.toContain('<script>');
    // report.html too: escapes for the browser, and no raw ESC, BEL or direction override.
    const html = renderHtml({ ...base, results: [r], suiteErrors: [evil] });
    expect(html).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(html).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\u202eevil');
  });
});
