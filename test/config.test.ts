import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONCURRENCY, describeConfig, maskedConfig, resolveConfig } from '../lib/config.js';

function dirWith(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-config-'));
  if (yaml !== undefined) writeFileSync(join(dir, 'conformance.config.yaml'), yaml);
  return dir;
}

const base = { flags: {}, env: {}, randomSeed: 99 };

describe('resolveConfig', () => {
  it('takes flags over env over file over defaults', () => {
    const cwd = dirWith('base-url: https://file.example\ntoken: file-token\nconcurrency: 3\ntimeout: 3000\nseed: 5\n');
    const c = resolveConfig({ ...base, cwd, env: { CONFORMANCE_BASE_URL: 'https://env.example', CONFORMANCE_CONCURRENCY: '4' }, flags: { 'base-url': 'https://flag.example/' } });
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
    [{ concurrency: '0' }, /concurrency must be a whole number from 1/],
    [{ seed: 'abc' }, /seed must be a whole number/],
    [{ timeout: '1.5' }, /timeout/],
  ])('refuses %j', (flags, message) => {
    expect(() => resolveConfig({ ...base, cwd: dirWith(), flags })).toThrow(message);
  });

  it('refuses unknown keys in the file, naming them', () => {
    expect(() => resolveConfig({ ...base, cwd: dirWith('baseurl: https://x\n') })).toThrow(/unknown setting 'baseurl'/);
  });

  it('refuses a --config file that does not exist', () => {
    expect(() => resolveConfig({ ...base, cwd: dirWith(), configFile: 'nope.yaml' })).toThrow(ConfigError);
  });

  it('never shows the token', () => {
    const c = resolveConfig({ ...base, cwd: dirWith(), flags: { 'base-url': 'https://x.example', token: 'very-secret-token' } });
    expect(describeConfig(c).join('\n')).not.toContain('very-secret-token');
    expect(JSON.stringify(maskedConfig(c))).not.toContain('very-secret-token');
  });
});
