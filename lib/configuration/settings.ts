// Every setting of a run, once: the key (the flag --KEY and the config file's key), the
// environment variable, the field of the resolved Config, the kind of value, and what it does to
// a run's outcomes. The flag parser, the environment and file readers
// (lib/configuration/config.ts), the replay command a failure carries, and merge's test that shards
// are one run read this list; tests hold --help, docs/usage.md and spec/config.schema.yaml to it.
//
// Order matters once: replay commands name their settings in this order.

export type SettingKind =
  /** A URL (the target). */
  | 'url'
  /** A secret: never printed, never replayed. */
  | 'secret'
  /** A plain string, printed as given (an identifier, not a secret). */
  | 'text'
  /** A whole number (its bounds are lib/configuration/config.ts's). */
  | 'whole'
  /** On when given (--KEY), or true/false in the environment and the file. */
  | 'switch'
  /** Names, comma-separated or repeated (--KEY a,b --KEY c), a YAML list in the file. */
  | 'list'
  /** A folder. */
  | 'path';

export interface SettingSpec {
  key: string;
  env: string;
  /** The field of lib/configuration/config.ts Config (and of the config as results.json records it). */
  field: string;
  kind: SettingKind;
  /**
   * Decides outcomes, so a replay repeats it: for every check ('all'), or for list checks only
   * ('list'). Absent: it changes no outcome (where reports go, how fast the run goes).
   */
  replay?: 'all' | 'list';
  /** Shards that differ in it are not one run: merge refuses them. */
  shards?: boolean;
  /** A switch on by default against the bundled server: a replay names it only against a target (--base-url). */
  onWhenBundled?: boolean;
  /**
   * Read from the environment only: given as a flag or a file key it is refused (a flag shows in
   * process listings and shell history, a file key sits in a file that is shared and committed).
   */
  envOnly?: boolean;
}

export const SETTINGS = [
  { key: 'base-url', env: 'CONFORMANCE_BASE_URL', field: 'baseUrl', kind: 'url' },
  { key: 'token', env: 'CONFORMANCE_TOKEN', field: 'token', kind: 'secret' },
  // Client credentials: the run logs in with them (lib/transport/login.ts) instead of a token.
  { key: 'client-id', env: 'CONFORMANCE_CLIENT_ID', field: 'clientId', kind: 'text' },
  { key: 'client-secret', env: 'CONFORMANCE_CLIENT_SECRET', field: 'clientSecret', kind: 'secret', envOnly: true },
  { key: 'client-secret-file', env: 'CONFORMANCE_CLIENT_SECRET_FILE', field: 'clientSecretFile', kind: 'path' },
  { key: 'token-url', env: 'CONFORMANCE_TOKEN_URL', field: 'tokenUrl', kind: 'url' },
  { key: 'seed', env: 'CONFORMANCE_SEED', field: 'seed', kind: 'whole' },
  { key: 'timeout', env: 'CONFORMANCE_TIMEOUT_MS', field: 'timeoutMs', kind: 'whole', replay: 'all', shards: true },
  { key: 'concurrency', env: 'CONFORMANCE_CONCURRENCY', field: 'concurrency', kind: 'whole' },
  { key: 'max-rate', env: 'CONFORMANCE_MAX_RATE', field: 'maxRate', kind: 'whole' },
  { key: 'max-body-bytes', env: 'CONFORMANCE_MAX_BODY_BYTES', field: 'maxBodyBytes', kind: 'whole', replay: 'all', shards: true },
  { key: 'report-dir', env: 'CONFORMANCE_REPORT_DIR', field: 'reportDir', kind: 'path' },
  { key: 'reporter', env: 'CONFORMANCE_REPORTER', field: 'reporters', kind: 'list' },
  { key: 'request-budget', env: 'CONFORMANCE_REQUEST_BUDGET', field: 'requestBudget', kind: 'whole', replay: 'list', shards: true },
  { key: 'time-buffer', env: 'CONFORMANCE_TIME_BUFFER', field: 'timeBufferSeconds', kind: 'whole', replay: 'list', shards: true },
  { key: 'explore', env: 'CONFORMANCE_EXPLORE', field: 'explore', kind: 'whole', replay: 'all', shards: true },
  { key: 'explore-only', env: 'CONFORMANCE_EXPLORE_ONLY', field: 'exploreOnly', kind: 'switch', replay: 'list', shards: true },
  { key: 'default-page-length', env: 'CONFORMANCE_DEFAULT_PAGE_LENGTH', field: 'defaultPageLength', kind: 'whole', replay: 'list', shards: true },
  { key: 'require-all-endpoints', env: 'CONFORMANCE_REQUIRE_ALL_ENDPOINTS', field: 'requireAllEndpoints', kind: 'switch', replay: 'list', shards: true },
  { key: 'strict', env: 'CONFORMANCE_STRICT', field: 'strict', kind: 'switch', replay: 'all', shards: true },
  { key: 'allow-all-404', env: 'CONFORMANCE_ALLOW_ALL_404', field: 'allowAll404', kind: 'switch' },
  // Not replayed, not a shard's: it labels failures (cli/replays.ts), it changes no outcome.
  { key: 'replays', env: 'CONFORMANCE_REPLAYS', field: 'replays', kind: 'whole' },
  // Not replayed: it changes what certifies, not what a check finds.
  { key: 'empty', env: 'CONFORMANCE_EMPTY', field: 'empty', kind: 'list', shards: true },
  // On by default against the bundled server, off against a target (lib/configuration/config.ts).
  { key: 'change-settings', env: 'CONFORMANCE_CHANGE_SETTINGS', field: 'changeSettings', kind: 'switch', replay: 'all', shards: true, onWhenBundled: true },
] as const satisfies readonly SettingSpec[];

export type SettingKey = (typeof SETTINGS)[number]['key'];

/** The flags of the settings, as node:util parseArgs declares them. */
export function settingOptions(): Record<SettingKey, { type: 'string' | 'boolean'; multiple?: true }> {
  return Object.fromEntries(
    SETTINGS.map((s) => [s.key, s.kind === 'switch' ? { type: 'boolean' } : s.kind === 'list' ? { type: 'string', multiple: true } : { type: 'string' }]),
  ) as Record<SettingKey, { type: 'string' | 'boolean'; multiple?: true }>;
}

/** A list flag given several times or with commas (`--x a,b --x c`): its names, once each, in order. */
export function listOf(given: readonly unknown[] | undefined): string[] {
  return [
    ...new Set(
      (given ?? [])
        .flatMap((x) => String(x).split(','))
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ];
}

/** The settings given as flags, as lib/configuration/config.ts reads them: a list joined with commas, a switch as true. */
export function settingFlags(values: Record<string, unknown>): Partial<Record<SettingKey, string | boolean>> {
  const out: Partial<Record<SettingKey, string | boolean>> = {};
  for (const s of SETTINGS) {
    const v = values[s.key];
    if (v === undefined) continue;
    if (s.kind === 'switch') {
      if (v) out[s.key] = true;
    } else if (Array.isArray(v)) out[s.key] = listOf(v).join(',');
    else out[s.key] = String(v);
  }
  return out;
}

/**
 * The settings a replay of a result repeats, from the config a report recorded: `--KEY value`,
 * or `--KEY` for a switch that was on. `list`: the result is a list check's.
 */
export function replayWords(config: Record<string, unknown>, list: boolean): string[] {
  const words: string[] = [];
  for (const s of SETTINGS as readonly SettingSpec[]) {
    if (!s.replay || (s.replay === 'list' && !list)) continue;
    const v = config[s.field];
    if (s.kind === 'switch') {
      if (v === true && !(s.onWhenBundled && config.baseUrl === undefined)) words.push(`--${s.key}`);
    } else if (typeof v === 'number' || typeof v === 'string') words.push(`--${s.key}`, String(v));
  }
  return words;
}
