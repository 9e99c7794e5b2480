// `conformance cleanup [--run ID]`: deletes what an interrupted or crashed run left on its
// target, from that run's ledger (lib/ledger.ts) and nothing else. The ledger says which target
// (never the token: that comes from --token, CONFORMANCE_TOKEN or the config file, as for a run).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Ledger, ledgerPath, ledgersRoot } from '../lib/ledger.js';
import { Secrets } from '../lib/secrets.js';
import { parseFlags, UsageError, type Io } from './io.js';

const HELP = `Usage: conformance cleanup [--run ID]... [--token TOKEN] [--base-url URL] [--config FILE]
  Deletes what interrupted or crashed runs created and did not delete, from their ledgers
  (${ledgersRoot()}/<run>/ledger.jsonl), and nothing else. Without --run: every run whose
  ledger still holds something. The token is read as for a run (--token, CONFORMANCE_TOKEN,
  the config file); the target is the one the ledger names, unless --base-url says otherwise.
  Exit 0 when nothing is left, 1 when something could not be deleted (it is listed).`;

export async function cleanup(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags({ args, options: { run: { type: 'string', multiple: true }, token: { type: 'string' }, 'base-url': { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, 'cleanup');
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  // Loaded here, not above: --help needs none of it (the HTTP layer loads undici).
  const [{ cleanUp }, { resolveConfig }, { leftoverLine }] = await Promise.all([import('../lib/cleanup.js'), import('../lib/config.js'), import('../reporters/console.js')]);
  const config = resolveConfig({ flags: { ...(values.token ? { token: values.token } : {}), ...(values['base-url'] ? { 'base-url': values['base-url'] } : {}) }, env: io.env, cwd: io.cwd, configFile: values.config, checks: [], operations: [], randomSeed: 0 });
  if (!config.token) throw new UsageError('cleanup needs the token the run used: --token or CONFORMANCE_TOKEN', 'cleanup');
  const runs = values.run ?? (existsSync(ledgersRoot()) ? readdirSync(ledgersRoot()) : []);
  for (const id of values.run ?? []) if (!existsSync(ledgerPath(id))) throw new UsageError(`no ledger for run '${id}' (looked in ${dirname(ledgerPath(id))})`, 'cleanup');
  const secrets = new Secrets();
  secrets.add(config.token);
  let left = 0;
  let found = 0;
  for (const runId of runs) {
    const path = ledgerPath(runId);
    if (!existsSync(path)) continue;
    const ledger = new Ledger(path);
    const open = ledger.open();
    if (open.created.length + open.unanswered.length === 0) {
      rmSync(dirname(path), { recursive: true, force: true });
      continue;
    }
    found++;
    const baseUrl = config.baseUrl ?? ledger.run()?.baseUrl;
    if (!baseUrl) {
      io.err(`run ${runId}: its ledger does not say which target it ran against: give --base-url`);
      left += open.created.length + open.unanswered.length;
      continue;
    }
    const report = await cleanUp({ baseUrl, token: config.token, timeoutMs: config.timeoutMs, maxBodyBytes: config.maxBodyBytes, concurrency: config.concurrency, ledgerPath: path, runId }, secrets);
    io.out(`run ${runId} (${baseUrl}): deleted ${report.deleted}; ${report.leftovers.length} left over`);
    for (const l of report.leftovers) io.out(leftoverLine(l));
    left += report.leftovers.length;
    if (report.leftovers.length === 0) rmSync(dirname(path), { recursive: true, force: true });
  }
  if (found === 0) io.out(values.run ? 'nothing left to delete' : 'no run left anything to delete');
  return left ? 1 : 0;
}
