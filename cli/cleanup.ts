// `conformance cleanup [--run ID]`: deletes what an interrupted or crashed run left on its
// target, from that run's ledger (lib/runner/ledger.ts) and nothing else. Each run is cleaned on
// the target its ledger records, and only there: a base URL given by flag, environment or settings
// file picks runs, it never sends a run's deletes elsewhere (nothing on a user's server is
// touched that the suite did not create there). The token is never in a ledger: it comes from
// --token, CONFORMANCE_TOKEN or the config file, as for a run.
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { isRunId, Ledger, ledgerPath, ledgersRoot, runInProgress, sameTarget } from '../lib/runner/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { parseFlags, UsageError, type Io } from './io.js';

const HELP = `Usage: conformance cleanup [--run ID]... [--base-url URL] [--token TOKEN] [--config FILE]
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

export async function cleanup(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(
    {
      args,
      options: {
        run: { type: 'string', multiple: true },
        token: { type: 'string' },
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
  const [{ cleanUp }, { settingLabel }, { leftoverLine }, { checkTarget }, { commandSettings }] = await Promise.all([
    import('../lib/runner/index.js'),
    import('../lib/configuration/index.js'),
    import('../reporters/console.js'),
    import('../lib/runner/index.js'),
    import('./settings.js'),
  ]);
  // The target, its token and how long to wait for it, as a run reads them (cli/settings.ts).
  const config = await commandSettings(values, io, 'cleanup', ['base-url', 'token', 'timeout', 'max-body-bytes', 'concurrency'], values.config);
  // The token is asked for only when there is something to delete: nothing left, nothing to say.
  const token = (): string => {
    if (!config.token) throw new UsageError('cleanup needs the token the run used: --token or CONFORMANCE_TOKEN', 'cleanup');
    return config.token;
  };
  // The target the user named, and where they named it: it selects runs, never redirects them.
  const wanted = config.baseUrl;
  const from = wanted ? settingLabel(config, 'base-url') : '';
  const named = values.run ?? [];
  // A run is named by its id, and its ledger is looked for in the ledgers' folder only: a path
  // given as a run would otherwise name any folder, which cleanup reads and then removes.
  for (const id of named)
    if (!isRunId(id))
      throw new UsageError(`--run takes a run id (8 hexadecimal digits, as the run printed it: 'run 1a2b3c4d'), not ${JSON.stringify(id)}`, 'cleanup');
  // A run without a ledger left nothing to delete (its cleanup is done, or it ran on another
  // machine): said, and not an error, so that a cleanup step run again in CI still passes.
  for (const id of named)
    if (!existsSync(ledgerPath(id)))
      io.out(
        `run ${id}: no ledger (looked in ${dirname(ledgerPath(id))}): nothing of it is left to delete here (its cleanup is done, or it ran on another machine)`,
      );
  const host = hostname();
  // Each ledger read once: the run it records, and how much it still holds (read only for
  // the runs that get that far).
  const ledgers = (values.run ?? (existsSync(ledgersRoot()) ? readdirSync(ledgersRoot()).filter(isRunId) : []))
    .filter((runId) => existsSync(ledgerPath(runId)))
    .map((runId) => {
      const ledger = new Ledger(ledgerPath(runId));
      let count: number | undefined;
      const held = (): number => {
        if (count === undefined) {
          const open = ledger.open();
          count = open.created.length + open.unanswered.length;
        }
        return count;
      };
      return { runId, path: ledgerPath(runId), run: ledger.run(), held, torn: () => ledger.torn };
    });
  // Refused before anything is sent: a named run that ran elsewhere than the target given.
  for (const { runId, run } of ledgers) {
    const recorded = run?.baseUrl;
    if (named.length && wanted && recorded && !sameTarget(recorded, wanted)) {
      throw new UsageError(
        `run ${runId} ran against ${recorded}, not ${wanted} (${from}): cleanup deletes only on the target a run recorded (with no base URL given, it cleans run ${runId} on ${recorded})`,
        'cleanup',
      );
    }
  }
  // One token goes to every run cleaned: with no target and no run named, it may only go to one
  // target, or a token meant for one server would be sent to another that a ledger names.
  if (!wanted && named.length === 0) {
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
  const secrets = new Secrets();
  if (config.token) secrets.add(config.token);
  let left = 0;
  let found = 0;
  let busy = 0;
  let elsewhere = 0;
  const reached = new Map<string, Awaited<ReturnType<typeof checkTarget>>>();
  for (const { runId, path, run, held, torn } of ledgers) {
    const recorded = run?.baseUrl;
    // Not picked: it ran against another target than the one given.
    if (wanted && recorded && !sameTarget(recorded, wanted)) {
      elsewhere++;
      continue;
    }
    // Its run is still creating and deleting: its own cleanup is to come; not even the
    // folder is removed, since the run goes on writing its ledger there.
    if (runInProgress(run, host)) {
      busy++;
      io.out(`run ${runId} is still in progress (pid ${run!.pid}): not touched`);
      continue;
    }
    const count = held();
    if (torn()) io.err(`run ${runId}: ${torn()} line(s) of its ledger could not be read (a write cut short): read up to them`);
    if (count === 0) {
      removeLedger(path);
      continue;
    }
    found++;
    // An older ledger records no target: only the user can say where it ran, for this run.
    const baseUrl = recorded ?? (named.includes(runId) ? wanted : undefined);
    if (!baseUrl) {
      io.err(
        named.includes(runId)
          ? `run ${runId}: its ledger does not record which target it ran against (${count} left): give the target with --base-url URL to clean it there`
          : `run ${runId}: its ledger does not record which target it ran against: not touched (${count} left); 'conformance cleanup --run ${runId} --base-url URL' cleans it on URL`,
      );
      left += count;
      continue;
    }
    // The target is read once with the token first, as before a run: a refused token, a dead
    // host or a login page is one line, not a failed delete for each thing the run left.
    let reach = reached.get(baseUrl);
    if (!reach)
      reached.set(
        baseUrl,
        (reach = await checkTarget({ baseUrl, token: token(), timeoutMs: config.timeoutMs, maxBodyBytes: config.maxBodyBytes }, baseUrl, secrets)),
      );
    if (!reach.ok) {
      io.err(`run ${runId} (${baseUrl}): not cleaned (${count} left): ${secrets.mask(reach.line)}`);
      left += count;
      continue;
    }
    const report = await cleanUp(
      { baseUrl, token: token(), timeoutMs: config.timeoutMs, maxBodyBytes: config.maxBodyBytes, concurrency: config.concurrency, ledgerPath: path, runId },
      secrets,
    );
    io.out(
      `run ${runId} (${baseUrl}): deleted ${report.deleted}${report.alreadyGone ? ` (${report.alreadyGone} more already gone)` : ''}; ${report.leftovers.length} left over`,
    );
    for (const l of report.leftovers) io.out(leftoverLine(l));
    left += report.leftovers.length;
    if (report.leftovers.length === 0) removeLedger(path);
  }
  if (elsewhere) io.out(`${elsewhere} run(s) against targets other than ${wanted} (${from}): not touched`);
  if (found === 0 && busy === 0)
    io.out(values.run ? 'nothing left to delete' : wanted ? `no run against ${wanted} left anything to delete` : 'no run left anything to delete');
  return left ? 1 : 0;
}
