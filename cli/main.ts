// `conformance`: resolve the configuration, select checks, start the reference server when
// there is no target, run the checks through vitest, clean up, report, and exit by level.
// This module loads only what parsing the command line needs: each command, and a run
// (cli/run.ts), is imported when it is chosen, so that --help, --version and --list never load
// vitest, ajv, faker, undici or the reference server (test/startup.test.ts). lib/configuration/
// is light on import (config.ts loads yaml and ajv only to read a settings file).
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CONFIG_FILE,
  ConfigError,
  readConfigFile,
  resolveConfig,
  settingLabel,
  type RawSettings,
  listOf,
  settingFlags,
  settingOptions,
} from '../lib/configuration/index.js';
import { closest } from '../lib/text/index.js';
import { packageVersion } from '../lib/package/index.js';
import { Secrets } from '../lib/evidence/index.js';
import type { CheckDefinition } from '../suites/index.js';
import { HELP } from './help.js';
import { parseFlags, UsageError, type Io } from './io.js';
import type { RunOptions } from './run.js';

/** The settings' flags (lib/configuration/settings.ts), and the flags that are not settings. */
const OPTIONS = {
  ...settingOptions(),
  config: { type: 'string' },
  check: { type: 'string', multiple: true },
  grep: { type: 'string' },
  operation: { type: 'string', multiple: true },
  list: { type: 'boolean' },
  'list-operations': { type: 'boolean' },
  'no-color': { type: 'boolean' },
  certify: { type: 'string' },
  'signing-key': { type: 'string' },
  product: { type: 'string' },
  'product-version': { type: 'string' },
  absent: { type: 'string', multiple: true },
  baseline: { type: 'string' },
  'write-baseline': { type: 'string' },
  shard: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

function renderList(checks: readonly CheckDefinition[]): string[] {
  const w = Math.max(...checks.map((c) => c.id.length));
  return [
    `${'id'.padEnd(w)}  level   clause / title`,
    ...checks.map(
      (c) =>
        `${c.id.padEnd(w)}  ${c.level.padEnd(6)}  ${c.clause}  (${c.clauseLink})\n${' '.repeat(w + 10)}${c.title}${c.perOperation ? ' [per list operation]' : ''}${c.observed ? ' [observed]' : ''}`,
    ),
    '',
    `${checks.length} checks (${checks.filter((c) => c.perOperation).length} of them run once per list operation; see --list-operations)`,
    `${checks.filter((c) => c.observed).length} of them also judge traffic the suite did not send ([observed]: conformance proxy, conformance judge)`,
  ];
}

/**
 * The list operations as a run reads them: the catalog with the settings file's `operations:`
 * merged in (lib/contract/catalog.ts mergeCatalog), those it adds or changes marked, so that what
 * `--operation` accepts and errors point at is all here. Only the file's catalog is read: a
 * file naming a target without its token still lists.
 */
async function listOperations(configFile: string | undefined, cwd: string): Promise<string[]> {
  const { endpointsOf, loadCatalogSpec, mergeCatalog } = await import('../lib/contract/index.js');
  const spec = loadCatalogSpec();
  const file = resolve(cwd, configFile ?? CONFIG_FILE);
  if (configFile !== undefined && !existsSync(file)) throw new ConfigError(`config file not found: ${file}`);
  const label = configFile ?? CONFIG_FILE;
  const overrides = existsSync(file)
    ? readConfigFile(
        file,
        label,
        spec.operations.map((o) => o.id),
      ).catalog
    : {};
  const own = new Set(spec.operations.map((o) => o.id));
  const touched = new Set(Object.keys(overrides.operations ?? {}));
  return endpointsOf(mergeCatalog(spec, overrides)).map((e) => {
    const marks = [
      e.hardOffsetLimit ? 'hard offset limit' : '',
      !own.has(e.operation) ? `from ${label}` : e.extra ? "not among the contract's 26" : '',
      own.has(e.operation) && touched.has(e.operation) ? `changed in ${label}` : '',
    ].filter(Boolean);
    return `${e.key.padEnd(34)}${e.path}${marks.map((m) => `  (${m})`).join('')}`;
  });
}

/** The subcommands, for a did-you-mean on a mistyped one (`conformance serv`). */
const COMMANDS = ['serve', 'merge', 'selftest', 'cleanup', 'traceability', 'proxy', 'judge', 'verify', 'keygen', 'publish'];

function parseMain(args: string[]) {
  const { values, positionals } = parseFlags({ args, options: OPTIONS, allowPositionals: true });
  if (positionals.length) {
    const near = closest(positionals[0]!, COMMANDS);
    throw new UsageError(`unexpected argument '${positionals[0]}'${near ? ` (did you mean 'conformance ${near}'?)` : ''}`);
  }
  const flags: RawSettings = settingFlags(values);
  const checks = listOf(values.check);
  return { values, flags, checks };
}

/**
 * The key that signs a certification bundle: --signing-key FILE, else CONFORMANCE_SIGNING_KEY
 * (the PEM itself, or a path to it), with CONFORMANCE_SIGNING_KEY_PASSPHRASE for an encrypted
 * one. Read once, here; a message about it names the file or the variable, never the key.
 */
async function readSigningKey(file: string | undefined, io: Io): Promise<import('../reporters/attestation.js').SigningKey | undefined> {
  const fromEnv = io.env.CONFORMANCE_SIGNING_KEY;
  if (file === undefined && !fromEnv) return undefined;
  const { KeyError, signingKey } = await import('../reporters/attestation.js');
  // A CI secret may hold the PEM with its line breaks written as \n, or indented: read as meant.
  const env = fromEnv?.includes('-----BEGIN') ? fromEnv.replace(/\\n/g, '\n').replace(/^[ \t]+/gm, '') : fromEnv;
  const inline = file === undefined && env!.includes('-----BEGIN');
  // The variable's value is never said: it may be a key pasted without its PEM lines.
  const label = file !== undefined ? `--signing-key ${file}` : 'CONFORMANCE_SIGNING_KEY';
  let pem: string;
  try {
    pem = inline ? env! : readFileSync(resolve(io.cwd, file ?? env!), 'utf8');
  } catch (e) {
    const what = file !== undefined ? 'cannot read it' : 'neither a PEM private key (-----BEGIN PRIVATE KEY-----...) nor a file that can be read';
    throw new UsageError(`${label}: ${what} (${(e as { code?: string }).code ?? 'unreadable'})`);
  }
  try {
    return signingKey(pem, io.env.CONFORMANCE_SIGNING_KEY_PASSPHRASE || undefined);
  } catch (e) {
    if (e instanceof KeyError) throw new UsageError(`${label}: ${e.message}`);
    throw e;
  }
}

function parseShard(raw: string | undefined): RunOptions['shard'] {
  if (raw === undefined) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new UsageError(`--shard takes i/n with 1 ≤ i ≤ n (got '${raw}')`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

export async function main(argv: string[], io: Io): Promise<number> {
  try {
    if (argv[0] === 'serve') return await (await import('./serve.js')).serve(argv.slice(1), io);
    if (argv[0] === 'merge') return await (await import('./merge.js')).merge(argv.slice(1), io);
    if (argv[0] === 'selftest') return await (await import('./selftest.js')).selftest(argv.slice(1), io, main);
    if (argv[0] === 'cleanup') return await (await import('./cleanup.js')).cleanup(argv.slice(1), io);
    if (argv[0] === 'traceability') return await (await import('./selftest.js')).traceability(argv.slice(1), io);
    if (argv[0] === 'proxy') return await (await import('./proxy.js')).proxy(argv.slice(1), io);
    if (argv[0] === 'judge') return await (await import('./judge.js')).judgeHar(argv.slice(1), io);
    if (argv[0] === 'verify') return await (await import('./verify.js')).verify(argv.slice(1), io);
    if (argv[0] === 'keygen') return await (await import('./keygen.js')).keygen(argv.slice(1), io);
    if (argv[0] === 'publish') return await (await import('./record.js')).publishRecord(argv.slice(1), io);
    // A mistyped command is said as such, before its flags are read as the main command's
    // (`conformance sevre --port 5203` is not about an unknown --port).
    const meant = argv[0] && !argv[0].startsWith('-') ? closest(argv[0], COMMANDS) : undefined;
    if (meant) throw new UsageError(`unknown command '${argv[0]}' (did you mean 'conformance ${meant}'?)`);
    const { values, flags, checks } = parseMain(argv);
    if (values.help) {
      io.out(HELP);
      return 0;
    }
    if (values.version) {
      io.out(packageVersion);
      return 0;
    }
    const { checkDefinitions } = await import('../suites/index.js');
    const { selectChecks } = await import('./plan.js');
    const selected = selectChecks(checkDefinitions, checks, values.grep);
    if (values.list) {
      for (const l of renderList(selected)) io.out(l);
      return 0;
    }
    if (values['list-operations']) {
      for (const l of await listOperations(values.config, io.cwd)) io.out(l);
      return 0;
    }
    const { catalogNames } = await import('../lib/contract/index.js');
    const config = resolveConfig({
      flags,
      env: io.env,
      cwd: io.cwd,
      configFile: values.config,
      checks,
      grep: values.grep,
      operations: listOf(values.operation),
      randomSeed: randomInt(0, 2 ** 31 - 1),
      ...catalogNames(),
    });
    const refused = config.reporters.length ? (await import('../reporters/registry.js')).unknownReporter(config.reporters) : undefined;
    if (refused) throw new UsageError(`${settingLabel(config, 'reporter')}: ${refused}`);
    const { readBaseline } = await import('../reporters/verdict.js');
    const signingKey = await readSigningKey(values['signing-key'], io);
    if (signingKey && values.certify === undefined)
      throw new UsageError(
        `${values['signing-key'] !== undefined ? '--signing-key' : 'CONFORMANCE_SIGNING_KEY'} signs a certification bundle: it goes with --certify DIR`,
      );
    const options: RunOptions = {
      ...(values.certify !== undefined ? { certifyDir: resolve(io.cwd, values.certify) } : {}),
      ...(signingKey ? { signingKey } : {}),
      ...(values.product !== undefined || values['product-version'] !== undefined
        ? { product: { ...(values.product ? { name: values.product } : {}), ...(values['product-version'] ? { version: values['product-version'] } : {}) } }
        : {}),
      declaredAbsent: listOf(values.absent),
      ...(values.baseline !== undefined ? { baseline: { file: values.baseline, entries: readBaseline(resolve(io.cwd, values.baseline)) } } : {}),
      ...(values['write-baseline'] !== undefined ? { writeBaseline: resolve(io.cwd, values['write-baseline']) } : {}),
      ...(values.shard !== undefined ? { shard: parseShard(values.shard) } : {}),
    };
    // --empty is not refused without --certify, as the key `empty` of a shared config file is
    // not: a run says it counts only in a certification (cli/run.ts).
    if ((options.product || options.declaredAbsent.length) && !options.certifyDir)
      throw new UsageError('--product, --product-version and --absent go with --certify DIR');
    // --explore-only measures the exploration; with the fixed probes off no list rule is proved.
    if (config.exploreOnly && options.certifyDir)
      throw new UsageError(`${settingLabel(config, 'explore-only')} turns the list checks' fixed probes off: it does not go with --certify`);
    if (config.exploreOnly && config.explore === 0)
      throw new UsageError(`${settingLabel(config, 'explore-only')} needs drawn requests, and ${settingLabel(config, 'explore')} is 0`);
    // Every place the run will write, tried before anything is sent.
    const { unwritable } = await import('./outputs.js');
    const cannot = unwritable(
      [
        ...(config.reportDir ? [{ path: config.reportDir, label: settingLabel(config, 'report-dir') }] : []),
        ...(options.certifyDir ? [{ path: options.certifyDir, label: '--certify' }] : []),
      ],
      options.writeBaseline ? [{ path: options.writeBaseline, label: '--write-baseline' }] : [],
    );
    if (cannot) throw new UsageError(cannot);
    const { run } = await import('./run.js');
    return await run(config, selected, options, { ...io, env: values['no-color'] ? { ...io.env, NO_COLOR: '1' } : io.env });
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError) {
      const command = e instanceof UsageError && e.command ? `${e.command} ` : '';
      io.err(`conformance: ${(e as Error).message.split('\n')[0]}`);
      io.err(`Run 'conformance ${command}--help' for usage.`);
      return 2;
    }
    const secrets = new Secrets();
    secrets.add(io.env.CONFORMANCE_TOKEN);
    secrets.add(io.env.CONFORMANCE_CLIENT_SECRET);
    secrets.add(io.env.CONFORMANCE_SIGNING_KEY_PASSPHRASE);
    secrets.add(io.env.CONFORMANCE_SIGNING_KEY);
    io.err(`conformance: the suite itself failed: ${secrets.mask((e as Error)?.stack ?? String(e))}`);
    return 2;
  }
}
