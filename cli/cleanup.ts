// `conformance cleanup [--run ID]`: deletes what an interrupted or crashed run left on its
// target, from that run's ledger (lib/runner/ledger.ts) and nothing else. Each run is cleaned on
// the target its ledger records, and only there: a base URL given by flag, environment or settings
// file picks runs, it never sends a run's deletes elsewhere (nothing on a user's server is
// touched that the suite did not create there). The token is never in a ledger: it comes from
// --token, CONFORMANCE_TOKEN or the config file, or from a login with client credentials, as for
// a run.
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
// checkTarget, cleanUp and leftoverLine as types only: they are loaded when the command runs (cleanup).
import { isRunId, Ledger, ledgerPath, ledgersRoot, runInProgress, sameTarget, type checkTarget, type cleanUp, type LedgerRun } from '../lib/runner/index.js';
import { TOKEN_PATH, type Config } from '../lib/configuration/index.js';
import type { LoginSettings } from '../lib/transport/index.js';
import type { leftoverLine } from '../reporters/console.js';
import { Secrets } from '../lib/evidence/index.js';
import { parseFlags, UsageError, type Io } from './io.js';

const HELP = `Usage: conformance cleanup [--run ID]... [--base-url URL] [--token TOKEN | --client-id ID] [--config FILE]
  Deletes what interrupted or crashed runs created and did not delete, from their ledgers
  (${ledgersRoot()}/<run>/ledger.jsonl), and nothing else. Each run is cleaned on the
  target its ledger records, and nowhere else.
  --run ID         only this run (repeatable): its id as the run printed it (8 hexadecimal
                   digits; never a path); without it, every run whose ledger still holds
                   something
  --base-url URL   only the runs whose ledger records this target (also CONFORMANCE_BASE_URL,
                   or base-url in the config file). It picks runs and never redirects them: a
                   --run recorded against another target is refused (exit 2). A ledger of an
                   older version records no target: it is left alone, unless --run names it
                   and --base-url says where it ran (that URL is then used)
  --token TOKEN    the token, read as for a run (--token, CONFORMANCE_TOKEN, the config file);
                   every run cleaned is sent it, so when runs left things on several targets
                   and neither --base-url nor --run names one, nothing is sent (exit 2)
  --client-id ID   log in with client credentials instead, as a run does (the secret in
                   CONFORMANCE_CLIENT_SECRET or --client-secret-file; --token-url, default each
                   target's base URL and /oauth/access_token)
  --config FILE    settings file (default: ./conformance.config.yaml when present)
  A run still in progress (its process alive on this host) is never touched: it cleans up
  after itself, and it does not change the exit code. Each target is read once with the token
  before any delete (the run's preflight): a refused token or an unreachable host sends no
  delete and keeps the ledger.
  Exit 0 when nothing is left, 1 when something could not be deleted or was left alone (it is
  listed), 2 for a usage error.`;

/** A ledger, and its run's folder once nothing else is in it: never a file the suite did not write. */
function removeLedger(path: string): void {
  rmSync(path, { force: true });
  try {
    rmdirSync(dirname(path));
  } catch {
    // Not empty (or already gone): what else is there stays.
  }
}

/** One run's ledger as cleanup reads it: the run it records, and how much it still holds (read when first asked). */
interface RunLedger {
  runId: string;
  path: string;
  run: LedgerRun | undefined;
  held(): number;
  /** Lines of the ledger that could not be read (a write cut short). */
  torn(): number;
}

/** What cleaning a run works with: the settings, the target and runs the user named, and what the run has learned so far. */
interface Cleaning {
  io: Io;
  config: Config;
  /** The target the user named: it selects runs, never redirects them. */
  wanted: string | undefined;
  named: readonly string[];
  host: string;
  /**
   * The token for a target, and the credentials to log in again with, asked for only when there
   * is something to delete: nothing left, nothing to say. A refused login is a line, no throw.
   */
  token(baseUrl: string): Promise<{ token: string; login?: LoginSettings } | { refused: string }>;
  secrets: Secrets;
  /** Each target's preflight, read once. */
  reached: Map<string, Awaited<ReturnType<typeof checkTarget>>>;
  // Loaded when the command runs, not with this module (cleanup): --help needs none of them.
  cleanUp: typeof cleanUp;
  checkTarget: typeof checkTarget;
  leftoverLine: typeof leftoverLine;
}

/** What the runs came to, added up as each is cleaned. */
interface Tally {
  /** Things not deleted: left over, or left alone. */
  left: number;
  /** Runs with something to delete. */
  found: number;
  /** Runs still in progress. */
  busy: number;
  /** Runs against another target than the one given. */
  elsewhere: number;
}

/**
 * The runs named with --run: each an id (its ledger is looked for in the ledgers' folder only: a
 * path given as a run would otherwise name any folder, which cleanup reads and then removes),
 * and a run without a ledger said, not an error (its cleanup is done, or it ran on another
 * machine), so that a cleanup step run again in CI still passes.
 */
function checkNamed(named: readonly string[], io: Io): void {
  for (const id of named)
    if (!isRunId(id))
      throw new UsageError(`--run takes a run id (8 hexadecimal digits, as the run printed it: 'run 1a2b3c4d'), not ${JSON.stringify(id)}`, 'cleanup');
  for (const id of named)
    if (!existsSync(ledgerPath(id)))
      io.out(
        `run ${id}: no ledger (looked in ${dirname(ledgerPath(id))}): nothing of it is left to delete here (its cleanup is done, or it ran on another machine)`,
      );
}

/** The ledgers of these runs (every run's when none is named), each read once. */
function readLedgers(runs: readonly string[] | undefined): RunLedger[] {
  return (runs ?? (existsSync(ledgersRoot()) ? readdirSync(ledgersRoot()).filter(isRunId) : []))
    .filter((runId) => existsSync(ledgerPath(runId)))
    .map((runId) => {
      const ledger = new Ledger(ledgerPath(runId));
      let count: number | undefined;
      const held = (): number => {
        if (count === undefined) {
          const open = ledger.open();
          count = open.created.length + open.unanswered.length + open.settings.length;
        }
        return count;
      };
      return { runId, path: ledgerPath(runId), run: ledger.run(), held, torn: () => ledger.torn };
    });
}

/** Refused before anything is sent: a named run that ran elsewhere than the target given (named `from`). */
function refuseMisdirected(ledgers: readonly RunLedger[], named: readonly string[], wanted: string | undefined, from: string): void {
  for (const { runId, run } of ledgers) {
    const recorded = run?.baseUrl;
    if (named.length && wanted && recorded && !sameTarget(recorded, wanted)) {
      throw new UsageError(
        `run ${runId} ran against ${recorded}, not ${wanted} (${from}): cleanup deletes only on the target a run recorded (with no base URL given, it cleans run ${runId} on ${recorded})`,
        'cleanup',
      );
    }
  }
}

/**
 * One token goes to every run cleaned: with no target and no run named, it may only go to one
 * target, or a token meant for one server would be sent to another that a ledger names.
 */
function refuseSeveralTargets(ledgers: readonly RunLedger[], host: string): void {
  const targets = new Map<string, string[]>();
  for (const { runId, run, held } of ledgers) {
    if (!run?.baseUrl || runInProgress(run, host) || held() === 0) continue;
    const key = [...targets.keys()].find((t) => sameTarget(t, run.baseUrl)) ?? run.baseUrl;
    targets.set(key, [...(targets.get(key) ?? []), runId]);
  }
  if (targets.size > 1) {
    const list = [...targets].map(([t, ids]) => `${t} (run${ids.length > 1 ? 's' : ''} ${ids.join(', ')})`).join('; ');
    throw new UsageError(
      `runs left things on ${targets.size} targets: ${list}; the token would be sent to each, so name one: --base-url URL (or --run ID)`,
      'cleanup',
    );
  }
}

/**
 * One run cleaned, or not and why: against another target than the one given, still in
 * progress, nothing left (its ledger removed), or no target to clean it on.
 */
async function cleanRun(l: RunLedger, c: Cleaning, tally: Tally): Promise<void> {
  const { runId, run, held, torn } = l;
  const recorded = run?.baseUrl;
  // Not picked: it ran against another target than the one given.
  if (c.wanted && recorded && !sameTarget(recorded, c.wanted)) {
    tally.elsewhere++;
    return;
  }
  // Its run is still creating and deleting: its own cleanup is to come; not even the
  // folder is removed, since the run goes on writing its ledger there.
  if (runInProgress(run, c.host)) {
    tally.busy++;
    c.io.out(`run ${runId} is still in progress (pid ${run!.pid}): not touched`);
    return;
  }
  const count = held();
  if (torn()) c.io.err(`run ${runId}: ${torn()} line(s) of its ledger could not be read (a write cut short): read up to them`);
  if (count === 0) {
    removeLedger(l.path);
    return;
  }
  tally.found++;
  // An older ledger records no target: only the user can say where it ran, for this run.
  const baseUrl = recorded ?? (c.named.includes(runId) ? c.wanted : undefined);
  if (!baseUrl) {
    c.io.err(
      c.named.includes(runId)
        ? `run ${runId}: its ledger does not record which target it ran against (${count} left): give the target with --base-url URL to clean it there`
        : `run ${runId}: its ledger does not record which target it ran against: not touched (${count} left); 'conformance cleanup --run ${runId} --base-url URL' cleans it on URL`,
    );
    tally.left += count;
    return;
  }
  tally.left += await cleanOn(l, baseUrl, count, c);
}

/**
 * A run's leftovers deleted on its target, once that target has been read with the token; how
 * many are left. Its ledger is removed when nothing is.
 */
async function cleanOn({ runId, path }: RunLedger, baseUrl: string, count: number, c: Cleaning): Promise<number> {
  const { config, io, secrets } = c;
  // The target is read once with the token first, as before a run: a refused token, a dead
  // host or a login page is one line, not a failed delete for each thing the run left.
  const auth = await c.token(baseUrl);
  if ('refused' in auth) {
    io.err(`run ${runId} (${baseUrl}): not cleaned (${count} left): ${secrets.mask(auth.refused)}`);
    return count;
  }
  let reach = c.reached.get(baseUrl);
  if (!reach)
    c.reached.set(
      baseUrl,
      (reach = await c.checkTarget({ baseUrl, token: auth.token, timeoutMs: config.timeoutMs, maxBodyBytes: config.maxBodyBytes }, baseUrl, secrets)),
    );
  if (!reach.ok) {
    io.err(`run ${runId} (${baseUrl}): not cleaned (${count} left): ${secrets.mask(reach.line)}`);
    return count;
  }
  const report = await c.cleanUp(
    {
      baseUrl,
      token: auth.token,
      ...(auth.login ? { login: auth.login } : {}),
      timeoutMs: config.timeoutMs,
      maxBodyBytes: config.maxBodyBytes,
      concurrency: config.concurrency,
      ledgerPath: path,
      runId,
    },
    secrets,
  );
  io.out(
    `run ${runId} (${baseUrl}): deleted ${report.deleted}${report.alreadyGone ? ` (${report.alreadyGone} more already gone)` : ''}; ${report.leftovers.length} left over`,
  );
  for (const r of report.restored ?? []) io.out(`run ${runId} (${baseUrl}): restored ${r}`);
  for (const l of report.leftovers) io.out(c.leftoverLine(l));
  if (report.leftovers.length === 0) removeLedger(path);
  return report.leftovers.length;
}

/**
 * The command: its flags and settings read, the runs named checked, the ledgers read, a run
 * sent elsewhere or a token bound for several targets refused; then each run cleaned in turn,
 * and what was not said once.
 */
export async function cleanup(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(
    {
      args,
      options: {
        run: { type: 'string', multiple: true },
        token: { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        'client-secret-file': { type: 'string' },
        'token-url': { type: 'string' },
        'base-url': { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    'cleanup',
  );
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  // Loaded here, not above: --help needs none of it (the HTTP layer loads undici).
  const [{ cleanUp }, { settingLabel }, { leftoverLine }, { checkTarget }, { commandSettings }, { Login, LoginError }] = await Promise.all([
    import('../lib/runner/index.js'),
    import('../lib/configuration/index.js'),
    import('../reporters/console.js'),
    import('../lib/runner/index.js'),
    import('./settings.js'),
    import('../lib/transport/index.js'),
  ]);
  // The target, its token or client credentials and how long to wait for it, as a run reads them (cli/settings.ts).
  const config = await commandSettings(
    values,
    io,
    'cleanup',
    ['base-url', 'token', 'client-id', 'client-secret', 'client-secret-file', 'token-url', 'timeout', 'max-body-bytes', 'concurrency'],
    values.config,
  );
  const secrets = new Secrets();
  if (config.token) secrets.add(config.token);
  secrets.add(config.clientSecret);
  const token: Cleaning['token'] = async (baseUrl) => {
    if (config.clientId === undefined) {
      if (!config.token)
        throw new UsageError(
          'cleanup needs the token the run used: --token or CONFORMANCE_TOKEN, or client credentials: --client-id with CONFORMANCE_CLIENT_SECRET',
          'cleanup',
        );
      return { token: config.token };
    }
    // One login per target, as the run's: the token URL given, else the target's own.
    const login = { tokenUrl: config.tokenUrl ?? `${baseUrl}${TOKEN_PATH}`, clientId: config.clientId, clientSecret: config.clientSecret!, scope: 'cleanup' };
    const session = Login.shared(login, config.timeoutMs);
    session.mask(secrets);
    try {
      return { token: await session.token(), login };
    } catch (e) {
      if (e instanceof LoginError) return { refused: e.message };
      throw e;
    }
  };
  const wanted = config.baseUrl;
  const from = wanted ? settingLabel(config, 'base-url') : '';
  const named = values.run ?? [];
  checkNamed(named, io);
  const host = hostname();
  const ledgers = readLedgers(values.run);
  refuseMisdirected(ledgers, named, wanted, from);
  if (!wanted && named.length === 0) refuseSeveralTargets(ledgers, host);
  const cleaning: Cleaning = { io, config, wanted, named, host, token, secrets, reached: new Map(), cleanUp, checkTarget, leftoverLine };
  const tally: Tally = { left: 0, found: 0, busy: 0, elsewhere: 0 };
  for (const l of ledgers) await cleanRun(l, cleaning, tally);
  if (tally.elsewhere) io.out(`${tally.elsewhere} run(s) against targets other than ${wanted} (${from}): not touched`);
  if (tally.found === 0 && tally.busy === 0)
    io.out(values.run ? 'nothing left to delete' : wanted ? `no run against ${wanted} left anything to delete` : 'no run left anything to delete');
  return tally.left ? 1 : 0;
}
