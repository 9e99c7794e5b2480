// `conformance`: resolve the configuration, select checks, start the reference server when
// there is no target, run the checks through vitest, clean up, report, and exit by level.
// This module loads only what parsing the command line needs: each command, and a run
// (cli/run.ts), is imported when it is chosen, so that --help, --version and --list never load
// vitest, ajv, faker, undici or the reference server (test/startup.test.ts).
import { randomInt } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { RawSettings } from '../lib/config.js';
import { packageVersion } from '../lib/package.js';
import { Secrets } from '../lib/secrets.js';
import type { CheckDefinition } from '../suites/index.js';
import { HELP } from './help.js';
import { UsageError, type Io } from './io.js';
import type { RunOptions } from './run.js';

const OPTIONS = {
  'base-url': { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  seed: { type: 'string' },
  check: { type: 'string', multiple: true },
  grep: { type: 'string' },
  operation: { type: 'string', multiple: true },
  list: { type: 'boolean' },
  'list-operations': { type: 'boolean' },
  'request-budget': { type: 'string' },
  'time-buffer': { type: 'string' },
  'default-page-length': { type: 'string' },
  'require-all-endpoints': { type: 'boolean' },
  'report-dir': { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  strict: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  certify: { type: 'string' },
  product: { type: 'string' },
  'product-version': { type: 'string' },
  absent: { type: 'string', multiple: true },
  baseline: { type: 'string' },
  'write-baseline': { type: 'string' },
  shard: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

export function selectChecks(definitions: readonly CheckDefinition[], ids: readonly string[], grep: string | undefined): CheckDefinition[] {
  const known = new Set(definitions.map((c) => c.id));
  for (const id of ids) if (!known.has(id)) throw new UsageError(`unknown check id '${id}' (see 'conformance --list')`);
  let selected = ids.length ? definitions.filter((c) => ids.includes(c.id)) : [...definitions];
  if (grep !== undefined) {
    const g = grep.toLowerCase();
    selected = selected.filter((c) => c.id.toLowerCase().includes(g) || c.title.toLowerCase().includes(g));
  }
  if (selected.length === 0) throw new UsageError(`no check matches --grep '${grep}' (see 'conformance --list')`);
  return selected;
}

function renderList(checks: readonly CheckDefinition[]): string[] {
  const w = Math.max(...checks.map((c) => c.id.length));
  return [
    `${'id'.padEnd(w)}  level   clause / title`,
    ...checks.map((c) => `${c.id.padEnd(w)}  ${c.level.padEnd(6)}  ${c.clause}\n${' '.repeat(w + 10)}${c.title}${c.perOperation ? ' [per list operation]' : ''}`),
    '',
    `${checks.length} checks (${checks.filter((c) => c.perOperation).length} of them run once per list operation; see --list-operations)`,
  ];
}

function parseMain(args: string[]) {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const flags: RawSettings = {};
  if (values['base-url'] !== undefined) flags['base-url'] = values['base-url'];
  if (values.token !== undefined) flags.token = values.token;
  if (values.seed !== undefined) flags.seed = values.seed;
  if (values.concurrency !== undefined) flags.concurrency = values.concurrency;
  if (values.timeout !== undefined) flags.timeout = values.timeout;
  if (values['report-dir'] !== undefined) flags['report-dir'] = values['report-dir'];
  if (values.strict) flags.strict = true;
  if (values['request-budget'] !== undefined) flags['request-budget'] = values['request-budget'];
  if (values['time-buffer'] !== undefined) flags['time-buffer'] = values['time-buffer'];
  if (values['default-page-length'] !== undefined) flags['default-page-length'] = values['default-page-length'];
  if (values['require-all-endpoints']) flags['require-all-endpoints'] = true;
  const checks = (values.check ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  return { values, flags, checks };
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
    if (argv[0] === 'selftest') return await (await import('./selftest.js')).selftest(argv.slice(1), io);
    if (argv[0] === 'cleanup') return await (await import('./cleanup.js')).cleanup(argv.slice(1), io);
    if (argv[0] === 'traceability') return await (await import('./selftest.js')).traceability(argv.slice(1), io);
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
    const selected = selectChecks(checkDefinitions, checks, values.grep);
    if (values.list) {
      for (const l of renderList(selected)) io.out(l);
      return 0;
    }
    if (values['list-operations']) {
      const { endpointsOf, loadCatalogSpec } = await import('../lib/catalog.js');
      for (const e of endpointsOf(loadCatalogSpec())) io.out(`${e.key.padEnd(34)}${e.path}${e.hardOffsetLimit ? '  (hard offset limit)' : ''}${e.extra ? '  (not among the contract\'s 26)' : ''}`);
      return 0;
    }
    const { resolveConfig } = await import('../lib/config.js');
    const config = resolveConfig({
      flags,
      env: values['no-color'] ? { ...io.env, CONFORMANCE_NO_COLOR: '1' } : io.env,
      cwd: io.cwd,
      configFile: values.config,
      checks,
      grep: values.grep,
      operations: (values.operation ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean),
      randomSeed: randomInt(0, 2 ** 31 - 1),
    });
    const { readBaseline } = await import('../reporters/verdict.js');
    const options: RunOptions = {
      ...(values.certify !== undefined ? { certifyDir: resolve(io.cwd, values.certify) } : {}),
      ...(values.product !== undefined || values['product-version'] !== undefined ? { product: { ...(values.product ? { name: values.product } : {}), ...(values['product-version'] ? { version: values['product-version'] } : {}) } } : {}),
      declaredAbsent: (values.absent ?? []).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean),
      ...(values.baseline !== undefined ? { baseline: { file: values.baseline, entries: readBaseline(resolve(io.cwd, values.baseline)) } } : {}),
      ...(values['write-baseline'] !== undefined ? { writeBaseline: resolve(io.cwd, values['write-baseline']) } : {}),
      ...(values.shard !== undefined ? { shard: parseShard(values.shard) } : {}),
    };
    if ((options.product || options.declaredAbsent.length) && !options.certifyDir) throw new UsageError('--product, --product-version and --absent go with --certify DIR');
    const { run } = await import('./run.js');
    return await run(config, selected, options, { ...io, env: values['no-color'] ? { ...io.env, NO_COLOR: '1' } : io.env });
  } catch (e) {
    if (e instanceof UsageError || (await isConfigError(e)) || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`conformance: ${(e as Error).message.split('\n')[0]}`);
      io.err(`Run 'conformance --help' for usage.`);
      return 2;
    }
    const secrets = new Secrets();
    secrets.add(io.env.CONFORMANCE_TOKEN);
    io.err(`conformance: the suite itself failed: ${secrets.mask((e as Error)?.stack ?? String(e))}`);
    return 2;
  }
}

/** A mistake in the settings (lib/config.ts), without loading that module (and yaml) to ask. */
async function isConfigError(e: unknown): Promise<boolean> {
  if (!(e instanceof Error) || e.name !== 'ConfigError') return false;
  const { ConfigError } = await import('../lib/config.js');
  return e instanceof ConfigError;
}
