// Installed as a dependency of another project, from the packed tarball: `npx conformance`
// must list and run the whole suite from under node_modules (where vitest's default
// excludes would drop our files if we launched its binary on a path).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDefinitions, expandChecks } from '../suites/index.js';
import { endpointsOf, loadCatalogSpec } from '../lib/catalog.js';

const ROOT = resolve(import.meta.dirname, '..');

function sh(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(cmd, args, { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

describe('installed from the packed tarball', () => {
  let project: string;

  beforeAll(async () => {
    const packDir = mkdtempSync(join(tmpdir(), 'conformance-pack-'));
    const packed = await sh('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir, '--json'], ROOT);
    expect(packed.code, packed.stderr).toBe(0);
    const [{ filename }] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
    project = mkdtempSync(join(tmpdir(), 'conformance-user-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'some-user-project', version: '1.0.0', private: true, type: 'module' }));
    // A user's own vitest config, which must not be picked up by the suite.
    writeFileSync(join(project, 'vitest.config.js'), "throw new Error('the user config must not be loaded');\n");
    const installed = await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(packDir, filename!)], project);
    expect(installed.code, installed.stderr).toBe(0);
  }, 240_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('imports as a library: the harness and the reference server', async () => {
    writeFileSync(join(project, 'use.mjs'), "import { checkDefinitions, runCheck } from 'conformance';\nimport { startReferenceServer } from 'conformance/server';\nconsole.log(checkDefinitions.length, typeof runCheck, typeof startReferenceServer);\n");
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
