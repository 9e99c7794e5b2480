// Installed as a dependency of another project, from the packed tarball: `npx conformance`
// must list and run the whole suite from under node_modules (where vitest's default
// excludes would drop our files if we launched its binary on a path).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDefinitions, expandChecks } from '../suites/index.js';
import { endpointsOf, loadCatalogSpec, CONTRACT_DOCUMENT, contractDigest } from '../lib/contract/index.js';
import { STATEMENTS_FILE } from '../lib/runner/index.js';

const ROOT = resolve(import.meta.dirname, '..');

function sh(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      cmd,
      args,
      { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('installed from the packed tarball', () => {
  let project: string;
  let packDir: string;
  let shipped: string[] = [];

  beforeAll(async () => {
    packDir = mkdtempSync(join(tmpdir(), 'conformance-pack-'));
    const packed = await sh('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir, '--json'], ROOT);
    expect(packed.code, packed.stderr).toBe(0);
    const [{ filename, files }] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    shipped = files.map((f) => f.path);
    project = mkdtempSync(join(tmpdir(), 'conformance-user-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'some-user-project', version: '1.0.0', private: true, type: 'module' }));
    // A user's own vitest config, which must not be picked up by the suite.
    writeFileSync(join(project, 'vitest.config.js'), "throw new Error('the user config must not be loaded');\n");
    const installed = await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(packDir, filename!)], project);
    expect(installed.code, installed.stderr).toBe(0);
  }, 240_000);

  afterAll(() => {
    for (const dir of [project, packDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships the contract documents, every place a clause links to, and the licence', () => {
    expect(shipped).toEqual(expect.arrayContaining(['LICENSE', CONTRACT_DOCUMENT, STATEMENTS_FILE]));
    const links = new Set(checkDefinitions.map((c) => c.clauseLink.split('#')[0]!));
    for (const file of links) expect(shipped, file).toContain(file);
    // Installed, the contract sits where the links say, under the package's own folder.
    const installed = join(project, 'node_modules', 'conformance');
    expect(readFileSync(join(installed, CONTRACT_DOCUMENT), 'utf8')).toBe(readFileSync(join(ROOT, CONTRACT_DOCUMENT), 'utf8'));
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 The conformance authors\n/);
  });

  it('an installed copy gives the same contract digest (the certificate pins the same contract)', async () => {
    const r = await sh(
      process.execPath,
      ['--input-type=module', '-e', "import { contractDigest } from 'conformance'; console.log(contractDigest());"],
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(contractDigest());
  });

  it('imports as a library: the harness and the reference server', async () => {
    writeFileSync(
      join(project, 'use.mjs'),
      "import { checkDefinitions, runCheck } from 'conformance';\nimport { startReferenceServer } from 'conformance/server';\nconsole.log(checkDefinitions.length, typeof runCheck, typeof startReferenceServer);\n",
    );
    const r = await sh(process.execPath, ['use.mjs'], project);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`${checkDefinitions.length} function function`);
  });

  it('npx conformance --list lists every check', async () => {
    const r = await sh('npx', ['--no-install', 'conformance', '--list'], project);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${checkDefinitions.length} checks`);
  });

  it('npx conformance runs the whole suite against the bundled server and exits 0', async () => {
    const eps = endpointsOf(loadCatalogSpec());
    const r = await sh('npx', ['--no-install', 'conformance', '--report-dir', 'out'], project);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(project, 'out', 'results.json'), 'utf8')) as { results: Array<{ outcome: string }> };
    const expected = expandChecks({ endpoints: eps, parents: {}, budget: 1, timeBufferMs: 0, requireAllEndpoints: false, startedAt: 0 });
    expect(report.results).toHaveLength(expected.length);
    expect(report.results.filter((x) => x.outcome === 'fail' || x.outcome === 'error')).toEqual([]);
  }, 120_000);
});
