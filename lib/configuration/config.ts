// The run's configuration, resolved once: defaults, then conformance.config.yaml, then
// environment, then flags. It is validated and frozen here; nothing else reads process.env.
// Every error names where the value came from: the flag (--timeout), the environment variable
// (CONFORMANCE_TIMEOUT_MS), or the file and the key path in it (conformance.config.yaml:
// operations.orders.paths). The file is first checked against spec/config.schema.yaml.
//
// cli/main.ts imports this module on every start, so it loads nothing heavy on import: yaml when a file is read, ajv when a file is validated (the way
// lib/contract/schema.ts loads them), and no catalog (a run hands in the operation ids it knows).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { closest, didYouMean } from '../text/index.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import type { parse as parseYamlType } from 'yaml';
import { packageRoot } from '../package/index.js';
import { MASK } from '../evidence/index.js';
import { SETTINGS, type SettingKey } from './settings.js';
import type { CatalogOverrides } from '../contract/index.js';

/** The most bytes of one answer's body read (a run's --max-body-bytes; the proxy keeps as much of a body to judge). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

const require = createRequire(import.meta.url);

export interface Config {
  /** The target; absent: the bundled reference server is started on a free loopback port. */
  baseUrl?: string;
  token?: string;
  /**
   * Client credentials, instead of a token (against a target only): the run logs in with them at
   * tokenUrl (lib/transport/login.ts). The secret comes from CONFORMANCE_CLIENT_SECRET or the file
   * clientSecretFile names, never from a flag or the config file.
   */
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  /**
   * Where the run logs in: --token-url, else the base URL joined with TOKEN_PATH. Set with
   * clientId only (a command without a base URL joins it onto each target it works on).
   */
  tokenUrl?: string;
  /** Seeds all generated data; printed so that --seed replays a run. */
  seed: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Requests in flight at once, at most. */
  concurrency: number;
  /** Requests sent a second, at most (absent: no cap). */
  maxRate?: number;
  /** Largest response body the suite reads. */
  maxBodyBytes: number;
  reportDir?: string;
  /** The report formats written into reportDir, by name (reporters/registry.ts); empty: its defaults. */
  reporters: readonly string[];
  /** Check ids to run (empty: all). */
  checks: readonly string[];
  /** Run only checks whose id or title contains this text. */
  grep?: string;
  /** SHOULD failures fail the run too. */
  strict: boolean;
  /** Most requests sent to one list operation. */
  requestBudget: number;
  /** Records newer than the run's start minus this many seconds stay out of comparisons. */
  timeBufferSeconds: number;
  /**
   * Requests drawn at random from the legal query space for each list operation, and the values
   * drawn for key creation, judged against a model (0: exploration off).
   */
  explore: number;
  /** List checks judge only the exploration's answers, their fixed probes off. */
  exploreOnly: boolean;
  /** The expected default page length (absent: GET /v2/settings page_length, else 25). */
  defaultPageLength?: number;
  /** An absent list operation fails instead of skipping. */
  requireAllEndpoints: boolean;
  /** Each failed result run again alone this many times after the run, to tell a reproduced failure from a flaky one (0: off). */
  replays: number;
  /** Run even when the target answers 404 to every read the contract names (the preflight stops otherwise). */
  allowAll404: boolean;
  /** Run the list checks only on these operations (keys as in results: `orders`, `hierarchies@by-release`). */
  operations: readonly string[];
  /**
   * List operations the vendor declares legitimately empty (--empty, key `empty`): in a
   * certification, the checks an empty list cannot exercise do not block it (reporters/verdict.ts).
   */
  empty: readonly string[];
  /**
   * The store's page length may be changed (PUT /v2/settings) and is restored at the end
   * (suites/list/settings.ts). Default: on against the bundled server, off against a target.
   */
  changeSettings: boolean;
  /** Catalog overrides and additions (file only). */
  catalog: CatalogOverrides;
  /** Where each value came from, for the start-up print. */
  sources: Readonly<Record<string, Source>>;
  configFile?: string;
}

/** A problem with what the user asked for: exit 2 with a one-line message. */
export class ConfigError extends Error {
  readonly code = 'CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const CONFIG_FILE = 'conformance.config.yaml';

/**
 * Where the real platform hands out tokens for client credentials, below the base URL (the
 * contract does not show how a token is obtained: spec/contract/README.md#authentication).
 */
export const TOKEN_PATH = '/oauth/access_token';

/**
 * Requests in flight at most, by default. A ceiling, not a fixed pace: the HTTP client starts
 * at 4 and grows while the target's latency holds, shrinks as it climbs, and every 429 halves
 * it (lib/transport/limiter.ts).
 * Against a target 100 ms away, a run's ~2,400 requests take 4 s at 64 in flight, 30 s at 8.
 */
export const DEFAULT_CONCURRENCY = 64;

/**
 * Requests drawn for each list operation by default (--explore), besides what shrinking a
 * disagreement takes; key creation draws a share of it (suites/create).
 */
export const DEFAULT_EXPLORE = 20;

/** Requests sent to one list operation at most, by default (--request-budget); a certification sends no fewer. */
export const DEFAULT_REQUEST_BUDGET = 1000;

/** Replays of each failed result by default (--replays; cli/replays.ts). */
export const DEFAULT_REPLAYS = 2;

/** The settings a file, the environment or flags may give, by their key (the flag is --KEY): lib/configuration/settings.ts. */
const KEYS = Object.fromEntries(SETTINGS.map((s) => [s.key, { env: s.env, field: s.field }])) as Record<SettingKey, { env: string; field: string }>;

/** Keys of the file that hold mappings rather than single values. */
const FILE_ONLY = ['operations', 'parents'] as const;
type Key = SettingKey;
/** Where a setting came from; `bundle`: a certification bundle's, for its witnessed re-run (cli/verify.ts). */
export type Source = 'default' | 'file' | 'env' | 'flag' | 'bundle';

export type RawSettings = Partial<Record<Key, string | number | boolean>>;

/** Every key with its environment variable, for help texts and tests. */
export const SETTING_KEYS: ReadonlyArray<{ key: string; env: string }> = Object.entries(KEYS).map(([key, { env }]) => ({ key, env }));

/** How an error names a setting: its flag, its variable, or the file and key. */
function labelFor(key: Key, source: Source, file: string): string {
  if (source === 'flag') return `--${key}`;
  if (source === 'env') return KEYS[key].env;
  if (source === 'bundle') return `the bundle's ${key}`;
  return `${file}: ${key}`;
}

function integer(label: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'number' ? value : /^\s*-?\d+\s*$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${label}: must be a whole number from ${min} to ${max} (got '${String(value)}')`);
  return n;
}

function bool(label: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const s = String(value).toLowerCase();
  if (['1', 'true', 'yes'].includes(s)) return true;
  if (['0', 'false', 'no', ''].includes(s)) return false;
  throw new ConfigError(`${label}: must be true or false (got '${String(value)}')`);
}

/** An http(s) URL with no credentials and no fragment; a query only where `query` (a token endpoint's: Azure AD B2C's ?p=policy). */
function baseUrl(label: string, value: unknown, query = false): string {
  const s = String(value).trim();
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new ConfigError(`${label}: must be an absolute http(s) URL (got '${s}')`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${label}: must use http or https (got '${u.protocol}')`);
  if (u.username || u.password) throw new ConfigError(`${label}: must not carry credentials; give the token with --token or CONFORMANCE_TOKEN`);
  if ((u.search && !query) || u.hash) throw new ConfigError(`${label}: must not have a ${query ? 'fragment' : 'query or fragment'}`);
  return s.replace(/\/+$/, '');
}

/** A comma-separated list (flags may repeat; the file may give a YAML list, joined on read). */
function names(value: unknown): string[] {
  return String(value)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

export interface FileSettings {
  raw: RawSettings;
  catalog: CatalogOverrides;
}

const CONFIG_SCHEMA_ID = 'https://conformance.local/spec/config.schema.json';
let configAjv: Ajv2020 | undefined;

/** spec/config.schema.yaml, compiled on the first file read (ajv strict, as lib/contract/schema.ts). */
function configSchema(): Ajv2020 {
  if (!configAjv) {
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
    const { parse: parseYaml } = require('yaml') as { parse: typeof parseYamlType };
    // verbose: an error carries the schema it broke, whose description and properties the
    // message uses ("must be a whole number", did-you-mean among the keys allowed there).
    configAjv = new Ajv({ strict: true, allErrors: true, verbose: true });
    configAjv.addSchema(parseYaml(readFileSync(join(packageRoot, 'spec', 'config.schema.yaml'), 'utf8')) as object);
  }
  return configAjv;
}

/** A JSON pointer as a key path: `/operations/orders/paths` → `operations.orders.paths`. */
function keyPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

/**
 * ajv's errors as one line: each names its key path, an unknown key gets a did-you-mean among
 * the keys allowed there, and a value of the wrong kind says what it must be (the schema's
 * description). Errors inside the branches of an anyOf or oneOf are left out: its own error
 * says what the value must be.
 */
function describeErrors(errors: readonly ErrorObject[], prefix: string): string {
  const lines: string[] = [];
  for (const e of errors) {
    if (/\/(anyOf|oneOf)\/\d+\//.test(e.schemaPath)) continue;
    const at = [prefix, keyPath(e.instancePath)].filter(Boolean).join('.');
    const where = at ? `${at}: ` : '';
    const schema = e.parentSchema as { description?: string; properties?: Record<string, unknown> } | undefined;
    let line: string;
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      line = `${where}unknown key '${key}'${didYouMean(key, Object.keys(schema?.properties ?? {}), (c) => `'${c}'`)}`;
    } else if (e.keyword === 'required' || !schema?.description) {
      line = `${where}${e.message ?? 'is invalid'}`;
    } else {
      // The value is shown, except a secret's: a secret is never printed.
      const secret = SETTINGS.some((s) => s.kind === 'secret' && e.instancePath === `/${s.key}`);
      const scalar = (e.data === null || ['string', 'number', 'boolean'].includes(typeof e.data)) && !secret;
      line = `${where}must be ${schema.description}${scalar ? ` (got ${JSON.stringify(e.data)})` : ''}`;
    }
    if (lines.includes(line)) continue;
    // An unknown key first: it is most often the cause of the errors beside it.
    if (e.keyword === 'additionalProperties') lines.unshift(line);
    else lines.push(line);
  }
  return lines.slice(0, 4).join('; ') + (lines.length > 4 ? `; and ${lines.length - 4} more` : '');
}

/** Why an operation the file adds to the catalog is not one it can add (it needs its paths), or undefined. */
function additionProblem(operations: unknown, knownOperations: readonly string[]): string | undefined {
  const added = configSchema().getSchema(`${CONFIG_SCHEMA_ID}#/$defs/addedOperation`)!;
  for (const [id, entry] of Object.entries((operations ?? {}) as Record<string, unknown>)) {
    if (knownOperations.includes(id) || added(entry)) continue;
    const near = closest(id, knownOperations);
    const hint = near ? `did you mean '${near}', which the catalog has?` : `see 'conformance --list-operations'`;
    return `${describeErrors(added.errors ?? [], `operations.${id}`)} (an operation the catalog does not have is added to it, and needs its paths; ${hint})`;
  }
  return undefined;
}

/**
 * A parent the file gives that no path has as a placeholder (a misspelt name would change
 * nothing, silently), or undefined. The file's own operations' paths count.
 */
function strayParent(doc: Record<string, unknown>, knownPlaceholders: readonly string[]): string | undefined {
  const own = Object.values((doc.operations ?? {}) as Record<string, { paths?: Record<string, unknown> }>).flatMap((o) =>
    Object.values(o?.paths ?? {}).flatMap((p) => (typeof p === 'string' ? [...p.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]!) : [])),
  );
  const known = [...knownPlaceholders, ...own];
  const name = Object.keys((doc.parents ?? {}) as object).find((n) => !known.includes(n));
  return name === undefined ? undefined : `parents.${name}: no path has a {${name}} placeholder${didYouMean(name, known, (c) => `'${c}'`)}`;
}

/**
 * Why catalog overrides, as a report records them (Config.catalog), are not ones a config file
 * can give, or undefined: a bundle's recorded overrides are held to the file's schema before
 * they are trusted (cli/verify.ts).
 */
export function catalogProblem(catalog: unknown, knownOperations: readonly string[]): string | undefined {
  if (catalog === undefined) return undefined;
  if (!catalog || typeof catalog !== 'object' || Array.isArray(catalog)) return 'not a mapping';
  const stray = Object.keys(catalog).find((k) => !(FILE_ONLY as readonly string[]).includes(k));
  if (stray) return `holds '${stray}': only ${FILE_ONLY.join(' and ')}`;
  const whole = configSchema().getSchema(CONFIG_SCHEMA_ID)!;
  if (!whole(catalog)) return describeErrors(whole.errors ?? [], '');
  return additionProblem((catalog as Record<string, unknown>).operations, knownOperations);
}

/**
 * Reads and validates a settings file. `label` names it in errors (the path as the user gave
 * it); `knownOperations` are the catalog's operation ids: an operation of the file that is not
 * one of them is an addition, and must have its paths.
 */
export function readConfigFile(path: string, label: string = path, knownOperations?: readonly string[], knownPlaceholders?: readonly string[]): FileSettings {
  let parsed: unknown;
  try {
    const { parse: parseYaml } = require('yaml') as { parse: typeof parseYamlType };
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read ${label}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return { raw: {}, catalog: {} };
  const ajv = configSchema();
  const whole = ajv.getSchema(CONFIG_SCHEMA_ID)!;
  if (!whole(parsed)) throw new ConfigError(`${label}: ${describeErrors(whole.errors ?? [], '')}`);
  const doc = parsed as Record<string, unknown>;
  const addition = knownOperations ? additionProblem(doc.operations, knownOperations) : undefined;
  if (addition) throw new ConfigError(`${label}: ${addition}`);
  const stray = knownPlaceholders ? strayParent(doc, knownPlaceholders) : undefined;
  if (stray) throw new ConfigError(`${label}: ${stray}`);
  const out: RawSettings = {};
  const catalog: CatalogOverrides = {};
  for (const [k, v] of Object.entries(doc)) {
    if ((FILE_ONLY as readonly string[]).includes(k)) catalog[k as (typeof FILE_ONLY)[number]] = v as never;
    else out[k as Key] = Array.isArray(v) ? v.join(',') : (v as string | number | boolean);
  }
  return { raw: out, catalog };
}

export interface ConfigInput {
  flags: RawSettings;
  env: Record<string, string | undefined>;
  cwd: string;
  /** --config PATH; without it, conformance.config.yaml in cwd when present. */
  configFile?: string;
  checks?: readonly string[];
  grep?: string;
  /** Seed to use when none is given (the caller draws a random one). */
  randomSeed: number;
  operations?: readonly string[];
  /** The catalog's operation ids (spec/list-operations.yaml): the file's others are additions. */
  knownOperations?: readonly string[];
  /** The placeholders of the catalog's paths: a parent the file gives must be one (or one of its own operations'). */
  knownPlaceholders?: readonly string[];
  /**
   * The settings a command reads (cli/settings.ts): any other is left at its default, from
   * whatever layer gives it, so a command is never stopped by a setting it does not use.
   * Absent: every setting (a run).
   */
  only?: readonly SettingKey[];
}

export function resolveConfig(input: ConfigInput): Config {
  const file = input.configFile ? resolve(input.cwd, input.configFile) : resolve(input.cwd, CONFIG_FILE);
  const fileLabel = input.configFile ?? CONFIG_FILE;
  if (input.configFile && !existsSync(file)) throw new ConfigError(`config file not found: ${file}`);
  const fileSettings = existsSync(file) ? readConfigFile(file, fileLabel, input.knownOperations, input.knownPlaceholders) : { raw: {}, catalog: {} };
  const fromFile = fileSettings.raw;
  const fromEnv: RawSettings = {};
  for (const [k, spec] of Object.entries(KEYS)) {
    const v = input.env[spec.env];
    if (v !== undefined && v !== '') fromEnv[k as Key] = v;
  }
  const sources: Record<string, Source> = {};
  const pick = (k: Key): string | number | boolean | undefined => {
    if (input.only && !input.only.includes(k)) {
      sources[k] = 'default';
      return undefined;
    }
    for (const [src, layer] of [
      ['flag', input.flags],
      ['env', fromEnv],
      ['file', fromFile],
    ] as const) {
      if (layer[k] !== undefined) {
        sources[k] = src;
        return layer[k];
      }
    }
    sources[k] = 'default';
    return undefined;
  };
  const raw = Object.fromEntries((Object.keys(KEYS) as Key[]).map((k) => [k, pick(k)])) as RawSettings;
  const at = (k: Key): string => labelFor(k, sources[k] as Source, fileLabel);
  const whole = (k: Key, min: number, max: number, fallback: number): number => (raw[k] !== undefined ? integer(at(k), raw[k], min, max) : fallback);
  const config: Config = {
    ...(raw['base-url'] !== undefined ? { baseUrl: baseUrl(at('base-url'), raw['base-url']) } : {}),
    ...(raw.token !== undefined ? { token: String(raw.token) } : {}),
    seed: whole('seed', 0, 2 ** 31 - 1, input.randomSeed),
    timeoutMs: whole('timeout', 100, 600_000, 10_000),
    concurrency: whole('concurrency', 1, 256, DEFAULT_CONCURRENCY),
    ...(raw['max-rate'] !== undefined ? { maxRate: integer(at('max-rate'), raw['max-rate'], 1, 100_000) } : {}),
    maxBodyBytes: whole('max-body-bytes', 1024, 512 * 1024 * 1024, DEFAULT_MAX_BODY_BYTES),
    ...(raw['report-dir'] !== undefined ? { reportDir: resolve(input.cwd, String(raw['report-dir'])) } : {}),
    reporters: raw.reporter !== undefined ? [...new Set(names(raw.reporter))] : [],
    checks: input.checks ?? [],
    ...(input.grep !== undefined ? { grep: input.grep } : {}),
    strict: raw.strict !== undefined ? bool(at('strict'), raw.strict) : false,
    requestBudget: whole('request-budget', 20, 1_000_000, DEFAULT_REQUEST_BUDGET),
    timeBufferSeconds: whole('time-buffer', 0, 7 * 24 * 3600, 60),
    explore: whole('explore', 0, 10_000, DEFAULT_EXPLORE),
    exploreOnly: raw['explore-only'] !== undefined ? bool(at('explore-only'), raw['explore-only']) : false,
    ...(raw['default-page-length'] !== undefined ? { defaultPageLength: integer(at('default-page-length'), raw['default-page-length'], 1, 100) } : {}),
    requireAllEndpoints: raw['require-all-endpoints'] !== undefined ? bool(at('require-all-endpoints'), raw['require-all-endpoints']) : false,
    allowAll404: raw['allow-all-404'] !== undefined ? bool(at('allow-all-404'), raw['allow-all-404']) : false,
    replays: whole('replays', 0, 10, DEFAULT_REPLAYS),
    operations: input.operations ?? [],
    empty: raw.empty !== undefined ? [...new Set(names(raw.empty))] : [],
    changeSettings: raw['change-settings'] !== undefined ? bool(at('change-settings'), raw['change-settings']) : raw['base-url'] === undefined,
    catalog: fileSettings.catalog,
    sources,
    ...(existsSync(file) ? { configFile: file } : {}),
  };
  const login = credentials(raw, at, { flags: input.flags, file: fromFile, fileLabel, cwd: input.cwd, baseUrl: config.baseUrl, run: !input.only });
  Object.assign(config, login);
  if (config.baseUrl && !config.token && !config.clientId) {
    throw new ConfigError(
      'a target needs a token or client credentials: give --token or set CONFORMANCE_TOKEN (or token in the config file), or --client-id with CONFORMANCE_CLIENT_SECRET or --client-secret-file',
    );
  }
  if (config.token !== undefined && config.token.trim() === '') throw new ConfigError(`${at('token')}: must not be empty`);
  return Object.freeze(config);
}

/** Why a secret is read from the environment or a file only, and how to give it. */
const SECRET_WAYS =
  'set CONFORMANCE_CLIENT_SECRET, or name a file that holds it with --client-secret-file (CONFORMANCE_CLIENT_SECRET_FILE, key client-secret-file)';

/**
 * The client credentials of a run, or none: the id, the secret (from the environment or a file;
 * refused as a flag or a file key), and the token URL (default: the base URL joined with
 * TOKEN_PATH, as every other path is joined). A token and credentials both: refused, as the
 * run could not say which it used.
 */
function credentials(
  raw: RawSettings,
  at: (k: Key) => string,
  given: { flags: RawSettings; file: RawSettings; fileLabel: string; cwd: string; baseUrl: string | undefined; run: boolean },
): Pick<Config, 'clientId' | 'clientSecret' | 'clientSecretFile' | 'tokenUrl'> {
  if (given.flags['client-secret'] !== undefined)
    throw new ConfigError(`--client-secret: refused: a flag shows in process listings and shell history; ${SECRET_WAYS}`);
  if (given.file['client-secret'] !== undefined)
    throw new ConfigError(
      `${given.fileLabel}: client-secret: refused: the file holds a path to the secret (client-secret-file), not the secret; ${SECRET_WAYS}`,
    );
  const id = raw['client-id'] === undefined ? undefined : String(raw['client-id']).trim();
  const file = raw['client-secret-file'] === undefined ? undefined : String(raw['client-secret-file']);
  let secret = raw['client-secret'] === undefined ? undefined : String(raw['client-secret']);
  const tokenUrl = raw['token-url'] === undefined ? undefined : baseUrl(at('token-url'), raw['token-url'], true);
  if (id === undefined) {
    const stray = (['client-secret', 'client-secret-file', 'token-url'] as const).find((k) => raw[k] !== undefined);
    if (stray) throw new ConfigError(`${at(stray)}: goes with a client id (--client-id or CONFORMANCE_CLIENT_ID)`);
    return {};
  }
  if (id === '') throw new ConfigError(`${at('client-id')}: must not be empty`);
  if (raw.token !== undefined)
    throw new ConfigError(`${at('token')} and ${at('client-id')}: give a token or client credentials, not both (the run would not say which it used)`);
  // A run logs in to its target; a command (cleanup) may log in to each target a ledger names.
  if (!given.baseUrl && given.run)
    throw new ConfigError(`${at('client-id')}: client credentials log in to a target: give --base-url too (the bundled server is run with a token of its own)`);
  if (secret !== undefined && file !== undefined)
    throw new ConfigError(`${at('client-secret')} and ${at('client-secret-file')}: give the secret one way, not both`);
  if (file !== undefined) {
    try {
      secret = readFileSync(resolve(given.cwd, file), 'utf8').trim();
    } catch (e) {
      throw new ConfigError(`${at('client-secret-file')}: cannot read ${file} (${(e as { code?: string }).code ?? 'unreadable'})`);
    }
    if (secret === '') throw new ConfigError(`${at('client-secret-file')}: ${file} is empty`);
  }
  if (secret === undefined || secret.trim() === '')
    throw new ConfigError(
      `${at('client-id')}: a client id needs its secret: ${SECRET_WAYS}${secret !== undefined ? ' (CONFORMANCE_CLIENT_SECRET is blank)' : ''}`,
    );
  return {
    clientId: id,
    clientSecret: secret,
    ...(file !== undefined ? { clientSecretFile: resolve(given.cwd, file) } : {}),
    ...(tokenUrl !== undefined || given.baseUrl !== undefined ? { tokenUrl: tokenUrl ?? `${given.baseUrl}${TOKEN_PATH}` } : {}),
  };
}

/** How an error names a resolved setting: `--empty`, `CONFORMANCE_EMPTY` or `<file>: empty`. */
export function settingLabel(c: Config, key: Key): string {
  return labelFor(key, (c.sources[key] as Source | undefined) ?? 'flag', c.configFile ?? CONFIG_FILE);
}

/** The resolved configuration as lines for the start-up print; the token is masked. */
export function describeConfig(c: Config): string[] {
  const row = (label: string, value: string, key?: string): string => `  ${label.padEnd(15)}${value}${key ? `  (${c.sources[key]})` : ''}`;
  return [
    row('target', c.baseUrl ?? 'bundled reference server (loopback, free port)', 'base-url'),
    ...(c.clientId
      ? [
          row('client id', c.clientId, 'client-id'),
          row('client secret', `${MASK} (${c.clientSecretFile ? `from ${c.clientSecretFile}` : 'CONFORMANCE_CLIENT_SECRET'})`),
          row('token url', c.tokenUrl!, 'token-url'),
        ]
      : [row('token', c.token ? MASK : c.baseUrl ? '(none)' : '(generated for this run)', 'token')]),
    row('seed', String(c.seed), 'seed'),
    row('concurrency', String(c.concurrency), 'concurrency'),
    ...(c.maxRate !== undefined ? [row('max rate', `${c.maxRate} requests a second`, 'max-rate')] : []),
    row('timeout', `${c.timeoutMs} ms`, 'timeout'),
    row('strict', String(c.strict), 'strict'),
    row('request budget', `${c.requestBudget} per list operation`, 'request-budget'),
    row('time buffer', `${c.timeBufferSeconds} s (newer records are left out of comparisons)`, 'time-buffer'),
    row('explore', c.explore ? `${c.explore} drawn requests per list operation, and values for key creation (replay with --seed)` : 'off', 'explore'),
    ...(c.exploreOnly ? [row('explore only', "the list checks' fixed probes are off", 'explore-only')] : []),
    row('page length', c.defaultPageLength !== undefined ? String(c.defaultPageLength) : 'GET /v2/settings page_length, else 25', 'default-page-length'),
    ...(c.requireAllEndpoints ? [row('require all', 'absent list operations fail', 'require-all-endpoints')] : []),
    // Said when set: by default the replays say themselves, only when something failed.
    ...(c.sources.replays !== 'default' ? [row('replays', c.replays ? `each failure run again alone ${c.replays} time(s)` : 'off', 'replays')] : []),
    ...(c.allowAll404 ? [row('all 404', 'the checks run even if nothing the contract names is served', 'allow-all-404')] : []),
    ...(c.sources['max-body-bytes'] !== 'default' ? [row('max body', `${c.maxBodyBytes} bytes`, 'max-body-bytes')] : []),
    ...(c.operations.length ? [row('operations', c.operations.join(', '))] : []),
    row(
      'settings',
      c.changeSettings
        ? "the store's page length is changed, then restored (PUT /v2/settings)"
        : "left alone (--change-settings checks the store's page length)",
      'change-settings',
    ),
    ...(c.empty.length ? [row('empty', `${c.empty.join(', ')} (declared empty)`, 'empty')] : []),
    ...(c.catalog.operations || c.catalog.parents
      ? [row('catalog', `overrides: ${Object.keys(c.catalog.operations ?? {}).length} operation(s), ${Object.keys(c.catalog.parents ?? {}).length} parent(s)`)]
      : []),
    ...(c.reportDir ? [row('report dir', c.reportDir, 'report-dir')] : []),
    ...(c.reporters.length ? [row('reporters', c.reporters.join(', '), 'reporter')] : []),
    ...(c.configFile ? [row('config file', c.configFile)] : []),
    ...(c.checks.length ? [row('checks', c.checks.join(', '))] : []),
    ...(c.grep !== undefined ? [row('grep', JSON.stringify(c.grep))] : []),
  ];
}

/** The configuration as data for results.json; the token and the client secret are masked. */
export function maskedConfig(c: Config): Record<string, unknown> {
  const { sources: _sources, token, clientSecret, ...rest } = c;
  return { ...rest, token: token ? MASK : null, ...(clientSecret !== undefined ? { clientSecret: MASK } : {}) };
}
