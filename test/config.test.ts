import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { SETTINGS, ConfigError, DEFAULT_CONCURRENCY, describeConfig, maskedConfig, resolveConfig } from '../lib/configuration/index.js';
import { catalogNames } from '../lib/contract/index.js';
import { DEFAULT_REPORTERS, REPORT_FORMATS } from '../reporters/formats.js';
import { describe, expect, it } from 'vitest';
import { closest } from '../lib/text/index.js';

function dirWith(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-config-'));
  if (yaml !== undefined) writeFileSync(join(dir, 'conformance.config.yaml'), yaml);
  return dir;
}

const base = { flags: {}, env: {}, randomSeed: 99 };

describe('resolveConfig', () => {
  it('takes flags over env over file over defaults', () => {
    const cwd = dirWith('base-url: https://file.example\ntoken: file-token\nconcurrency: 3\ntimeout: 3000\nseed: 5\n');
    const c = resolveConfig({
      ...base,
      cwd,
      env: { CONFORMANCE_BASE_URL: 'https://env.example', CONFORMANCE_CONCURRENCY: '4' },
      flags: { 'base-url': 'https://flag.example/' },
    });
    expect(c.baseUrl).toBe('https://flag.example');
    expect(c.sources['base-url']).toBe('flag');
    expect(c.concurrency).toBe(4);
    expect(c.sources.concurrency).toBe('env');
    expect(c.timeoutMs).toBe(3000);
    expect(c.token).toBe('file-token');
    expect(c.seed).toBe(5);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('uses defaults and the random seed when nothing is given', () => {
    const c = resolveConfig({ ...base, cwd: dirWith() });
    expect(c.baseUrl).toBeUndefined();
    expect(c.seed).toBe(99);
    expect(c.concurrency).toBe(DEFAULT_CONCURRENCY);
    expect(c.timeoutMs).toBe(10_000);
  });

  it.each([
    [{ 'base-url': 'ftp://x' }, /http or https/],
    [{ 'base-url': 'not a url' }, /absolute http/],
    [{ 'base-url': 'https://user:pw@x.example', token: 't' }, /credentials/],
    [{ 'base-url': 'https://x.example' }, /needs a token/],
    [{ concurrency: '0' }, /^--concurrency: must be a whole number from 1/],
    [{ seed: 'abc' }, /^--seed: must be a whole number/],
    [{ timeout: '1.5' }, /^--timeout: /],
    [{ 'max-body-bytes': '10' }, /^--max-body-bytes: must be a whole number from 1024/],
    [{ 'max-rate': '0' }, /^--max-rate: must be a whole number from 1 to 100000 \(got '0'\)/],
    [{ 'max-rate': '2.5' }, /^--max-rate: must be a whole number/],
  ])('refuses %j', (flags, message) => {
    expect(() => resolveConfig({ ...base, cwd: dirWith(), flags })).toThrow(message);
  });

  it('refuses unknown keys in the file, naming them and the key meant', () => {
    expect(() => resolveConfig({ ...base, cwd: dirWith('baseurl: https://x\n') })).toThrow(
      "conformance.config.yaml: unknown key 'baseurl' (did you mean 'base-url'?)",
    );
  });

  it('refuses a --config file that does not exist', () => {
    expect(() => resolveConfig({ ...base, cwd: dirWith(), configFile: 'nope.yaml' })).toThrow(ConfigError);
  });

  it('never shows the token', () => {
    const c = resolveConfig({ ...base, cwd: dirWith(), flags: { 'base-url': 'https://x.example', token: 'very-secret-token' } });
    expect(describeConfig(c).join('\n')).not.toContain('very-secret-token');
    expect(JSON.stringify(maskedConfig(c))).not.toContain('very-secret-token');
  });

  it('takes --max-body-bytes, the one key that had no flag, over the environment', () => {
    const c = resolveConfig({
      ...base,
      cwd: dirWith('max-body-bytes: 4096\n'),
      env: { CONFORMANCE_MAX_BODY_BYTES: '8192' },
      flags: { 'max-body-bytes': '65536' },
    });
    expect(c.maxBodyBytes).toBe(65536);
    expect(c.sources['max-body-bytes']).toBe('flag');
    expect(describeConfig(c).join('\n')).toMatch(/max body +65536 bytes {2}\(flag\)/);
    expect(resolveConfig({ ...base, cwd: dirWith('max-body-bytes: 4096\n') }).maxBodyBytes).toBe(4096);
  });

  it('takes --max-rate from a flag, the environment or the file; absent: no cap', () => {
    expect(resolveConfig({ ...base, cwd: dirWith() }).maxRate).toBeUndefined();
    expect(resolveConfig({ ...base, cwd: dirWith('max-rate: 20\n') }).maxRate).toBe(20);
    const c = resolveConfig({ ...base, cwd: dirWith('max-rate: 20\n'), env: { CONFORMANCE_MAX_RATE: '30' } });
    expect(c.maxRate).toBe(30);
    expect(describeConfig(c).join('\n')).toMatch(/max rate +30 requests a second {2}\(env\)/);
  });

  it('reads the declared-empty operations from a flag, the environment or the file (a list or commas)', () => {
    expect(resolveConfig({ ...base, cwd: dirWith('empty: [catalog-rules, orders]\n') }).empty).toEqual(['catalog-rules', 'orders']);
    expect(resolveConfig({ ...base, cwd: dirWith('empty: catalog-rules\n'), env: { CONFORMANCE_EMPTY: 'files, jobs' } }).empty).toEqual(['files', 'jobs']);
    const c = resolveConfig({ ...base, cwd: dirWith('empty: [orders]\n'), flags: { empty: 'catalog-rules' } });
    expect(c.empty).toEqual(['catalog-rules']);
    expect(c.sources.empty).toBe('flag');
    expect(resolveConfig({ ...base, cwd: dirWith() }).empty).toEqual([]);
  });
});

describe('an error names where the value came from', () => {
  it.each([
    ['a flag', { flags: { timeout: 'abc' } }, "--timeout: must be a whole number from 100 to 600000 (got 'abc')"],
    ['a variable', { env: { CONFORMANCE_TIMEOUT_MS: 'abc' } }, "CONFORMANCE_TIMEOUT_MS: must be a whole number from 100 to 600000 (got 'abc')"],
    ['a variable', { env: { CONFORMANCE_STRICT: 'maybe' } }, "CONFORMANCE_STRICT: must be true or false (got 'maybe')"],
    ['a variable', { env: { CONFORMANCE_BASE_URL: 'ftp://x.example', CONFORMANCE_TOKEN: 't' } }, "CONFORMANCE_BASE_URL: must use http or https (got 'ftp:')"],
    ['the file', { yaml: 'timeout: "5"\n' }, "conformance.config.yaml: timeout: must be a whole number from 100 to 600000 (got '5')"],
  ])('%s', (_, given, message) => {
    const { yaml, ...rest } = given as { yaml?: string };
    expect(() => resolveConfig({ ...base, cwd: dirWith(yaml), ...rest })).toThrow(message);
  });

  it('names a file given with --config as given', () => {
    const cwd = dirWith();
    writeFileSync(join(cwd, 'ci.yaml'), 'concurrency: 0\n');
    expect(() => resolveConfig({ ...base, cwd, configFile: 'ci.yaml' })).toThrow("ci.yaml: concurrency: must be a whole number from 1 to 256 (got '0')");
  });
});

describe('the file is checked against spec/config.schema.yaml', () => {
  const read = (yaml: string) => () => resolveConfig({ ...base, cwd: dirWith(yaml), ...catalogNames() });

  it.each([
    [
      'an added operation without paths',
      'operations:\n  widgets:\n    name: Widgets\n',
      "conformance.config.yaml: operations.widgets: must have required property 'paths'",
    ],
    [
      'a misspelt operation, which reads as an added one',
      'operations:\n  ordres:\n    record: { id: uuid }\n',
      /operations\.ordres: must have required property 'paths' .*did you mean 'orders'/,
    ],
    [
      'an unknown key in an operation',
      'operations:\n  orders:\n    pathz: { default: /v2/orders }\n',
      "conformance.config.yaml: operations.orders: unknown key 'pathz' (did you mean 'paths'?)",
    ],
    [
      'a path without its slash',
      'operations:\n  orders:\n    paths: { default: v2/orders }\n',
      'conformance.config.yaml: operations.orders.paths.default: must be a path starting with / (got "v2/orders")',
    ],
    [
      'an unknown key in a record',
      'operations:\n  orders:\n    record: { created: a.b }\n',
      "operations.orders.record: unknown key 'created' (did you mean 'created_at'?)",
    ],
    [
      'a parent with neither value nor from and field',
      'parents:\n  flowSlug: { from: /v2/flows }\n',
      'conformance.config.yaml: parents.flowSlug: must be a mapping with either value, or from and field',
    ],
    [
      'a parent with both a value and a list',
      'parents:\n  flowSlug: { value: my-flow, from: /v2/flows, field: slug }\n',
      'conformance.config.yaml: parents.flowSlug: must be a mapping with either value, or from and field',
    ],
    [
      'a parent given an empty value',
      'parents:\n  release_id: { value: "" }\n',
      'conformance.config.yaml: parents.release_id.value: must be a string, not empty',
    ],
    [
      'a misspelt parent, which would change nothing',
      'parents:\n  releaseid: { value: latestPublished }\n',
      "conformance.config.yaml: parents.releaseid: no path has a {releaseid} placeholder (did you mean 'release_id'?)",
    ],
    ['a number that is not whole', 'timeout: 1.5\n', 'conformance.config.yaml: timeout: must be a whole number (got 1.5)'],
    ['a list where a mapping goes', 'operations: [orders]\n', 'conformance.config.yaml: operations: must be a mapping'],
    ['a file that is not a mapping', '- base-url\n', 'conformance.config.yaml: must be a mapping of settings'],
  ])('%s: a one-line error with the key path', (_, yaml, message) => {
    let error: unknown;
    try {
      read(yaml)();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain('\n');
    if (typeof message === 'string') expect((error as Error).message).toContain(message);
    else expect((error as Error).message).toMatch(message);
  });

  it('takes what the README shows: an override without paths, an added operation with them, parents', () => {
    const c = read(
      [
        'parents:',
        '  flowSlug: { value: my-flow }',
        '  pricebook_id: { from: /pcm/pricebooks, field: id }',
        'operations:',
        '  orders:',
        '    record: { created_at: attributes.created_at }',
        '  my-list:',
        '    name: Get all Widgets',
        '    paths: { default: /v2/widgets }',
        'empty: [catalog-rules]',
        '',
      ].join('\n'),
    )();
    expect(Object.keys(c.catalog.operations ?? {})).toEqual(['orders', 'my-list']);
    expect(c.catalog.parents?.flowSlug).toEqual({ value: 'my-flow' });
    expect(c.empty).toEqual(['catalog-rules']);
  });

  it('never shows a token of the wrong type', () => {
    expect(read('token: 12345678987654321\n')).toThrow(/^conformance\.config\.yaml: token: must be a string \(quote it[^)]*\)$/);
  });
});

describe('closest (did you mean)', () => {
  it.each([
    ['--reprot-dir', '--report-dir'],
    ['--timout', '--timeout'],
    ['--Strict', '--strict'],
    ['--max-body', '--max-body-bytes'],
    ['--bogus', undefined],
    ['--x', undefined],
  ])('%s → %s', (word, meant) => {
    expect(closest(word, ['--report-dir', '--timeout', '--strict', '--max-body-bytes', '--base-url', '--seed'])).toBe(meant);
  });
});

describe('one list of settings (lib/configuration/settings.ts), and everything that names them agrees with it', () => {
  const root = resolve(import.meta.dirname, '..');
  it('spec/config.schema.yaml has a key for every setting, and for nothing else but the catalog', () => {
    const schema = parseYaml(readFileSync(join(root, 'spec/config.schema.yaml'), 'utf8')) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties).sort()).toEqual([...SETTINGS.map((s) => s.key), 'operations', 'parents'].sort());
  });

  it('docs/usage.md has a row for every setting: its flag, its variable and its key', () => {
    const rows = readFileSync(join(root, 'docs/usage.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('| `--'));
    for (const s of SETTINGS)
      expect(
        rows.some((r) => r.startsWith(`| \`--${s.key}`) && r.includes(`\`${s.env}\` / \`${s.key}\``)),
        s.key,
      ).toBe(true);
  });

  it('the --reporter row of docs/usage.md names the default formats and their files (--help lists them all, from the registry)', () => {
    const row = readFileSync(join(root, 'docs/usage.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `--reporter'))!;
    for (const f of REPORT_FORMATS.filter((x) => DEFAULT_REPORTERS.includes(x.name))) expect(row, f.name).toContain(`\`${f.name}\` (\`${f.file}\`)`);
  });

  it("each setting's variable is read, and its flag parsed: both give the same value", () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-settings-'));
    for (const s of SETTINGS.filter((x) => x.kind === 'whole')) {
      const value =
        s.key === 'default-page-length' ? '37' : s.key === 'timeout' ? '4321' : s.key === 'max-body-bytes' ? '2048' : s.key === 'request-budget' ? '777' : '7';
      const byEnv = resolveConfig({ flags: {}, env: { [s.env]: value }, cwd: dir, randomSeed: 1 }) as unknown as Record<string, unknown>;
      const byFlag = resolveConfig({ flags: { [s.key]: value }, env: {}, cwd: dir, randomSeed: 1 }) as unknown as Record<string, unknown>;
      expect(byEnv[s.field], s.key).toBe(Number(value));
      expect(byFlag[s.field], s.key).toBe(Number(value));
    }
  });
});
