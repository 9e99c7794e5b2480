// The configuration of a run: every setting once (settings.ts), and the configuration resolved
// from defaults, file, environment and flags, validated and frozen (config.ts). Light on import:
// cli/main.ts loads it for --help, --version and --list; config.ts loads yaml and ajv only to
// read a settings file.
export { listOf, replayWords, settingFlags, settingOptions, SETTINGS, type SettingKey, type SettingSpec } from './settings.js';
export {
  catalogProblem,
  CONFIG_FILE,
  ConfigError,
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_REQUEST_BUDGET,
  describeConfig,
  maskedConfig,
  readConfigFile,
  resolveConfig,
  SETTING_KEYS,
  TOKEN_PATH,
  settingLabel,
  type Config,
  type RawSettings,
} from './config.js';
