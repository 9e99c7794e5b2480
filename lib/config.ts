// The run's configuration, resolved once: defaults, then conformance.config.yaml, then
// environment, then flags. It is validated and frozen here; nothing else reads process.env.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { MASK } from './secrets.js';
import type { CatalogOverrides } from './catalog.js';

export interface Config {
  /** The target; absent: the bundled reference server is started on a free loopback port. */
  baseUrl?: string;
  token?: string;
  /** Seeds all generated data; printed so that --seed replays a run. */
  seed: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Requests in flight at once, at most. */
  concurrency: number;
  /** Largest response body the suite reads. */
  maxBodyBytes: number;
  reportDir?: string;
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
  /** The expected default page length (absent: GET /v2/settings page_length, else 25). */
  defaultPageLength?: number;
  /** An absent list operation fails instead of skipping. */
  requireAllEndpoints: boolean;
  /** Run the list checks only on these operations (keys as in results: `orders`, `hierarchies@by-release`). */
  operations: readonly string[];
  /** Catalog overrides and additions (file only). */
  catalog: CatalogOverrides;
  /** Where each value came from, for the start-up print. */
  sources: Readonly<Record<string, 'default' | 'file' | 'env' | 'flag'>>;
  configFile?: string;
}

/** A problem with what the user asked for: exit 2 with a one-line message. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const CONFIG_FILE = 'conformance.config.yaml';

/**
 * Requests in flight at most, by default (issue 9). A ceiling, not a fixed pace: the HTTP client
 * starts at 8 and doubles while no 429 comes, and every 429 halves it (lib/http.ts).
 * Against a target 100 ms away, a run's ~2,400 requests take 4 s at 64 in flight, 30 s at 8.
 */
export const DEFAULT_CONCURRENCY = 64;

/** The settings a file, the environment or flags may give, by their flag name. */
const KEYS = {
  'base-url': { env: 'CONFORMANCE_BASE_URL', field: 'baseUrl' },
  token: { env: 'CONFORMANCE_TOKEN', field: 'token' },
  seed: { env: 'CONFORMANCE_SEED', field: 'seed' },
  timeout: { env: 'CONFORMANCE_TIMEOUT_MS', field: 'timeoutMs' },
  concurrency: { env: 'CONFORMANCE_CONCURRENCY', field: 'concurrency' },
  'max-body-bytes': { env: 'CONFORMANCE_MAX_BODY_BYTES', field: 'maxBodyBytes' },
  'report-dir': { env: 'CONFORMANCE_REPORT_DIR', field: 'reportDir' },
  strict: { env: 'CONFORMANCE_STRICT', field: 'strict' },
  'request-budget': { env: 'CONFORMANCE_REQUEST_BUDGET', field: 'requestBudget' },
  'time-buffer': { env: 'CONFORMANCE_TIME_BUFFER', field: 'timeBufferSeconds' },
  'default-page-length': { env: 'CONFORMANCE_DEFAULT_PAGE_LENGTH', field: 'defaultPageLength' },
  'require-all-endpoints': { env: 'CONFORMANCE_REQUIRE_ALL_ENDPOINTS', field: 'requireAllEndpoints' },
} as const;

/** Keys of the file that hold mappings rather than single values. */
const FILE_ONLY = ['operations', 'parents'] as const;
type Key = keyof typeof KEYS;

export type RawSettings = Partial<Record<Key, string | number | boolean>>;

function integer(key: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'number' ? value : /^\s*-?\d+\s*$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${key} must be a whole number from ${min} to ${max} (got '${String(value)}')`);
  return n;
}

function bool(key: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const s = String(value).toLowerCase();
  if (['1', 'true', 'yes'].includes(s)) return true;
  if (['0', 'false', 'no', ''].includes(s)) return false;
  throw new ConfigError(`${key} must be true or false (got '${String(value)}')`);
}

function baseUrl(value: unknown): string {
  const s = String(value).trim();
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new ConfigError(`base-url must be an absolute http(s) URL (got '${s}')`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`base-url must use http or https (got '${u.protocol}')`);
  if (u.username || u.password) throw new ConfigError('base-url must not carry credentials; give the token with --token or CONFORMANCE_TOKEN');
  if (u.search || u.hash) throw new ConfigError('base-url must not have a query or fragment');
  return s.replace(/\/+$/, '');
}

export interface FileSettings {
  raw: RawSettings;
  catalog: CatalogOverrides;
}

function checkCatalog(path: string, key: string, value: unknown): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${path}: '${key}' must be a mapping`);
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new ConfigError(`${path}: '${key}.${name}' must be a mapping`);
    const e = entry as Record<string, unknown>;
    if (key === 'parents' && !(typeof e.value === 'string' || (typeof e.from === 'string' && typeof e.field === 'string'))) {
      throw new ConfigError(`${path}: 'parents.${name}' needs either value, or from and field`);
    }
    if (key === 'operations' && e.paths !== undefined && (typeof e.paths !== 'object' || Object.values(e.paths as object).some((p) => typeof p !== 'string' || !p.startsWith('/')))) {
      throw new ConfigError(`${path}: 'operations.${name}.paths' must map variant names to paths starting with /`);
    }
  }
}

export function readConfigFile(path: string): FileSettings {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read ${path}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return { raw: {}, catalog: {} };
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`${path} must hold a mapping of settings`);
  const out: RawSettings = {};
  const catalog: CatalogOverrides = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if ((FILE_ONLY as readonly string[]).includes(k)) {
      checkCatalog(path, k, v);
      catalog[k as (typeof FILE_ONLY)[number]] = v as never;
      continue;
    }
    if (!(k in KEYS)) throw new ConfigError(`${path}: unknown setting '${k}' (known: ${[...Object.keys(KEYS), ...FILE_ONLY].join(', ')})`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new ConfigError(`${path}: '${k}' must be a single value`);
    out[k as Key] = v;
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
}

export function resolveConfig(input: ConfigInput): Config {
  const file = input.configFile ? resolve(input.cwd, input.configFile) : resolve(input.cwd, CONFIG_FILE);
  if (input.configFile && !existsSync(file)) throw new ConfigError(`config file not found: ${file}`);
  const fileSettings = existsSync(file) ? readConfigFile(file) : { raw: {}, catalog: {} };
  const fromFile = fileSettings.raw;
  const fromEnv: RawSettings = {};
  for (const [k, spec] of Object.entries(KEYS)) {
    const v = input.env[spec.env];
    if (v !== undefined && v !== '') fromEnv[k as Key] = v;
  }
  const sources: Record<string, 'default' | 'file' | 'env' | 'flag'> = {};
  const pick = (k: Key): string | number | boolean | undefined => {
    for (const [src, layer] of [['flag', input.flags], ['env', fromEnv], ['file', fromFile]] as const) {
      if (layer[k] !== undefined) {
        sources[k] = src;
        return layer[k];
      }
    }
    sources[k] = 'default';
    return undefined;
  };
  const raw = Object.fromEntries((Object.keys(KEYS) as Key[]).map((k) => [k, pick(k)])) as RawSettings;
  const config: Config = {
    ...(raw['base-url'] !== undefined ? { baseUrl: baseUrl(raw['base-url']) } : {}),
    ...(raw.token !== undefined ? { token: String(raw.token) } : {}),
    seed: raw.seed !== undefined ? integer('seed', raw.seed, 0, 2 ** 31 - 1) : input.randomSeed,
    timeoutMs: raw.timeout !== undefined ? integer('timeout', raw.timeout, 100, 600_000) : 10_000,
    concurrency: raw.concurrency !== undefined ? integer('concurrency', raw.concurrency, 1, 256) : DEFAULT_CONCURRENCY,
    maxBodyBytes: raw['max-body-bytes'] !== undefined ? integer('max-body-bytes', raw['max-body-bytes'], 1024, 512 * 1024 * 1024) : 16 * 1024 * 1024,
    ...(raw['report-dir'] !== undefined ? { reportDir: resolve(input.cwd, String(raw['report-dir'])) } : {}),
    checks: input.checks ?? [],
    ...(input.grep !== undefined ? { grep: input.grep } : {}),
    strict: raw.strict !== undefined ? bool('strict', raw.strict) : false,
    requestBudget: raw['request-budget'] !== undefined ? integer('request-budget', raw['request-budget'], 20, 1_000_000) : 1000,
    timeBufferSeconds: raw['time-buffer'] !== undefined ? integer('time-buffer', raw['time-buffer'], 0, 7 * 24 * 3600) : 60,
    ...(raw['default-page-length'] !== undefined ? { defaultPageLength: integer('default-page-length', raw['default-page-length'], 1, 100) } : {}),
    requireAllEndpoints: raw['require-all-endpoints'] !== undefined ? bool('require-all-endpoints', raw['require-all-endpoints']) : false,
    operations: input.operations ?? [],
    catalog: fileSettings.catalog,
    sources,
    ...(existsSync(file) ? { configFile: file } : {}),
  };
  if (config.baseUrl && !config.token) {
    throw new ConfigError('a target needs a token: give --token or set CONFORMANCE_TOKEN (or token in the config file)');
  }
  if (config.token !== undefined && config.token.trim() === '') throw new ConfigError('token must not be empty');
  return Object.freeze(config);
}

/** The resolved configuration as lines for the start-up print; the token is masked. */
export function describeConfig(c: Config): string[] {
  const row = (label: string, value: string, key?: string): string => `  ${label.padEnd(15)}${value}${key ? `  (${c.sources[key]})` : ''}`;
  return [
    row('target', c.baseUrl ?? 'bundled reference server (loopback, free port)', 'base-url'),
    row('token', c.token ? MASK : c.baseUrl ? '(none)' : '(generated for this run)', 'token'),
    row('seed', String(c.seed), 'seed'),
    row('concurrency', String(c.concurrency), 'concurrency'),
    row('timeout', `${c.timeoutMs} ms`, 'timeout'),
    row('strict', String(c.strict), 'strict'),
    row('request budget', `${c.requestBudget} per list operation`, 'request-budget'),
    row('time buffer', `${c.timeBufferSeconds} s (newer records are left out of comparisons)`, 'time-buffer'),
    row('page length', c.defaultPageLength !== undefined ? String(c.defaultPageLength) : 'GET /v2/settings page_length, else 25', 'default-page-length'),
    ...(c.requireAllEndpoints ? [row('require all', 'absent list operations fail', 'require-all-endpoints')] : []),
    ...(c.operations.length ? [row('operations', c.operations.join(', '))] : []),
    ...(c.catalog.operations || c.catalog.parents ? [row('catalog', `overrides: ${Object.keys(c.catalog.operations ?? {}).length} operation(s), ${Object.keys(c.catalog.parents ?? {}).length} parent(s)`)] : []),
    ...(c.reportDir ? [row('report dir', c.reportDir, 'report-dir')] : []),
    ...(c.configFile ? [row('config file', c.configFile)] : []),
    ...(c.checks.length ? [row('checks', c.checks.join(', '))] : []),
    ...(c.grep !== undefined ? [row('grep', JSON.stringify(c.grep))] : []),
  ];
}

/** The configuration as data for results.json; the token is masked. */
export function maskedConfig(c: Config): Record<string, unknown> {
  const { sources: _sources, token, ...rest } = c;
  return { ...rest, token: token ? MASK : null };
}
