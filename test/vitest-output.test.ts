// vitest's own output (issue: cursor codes under CI): the suite reports through its own reporter
// and the CLI's lines, so vitest's logger writes into sinks that discard
// (lib/vitest/vitest-run.ts). On a terminal, that logger hid and showed the cursor (ESC[?25l,
// ESC[?25h) even under CI=true, where the output must hold no escape sequence at all. What only
// that logger used to say, an unhandled rejection in the main process, reaches the report as a
// suite error instead.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { discardingSink } from '../lib/vitest/index.js';
import { BIN } from './support.js';

const DIST = resolve(import.meta.dirname, '..', 'dist');

/** util-linux `script`, which runs a command on a pseudo-terminal (BSD's takes other flags). */
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

function run(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 90_000 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

function ownDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-vitest-output-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("vitest's own output", () => {
  it('goes to a sink that takes anything and is no terminal', async () => {
    const sink = discardingSink();
    expect((sink as { isTTY?: boolean }).isTTY).toBeFalsy();
    await new Promise<void>((r, j) => sink.write('\u001b[?25l anything', (e) => (e ? j(e) : r())));
  });

  it.skipIf(!hasScript)('CI=true on a pseudo-terminal: the CLI output holds no escape sequence', async () => {
    const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
    const command = `${quote(process.execPath)} ${quote(BIN)} --check delete.existing.204 --seed 5`;
    const r = await run('script', ['-qec', command, '/dev/null'], { CI: 'true' }, ownDir());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/exit 0: every MUST check passed/);
    expect(JSON.stringify(r.stdout.match(/\u001b.{0,6}/g) ?? [])).toBe('[]');
  });

  it('an unhandled rejection in the main process during a run is a suite error in the report, and the run completes', async () => {
    // In a process of its own: the test runner watches this process's unhandled rejections.
    const script = `
      import { runSuite } from ${JSON.stringify(pathToFileURL(join(DIST, 'lib', 'vitest', 'index.js')).href)};
      import { startReferenceServer } from ${JSON.stringify(pathToFileURL(join(DIST, 'server', 'index.js')).href)};
      import { staticChecks } from ${JSON.stringify(pathToFileURL(join(DIST, 'suites', 'index.js')).href)};
      const server = await startReferenceServer({ token: 't0ken-for-this-test' });
      const settings = { baseUrl: server.url, token: 't0ken-for-this-test', seed: 1, runId: 'rej00001', timeoutMs: 5000, maxBodyBytes: 1 << 22, concurrency: 4, ledgerPath: process.argv[1] };
      const run = await runSuite({ settings, checks: staticChecks.filter((c) => c.id === 'delete.existing.204'), onResult: () => { Promise.reject(new Error('nobody caught this')); } });
      await server.close();
      console.log(JSON.stringify({ outcomes: run.results.map((r) => r.outcome), suiteErrors: run.suiteErrors }));
    `;
    const dir = ownDir();
    const r = await run(process.execPath, ['--input-type=module', '-e', script, join(dir, 'ledger.jsonl')], {}, dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { outcomes: string[]; suiteErrors: string[] };
    expect(out.outcomes).toEqual(['pass']);
    expect(out.suiteErrors).toEqual(['unhandled rejection: nobody caught this']);
  });
});
