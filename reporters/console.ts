// The console: a line per check as it finishes, then failures with their evidence, warnings
// (failures that do not fail the run) with theirs, skips grouped by reason, the cleanup, counts
// by level, and the exit code in one line. A failure reads as `fail` only when it fails the run
// (model.ts failsRun): the console says what the exit code says.
import type { CheckResult, Leftover } from '../lib/runner/index.js';
import { CONTRACT_DOCUMENT } from '../lib/contract/index.js';
import { describeProfile } from './verdict.js';
import { sumTransport, type LoadReport } from '../lib/transport/index.js';
import { replayWords } from '../lib/configuration/index.js';
import type { SuiteErrorCode } from '../lib/evidence/index.js';
import { gist, isHtml, printable } from '../lib/text/index.js';
import { failsRun, LEVELS, replayClass, replayLabel, settingsOf, verdictOf, type ReportedResult, type RunReport, type Verdict } from './model.js';

export interface ConsoleOptions {
  color: boolean;
  /** --strict: a SHOULD failure fails the run, so it reads as `fail`, not `warn` (renderProgress). */
  strict?: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, dim: 2, bold: 1 } as const;
type Style = keyof typeof CODES;

function painter(color: boolean): (style: Style, s: string) => string {
  return (style, s) => (color ? `\u001b[${CODES[style]}m${s}\u001b[0m` : s);
}

const MARK: Record<Verdict, string> = { pass: '✓', fail: '✗', warn: '⚠', error: '!', skip: '-' };
const STYLE: Record<Verdict, Style> = { pass: 'green', fail: 'red', warn: 'yellow', error: 'red', skip: 'dim' };

/** The check's id, and the operation it ran on. */
export function label(r: { id: string; operation?: string }): string {
  return r.operation ? `${r.id} [${r.operation}]` : r.id;
}

/**
 * One line for a finished check. A failure that does not fail the run reads `warn` (with
 * `strict` from ConsoleOptions; a baselined failure needs `baselined` set on the result).
 */
export function renderProgress(r: CheckResult, options: ConsoleOptions): string {
  const p = painter(options.color);
  const v = verdictOf(r, options.strict === true);
  return `  ${p(STYLE[v], `${MARK[v]} ${v.padEnd(5)}`)} ${r.level.padEnd(6)} ${label(r)}${r.baselined ? ' (baselined)' : ''}${p('dim', ` (${r.durationMs} ms)`)}`;
}

/**
 * One line for an area that has finished: its counts by verdict (model.ts verdictOf: `warn`
 * for a failure that does not fail the run). ✗ when something in it fails the run or ended in
 * error, ⚠ when it only warns. Counts by plain outcome are read as they are: then every
 * failure counts as `fail`.
 */
export function renderAreaLine(area: string, counts: ReadonlyMap<string, number>, options: ConsoleOptions): string {
  const p = painter(options.color);
  const n = (o: Verdict): number => counts.get(o) ?? 0;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const v: Verdict = n('fail') + n('error') ? 'fail' : n('warn') ? 'warn' : 'pass';
  return `${p(STYLE[v], MARK[v])} ${area}: ${total} result(s): ${n('pass')} pass, ${n('fail')} fail, ${n('warn')} warn, ${n('error')} error, ${n('skip')} skip`;
}

/**
 * The evidence of a failed or errored check, one field a line (also used by junit.xml). What
 * the target sent is shown inert: control characters as escapes (no terminal sequence reaches
 * the screen, no line breaks), an HTML body in one line by its title.
 */
export function evidenceLines(r: CheckResult): string[] {
  const out: string[] = [];
  if (r.reason) out.push(`reason:   ${printable(r.reason)}`);
  const e = r.evidence;
  if (e) {
    out.push(`expected: ${printable(e.expected)}`, `actual:   ${printable(e.actual)}`);
    if (e.request) out.push(`request:  ${printable(e.request)}`);
    if (e.status !== undefined) out.push(`status:   ${e.status}`);
    if (e.bodyExcerpt !== undefined)
      out.push(`body:     ${e.bodyExcerpt ? (isHtml(e.bodyExcerpt) ? gist(e.bodyExcerpt, false) : printable(e.bodyExcerpt)) : '(empty)'}`);
    if (e.exchanges.length > 1) out.push('exchanges:', ...e.exchanges.map((x) => `  ${printable(x)}`));
  }
  return out;
}

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that re-runs one check as it ran: the same seed (a shard's own), the same target,
 * and every setting that changes its outcome, written as a flag whatever set it (file,
 * environment or flag), so that neither a changed environment nor a default changes the
 * replay. The settings of list traversals go only with a list check. The token is never
 * written: the command reads it from CONFORMANCE_TOKEN, or from the config file.
 * A result that already carries its command (a merged report's) keeps it.
 */
export function replayCommand(report: RunReport, r: { id: string; operation?: string; replay?: string }): string {
  if (r.replay) return r.replay;
  const s = settingsOf(report);
  const list = r.operation !== undefined;
  const words = [
    'npx',
    'conformance',
    ...(s.configFile ? ['--config', s.configFile] : []),
    '--check',
    r.id,
    ...(r.operation ? ['--operation', r.operation] : []),
    '--seed',
    String(report.seed),
    ...(report.target.embedded ? [] : ['--base-url', report.target.baseUrl]),
    // How the run logged in (never the secret: it comes from the environment or a file).
    ...loginWords(report.config ?? {}),
    // The settings that decide outcomes (lib/configuration/settings.ts), as the run had them.
    ...replayWords(report.config ?? {}, list),
  ];
  return words.map(shellWord).join(' ');
}

/**
 * Said once next to the replay commands of a run against a real target: they never hold the
 * token (on purpose), so as printed they exit 2 ("a target needs a token") unless the token is
 * given as for the run. None for the bundled server: a replay starts it with a token of its own.
 */
export function replayTokenNote(report: Pick<RunReport, 'target' | 'config'>): string | undefined {
  if (report.target.embedded) return undefined;
  if (isObserved(report)) return 'replays are the observed requests as curl commands, the credentials masked (***): put them back to send one';
  if (typeof report.config?.clientId === 'string')
    return 'replay commands log in as the run did: set CONFORMANCE_CLIENT_SECRET, or add --client-secret-file FILE; they never hold the secret';
  const file = settingsOf(report).configFile ? ', or keep token in the config file' : '';
  return `replay commands need the token as for the run: set CONFORMANCE_TOKEN${file}; they never hold it`;
}

/**
 * The command that tries again to delete what the run and its replays left (cleanup.kept, else
 * the run's own ledger), logging in as the run did: pasted with the token or the secret given as
 * for the run, it runs (the ledgers name the target).
 */
export function cleanupCommand(report: Pick<RunReport, 'config' | 'cleanup' | 'runId'>): string {
  const s = settingsOf(report);
  const kept = report.cleanup.kept ?? [report.runId];
  const words = [
    'npx',
    'conformance',
    'cleanup',
    ...kept.flatMap((id) => ['--run', id]),
    ...(s.configFile ? ['--config', s.configFile] : []),
    ...loginWords(report.config ?? {}),
  ];
  return words.map(shellWord).join(' ');
}

/** --client-id and --token-url as the run had them (client credentials); none for a run with a token. */
function loginWords(config: Record<string, unknown>): string[] {
  if (typeof config.clientId !== 'string') return [];
  return ['--client-id', config.clientId, ...(typeof config.tokenUrl === 'string' ? ['--token-url', config.tokenUrl] : [])];
}

/** A report of traffic the suite judged without sending it (conformance proxy, conformance judge). */
export function isObserved(report: Pick<RunReport, 'config'>): boolean {
  return typeof report.config?.observed === 'object' && report.config.observed !== null;
}

/** One thing a cleanup could not delete, inert on a terminal (its name came from the target's store). */
export function leftoverLine(l: Leftover): string {
  return printable(`  left over: ${l.kind} ${l.id || '(no id)'} "${l.name}" (created by ${l.createdBy}): ${l.reason}`);
}

/** An error of a check the suite never sent (the circuit breaker had opened): counted, not listed. */
export function notRun(r: CheckResult): boolean {
  return r.outcome === 'error' && r.errorCode === 'TARGET_DOWN';
}

/** The codes of a request that got no answer: after an outage (notRun), the checks they ended are its consequence. */
const NO_ANSWER: ReadonlyArray<SuiteErrorCode | undefined> = ['TIMEOUT', 'CONNECTION_CLOSED', 'TARGET_UNREACHABLE'];

/** A check that ended without an answer in a run the target stopped answering: counted with the outage, not listed. */
export function cutShort(r: CheckResult, outage: boolean): boolean {
  return outage && unanswered(r);
}

/** Whether a result ended in an error for want of an answer (a timeout, a dropped or refused connection). */
export function unanswered(r: CheckResult): boolean {
  return r.outcome === 'error' && NO_ANSWER.includes(r.errorCode);
}

/** A check that needed a new token mid-run, which the login with the client credentials did not give. */
export function loginFailed(r: CheckResult): boolean {
  return r.outcome === 'error' && r.errorCode === 'LOGIN_FAILED';
}

/** A check stopped before its end because the run was interrupted (Ctrl-C, SIGTERM). */
export function interrupted(r: CheckResult): boolean {
  return r.outcome === 'error' && r.errorCode === 'INTERRUPTED';
}

/**
 * How hard the run pushed the target: the most requests in flight, latency (p50/p95) over the
 * first answers and where the most were in flight, and the back-offs by cause.
 */
export function loadLine(l: LoadReport): string {
  const b = l.backoffs;
  const backoffs = b.latency + b['rate-limited'] + b.timeout;
  const why = [b.latency ? `${b.latency} on latency` : '', b['rate-limited'] ? `${b['rate-limited']} on 429s` : '', b.timeout ? `${b.timeout} on timeouts` : '']
    .filter(Boolean)
    .join(', ');
  return (
    `load: at most ${l.peakInFlight} request(s) in flight (ceiling ${l.ceiling}${l.maxRate !== undefined ? `, at most ${l.maxRate} a second` : ''}); ` +
    (l.paced ? `paced by 429s at ${l.paced.lowest} a second at the lowest (set ${l.paced.cuts} time(s)); ` : '') +
    `latency p50/p95 ${l.start.p50}/${l.start.p95} ms at the start, ${l.peak.p50}/${l.peak.p95} ms at the peak; ` +
    (backoffs ? `backed off ${backoffs} time(s) (${why})` : 'never backed off')
  );
}

/**
 * That the target stopped answering, with how many requests it answered first (as the breaker's
 * reason, which each check not run carries, says it).
 */
function stoppedLine(results: readonly CheckResult[]): string {
  const answered = results
    .map((r) => (notRun(r) ? /stopped answering under the run after (\d+) answered requests/.exec(r.reason ?? '')?.[1] : undefined))
    .find(Boolean);
  return answered === undefined ? 'the target stopped answering' : `the target stopped answering under the run after ${answered} answered requests`;
}

/** What the transport went through, when anything happened: retries, rate-limit waits, the breaker. */
export function transportLine(results: readonly CheckResult[]): string | undefined {
  const t = sumTransport(results.map((r) => r.transport));
  const parts = [
    t.retries
      ? `${t.retries} request(s) sent again${t.resetRetries || t.timeoutRetries ? ` (${[t.resetRetries ? `${t.resetRetries} after a connection reset` : '', t.timeoutRetries ? `${t.timeoutRetries} after a timeout` : ''].filter(Boolean).join(', ')})` : ''}`
      : '',
    t.waitedOut ? `${t.waitedOut} 429/5xx answer(s) waited out (${(t.waitedMs / 1000).toFixed(1)} s of waiting, added up over the requests in flight)` : '',
    t.lostRedone ? `work done again ${t.lostRedone} time(s), after a POST or DELETE lost before its answer` : '',
    t.concurrencyLoweredTo !== undefined ? `requests in flight lowered to ${t.concurrencyLoweredTo} by 429s` : '',
    t.latencyLoweredTo !== undefined ? `requests in flight lowered to ${t.latencyLoweredTo} by timeouts` : '',
    // From the results: a check whose parallel requests failed on after it ended cannot carry
    // the breaker's own count.
    results.some(notRun) ? `${stoppedLine(results)}: ${t.refused} request(s) not sent, ${results.filter(notRun).length} check(s) not run` : '',
  ].filter(Boolean);
  return parts.length ? `transport: ${t.requests} request(s); ${parts.join('; ')}` : undefined;
}

/** What a failure or an error is, in words, at the head of its entry in the summary. */
function kindOf(r: CheckResult, v: Verdict): string {
  if (r.outcome === 'error') return 'ERROR (of the suite, not the target)';
  if (v === 'fail') return r.level === 'MUST' ? 'FAIL' : `FAIL (${r.level}, --strict)`;
  if (r.baselined) return `known ${r.level} failure (baselined)`;
  return r.level === 'SHOULD' ? 'SHOULD warning' : `${r.level} note`;
}

/** The run a summary is of, as each of its sections reads it. */
interface SummaryView {
  report: RunReport;
  p: ReturnType<typeof painter>;
  strict: boolean;
  /** The target stopped answering during the run (notRun). */
  outage: boolean;
  /** Traffic judged without sending it (isObserved). */
  observed: boolean;
}

/**
 * What fails the run (or leaves it incomplete) first, then the failures that do not, each with
 * its clause, evidence and replay command; the note on replays' token once, under the first heading.
 */
function failureLines({ report, p, strict }: SummaryView, unrun: readonly CheckResult[]): string[] {
  const lines: string[] = [];
  const shown = report.results.filter((r) => (r.outcome === 'fail' || r.outcome === 'error') && !unrun.includes(r));
  const order = (r: CheckResult): number => (r.outcome === 'error' ? 0 : LEVELS.indexOf(r.level) + 1);
  const failures = shown.filter((r) => verdictOf(r, strict) !== 'warn');
  const warnings = shown.filter((r) => verdictOf(r, strict) === 'warn');
  let note = replayTokenNote(report);
  const section = (heading: string, rs: readonly ReportedResult[]): void => {
    if (!rs.length) return;
    lines.push(p('bold', heading));
    if (note) lines.push(p('yellow', `  ${note}`));
    note = undefined;
    for (const r of [...rs].sort((a, b) => order(a) - order(b))) {
      const v = verdictOf(r, strict);
      lines.push(`  ${p(STYLE[v], `${MARK[v]} ${kindOf(r, v)}`)} ${p('bold', label(r))}: ${r.title}`);
      lines.push(`      clause:   ${r.clause} (${r.clauseLink ?? CONTRACT_DOCUMENT})`);
      for (const l of evidenceLines(r)) lines.push(`      ${l}`);
      const replayed = replayLabel(r);
      // Not "replayed": the replay command below is another thing, a line to run by hand.
      if (replayed) lines.push(`      again:    ${p(r.replays && ['reproduced', 'otherwise'].includes(replayClass(r.replays)) ? 'red' : 'yellow', replayed)}`);
      lines.push(`      replay:   ${replayCommand(report, r)}`);
      lines.push('');
    }
  };
  section(`Failures and errors (${failures.length})`, failures);
  section(`Warnings (${warnings.length}): failures that do not fail the run`, warnings);
  return lines;
}

/** The checks that never ran to an end, counted by cause, one line each. */
function notRunLines({ p, outage }: SummaryView, unrun: readonly CheckResult[]): string[] {
  if (!unrun.length) return [];
  const lines = [p('bold', `Not run (${unrun.length}): errors of the suite, not failures of the target`)];
  for (const cause of ['TARGET_DOWN', 'LOGIN_FAILED', 'INTERRUPTED'] as const) {
    const these = unrun.filter((r) => r.errorCode === cause);
    if (these.length) lines.push(`  ${these.length} check(s): ${printable(these[0]!.reason ?? '')}`);
  }
  const cut = unrun.filter((r) => cutShort(r, outage));
  if (cut.length) {
    const ids = cut.map(label);
    lines.push(
      `  ${cut.length} check(s) cut short as the target stopped answering (${cut[0]!.errorCode ?? 'no answer'} and the like): ${ids.slice(0, 8).join(', ')}${ids.length > 8 ? `, and ${ids.length - 8} more` : ''}`,
    );
  }
  lines.push('');
  return lines;
}

/** The operations whose collection answered 404, then the skips grouped by reason (only counted for judged traffic). */
function absentAndSkippedLines({ report, p, observed }: SummaryView): string[] {
  const lines: string[] = [];
  if (report.lists?.absent.length) {
    lines.push(p('bold', `Absent operations (${report.lists.absent.length}): their collection answered 404`));
    lines.push(`  ${report.lists.absent.join(', ')}`);
    lines.push('');
  }
  const skips = report.results.filter((r) => r.outcome === 'skip' && !r.absent);
  if (skips.length && observed) {
    // Judged traffic leaves most rules unexercised: counted by reason, listed in the report files.
    lines.push(p('bold', `Not exercised (${skips.length}): listed in results.json and report.html`));
    const byReason = new Map<string, number>();
    for (const r of skips) byReason.set(r.reason ?? '', (byReason.get(r.reason ?? '') ?? 0) + 1);
    for (const [reason, n] of byReason) lines.push(`  - ${n}: ${printable(reason)}`);
    lines.push('');
  } else if (skips.length) {
    lines.push(p('bold', `Skipped (${skips.length})`));
    const byReason = new Map<string, string[]>();
    for (const r of skips) byReason.set(r.reason ?? '', [...(byReason.get(r.reason ?? '') ?? []), label(r)]);
    for (const [reason, ids] of byReason) lines.push(`  - ${printable(reason)}: ${ids.join(', ')}`);
    lines.push('');
  }
  return lines;
}

/** The errors of the suite, the cleanup (none to speak of when traffic is only judged), the baseline and the lists' windows. */
function afterRunLines({ report, p, outage, observed }: SummaryView): string[] {
  const lines: string[] = [];
  if (report.suiteErrors.length) {
    lines.push(p('bold', 'Errors of the suite'));
    for (const e of report.suiteErrors) lines.push(`  ! ${printable(e)}`);
    lines.push('');
  }
  lines.push(...cleanupLines(report, p, observed));
  if (report.baseline) {
    const b = report.baseline;
    lines.push(p('bold', `Baseline ${b.file}`));
    lines.push(`  ${b.known} known failure(s) reported but not counted`);
    for (const st of b.stale) lines.push(p('yellow', `  stale: ${label(st)} passes now; remove it from the baseline`));
    lines.push('');
  }
  // A run the target stopped answering compared no list: nothing to say of their windows.
  if (report.lists && !outage) {
    lines.push(p('bold', 'Lists'));
    lines.push(
      `  traversal comparisons used only records created before ${report.lists.comparedBefore} (the run's start minus a ${report.lists.timeBufferSeconds} s time buffer, for eventual consistency)`,
    );
    lines.push(`  at most ${report.lists.requestBudget} requests per list operation`);
    lines.push('');
  }
  return lines;
}

/** What the run's cleanup deleted or postponed, and what it left over. */
function cleanupLines(report: RunReport, p: SummaryView['p'], observed: boolean): string[] {
  const lines: string[] = [];
  const { deleted, leftovers } = report.cleanup;
  // Nothing is created when traffic is only judged: no cleanup to speak of.
  if (!observed) lines.push(p('bold', 'Cleanup'));
  if (report.cleanup.postponed)
    lines.push(
      p(
        'yellow',
        printable(
          `  not done: ${report.cleanup.postponed}; ${report.cleanup.pending ?? 0} resource(s) and unanswered create(s) stay in the ledger, deleted once the target answers again by: ${cleanupCommand(report)}`,
        ),
      ),
    );
  else if (!observed)
    lines.push(
      `  deleted ${deleted} resource(s) this run created and had not deleted${report.cleanup.alreadyGone ? ` (${report.cleanup.alreadyGone} more were already gone)` : ''}; ${leftovers.length} left over`,
    );
  if (report.cleanup.loginFailed) lines.push(p('yellow', printable(`  the cleanup could not log in: ${report.cleanup.loginFailed}`)));
  for (const r of report.cleanup.restored ?? []) lines.push(printable(`  restored ${r}, as it was before the run changed it`));
  for (const l of leftovers) lines.push(p('yellow', leftoverLine(l)));
  if (!observed) lines.push('');
  return lines;
}

/** The summary line (how many results, how long, which seeds), then the counts by area and by level. */
function countLines({ report, p, strict, outage, observed }: SummaryView): string[] {
  const lines: string[] = [];
  const ids = new Set(report.results.map((r) => r.id)).size;
  const seeds = report.shards
    ? `shards ${report.shards.map((x) => `${x.shard} run ${x.runId} seed ${x.seed}`).join(', ')}`
    : observed
      ? `observed traffic, report ${report.runId}`
      : `run ${report.runId}, seed ${report.seed}`;
  lines.push(
    p(
      'bold',
      `Summary: ${report.summary.total} results of ${ids} checks (list checks once per operation) in ${(report.durationMs / 1000).toFixed(1)} s (${seeds})`,
    ),
  );
  const areas = [...new Set(report.results.map((r) => r.area))];
  const w = Math.max(...areas.map((a) => a.length), 7);
  // (After an outage the areas' lines said as they ended are the whole story: not said twice.)
  for (const area of outage ? [] : areas) {
    const rs = report.results.filter((r) => r.area === area);
    const n = (v: Verdict): number => rs.filter((r) => verdictOf(r, strict) === v).length;
    lines.push(
      `  ${area.padEnd(w)} ${String(rs.length).padStart(4)}: ${n('pass')} pass, ${n('fail')} fail, ${n('warn')} warn, ${n('error')} error, ${n('skip')} skip`,
    );
  }
  // (After an outage nearly every check is an error of the suite: by level says nothing more.)
  for (const level of outage ? [] : LEVELS) {
    const c = report.summary.byLevel[level];
    const n = c.pass + c.fail + c.error + c.skip;
    if (n === 0) continue;
    // By level, a failure's word is what it does to the run: MUST (and SHOULD under --strict)
    // fail, unless baselined; SHOULD warns; INFO is noted.
    const failing = report.results.filter((r) => r.level === level && failsRun(r, strict)).length;
    const baselined = c.fail - failing;
    const failWords =
      level === 'INFO'
        ? `${c.fail} noted`
        : level === 'SHOULD' && !strict
          ? `${c.fail} warn`
          : `${failing} fail${baselined ? `, ${baselined} warn (baselined)` : ''}`;
    lines.push(`  ${level.padEnd(w)} ${String(n).padStart(4)}: ${c.pass} pass, ${failWords}, ${c.error} error, ${c.skip} skip`);
  }
  if (report.replays) lines.push(replaysLine(report));
  return lines;
}

/** The failures replayed, reproduced and flaky apart, and what the replays cost. */
export function replaysLine(report: Pick<RunReport, 'replays' | 'summary'>): string {
  const x = report.replays!;
  if (x.passes === 0) return report.summary.byOutcome.fail ? 'replays: none made (see above)' : 'replays: none (no failure to run again)';
  const r = report.summary.replayed ?? { reproduced: 0, flaky: 0 };
  const cost = `${x.passes} round(s) of at most ${x.limit}, ${x.requests} request(s), ${(x.durationMs / 1000).toFixed(1)} s`;
  const otherwise = r.otherwise ? `, ${r.otherwise} failed only otherwise (another status)` : '';
  const none = r.noVerdict ? `, ${r.noVerdict} not replayed to a verdict (each replay an error or a skip)` : '';
  const all = r.reproduced + r.flaky + (r.otherwise ?? 0) + (r.noVerdict ?? 0);
  return `replays: ${all} failure(s) run again alone: ${r.reproduced} reproduced${otherwise}, ${r.flaky} flaky (did not reproduce)${none}; ${cost}`;
}

/** What the transport went through, whether the run certifies (and its profile), and the exit code's reason. */
function verdictLines({ report, p }: SummaryView): string[] {
  const lines: string[] = [];
  if (report.load) lines.push(loadLine(report.load));
  const transport = transportLine(report.results);
  if (transport) lines.push(p('yellow', transport));
  if (report.certification) {
    const c = report.certification;
    lines.push(p(c.certifiable ? 'green' : 'red', `certifiable: ${c.certifiable ? 'yes' : 'no'} (${c.why})`));
    if (c.profile) lines.push(`profile: ${describeProfile(c.profile)}`);
  }
  lines.push(p(report.exit.code === 0 ? 'green' : 'red', report.exit.reason));
  return lines;
}

/**
 * The summary after a run, section by section: failures and warnings, the checks not run, absent
 * operations and skips, the suite's errors, the cleanup, the baseline and the lists, the counts,
 * and the verdict.
 */
export function renderSummary(report: RunReport, options: ConsoleOptions): string {
  const outage = report.results.some(notRun);
  const view: SummaryView = { report, p: painter(options.color), strict: settingsOf(report).strict === true, outage, observed: isObserved(report) };
  // Checks that never ran to an end (the breaker opened, a login failed, or the run was interrupted): counted
  // by cause, one line each, not listed one by one.
  const unrun = report.results.filter((r) => notRun(r) || loginFailed(r) || interrupted(r) || cutShort(r, outage));
  const lines = [
    '',
    ...failureLines(view, unrun),
    ...notRunLines(view, unrun),
    ...absentAndSkippedLines(view),
    ...afterRunLines(view),
    ...countLines(view),
    ...verdictLines(view),
  ];
  return `${lines.join('\n')}\n`;
}
