// The suite against the troubles of the real world (bench/chaos-proxy.ts): for a calm run and
// for each chaos mode, alone and again beside a process that keeps one core busy, the bundled
// reference server (in this process, a fresh one per run, its own token) behind the chaos proxy,
// and the CLI run against the proxy. Each run is judged on what a user of the suite would see:
//
// - its exit code against the calm run's (a dead target, `hang` or `html`, should instead end
//   in a short clear stop: exit 2 in at most 40 lines);
// - its wall time and the lines it printed;
// - what it left on the target (read from the server's store, not through the proxy); where a
//   dead target kept things, the `conformance cleanup --run ID` the run printed is run once the
//   target answers again (the proxy's trouble lifted), and what it left is what counts;
// - whether results.json and junit.xml were written;
// - whether a secret leaked: the token and every client_secret the server issued during the
//   run, in any of their spellings (as is, JSON-escaped, `\/`-escaped, `\uXXXX`, percent- and
//   form-encoded, base64, base64url), in stdout, stderr, any file of the report dir, and any
//   file the run wrote under its TMPDIR: its ledger among them, read while the run goes on
//   too, since a run that ends clean deletes it.
//
// The echo modes also answer a key's 201 as 200 (a SHOULD warning, exit unchanged): its
// evidence then holds the re-spelled answer with the echoed token, so the search for leaks has
// something to search; a run whose checks all pass writes no evidence at all.
//
// A run that does not end within --timeout is stopped (SIGTERM, then SIGKILL 15 s later) and
// reported so; late runs get less than --timeout (at least 60 s) so the whole bench keeps to
// --budget. Servers, proxies and the CPU hog are closed after every run, and on any exit.
//
//   npm run bench:real-world
//   npm run bench:real-world -- --modes calm,429 --no-hog   some modes (the calm run always comes first)
//   npm run bench:real-world -- --timeout 300 --budget 840 --keep   seconds; keep every run's files
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Ledger } from '../lib/runner/index.js';
import { packageRoot } from '../lib/package/index.js';
import { startReferenceServer, type RunningServer } from '../server/index.js';
import type { ApplicationKey } from '../server/store.js';
import {
  CHAOS_MODES,
  PER_SECOND,
  dotnetString,
  noCounts,
  phpString,
  startChaosProxy,
  type ChaosCounts,
  type ChaosMode,
  type ChaosProxy,
} from './chaos-proxy.js';

const DEAD_TARGET: readonly ChaosMode[] = ['hang', 'html'];
/** How long the cleanup command run after a dead target's run may take. */
const CLEANUP_TIMEOUT_MS = 120_000;
const SHORT_STOP_LINES = 40;
const TAG = 'conformance-';

export interface Leak {
  /** `token`, or `client_secret #N` (in the order the server issued them). */
  secret: string;
  spelling: string;
  /** stdout, stderr, a path under the report dir (`report/…`) or the run's TMPDIR (`tmp/…`). */
  where: string;
}

export interface RealWorldRow {
  mode: ChaosMode;
  hog: boolean;
  /** null: stopped by the bench after --timeout (or killed by a signal). */
  code: number | null;
  timedOut: boolean;
  seconds: number;
  lines: number;
  /** What the server still holds: all of it was created by the run (each server starts empty). */
  left: { customApis: number; applicationKeys: number; tagged: number; names: string[]; inLedger: number };
  /**
   * A dead target's run that left things, and printed the command that deletes them: that
   * command, run once the target answers again (the proxy's trouble lifted), and what was left
   * after it.
   */
  afterCleanup?: { command: string; code: number | null; lines: number; left: number; tail: string[] };
  resultsJson: boolean;
  junitXml: boolean;
  secretsIssued: number;
  /** Files searched for secrets: outputs, report files, files under TMPDIR, ledgers read during the run. */
  searched: string[];
  leaks: Leak[];
  counts: Omit<ChaosCounts, 'secretsSeen'>;
  /**
   * From results.json: what did not pass (errors by code, failures by check), the suite's own
   * count of leftovers, and the 429s its client was answered.
   */
  results?: { errors: Record<string, number>; failures: Record<string, number>; suiteErrors: number; leftovers: number; rateLimited: number };
  /** The last lines the run printed (for a row that differs). */
  tail: string[];
  /** The bench itself failed to make this run (the server or proxy would not start...). */
  benchError?: string;
}

/** What results.json says went wrong, folded: errors by their code, failures by check id. */
function readResults(path: string): RealWorldRow['results'] {
  try {
    const d = JSON.parse(readFileSync(path, 'utf8')) as {
      results?: { id: string; level?: string; outcome: string; errorCode?: string }[];
      suiteErrors?: unknown[];
      cleanup?: { leftovers?: unknown[] };
      load?: { rateLimited?: number };
    };
    const errors: Record<string, number> = {};
    const failures: Record<string, number> = {};
    for (const r of d.results ?? []) {
      if (r.outcome === 'error') {
        const code = r.errorCode ?? 'other';
        errors[code] = (errors[code] ?? 0) + 1;
      } else if (r.outcome === 'fail') {
        const k = `${r.level ?? ''} ${r.id}`.trim();
        failures[k] = (failures[k] ?? 0) + 1;
      }
    }
    return { errors, failures, suiteErrors: d.suiteErrors?.length ?? 0, leftovers: d.cleanup?.leftovers?.length ?? 0, rateLimited: d.load?.rateLimited ?? 0 };
  } catch {
    return undefined;
  }
}

// --- Spellings of a secret ---------------------------------------------------------------

const pct = (s: string, every: boolean, lower: boolean): string => {
  const out = every
    ? [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')
    : encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return lower ? out.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()) : out;
};

const everyUnit = (s: string, upper: boolean): string =>
  [...s]
    .map((ch) =>
      [...ch]
        .map((_, i) => ch.charCodeAt(i))
        .map((c) => `\\u${c.toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`)
        .join(''),
    )
    .join('');

/**
 * Base64 of the secret wherever it sits in a longer encoded text (`client_id:client_secret`
 * in a Basic header, say): for each of the three alignments, the characters that depend on the
 * secret's bytes alone.
 */
function base64Cores(s: string, url: boolean): string[] {
  const bytes = Buffer.from(s, 'utf8');
  const cores: string[] = [];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes])
      .toString(url ? 'base64url' : 'base64')
      .replace(/=+$/, '');
    const start = k === 0 ? 0 : 4;
    const whole = Math.floor((k + bytes.length) / 3) * 4; // characters of whole groups
    const core = enc.slice(start, whole);
    if (core.length >= 12) cores.push(core);
  }
  return cores;
}

const jsonInner = (s: string): string => JSON.stringify(s).slice(1, -1);
const htmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Every spelling of `s` searched for, by name; each also as it reads inside a JSON string (once and twice) and HTML-escaped. */
export function spellings(s: string): Map<string, string> {
  const base: [string, string][] = [
    ['as is', s],
    ['JSON-escaped', jsonInner(s)],
    ['\\/-escaped (PHP json_encode)', phpString(s).slice(1, -1)],
    ['.NET \\uXXXX (upper-case hex)', dotnetString(s).slice(1, -1)],
    [
      '.NET \\uxxxx (lower-case hex)',
      dotnetString(s)
        .slice(1, -1)
        .replace(/\\u[0-9A-F]{4}/g, (m) => m.toLowerCase()),
    ],
    ['\\uXXXX every character (upper-case hex)', everyUnit(s, true)],
    ['\\uxxxx every character (lower-case hex)', everyUnit(s, false)],
    ['percent-encoded (upper-case hex)', pct(s, false, false)],
    ['percent-encoded (lower-case hex)', pct(s, false, true)],
    ['percent-encoded every byte (upper-case hex)', pct(s, true, false)],
    ['percent-encoded every byte (lower-case hex)', pct(s, true, true)],
    ['form-encoded', new URLSearchParams({ x: s }).toString().slice(2)],
    [
      'form-encoded (lower-case hex)',
      new URLSearchParams({ x: s })
        .toString()
        .slice(2)
        .replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    ],
    ...base64Cores(s, false).map((c, i): [string, string] => [`base64 (alignment ${i})`, c]),
    ...base64Cores(s, true).map((c, i): [string, string] => [`base64url (alignment ${i})`, c]),
  ];
  const out = new Map<string, string>(); // value -> name: the first name wins
  const add = (name: string, value: string): void => {
    if (value.length >= 8 && !out.has(value)) out.set(value, name);
  };
  // Spellings that come out alike for this secret share one entry, named by all of them.
  const alike = new Map<string, number>();
  for (const [name, value] of base) {
    if (out.has(value)) alike.set(value, (alike.get(value) ?? 0) + 1);
    else add(name, value);
  }
  for (const [value, n] of alike) out.set(value, `${out.get(value)} (and ${n} other spelling(s) alike for this secret)`);
  for (const [name, value] of base) {
    add(`${name}, inside a JSON string`, jsonInner(value));
    add(`${name}, inside a JSON string twice`, jsonInner(jsonInner(value)));
    add(`${name}, HTML-escaped`, htmlEscape(value));
    add(`${name}, inside a JSON string, HTML-escaped`, htmlEscape(jsonInner(value)));
  }
  return new Map([...out].map(([value, name]) => [name, value]));
}

/** Files under `dir`, recursively, with their contents (latin1: the needles are ASCII). */
function filesUnder(dir: string, limitBytes = 64 * 1024 * 1024): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(dir)) return out;
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      try {
        const st = statSync(p);
        if (st.isDirectory()) walk(p);
        else if (st.isFile() && st.size <= limitBytes) out.set(p, readFileSync(p, 'latin1'));
      } catch {
        // gone meanwhile
      }
    }
  };
  walk(dir);
  return out;
}

/** A piece of a secret this long, found where the whole is not, is a leak too: an excerpt cut before masking. */
const FRAGMENT = 16;

export function findLeaks(secrets: Map<string, string>, sources: Map<string, string>): Leak[] {
  const leaks: Leak[] = [];
  // Every FRAGMENT-character window of the plainer spellings, to the secret it comes from.
  const windows = new Map<string, string>();
  for (const [label, secret] of secrets) {
    const whole = spellings(secret);
    const found = new Set<string>();
    for (const [spelling, needle] of whole) {
      for (const [where, text] of sources) {
        if (text.includes(needle)) {
          leaks.push({ secret: label, spelling, where });
          found.add(where);
        }
      }
    }
    for (const [name, v0] of whole) {
      const v = /^(as is|\\\/-escaped \(PHP json_encode\)|\.NET \\uXXXX \(upper-case hex\))( \(and|$)/.test(name) ? v0 : undefined;
      if (v === undefined || v.length <= FRAGMENT) continue;
      for (let i = 0; i + FRAGMENT <= v.length; i++) windows.set(v.slice(i, i + FRAGMENT), `${label}\u0000${[...found].join('\u0000')}`);
    }
  }
  if (windows.size) {
    for (const [where, text] of sources) {
      const hit = new Set<string>();
      for (let i = 0; i + FRAGMENT <= text.length; i++) {
        const w = windows.get(text.slice(i, i + FRAGMENT));
        if (w === undefined) continue;
        const [label, ...wholeIn] = w.split('\u0000');
        if (wholeIn.includes(where) || hit.has(label!)) continue;
        hit.add(label!);
        leaks.push({ secret: label!, spelling: `a piece of ${FRAGMENT}+ characters`, where });
      }
    }
  }
  return leaks;
}

// --- Processes ---------------------------------------------------------------------------

/** Children of this bench, each the leader of its own process group: ended on any exit. */
const children = new Set<ChildProcess>();

function endGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Work directories to remove if the bench is interrupted. */
const interruptedCleanup = new Set<string>();

process.on('exit', () => {
  for (const c of children) endGroup(c, 'SIGKILL');
});
/** On Ctrl-C or SIGTERM: the children ended, the work directories removed, exit 130. */
function stopOnSignals(): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      for (const c of children) endGroup(c, 'SIGKILL');
      for (const dir of interruptedCleanup) rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  }
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** A process that keeps one core busy until it is killed. */
function startHog(): ChildProcess {
  return track(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore', detached: true }));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  endGroup(child, 'SIGKILL');
  await gone;
}

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  seconds: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, whileRunning: () => void): Promise<CliResult> {
  const started = performance.now();
  const child = track(spawn(process.execPath, [join(packageRoot, 'dist/cli/bin.js'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let timedOut = false;
  const poll = setInterval(whileRunning, 250);
  // SIGTERM first (the suite cleans up on it), SIGKILL 15 s later if it is still there.
  let kill: NodeJS.Timeout | undefined;
  const stop = setTimeout(() => {
    timedOut = true;
    endGroup(child, 'SIGTERM');
    kill = setTimeout(() => endGroup(child, 'SIGKILL'), 15_000);
  }, timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearInterval(poll);
      clearTimeout(stop);
      if (kill) clearTimeout(kill);
      whileRunning();
      resolve({ code, signal, timedOut, seconds: (performance.now() - started) / 1000, stdout, stderr });
    });
  });
}

// --- One run -----------------------------------------------------------------------------

/** A token with the characters spellings differ on (`/`, `+`, `=`), as a base64 token has. */
function newToken(): string {
  return `rw/${randomBytes(12).toString('base64url')}+${randomBytes(12).toString('base64url')}/k=`;
}

export async function realWorldRun(mode: ChaosMode, hog: boolean, root: string, timeoutMs: number): Promise<RealWorldRow> {
  const dir = mkdtempSync(join(root, `${mode}${hog ? '-hog' : ''}-`));
  const reportDir = join(dir, 'report');
  const tmp = join(dir, 'tmp');
  const token = newToken();
  let server: RunningServer | undefined;
  let proxy: ChaosProxy | undefined;
  let cpu: ChildProcess | undefined;
  try {
    server = await startReferenceServer({ token, seed: 1, port: 0 });
    // Every client_secret the server issues this run, in order: the Map a key is stored in
    // is told each one (a deleted key's secret stays on this list).
    const issued: string[] = [];
    const keys = server.store.applicationKeys;
    const set = keys.set.bind(keys);
    keys.set = (id: string, key: ApplicationKey) => {
      if (typeof key?.client_secret === 'string' && !issued.includes(key.client_secret)) issued.push(key.client_secret);
      return set(id, key);
    };
    proxy = await startChaosProxy(server.url, mode, { seed: 1 });
    if (hog) cpu = startHog();

    // The ledgers (and anything else) the run writes under its TMPDIR, read while it runs: a
    // run that ends clean deletes its ledger.
    const seen = new Map<string, string>();
    const snapshot = (): void => {
      for (const [p, text] of filesUnder(join(tmp, 'conformance'))) {
        const before = seen.get(p);
        if (before === undefined || text.startsWith(before)) seen.set(p, text);
        else if (!before.includes(text)) seen.set(p, `${before}\n${text}`);
      }
    };
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CONFORMANCE_') && k !== 'GITHUB_ACTIONS' && k !== 'GITHUB_STEP_SUMMARY') env[k] = v;
    Object.assign(env, { TMPDIR: tmp, NO_COLOR: '1' });
    mkdirSync(tmp, { recursive: true });
    const r = await runCli(['--base-url', proxy.url, '--token', token, '--report-dir', reportDir, '--seed', '1', '--no-color'], env, timeoutMs, snapshot);
    if (cpu) await stopChild(cpu);

    const apis = [...server.store.customApis.values()];
    const keysLeft = [...server.store.applicationKeys.values()];
    const names = [...apis, ...keysLeft].map((x) => x.name);
    // What is left and still open in a ledger the run kept (by id, or by name for a create
    // whose answer never came): `conformance cleanup` can find it; anything else is orphaned.
    const open = { ids: new Set<string>(), names: new Set<string>() };
    for (const p of filesUnder(join(tmp, 'conformance')).keys()) {
      if (!p.endsWith('ledger.jsonl')) continue;
      try {
        const o = new Ledger(p).open();
        for (const e of o.created) open.ids.add(e.id);
        for (const u of o.unanswered) open.names.add(u.name);
      } catch {
        // a ledger this version cannot read: nothing in it counts
      }
    }
    const inLedger = [...apis, ...keysLeft].filter((x) => open.ids.has(x.id) || open.names.has(x.name)).length;
    const sources = new Map<string, string>([
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ]);
    // A dead target keeps what the run made: the run must say how to delete it, and that must
    // work once the target is back.
    let afterCleanup: RealWorldRow['afterCleanup'];
    const runId = /conformance cleanup --run ([0-9a-f]{8})/.exec(r.stdout)?.[1];
    if (DEAD_TARGET.includes(mode) && runId && names.length) {
      proxy.recover();
      const c = await runCli(['cleanup', '--run', runId, '--token', token], env, CLEANUP_TIMEOUT_MS, snapshot);
      sources.set('cleanup stdout', c.stdout);
      sources.set('cleanup stderr', c.stderr);
      const out = `${c.stdout}${c.stderr}`.replace(/\n$/, '');
      afterCleanup = {
        command: `conformance cleanup --run ${runId}`,
        code: c.timedOut ? null : c.code,
        lines: out ? out.split('\n').length : 0,
        left: server.store.customApis.size + server.store.applicationKeys.size,
        tail: out.split('\n').slice(-8),
      };
    }
    for (const [p, text] of filesUnder(reportDir)) sources.set(relative(dir, p), text);
    for (const [p, text] of filesUnder(tmp)) sources.set(relative(dir, p), text);
    for (const [p, text] of seen) {
      const key = relative(dir, p);
      const now = sources.get(key);
      if (now === undefined) sources.set(`${key} (read during the run)`, text);
      else if (!now.includes(text)) sources.set(`${key} (read during the run)`, text);
    }
    // Kept beside the report for a reader (written after the search above, which read them from memory).
    writeFileSync(join(dir, 'stdout.txt'), r.stdout);
    writeFileSync(join(dir, 'stderr.txt'), r.stderr);
    const secrets = new Map<string, string>([['token', token]]);
    issued.forEach((s, i) => secrets.set(`client_secret #${i + 1}`, s));
    const { secretsSeen: _seen, ...counts } = proxy.counts();
    const all = `${r.stdout}${r.stderr}`;
    const lines = all === '' ? 0 : all.replace(/\n$/, '').split('\n').length;
    return {
      mode,
      hog,
      code: r.timedOut ? null : r.code,
      timedOut: r.timedOut,
      seconds: r.seconds,
      lines,
      left: { customApis: apis.length, applicationKeys: keysLeft.length, tagged: names.filter((n) => n.includes(TAG)).length, names, inLedger },
      ...(afterCleanup ? { afterCleanup } : {}),
      resultsJson: existsSync(join(reportDir, 'results.json')),
      results: readResults(join(reportDir, 'results.json')),
      junitXml: existsSync(join(reportDir, 'junit.xml')),
      secretsIssued: issued.length,
      searched: [...sources.keys()],
      leaks: findLeaks(secrets, sources),
      counts,
      tail: all.replace(/\n$/, '').split('\n').slice(-12),
    };
  } finally {
    if (cpu) await stopChild(cpu);
    await proxy?.close().catch(() => {});
    await server?.close().catch(() => {});
  }
}

// --- Judging and printing ----------------------------------------------------------------

export function verdict(row: RealWorldRow, calmCode: number | null): string {
  if (row.benchError) return 'DIFFERENT (bench error)';
  if (!row.timedOut && row.code === calmCode) return 'same verdict';
  if (DEAD_TARGET.includes(row.mode) && row.code === 2 && row.lines <= SHORT_STOP_LINES) return 'short clear stop';
  return 'DIFFERENT';
}

/** What is on the target in the end: after the cleanup command the run printed, where the bench ran it. */
export function leftInTheEnd(row: RealWorldRow): number {
  return row.afterCleanup ? row.afterCleanup.left : row.left.customApis + row.left.applicationKeys;
}

const exitText = (row: RealWorldRow): string =>
  row.benchError ? 'bench error' : row.timedOut ? `timed out, stopped after ${row.seconds.toFixed(0)} s` : String(row.code);
const leftText = (row: RealWorldRow): string => {
  const n = row.left.customApis + row.left.applicationKeys;
  if (n === 0) return '0 left';
  const during = `${n} left (${row.left.applicationKeys} key(s), ${row.left.customApis} Custom API(s); ${row.left.tagged} named ${TAG}…; ${row.left.inLedger === n ? 'all' : row.left.inLedger} in the kept ledger)`;
  const after = row.afterCleanup;
  if (!after) return during;
  // What the command listed without deleting: things it could not look for (nothing on the target says they exist).
  const listed = Number(/(\d+) left over/.exec(after.tail.join('\n'))?.[1] ?? 0);
  return `${during}; then '${after.command}', once the target answered again: ${after.left} on the target (its exit ${after.code ?? 'timed out'}${listed ? `: it listed ${listed} create(s) it could not look for, to check by hand` : ''})`;
};
const leakText = (row: RealWorldRow): string => (row.leaks.length ? `LEAK (${row.leaks.length})` : 'no leak');
const yes = (b: boolean): string => (b ? 'yes' : 'no');

function countsText(c: RealWorldRow['counts']): string {
  const parts = [`${c.requests} request(s)`];
  if (c.limited || c.limitedNoRetryAfter) parts.push(`${c.limited} 429 with Retry-After, ${c.limitedNoRetryAfter} without`);
  const byMethod = (m: Record<string, number>): string =>
    Object.entries(m)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ') || 'none';
  if (Object.keys(c.resetBefore).length || Object.keys(c.resetMidBody).length)
    parts.push(`reset before the answer: ${byMethod(c.resetBefore)}; mid-body: ${byMethod(c.resetMidBody)}`);
  if (c.spikes) parts.push(`${c.spikes} delayed 1-5 s`);
  if (c.badGateway || c.late) parts.push(`${c.badGateway} GET(s) answered 502 by the gateway after the target served them, ${c.late} answered 300 ms late`);
  if (c.hung) parts.push(`${c.hung} never answered`);
  if (c.html) parts.push(`${c.html} answered with a login page`);
  if (c.echoed) parts.push(`${c.echoed} answer(s) re-spelled with the token echoed (${c.createdAs200} 201 answered as 200)`);
  return parts.join('; ');
}

function rowLine(row: RealWorldRow, calmCode: number | null): string {
  const label = `${row.mode}${row.hog ? ' + CPU hog' : ''}`;
  return `| ${label} | ${exitText(row)} (calm ${calmCode ?? 'timed out'}) | ${row.seconds.toFixed(1)} s | ${row.lines} | ${leftText(row)} | ${yes(row.resultsJson)} | ${yes(row.junitXml)} | ${leakText(row)} | ${verdict(row, calmCode)} |`;
}

function details(row: RealWorldRow, calmCode: number | null): string {
  if (row.benchError) return `  bench error: ${row.benchError}`;
  const out = [`  proxy: ${countsText(row.counts)}; ${row.secretsIssued} client_secret(s) issued`, `  searched: ${row.searched.join(', ')}`];
  if (row.mode === 'rate100') {
    // No run can be shorter than its admitted requests at the rate the target admits them.
    const admitted = row.counts.requests - row.counts.limited;
    const bound = admitted / PER_SECOND;
    out.push(
      `  rate: ${admitted} admitted at ${PER_SECOND} a second take at least ${bound.toFixed(1)} s; the run took ${(row.seconds - bound).toFixed(1)} s more; the suite was answered ${row.results?.rateLimited ?? '?'} 429(s)`,
    );
  }
  const res = row.results;
  if (res && (Object.keys(res.errors).length || Object.keys(res.failures).length || res.suiteErrors || res.leftovers)) {
    const list = (m: Record<string, number>): string =>
      Object.entries(m)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} x${v}`)
        .join(', ');
    out.push(
      `  results.json: ${[Object.keys(res.errors).length ? `errors ${list(res.errors)}` : '', Object.keys(res.failures).length ? `failures (a SHOULD one only warns) ${list(res.failures)}` : '', res.suiteErrors ? `${res.suiteErrors} suite error(s)` : '', res.leftovers ? `${res.leftovers} leftover(s) reported by the suite` : ''].filter(Boolean).join('; ')}`,
    );
  }
  if (row.afterCleanup && row.afterCleanup.code !== 0) out.push(`  ${row.afterCleanup.command} printed:`, ...row.afterCleanup.tail.map((l) => `    ${l}`));
  if (row.left.names.length)
    out.push(
      `  left on the target${row.afterCleanup ? ' when the run ended (before the cleanup command)' : ''}: ${row.left.names
        .slice(0, 8)
        .map((n) => JSON.stringify(n.length > 60 ? `${n.slice(0, 60)}…` : n))
        .join(', ')}${row.left.names.length > 8 ? ', …' : ''}`,
    );
  if (row.leaks.length) {
    // One line per secret kind, place and spelling: the client_secrets folded together.
    const folded = new Map<string, Set<string>>();
    for (const l of row.leaks) {
      const who = l.secret.startsWith('client_secret') ? 'client_secret' : l.secret;
      const k = `${who} in ${l.where}: ${l.spelling}`;
      if (!folded.has(k)) folded.set(k, new Set());
      folded.get(k)!.add(l.secret);
    }
    for (const [k, s] of folded) out.push(`  LEAK: ${k}${s.size > 1 || [...s][0] !== 'token' ? ` (${s.size} secret(s))` : ''}`);
  }
  if (verdict(row, calmCode) === 'DIFFERENT') out.push('  last lines:', ...row.tail.map((l) => `    ${l.length > 220 ? `${l.slice(0, 220)}…` : l}`));
  return out.join('\n');
}

const HEADER = '| run | exit | wall | lines | left on the target | results.json | junit.xml | secrets | verdict |\n|---|---|---|---|---|---|---|---|---|';

if (import.meta.url === `file://${process.argv[1]}`) {
  stopOnSignals();
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const modes = (opt('--modes')?.split(',') ?? ['calm', ...CHAOS_MODES]) as ChaosMode[];
  for (const m of modes)
    if (m !== 'calm' && !CHAOS_MODES.includes(m as (typeof CHAOS_MODES)[number]))
      throw new Error(`unknown mode '${m}' (known: calm, ${CHAOS_MODES.join(', ')})`);
  const withHog = !args.includes('--no-hog');
  const timeoutMs = Number(opt('--timeout') ?? 300) * 1000;
  // The whole bench should end within this: late runs get less than --timeout (at least 60 s).
  const budgetMs = Number(opt('--budget') ?? 840) * 1000;
  const keep = args.includes('--keep');
  const root = mkdtempSync(join(tmpdir(), 'real-world-'));
  if (!keep) interruptedCleanup.add(root);
  const plan: [ChaosMode, boolean][] = [['calm', false], ...modes.filter((m) => m !== 'calm').map((m): [ChaosMode, boolean] => [m, false])];
  if (withHog) plan.push(...[...new Set<ChaosMode>(['calm', ...modes])].map((m): [ChaosMode, boolean] => [m, true]));
  const started = performance.now();
  const rows: RealWorldRow[] = [];
  let calmCode: number | null = null;
  console.log(
    `bench:real-world: ${plan.length} run(s), each against a fresh reference server behind the chaos proxy; runs stopped after ${timeoutMs / 1000} s; work dir ${root}`,
  );
  try {
    for (const [mode, hog] of plan) {
      const left = budgetMs - (performance.now() - started);
      let row: RealWorldRow;
      try {
        row = await realWorldRun(mode, hog, root, Math.min(timeoutMs, Math.max(60_000, left)));
      } catch (err) {
        const { secretsSeen: _seen, ...none } = noCounts();
        row = {
          mode,
          hog,
          code: null,
          timedOut: false,
          seconds: 0,
          lines: 0,
          left: { customApis: 0, applicationKeys: 0, tagged: 0, names: [], inLedger: 0 },
          resultsJson: false,
          junitXml: false,
          secretsIssued: 0,
          searched: [],
          leaks: [],
          counts: none,
          tail: [],
          benchError: err instanceof Error ? (err.stack ?? err.message) : String(err),
        };
      }
      if (mode === 'calm' && !hog) calmCode = row.code;
      rows.push(row);
      console.log(rowLine(row, calmCode));
      console.log(details(row, calmCode));
    }
  } finally {
    const anyLeak = rows.some((r) => r.leaks.length);
    if (keep || anyLeak) console.log(`\nrun directories kept in ${root}${anyLeak && !keep ? ' (a secret leaked there: delete it when done)' : ''}`);
    else rmSync(root, { recursive: true, force: true });
  }
  console.log(`\n## bench:real-world (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  console.log(HEADER);
  for (const row of rows) console.log(rowLine(row, calmCode));
  const bad = rows.filter((r) => verdict(r, calmCode) === 'DIFFERENT' || r.leaks.length || leftInTheEnd(r));
  console.log(`\n${rows.length - bad.length} of ${rows.length} run(s) kept the calm verdict (or stopped short and clear), left nothing and leaked nothing.`);
}
