// report.html: one self-contained file (no network) for a person: the verdict, a summary by
// level, a table of checks × operations, and every result with its evidence, filterable by
// outcome and level. A failure reads as `fail` only when it fails the run; any other (a SHOULD
// failure without --strict, an INFO note, a baselined failure) reads as `warn`, as in the
// console (model.ts verdictOf).
import { resultKey, type CheckResult } from '../lib/runner/index.js';
import { LEVELS, replayLabel, settingsOf, verdictOf, whyNotCounted, type ReportedResult, type RunReport, type Verdict } from './model.js';
import { cleanupCommand, loadLine, replayCommand, replaysLine, replayTokenNote } from './console.js';
import { loadChart } from './load-chart.js';
import { inert } from '../lib/text/index.js';
import { describeProfile } from './verdict.js';

const VERDICTS: readonly Verdict[] = ['fail', 'warn', 'error', 'skip', 'pass'];

/** Text for HTML: escaped, and a target's control characters (ESC, BEL, direction overrides) shown as \uXXXX, inert. */
export function esc(s: string): string {
  return inert(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header,section{margin:0 auto;max-width:1400px;padding:12px 24px}
.cell a{color:inherit;text-decoration:none;display:block}tr.result:target{outline:2px solid #2563eb}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:18px 0 8px}
.verdict{font-size:16px;font-weight:600;padding:10px 14px;border-radius:6px;display:inline-block}
.profile{margin:8px 0;font-size:15px}.verdict.ok{background:#dff3e4;color:#14532d}.verdict.bad{background:#fde2e1;color:#7f1d1d}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:12px 0}dl.facts dt{color:#5b6575}dl.facts dd{margin:0;word-break:break-all}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #dde1e7;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
.o-pass{background:#dff3e4}.o-fail{background:#fde2e1}.o-error{background:#fbe7c6}.o-skip{background:#eceff3;color:#5b6575}
.o-warn{background:#fff1c2}
.matrix{overflow-x:auto}.matrix td.cell{text-align:center;font-weight:600;min-width:22px}.matrix th.op{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:500;font-size:12px}
.dim{opacity:.12}tr[hidden]{display:none}
.filters label{margin-right:14px;white-space:nowrap}.filters fieldset{display:inline-block;border:1px solid #dde1e7;margin-right:12px;background:#fff}
details pre{white-space:pre-wrap;word-break:break-all;background:#f3f4f6;padding:6px;margin:4px 0}
code{font-size:12px}.count{color:#5b6575;margin-left:8px}.note{color:#5b6575}
`;

const SCRIPT = `
(function(){
  var boxes=[].slice.call(document.querySelectorAll('input[data-filter]'));
  function apply(){
    var on={outcome:{},level:{}};
    boxes.forEach(function(b){if(b.checked)on[b.getAttribute('data-filter')][b.value]=true;});
    var shown=0,rows=document.querySelectorAll('tr.result');
    [].forEach.call(rows,function(tr){
      var vis=on.outcome[tr.getAttribute('data-outcome')]&&on.level[tr.getAttribute('data-level')];
      tr.hidden=!vis;if(vis)shown++;
    });
    [].forEach.call(document.querySelectorAll('td.cell'),function(td){
      var vis=on.outcome[td.getAttribute('data-outcome')]&&on.level[td.getAttribute('data-level')];
      td.classList.toggle('dim',!vis);
    });
    [].forEach.call(document.querySelectorAll('tr.mrow'),function(tr){tr.hidden=!on.level[tr.getAttribute('data-level')];});
    document.getElementById('shown').textContent=shown+' of '+rows.length+' results shown';
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  apply();
})();
`;

const LETTER: Record<Verdict, string> = { pass: '✓', fail: '✗', warn: '⚠', error: '!', skip: '–' };

function label(r: CheckResult): string {
  return r.operation ? `${r.id} [${r.operation}]` : r.id;
}

function evidence(report: RunReport, r: ReportedResult, v: Verdict): string {
  if (r.outcome === 'pass') return r.notes?.length ? `<div>${r.notes.map(esc).join('<br>')}</div>` : '';
  const e = r.evidence;
  const said = { error: 'error of the suite', skip: 'skipped', fail: 'failed', warn: 'warning', pass: '' }[v];
  const parts = [
    v === 'warn' ? `<div><b>verdict:</b> ${esc(whyNotCounted(report, r))}</div>` : '',
    r.reason ? `<div><b>${said}:</b> ${esc(r.reason)}</div>` : '',
    e ? `<div><b>expected:</b> ${esc(e.expected)}</div><div><b>actual:</b> ${esc(e.actual)}</div>` : '',
    e?.request ? `<div><b>request:</b><pre>${esc(e.request)}</pre></div>` : '',
    e?.status !== undefined ? `<div><b>status:</b> ${e.status}</div>` : '',
    e?.bodyExcerpt !== undefined ? `<div><b>body:</b><pre>${esc(e.bodyExcerpt || '(empty)')}</pre></div>` : '',
    e && e.exchanges.length > 1 ? `<div><b>exchanges:</b><pre>${esc(e.exchanges.join('\n'))}</pre></div>` : '',
    replayLabel(r) ? `<div class="replayed"><b>run again alone:</b> ${esc(replayLabel(r)!)}</div>` : '',
    r.outcome === 'fail' || r.outcome === 'error' ? `<div><b>replay:</b> <code>${esc(replayCommand(report, r))}</code></div>` : '',
  ].join('');
  return r.outcome === 'skip' ? parts : `<details${r.level === 'MUST' && v !== 'warn' ? ' open' : ''}><summary>evidence</summary>${parts}</details>`;
}

/** The id of a result's row in the list of results, where a cell of the grid links to. */
function anchorOf(r: CheckResult): string {
  return `r-${resultKey(r).replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

function matrix(report: RunReport, verdict: (r: CheckResult) => Verdict): string {
  const ops = [...new Set(report.results.map((r) => r.operation ?? 'once'))];
  const ids = [...new Set(report.results.map((r) => r.id))];
  const at = new Map(report.results.map((r) => [`${r.id}\u0000${r.operation ?? 'once'}`, r]));
  const head = `<tr><th>check</th><th>level</th>${ops.map((o) => `<th class="op">${esc(o)}</th>`).join('')}</tr>`;
  const rows = ids.map((id) => {
    const level = report.results.find((r) => r.id === id)!.level;
    const cells = ops.map((o) => {
      const r = at.get(`${id}\u0000${o}`);
      if (!r) return '<td></td>';
      const v = verdict(r);
      return `<td class="cell o-${v} l-${r.level}" data-outcome="${v}" data-level="${r.level}" title="${esc(`${label(r)}: ${v}${r.reason ? ` (${r.reason})` : ''}`)}"><a href="#${anchorOf(r)}">${LETTER[v]}</a></td>`;
    });
    return `<tr class="mrow" data-level="${level}"><td><code>${esc(id)}</code></td><td>${level}</td>${cells.join('')}</tr>`;
  });
  return `<div class="matrix"><table>${head}${rows.join('')}</table></div>`;
}

export function renderHtml(report: RunReport): string {
  const s = report.summary;
  const strict = settingsOf(report).strict === true;
  const verdict = (r: CheckResult): Verdict => verdictOf(r, strict);
  const count = (v: Verdict, level?: string): number => report.results.filter((r) => verdict(r) === v && (level === undefined || r.level === level)).length;
  const order = (r: CheckResult): number => VERDICTS.indexOf(verdict(r)) * 10 + LEVELS.indexOf(r.level);
  const sorted = [...report.results].sort((a, b) => order(a) - order(b));
  const facts: Array<[string, string]> = [
    ['target', report.target.embedded ? `bundled reference server (${report.target.baseUrl})` : report.target.baseUrl],
    ...(report.product ? ([['product', `${report.product.name ?? ''} ${report.product.version ?? ''}`.trim()]] as Array<[string, string]>) : []),
    ['suite', `${report.tool.name} ${report.tool.version}`],
    ['contract digest', report.contractDigest],
    ['run', `${report.runId}, seed ${report.seed}${report.shard ? `, shard ${report.shard}` : ''}`],
    ['started', report.startedAt],
    ['duration', `${(report.durationMs / 1000).toFixed(1)} s`],
    ...(report.certification
      ? ([['certifiable', `${report.certification.certifiable ? 'yes' : 'no'}: ${report.certification.why}`]] as Array<[string, string]>)
      : []),
    ...(report.lists
      ? ([['lists', `compared records created before ${report.lists.comparedBefore}; absent: ${report.lists.absent.join(', ') || 'none'}`]] as Array<
          [string, string]
        >)
      : []),
    [
      'cleanup',
      `deleted ${report.cleanup.deleted}${report.cleanup.alreadyGone ? ` (${report.cleanup.alreadyGone} more already gone)` : ''}; left over: ${report.cleanup.leftovers.length ? report.cleanup.leftovers.map((l) => `${l.kind} ${l.id || '(no id)'} (${l.reason})`).join('; ') : 'none'}${report.cleanup.loginFailed ? `; the cleanup could not log in: ${report.cleanup.loginFailed}` : ''}${report.cleanup.kept?.length ? `; what is left is deleted by: ${cleanupCommand(report)}` : ''}`,
    ],
  ];
  const summary = `<table><tr><th>level</th>${VERDICTS.map((v) => `<th>${v}</th>`).join('')}</tr>${LEVELS.map((l) => `<tr><td>${l}</td>${VERDICTS.map((v) => `<td class="${count(v, l) ? `o-${v} l-${l}` : ''}">${count(v, l)}</td>`).join('')}</tr>`).join('')}</table>`;
  const filters = `<div class="filters"><fieldset><legend>outcome</legend>${VERDICTS.map((v) => `<label><input type="checkbox" data-filter="outcome" value="${v}" checked> ${v} (${count(v)})</label>`).join('')}</fieldset><fieldset><legend>level</legend>${LEVELS.map((l) => `<label><input type="checkbox" data-filter="level" value="${l}" checked> ${l}</label>`).join('')}</fieldset><span class="count" id="shown"></span></div>`;
  const rows = sorted.map((r) => {
    const v = verdict(r);
    return `<tr id="${anchorOf(r)}" class="result o-${v} l-${r.level}" data-outcome="${v}" data-level="${r.level}"><td><code>${esc(r.id)}</code></td><td>${esc(r.operation ?? '')}</td><td>${r.level}</td><td>${v}${r.baselined ? ' (baselined)' : ''}${replayLabel(r) ? `<br><small class="replayed">${esc(replayLabel(r)!)}</small>` : ''}</td><td>${esc(r.title)}<br><small>${esc(r.clause)}</small></td><td>${evidence(report, r, v)}</td></tr>`;
  });
  const note = replayTokenNote(report);
  const replayNote =
    note && report.results.some((r) => r.outcome === 'fail' || r.outcome === 'error')
      ? `<p class="note" id="replay-note">${esc(note.charAt(0).toUpperCase() + note.slice(1))}.</p>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance report: ${esc(report.target.baseUrl)} (run ${esc(report.runId)})</title>
<style>${CSS}</style></head><body>
<header><h1>Conformance report</h1>
<div class="verdict ${report.exit.code === 0 ? 'ok' : 'bad'}" id="verdict">${esc(report.exit.reason)}</div>${report.certification?.profile ? `\n<div class="profile" id="profile"><b>profile:</b> ${esc(describeProfile(report.certification.profile))}; <b>certifiable:</b> ${report.certification.certifiable ? 'yes' : 'no'}</div>` : ''}
<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl></header>
<section id="summary"><h2>Summary: ${s.total} results</h2>${summary}${report.replays ? `<p id="replays">${esc(replaysLine(report))}</p>` : ''}${report.suiteErrors.length ? `<h2>Errors of the suite</h2><ul>${report.suiteErrors.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>` : ''}</section>
${
  report.load
    ? `<section id="load"><h2>Load</h2><p>${esc(loadLine(report.load))}</p>${loadChart(report.load)}</section>
`
    : ''
}<section id="filter"><h2>Filter</h2>${filters}</section>
<section id="checks-by-operation"><h2>Checks × operations</h2>${matrix(report, verdict)}</section>
<section id="results"><h2>Results</h2>${replayNote}<table><tr><th>check</th><th>operation</th><th>level</th><th>outcome</th><th>title / clause</th><th>evidence</th></tr>${rows.join('')}</table></section>
<script>${SCRIPT}</script>
</body></html>
`;
}
