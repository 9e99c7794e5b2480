// `conformance verify BUNDLE`: is this certification bundle what it says it is? The signature
// for the key given, the digests, the files against each other, completeness for the suite
// that made it, the version window (reporters/bundle-check.ts). With --rerun, the same plan
// run again against a target, compared check by check: a witnessed re-run.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resultKey, type CheckResult } from '../lib/runner/index.js';
import { catalogNames, endpointsOf, loadCatalogSpec, mergeCatalog, type CatalogOverrides, contractDigest, suiteDigest } from '../lib/contract/index.js';
import { catalogProblem, ConfigError, DEFAULT_REQUEST_BUDGET, resolveConfig, SETTINGS, type Config, type SettingSpec } from '../lib/configuration/index.js';
import { isDeepStrictEqual } from 'node:util';
import { packageVersion } from '../lib/package/index.js';
import { KeyError, mustPlan, verifyingKey } from '../reporters/attestation.js';
import { checkBundle, type BundleCheck, type BundleFolder, type Finding, type SuiteFacts } from '../reporters/bundle-check.js';
import { settingsOf, type RunReport } from '../reporters/model.js';
import { checkDefinitions, expandChecks } from '../suites/index.js';
import { parseFlags, UsageError, type Io } from './io.js';
import { operationKeys, paginationFor, selectChecks } from './plan.js';
import { errorWord } from '../lib/text/index.js';

/** Release lines before this one whose bundles are still accepted, by default. */
export const DEFAULT_WINDOW = 2;

export const VERIFY_HELP = `Usage: conformance verify BUNDLE [--key PUBLIC.pem] [--strict] [--window N]
                         [--rerun [--base-url URL] [--rerun-dir DIR]]
  Checks a certification bundle (the folder --certify wrote) and says, on one screen:
  - whether attestation.json's signature verifies with the public key given, and every file
    of the bundle is as signed (none changed, added or removed);
  - whether the files agree (certificate.json, results.json, the signed statement) and the
    results bear out the verdict;
  - whether the run could certify: every MUST check the suite planned present and passed, or
    excused by a declaration the bundle records (--absent, --empty); no narrowing, no
    baseline, no --explore 0, no request budget below the default;
  - which suite made it: this version, or one of the --window release lines before it
    (default ${DEFAULT_WINDOW}); another contract digest is named;
  - the profile: full, or partial with the operations declared absent or empty.
  --key FILE       the signer's public key (PEM; a private key's public half also does)
  --strict         SHOULD failures, another contract digest, or a suite whose package digest
                   differs from this one's make the bundle invalid too
  --window N       release lines (minor versions) before this one still accepted
  --rerun          run the same plan again (seed, selection, settings) and compare the
                   verdict check by check; against the bundled reference server when the
                   bundle was made against it, else against --base-url (token: --token or
                   CONFORMANCE_TOKEN)
  --base-url URL   the target of the re-run
  --token T        its token (better: CONFORMANCE_TOKEN)
  --client-id ID   or log in to it with client credentials, as a run does (the secret from
                   CONFORMANCE_CLIENT_SECRET or --client-secret-file; --token-url URL)
  --rerun-dir DIR  where the re-run's own bundle goes (default: a new folder under the
                   system's temporary folder)
  Exit: 0 verified (and, with --rerun, no difference), 1 not valid (or a difference),
  2 could not check (no key, a newer suite, a re-run the suite could not complete),
  130 the re-run was interrupted (Ctrl-C, SIGTERM): nothing compared.`;

const OPTIONS = {
  key: { type: 'string' },
  strict: { type: 'boolean' },
  window: { type: 'string' },
  rerun: { type: 'boolean' },
  'base-url': { type: 'string' },
  token: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-file': { type: 'string' },
  'token-url': { type: 'string' },
  'rerun-dir': { type: 'string' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  // Known only to be refused with the reason: a re-run takes them from the bundle.
  ...Object.fromEntries(
    (SETTINGS as readonly SettingSpec[]).filter((x) => x.shards).map((x) => [x.key, { type: x.kind === 'switch' ? 'boolean' : 'string', multiple: true }]),
  ),
} as const;

/** --window N: release lines before this one still accepted (DEFAULT_WINDOW when not given). */
export function windowOf(raw: string | undefined, command: string): number {
  if (raw === undefined) return DEFAULT_WINDOW;
  if (!/^\d{1,3}$/.test(raw)) throw new UsageError(`--window takes a whole number of release lines (got '${raw}')`, command);
  return Number(raw);
}

/** --key FILE: a public key (PEM) to verify bundles with; a file that cannot be read or used is a usage error. */
export function readVerifyingKey(file: string, io: Io, command: string): ReturnType<typeof verifyingKey> {
  let pem: string;
  try {
    pem = readFileSync(resolve(io.cwd, file), 'utf8');
  } catch (e) {
    throw new UsageError(`--key ${file}: cannot read it (${(e as { code?: string }).code ?? 'unreadable'})`, command);
  }
  try {
    return verifyingKey(pem);
  } catch (e) {
    if (e instanceof KeyError) throw new UsageError(`--key ${file}: ${e.message}`, command);
    throw e;
  }
}

/** The files of a bundle folder, by name, and the names of anything else it holds (a folder, a link). */
export function readBundle(dir: string): BundleFolder {
  const files = new Map<string, Buffer>();
  const others: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (lstatSync(path).isFile()) files.set(name, readFileSync(path));
    else others.push(name);
  }
  return Object.assign(files, { others });
}

/**
 * A run's configuration as a bundle recorded it, typed; the catalog overrides the run had.
 * Values of the wrong type are dropped (settingsOf), never trusted.
 */
function recordedPlan(config: Record<string, unknown>): { settings: ReturnType<typeof settingsOf>; catalog: CatalogOverrides } {
  const settings = settingsOf({ config });
  const catalog = settings.catalog && typeof settings.catalog === 'object' ? (settings.catalog as CatalogOverrides) : {};
  return { settings, catalog };
}

/** The settings that decide outcomes (lib/configuration/settings.ts: those the shards of one run share). */
const OUTCOME_SETTINGS = (SETTINGS as readonly SettingSpec[]).filter((x) => x.shards);

/**
 * The bundle's outcome settings, each as the run recorded it (a value of the wrong type reads
 * as absent): the field of Config, and the flag words that give it.
 */
interface Recorded {
  spec: SettingSpec;
  value: unknown;
  words: string[];
}

function bundleSettings(config: Record<string, unknown>): Recorded[] {
  return OUTCOME_SETTINGS.flatMap((spec): Recorded[] => {
    const v = config[spec.field];
    if (spec.kind === 'switch') return [{ spec, value: v === true, words: v === true ? [`--${spec.key}`] : [] }];
    if (spec.kind === 'whole') return typeof v === 'number' ? [{ spec, value: v, words: [`--${spec.key}`, String(v)] }] : [];
    if (spec.kind === 'list' && Array.isArray(v) && v.every((x) => typeof x === 'string'))
      return [{ spec, value: [...v], words: v.length ? [`--${spec.key}`, v.join(',')] : [] }];
    return [];
  });
}

/**
 * A Config with the bundle's seed, selection and every outcome setting over `base` (target,
 * token, pace: the certifier's), and the words of those that are not at their defaults.
 */
function replayConfig(base: Config, config: Record<string, unknown>): { config: Config; changed: string[] } {
  const { settings: s, catalog } = recordedPlan(config);
  const recorded = bundleSettings(config);
  const byField = base as unknown as Record<string, unknown>;
  const changed = recorded
    .filter((x) => !isDeepStrictEqual(x.value, byField[x.spec.field] ?? (x.spec.kind === 'switch' ? false : undefined)))
    .flatMap((x) => x.words);
  return {
    config: {
      ...base,
      sources: { ...base.sources, seed: 'bundle', ...Object.fromEntries(recorded.map((x) => [x.spec.key, 'bundle' as const])) },
      ...(typeof config.seed === 'number' ? { seed: config.seed } : {}),
      ...Object.fromEntries(recorded.map((x) => [x.spec.field, x.value])),
      checks: s.checks ?? [],
      ...(s.grep !== undefined ? { grep: s.grep } : { grep: undefined }),
      operations: s.operations ?? [],
      catalog,
    },
    changed,
  };
}

/**
 * What this suite plans for a bundle's settings: its MUST results, the lists beyond the 26 (by
 * this suite's catalog: a recorded override cannot make one of the 26 an extra), and the
 * operations declared empty, as a run reads its `empty` setting.
 */
function planFor(config: Record<string, unknown>): ReturnType<SuiteFacts['planFor']> {
  const { settings: s, catalog } = recordedPlan(config);
  const spec = loadCatalogSpec();
  const problem = catalogProblem(
    config.catalog,
    spec.operations.map((o) => o.id),
  );
  if (problem) return { problem: `the catalog overrides are not ones a config file can give: ${problem}` };
  try {
    const merged = mergeCatalog(spec, catalog);
    const endpoints = endpointsOf(merged);
    const asConfig = {
      operations: s.operations ?? [],
      requestBudget: s.requestBudget ?? DEFAULT_REQUEST_BUDGET,
      timeBufferSeconds: s.timeBufferSeconds ?? 0,
      requireAllEndpoints: s.requireAllEndpoints === true,
      exploreOnly: s.exploreOnly === true,
      ...(s.defaultPageLength !== undefined ? { defaultPageLength: s.defaultPageLength } : {}),
    };
    const ids = new Set(selectChecks(checkDefinitions, s.checks ?? [], s.grep).map((d) => d.id));
    const checks = expandChecks(paginationFor(asConfig, merged, endpoints)).filter((c) => ids.has(c.id));
    const contract = new Set(spec.operations.filter((o) => !o.extra).map((o) => o.id));
    const extraOperations = endpoints.filter((e) => !contract.has(e.operation)).map((e) => e.key);
    return { must: mustPlan(checks, extraOperations), extraOperations, declaredEmpty: operationKeys(s.empty ?? [], endpoints, 'empty') };
  } catch (e) {
    return { problem: `this suite cannot work out the run's plan from its settings (${(e as Error).message})` };
  }
}

/** This suite, as bundles are judged by it. */
export function thisSuite(window: number): SuiteFacts {
  return { version: packageVersion, contractDigest: contractDigest(), suiteDigest: suiteDigest(), window, planFor };
}

const MARK: Record<Finding['severity'], string> = { invalid: '✗', unchecked: '?', note: '·' };

/** The screen: what the bundle says, then each finding with its file and field. */
export function renderCheck(dir: string, check: BundleCheck): string[] {
  const w = Math.max(...check.facts.map(([k]) => k.length), 8);
  const lines = [`conformance verify ${dir} (conformance ${packageVersion})`, ...check.facts.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`)];
  const order: Finding['severity'][] = ['invalid', 'unchecked', 'note'];
  for (const f of [...check.findings].sort((a, b) => order.indexOf(a.severity) - order.indexOf(b.severity))) {
    const where = f.file ? `${f.file}${f.field ? ` ${f.field}` : ''}: ` : '';
    lines.push(`  ${MARK[f.severity]} ${where}${f.message}`);
  }
  const invalid = check.findings.filter((f) => f.severity === 'invalid').length;
  if (check.exit === 0) lines.push('verified: the signature, the files and the verdict hold (exit 0)');
  else if (check.exit === 1) lines.push(`NOT VALID: ${invalid} problem(s) above (exit 1)`);
  else lines.push(`could not check everything: ${check.findings.filter((f) => f.severity === 'unchecked').length} thing(s) above (exit 2)`);
  return lines;
}

/** One result per check and operation, by its key. */
const byKey = (results: readonly CheckResult[]): Map<string, CheckResult> => new Map(results.map((r) => [resultKey(r), r]));

export interface Difference {
  key: string;
  before?: CheckResult;
  after?: CheckResult;
}

/** Where two runs' verdicts differ, check by check: outcome, level, or a result in one only. */
export function differences(before: readonly CheckResult[], after: readonly CheckResult[]): Difference[] {
  const a = byKey(before);
  const b = byKey(after);
  const out: Difference[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(key);
    const y = b.get(key);
    if (!x || !y || x.outcome !== y.outcome || x.level !== y.level) out.push({ key, ...(x ? { before: x } : {}), ...(y ? { after: y } : {}) });
  }
  return out;
}

const said = (r: CheckResult | undefined): string => (r ? `${r.outcome}${r.outcome === 'pass' ? '' : ` (${r.level})`}` : 'absent');

/** The flags of the re-run's target: where it is and how to log in to it. */
const LOGIN_FLAGS = ['base-url', 'token', 'client-id', 'client-secret-file', 'token-url'] as const;

/** The environment variables of the certifier's login and pace (lib/configuration/settings.ts names them). */
const CERTIFIER_ENV = (SETTINGS as readonly SettingSpec[])
  .filter((x) => ['token', 'client-id', 'client-secret', 'client-secret-file', 'token-url', 'concurrency'].includes(x.key))
  .map((x) => x.env);

async function rerun(
  dir: string,
  report: RunReport,
  values: Partial<Record<(typeof LOGIN_FLAGS)[number] | 'rerun-dir', string>>,
  io: Io,
): Promise<0 | 1 | 2 | 130> {
  if (!report.target.embedded && values['base-url'] === undefined)
    throw new UsageError(`--rerun: the bundle was made against ${report.target.baseUrl}; give the target to re-run against with --base-url`, 'verify');
  const base = resolveConfig({
    // The target and how to reach it are the certifier's: a token, or client credentials.
    flags: Object.fromEntries(LOGIN_FLAGS.flatMap((k) => (values[k] !== undefined ? [[k, values[k]]] : []))),
    env: Object.fromEntries(CERTIFIER_ENV.flatMap((k) => (io.env[k] ? [[k, io.env[k]]] : []))),
    cwd: io.cwd,
    checks: [],
    operations: [],
    randomSeed: report.seed,
    ...catalogNames(),
  });
  const { config, changed } = replayConfig(base, report.config ?? {});
  const out = values['rerun-dir'] !== undefined ? resolve(io.cwd, values['rerun-dir']) : mkdtempSync(join(tmpdir(), 'conformance-rerun-'));
  const definitions = selectChecks(checkDefinitions, config.checks, config.grep);
  // What the vendor declared absent, as results.json records it (verify holds certificate.json to the same).
  const absent = report.certification?.declaredAbsent ?? [];
  io.out('');
  io.out(`witnessed re-run of ${dir}: seed ${config.seed}, against ${config.baseUrl ?? 'the bundled reference server'}; its own bundle goes to ${out}`);
  io.out(
    `  the re-run takes every setting that decides outcomes from the bundle (${OUTCOME_SETTINGS.map((x) => `--${x.key}`).join(', ')}): ${changed.length ? changed.join(' ') : 'all at their defaults'}`,
  );
  const { run } = await import('./run.js');
  const code = await run(config, definitions, { certifyDir: out, declaredAbsent: absent, ...(report.product ? { product: report.product } : {}) }, io);
  // Stopped by the certifier: the checks cut short read as differences, which they are not.
  if (code === 130) {
    io.out('the re-run was interrupted (Ctrl-C or SIGTERM): its results are cut short, nothing is compared');
    return 130;
  }
  let again: RunReport;
  try {
    again = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunReport;
  } catch {
    io.out(`the re-run wrote no results (exit ${code}): nothing to compare (exit 2)`);
    return 2;
  }
  const diff = differences(report.results, again.results);
  io.out('');
  if (!diff.length) {
    io.out(`re-run: the same verdict on all ${again.results.length} results (outcome and level, check by check)`);
    return 0;
  }
  io.out(`re-run: ${diff.length} result(s) differ from the bundle's:`);
  for (const d of diff) {
    const why = d.after && d.after.outcome !== 'pass' && d.after.reason ? `: ${d.after.reason.split('\n')[0]!.slice(0, 160)}` : '';
    io.out(`  ${d.key}: bundle ${said(d.before)}, re-run ${said(d.after)}${why}`);
  }
  // A difference only in results the re-run could not complete is not a verdict.
  return diff.every((d) => d.after?.outcome === 'error') ? 2 : 1;
}

export async function verify(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags({ args, options: OPTIONS, allowPositionals: true }, 'verify');
  if (values.help) {
    io.out(VERIFY_HELP);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(positionals.length ? `one bundle at a time (got ${positionals.length})` : 'which bundle? (conformance verify BUNDLE)', 'verify');
  const outcome = OUTCOME_SETTINGS.filter((x) => (values as Record<string, unknown>)[x.key] !== undefined).map((x) => `--${x.key}`);
  if (outcome.length)
    throw new UsageError(
      `${outcome.join(', ')}: verify takes no setting that decides outcomes; a re-run (--rerun) takes each of them from the bundle, as the certified run had it`,
      'verify',
    );
  if (!values.rerun && (values['base-url'] !== undefined || values['rerun-dir'] !== undefined))
    throw new UsageError('--base-url and --rerun-dir go with --rerun', 'verify');
  const window = windowOf(values.window, 'verify');
  const dir = resolve(io.cwd, positionals[0]!);
  let files: BundleFolder;
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    files = readBundle(dir);
  } catch (e) {
    io.err(`conformance verify: cannot read the bundle ${positionals[0]} (${errorWord(e)}): a bundle is the folder --certify wrote`);
    return 2;
  }
  const key = values.key !== undefined ? readVerifyingKey(values.key, io, 'verify') : undefined;
  const check = checkBundle(files, thisSuite(window), { ...(key ? { key } : {}), strict: values.strict === true });
  for (const line of renderCheck(positionals[0]!, check)) io.out(line);
  if (!values.rerun) return check.exit;
  if (!check.report) {
    io.out('--rerun: the bundle holds no readable results.json to re-run (exit 2)');
    return 2;
  }
  let again: 0 | 1 | 2 | 130;
  try {
    again = await rerun(positionals[0]!, check.report, values, io);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, 'verify');
    throw e;
  }
  const exit = again === 130 ? 130 : check.exit === 1 || again === 1 ? 1 : check.exit === 2 || again === 2 ? 2 : 0;
  // The last line sums up both: the bundle's checks are far above the re-run's output.
  io.out(
    `verify ${positionals[0]}: the bundle ${check.exit === 0 ? 'verified' : check.exit === 1 ? 'NOT VALID' : 'could not be checked fully'}; the re-run ${again === 0 ? 'found no difference' : again === 1 ? 'differs' : again === 130 ? 'was interrupted' : 'could not complete'} (exit ${exit})`,
  );
  return exit;
}
