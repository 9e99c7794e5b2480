// A failure that does not fail the run reads as a warning (the fresh-eyes review, item 2): a
// SHOULD failure without --strict, an INFO note, a baselined failure. The console and
// report.html say `warn` for it, as the exit code says 0 and junit.xml writes no <failure>;
// `fail` and a red ✗ are kept for what fails the run. And the replay commands of a run against
// a real target say, once, that they need the token (item 3).
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { renderAreaLine, renderProgress, renderSummary, replayCommand } from '../reporters/console.js';
import { githubAnnotations, renderMarkdown } from '../reporters/github.js';
import { renderHtml } from '../reporters/html.js';
import { renderJson } from '../reporters/json.js';
import { renderJunit } from '../reporters/junit.js';
import { verdictOf, type RunReport } from '../reporters/model.js';
import { clauseOf, reportOf, resultOf } from './fixtures/report.js';
import { cli, TOKEN, withServer } from './support.js';

const result = (id: string, level: CheckResult['level'], outcome: CheckResult['outcome'], more: Partial<CheckResult> = {}): CheckResult =>
  resultOf(id, outcome, {
    area: 'delete-custom-api',
    ...clauseOf({ at: 'delete-custom-api', detail: 'Failure 400' }),
    level,
    durationMs: 5,
    ...(outcome === 'fail'
      ? {
          evidence: {
            expected: 'status 400',
            actual: 'status 422',
            request: "curl -i -X DELETE 'https://t.example/v2/x/1'",
            status: 422,
            bodyExcerpt: '',
            exchanges: [],
          },
        }
      : {}),
    ...more,
  });

function report(results: CheckResult[], opts: { strict?: boolean; embedded?: boolean; configFile?: string } = {}): RunReport {
  const target = opts.embedded ? { baseUrl: 'http://127.0.0.1:40123', embedded: true } : { baseUrl: 'https://t.example', embedded: false };
  return reportOf(results, {
    runId: 'warn0001',
    seed: 3,
    target,
    config: { token: '***', seed: 3, timeoutMs: 10000, strict: opts.strict ?? false, ...(opts.configFile ? { configFile: opts.configFile } : {}) },
    ...(results.some((r) => r.baselined) ? { baseline: { file: 'known.yaml', known: results.filter((r) => r.baselined).length, stale: [] } } : {}),
  });
}

// The review's case: a target that answers 422 where the contract prefers 400 (a SHOULD).
const passes = Array.from({ length: 7 }, (_, i) => result(`delete.pass.${i}`, 'MUST', 'pass'));
const should = result('delete.malformed-id.400', 'SHOULD', 'fail');
const warned = report([...passes, should]);

/** The counts by verdict an area line is given (what cli/run.ts counts as results come). */
const tally = (rs: readonly CheckResult[], strict = false): Map<string, number> => {
  const m = new Map<string, number>();
  for (const r of rs) m.set(verdictOf(r, strict), (m.get(verdictOf(r, strict)) ?? 0) + 1);
  return m;
};

describe('a failure that does not fail the run reads as a warning', () => {
  it('the run exits 0; the console lists it under Warnings, not under failures, and counts it as warn', () => {
    expect(warned.exit.code).toBe(0);
    const text = renderSummary(warned, { color: false });
    expect(text).not.toMatch(/Failures/);
    expect(text).not.toContain('✗');
    expect(text).toMatch(/^Warnings \(1\): failures that do not fail the run$/m);
    expect(text).toMatch(/^ {2}⚠ SHOULD warning delete\.malformed-id\.400: /m);
    expect(text).toMatch(/^ {2}delete-custom-api +8: 7 pass, 0 fail, 1 warn, 0 error, 0 skip$/m);
    expect(text).toMatch(/^ {2}SHOULD +1: 0 pass, 1 warn, 0 error, 0 skip$/m);
  });

  it('the area line: ⚠ and `1 warn` when nothing in the area fails the run; ✗ when something does', () => {
    expect(renderAreaLine('delete-custom-api', tally(warned.results), { color: false })).toBe(
      '⚠ delete-custom-api: 8 result(s): 7 pass, 0 fail, 1 warn, 0 error, 0 skip',
    );
    expect(renderAreaLine('delete-custom-api', tally(warned.results, true), { color: false })).toBe(
      '✗ delete-custom-api: 8 result(s): 7 pass, 1 fail, 0 warn, 0 error, 0 skip',
    );
    expect(renderAreaLine('delete-custom-api', tally(passes), { color: false })).toBe(
      '✓ delete-custom-api: 7 result(s): 7 pass, 0 fail, 0 warn, 0 error, 0 skip',
    );
    // Yellow, not red.
    expect(renderAreaLine('delete-custom-api', tally(warned.results), { color: true })).toMatch(/^\u001b\[33m⚠\u001b\[0m/);
  });

  it('the live line of a result: warn for a SHOULD failure, fail under --strict; a baselined MUST failure warns', () => {
    expect(renderProgress(should, { color: false })).toMatch(/^ {2}⚠ warn {2}SHOULD delete\.malformed-id\.400 \(5 ms\)$/);
    expect(renderProgress(should, { color: false, strict: true })).toMatch(/^ {2}✗ fail {2}SHOULD delete\.malformed-id\.400 /);
    const known = result('delete.repeat.404', 'MUST', 'fail', { baselined: true });
    expect(renderProgress(known, { color: false })).toMatch(/^ {2}⚠ warn {2}MUST {3}delete\.repeat\.404 \(baselined\) /);
    expect(renderProgress(result('delete.repeat.404', 'MUST', 'fail'), { color: false })).toMatch(/^ {2}✗ fail {2}MUST /);
  });

  it('under --strict the same failure fails the run, and the console says so', () => {
    const strict = report([...passes, should], { strict: true });
    expect(strict.exit.code).toBe(1);
    const text = renderSummary(strict, { color: false });
    expect(text).toMatch(/^Failures and errors \(1\)$/m);
    expect(text).toMatch(/^ {2}✗ FAIL \(SHOULD, --strict\) delete\.malformed-id\.400: /m);
    expect(text).not.toMatch(/Warnings/);
    expect(text).toMatch(/^ {2}delete-custom-api +8: 7 pass, 1 fail, 0 warn, 0 error, 0 skip$/m);
    expect(text).toMatch(/^ {2}SHOULD +1: 0 pass, 1 fail, 0 error, 0 skip$/m);
  });

  it('failures that fail the run come first; a baselined one and an INFO note are warnings', () => {
    const r = report([
      result('delete.repeat.404', 'MUST', 'fail'),
      result('delete.unknown-id.404', 'MUST', 'fail', { baselined: true }),
      result('list.offset.soft-limit', 'INFO', 'fail'),
      should,
    ]);
    expect(r.exit.code).toBe(1);
    const text = renderSummary(r, { color: false });
    const failures = text.indexOf('Failures and errors (1)');
    const warnings = text.indexOf('Warnings (3): failures that do not fail the run');
    expect(failures).toBeGreaterThanOrEqual(0);
    expect(warnings).toBeGreaterThan(failures);
    expect(text.slice(failures, warnings)).toMatch(/✗ FAIL delete\.repeat\.404/);
    expect(text.slice(warnings)).toMatch(
      /⚠ known MUST failure \(baselined\) delete\.unknown-id\.404[^]*⚠ SHOULD warning delete\.malformed-id\.400[^]*⚠ INFO note list\.offset\.soft-limit/,
    );
    expect(text).toMatch(/^ {2}MUST +2: 0 pass, 1 fail, 1 warn \(baselined\), 0 error, 0 skip$/m);
  });

  it('report.html: the row, the matrix cell, the summary and the filter say warn; a failure that fails the run says fail', () => {
    const html = renderHtml(warned);
    expect(html).toMatch(
      /<tr id="[^"]+" class="result o-warn l-SHOULD" data-outcome="warn" data-level="SHOULD"><td><code>delete\.malformed-id\.400<\/code><\/td><td><\/td><td>SHOULD<\/td><td>warn<\/td>/,
    );
    expect(html).toContain('<b>verdict:</b> SHOULD warning: it does not fail the run (--strict would)');
    expect(html).toMatch(/<td class="cell o-warn l-SHOULD" data-outcome="warn" [^>]*><a href="#[^"]+">⚠<\/a><\/td>/);
    expect(html).toContain('<input type="checkbox" data-filter="outcome" value="fail" checked> fail (0)');
    expect(html).toContain('<input type="checkbox" data-filter="outcome" value="warn" checked> warn (1)');
    expect(html).not.toContain('data-outcome="fail"');
    const strict = renderHtml(report([...passes, should], { strict: true }));
    expect(strict).toMatch(/<tr id="[^"]+" class="result o-fail l-SHOULD" data-outcome="fail" /);
    expect(strict).toContain('value="warn" checked> warn (0)');
  });

  it('the GitHub step summary says warn too', () => {
    const md = renderMarkdown(warned);
    expect(md).toContain('| `delete.malformed-id.400` | SHOULD | warn |');
    expect(md).toContain(
      '| level | pass | fail | warn | error | skip |\n|---|---|---|---|---|---|\n| MUST | 7 | 0 | 0 | 0 | 0 |\n| SHOULD | 0 | 0 | 1 | 0 | 0 |',
    );
  });
});

describe('replay commands of a run against a real target say they need the token', () => {
  const results = [result('delete.repeat.404', 'MUST', 'fail'), result('delete.unknown-id.404', 'MUST', 'fail'), should];
  const NOTE = 'replay commands need the token as for the run: set CONFORMANCE_TOKEN; they never hold it';

  it('once in the console, once in report.html, in each GitHub annotation; the commands are unchanged', () => {
    const r = report(results);
    const text = renderSummary(r, { color: false });
    expect(text.split(NOTE)).toHaveLength(2);
    // Under the first heading that lists replay commands, before any of them.
    expect(text).toMatch(new RegExp(`^Failures and errors \\(2\\)\\n {2}${NOTE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`, 'm'));
    expect(text.indexOf(NOTE)).toBeLessThan(text.indexOf('replay:'));
    const html = renderHtml(r);
    expect(html.split('Replay commands need the token as for the run: set CONFORMANCE_TOKEN; they never hold it.')).toHaveLength(2);
    for (const a of githubAnnotations(r)) expect(a).toContain(`%0A${NOTE}`);
    // results.json and junit.xml keep the command as it is (the README says what it needs).
    const command = replayCommand(r, results[0]!);
    expect(command).toBe('npx conformance --check delete.repeat.404 --seed 3 --base-url https://t.example --timeout 10000');
    expect(renderJson(r)).not.toContain('CONFORMANCE_TOKEN');
    expect(renderJunit(r)).not.toContain('CONFORMANCE_TOKEN');
  });

  it('with a config file, it says the file may hold the token', () => {
    const text = renderSummary(report(results, { configFile: '/ci/c.yaml' }), { color: false });
    expect(text).toContain('replay commands need the token as for the run: set CONFORMANCE_TOKEN, or keep token in the config file; they never hold it');
  });

  it('not for the bundled reference server (a replay starts it with a token of its own), nor when nothing has a replay', () => {
    const embedded = report(results, { embedded: true });
    expect(renderSummary(embedded, { color: false })).not.toContain('need the token');
    expect(renderHtml(embedded)).not.toContain('need the token');
    expect(githubAnnotations(embedded).join('\n')).not.toContain('need the token');
    const clean = report(passes);
    expect(renderSummary(clean, { color: false })).not.toContain('need the token');
    expect(renderHtml(clean)).not.toContain('need the token');
  });
});

describe('end to end: a variant that answers 422 for validation (a SHOULD warning)', () => {
  it('exits 0; the summary shows a warning, with the token note, and no failure; the token is not printed', async () => {
    await withServer({ variants: ['validation-422'] }, async (server) => {
      const r = await cli(['--base-url', server.url, '--check', 'delete.existing.204,delete.malformed-id.rejected,delete.malformed-id.400', '--seed', '4'], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const summary = r.stdout.slice(r.stdout.indexOf('\nWarnings'));
      expect(summary).toMatch(
        /^\nWarnings \(1\): failures that do not fail the run\n {2}replay commands need the token as for the run: set CONFORMANCE_TOKEN; they never hold it\n {2}⚠ SHOULD warning delete\.malformed-id\.400: /,
      );
      expect(r.stdout).not.toMatch(/Failures and errors|✗ (FAIL|SHOULD)/);
      expect(r.stdout).toMatch(/^ {2}delete-custom-api +3: 2 pass, 0 fail, 1 warn, 0 error, 0 skip$/m);
      // The live line as the area finishes reads the warning as one too.
      expect(r.stdout).toMatch(/^⚠ delete-custom-api: 3 result\(s\): 2 pass, 0 fail, 1 warn, 0 error, 0 skip$/m);
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    });
  });
});
