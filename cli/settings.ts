// The settings of a command other than a run (proxy, judge, merge, cleanup), read through the
// same door as a run's: lib/configuration/settings.ts names them, lib/configuration/config.ts
// resolveConfig reads them from flags, the environment and the config file, with the same bounds
// and the same messages.
import { ConfigError, resolveConfig, settingLabel, type Config, settingFlags, type SettingKey } from '../lib/configuration/index.js';
import { UsageError, type Io } from './io.js';

/**
 * The settings `keys` of `command`, from its parsed flags, the environment and the config file
 * (`--config FILE`, else conformance.config.yaml in the working folder). A bad value, or a
 * reporter the suite does not have, is a usage error of the command.
 */
export async function commandSettings(
  values: Record<string, unknown>,
  io: Io,
  command: string,
  keys: readonly SettingKey[],
  configFile?: string,
): Promise<Config> {
  let config: Config;
  try {
    const { catalogNames } = await import('../lib/contract/index.js');
    config = resolveConfig({
      flags: settingFlags(values),
      env: io.env,
      cwd: io.cwd,
      ...(configFile !== undefined ? { configFile } : {}),
      randomSeed: 0,
      ...catalogNames(),
      only: keys,
    });
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, command);
    throw e;
  }
  if (keys.includes('reporter') && config.reporters.length) {
    const refused = (await import('../reporters/registry.js')).unknownReporter(config.reporters);
    if (refused) throw new UsageError(`${settingLabel(config, 'reporter')}: ${refused}`, command);
  }
  return config;
}
