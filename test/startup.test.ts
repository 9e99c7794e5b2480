// Start-up: the commands that run no check load none of the heavy modules. Which
// modules a process loads is recorded by test/fixtures/loaded-modules.mjs (a resolve hook for
// ES modules, the require cache for CommonJS); how long it takes is for benches, not tests.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from './support.js';

const ROOT = resolve(import.meta.dirname, '..');
const RECORDER = pathToFileURL(join(ROOT, 'test', 'fixtures', 'loaded-modules.mjs')).href;

/** What only a run of checks needs: vitest, ajv, faker, undici and the reference server. */
const HEAVY: ReadonlyArray<[string, RegExp]> = [
  ['vitest', /\/node_modules\/(vitest|@vitest|vite|rolldown)\//],
  ['ajv', /\/node_modules\/ajv(-formats)?\//],
  ['faker', /\/node_modules\/@faker-js\//],
  ['undici', /\/node_modules\/undici\//],
  ['reference server', /\/dist\/server\//],
];

/** Runs node with `args` and the recorder; the heavy things it loaded, by name. */
function heavyLoadedBy(args: string[]): Promise<{ code: number; stderr: string; heavy: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-modules-'));
  const out = join(dir, 'modules.txt');
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', RECORDER, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LOADED_MODULES_OUT: out }, timeout: 60_000 },
      (err, _stdout, stderr) => {
        const loaded = readFileSync(out, 'utf8')
          .split('\n')
          .map((l) => l.replaceAll('\\', '/'));
        rmSync(dir, { recursive: true, force: true });
        const heavy = HEAVY.filter(([, re]) => loaded.some((m) => re.test(m))).map(([name]) => name);
        done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr, heavy });
      },
    );
  });
}

describe('commands that run no check load nothing heavy', () => {
  it.each([
    [['--version']],
    [['--help']],
    [['serve', '--help']],
    [['merge', '--help']],
    [['cleanup', '--help']],
    [['selftest', '--help']],
    [['traceability', '--help']],
  ])('%j', async (args) => {
    const r = await heavyLoadedBy([BIN, ...args]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.heavy).toEqual([]);
  });

  it('--list loads the check catalogue, but not vitest, ajv, faker, undici or the reference server', async () => {
    const r = await heavyLoadedBy([BIN, '--list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.heavy).toEqual([]);
  });
});

describe('usage errors load nothing heavy either', () => {
  it('a mistyped flag, with its did-you-mean', async () => {
    const r = await heavyLoadedBy([BIN, '--reprot-dir', 'out']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did you mean --report-dir\?/);
    expect(r.heavy).toEqual([]);
  });

  it('a settings file is checked with ajv, loaded then and not before; nothing else heavy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-modules-'));
    const file = join(dir, 'settings.yaml');
    writeFileSync(file, 'concurency: 4\n');
    const r = await heavyLoadedBy([BIN, '--config', file]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown key 'concurency' \(did you mean 'concurrency'\?\)/);
    expect(r.heavy).toEqual(['ajv']);
  });
});

describe('the recorder sees what it must', () => {
  it('ES modules: serve --list-faults loads the reference server and faker', async () => {
    const r = await heavyLoadedBy([BIN, 'serve', '--list-faults']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.heavy).toEqual(expect.arrayContaining(['faker', 'reference server']));
  });

  it('CommonJS required at run time (as lib/contract/schema.ts loads ajv)', async () => {
    const r = await heavyLoadedBy(['-e', "require('ajv/dist/2020.js'); require('undici')"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.heavy).toEqual(['ajv', 'undici']);
  });
});
