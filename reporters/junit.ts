// junit.xml, for CI (Jenkins' JUnit plugin, GitLab): one testsuite per area, one testcase per
// result. It agrees with the exit code: a <failure> is written for exactly the results that
// make the run exit 1 (model.ts failsRun), since CI marks a build unstable or red on any
// <failure>. A SHOULD warning, an INFO note or a baselined failure does not fail the run, so it
// is a passing testcase that carries its verdict in <properties> and its evidence in
// <system-out>. An error of the suite is an <error>, a skip a <skipped>. The shape is the one
// test/fixtures/junit.xsd describes; test/junit.test.ts validates against it.
import { printable } from '../lib/text/index.js';
import { evidenceLines, label, replayCommand } from './console.js';
import { failsRun, replayLabel, settingsOf, whyNotCounted, type ReportedResult, type RunReport } from './model.js';

/**
 * Characters XML 1.0 cannot hold at all (most C0 controls, U+FFFE/U+FFFF, unpaired
 * surrogates): written as visible escapes, so nothing is lost and the file still parses.
 */
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Character data. `]]>` needs nothing more: its `>` is escaped like every other. */
function text(s: string): string {
  return s
    .replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** An attribute value: also quotes, and line breaks and tabs as references (a parser would fold them to spaces). */
function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

interface Case {
  classname: string;
  name: string;
  seconds: number;
  properties?: Array<[string, string]>;
  /** What CI counts: a failure, an error, a skip; absent: the testcase passed. */
  outcome?: { element: 'failure' | 'error' | 'skipped'; message: string; type?: string; body?: string };
  out?: string;
}

/** The element order is the schema's: properties, then skipped / error / failure, then system-out. */
function renderCase(c: Case): string {
  const head = `    <testcase classname="${attr(c.classname)}" name="${attr(c.name)}" time="${c.seconds.toFixed(3)}"`;
  const inner: string[] = [];
  if (c.properties?.length)
    inner.push('      <properties>', ...c.properties.map(([k, v]) => `        <property name="${attr(k)}" value="${attr(v)}"/>`), '      </properties>');
  const o = c.outcome;
  if (o) {
    const open = `      <${o.element} message="${attr(o.message)}"${o.type ? ` type="${attr(o.type)}"` : ''}`;
    inner.push(o.body ? `${open}>${text(o.body)}</${o.element}>` : `${open}/>`);
  }
  if (c.out) inner.push(`      <system-out>${text(c.out)}</system-out>`);
  return inner.length ? [`${head}>`, ...inner, '    </testcase>'].join('\n') : `${head}/>`;
}

function caseOf(report: RunReport, r: ReportedResult, strict: boolean): Case {
  const base = { classname: r.area, name: `${label(r)} [${r.level}] ${r.title}`, seconds: r.durationMs / 1000 };
  // A replayed failure's label leads its message, so that CI's list of failures shows it.
  const replayed = replayLabel(r);
  const reason = printable(`${replayed ? `[${replayed}] ` : ''}${r.reason ?? ''}`);
  const notes = r.notes?.length ? r.notes.map((n) => `note:     ${printable(n)}`) : [];
  const detail = (): string => [`${r.level} ${r.clause}`, ...evidenceLines(r), ...notes, `replay:   ${replayCommand(report, r)}`].join('\n');
  switch (r.outcome) {
    case 'pass':
      return { ...base, ...(notes.length ? { out: notes.join('\n') } : {}) };
    case 'skip':
      return { ...base, outcome: { element: 'skipped', message: reason } };
    case 'error':
      return { ...base, outcome: { element: 'error', message: reason, type: 'suite-error', body: detail() } };
    case 'fail': {
      const replays: Array<[string, string]> = replayed ? [['replayed', replayed]] : [];
      if (failsRun(r, strict))
        return { ...base, ...(replays.length ? { properties: replays } : {}), outcome: { element: 'failure', message: reason, type: r.level, body: detail() } };
      const verdict = whyNotCounted(report, r);
      return {
        ...base,
        properties: [
          ['level', r.level],
          ['clause', r.clause],
          ['outcome', 'fail'],
          ['verdict', verdict],
          ['reason', reason],
          ['replay', replayCommand(report, r)],
          ...replays,
        ],
        out: `${verdict}\n${detail()}`,
      };
    }
  }
}

/**
 * What the run itself adds to the verdict: each error of the suite outside any check (it makes
 * the exit code 2), and the certification (not certifiable makes it 1).
 */
function runCases(report: RunReport): Case[] {
  const cases: Case[] = report.suiteErrors.map((e, i) => ({
    classname: 'conformance',
    name: `error of the suite ${i + 1}`,
    seconds: 0,
    outcome: { element: 'error', message: printable(e), type: 'suite-error', body: printable(e) },
  }));
  const c = report.certification;
  if (c) {
    const why = printable(c.why);
    const failed = !c.certifiable && report.exit.code !== 0;
    cases.push({
      classname: 'conformance',
      name: 'certification',
      seconds: 0,
      properties: [
        ['certifiable', c.certifiable ? 'yes' : 'no'],
        ['why', why],
      ],
      // Exit 2 (an incomplete run) cannot certify: that is an error, as the exit code says.
      ...(failed ? { outcome: { element: report.exit.code === 1 ? 'failure' : 'error', message: `not certifiable: ${why}`, type: 'certification' } } : {}),
    });
  }
  return cases;
}

function renderSuite(name: string, cases: readonly Case[]): string {
  const count = (e: string): number => cases.filter((c) => c.outcome?.element === e).length;
  // The checks of a run all run at once, so their durations overlap: added up, they would make
  // a 10 s run's area last an hour. The wall time an area spanned is not recorded (a result has
  // no start time), so its time is the longest of its testcases, which it spanned at least.
  const time = cases.reduce((t, c) => Math.max(t, c.seconds), 0);
  return [
    `  <testsuite name="${attr(name)}" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}" time="${time.toFixed(3)}">`,
    ...cases.map(renderCase),
    '  </testsuite>',
  ].join('\n');
}

export function renderJunit(report: RunReport): string {
  const strict = settingsOf(report).strict === true;
  const areas = [...new Set(report.results.map((r) => r.area))];
  const suites: Array<[string, Case[]]> = areas.map((area) => [area, report.results.filter((r) => r.area === area).map((r) => caseOf(report, r, strict))]);
  const extra = runCases(report);
  if (extra.length) suites.push(['conformance', extra]);
  const all = suites.flatMap(([, cases]) => cases);
  const count = (e: string): number => all.filter((c) => c.outcome?.element === e).length;
  const seeds = report.shards ? report.shards.map((s) => `shard ${s.shard} seed ${s.seed}`).join(', ') : `seed ${report.seed}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(`conformance ${report.tool.version} run ${report.runId} ${seeds}`)}" tests="${all.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    ...suites.map(([name, cases]) => renderSuite(name, cases)),
    '</testsuites>',
    '',
  ].join('\n');
}
