// Issue 8: output piped to a reader that closes early (`| head`) or a terminal that went away
// never crashes the run and never skips its cleanup; the exit code stays the verdict's.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, TOKEN, withServer } from './support.js';

/** Runs the CLI, closes its stdout after the first chunk, and returns its exit code and stderr. */
function runClosingStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('closed output', () => {
  it('a reader that closes stdout early: no crash, the verdict as exit code, everything the run created deleted', async () => {
    await withServer({ seed: 5 }, async (server) => {
      const r = await runClosingStdout(['--base-url', server.url, '--check', 'create.valid.2xx,create.keys.distinct,create.name.verbatim,delete.existing.204']);
      expect(r.stderr).not.toMatch(/EPIPE|Error:/);
      expect(r.code).toBe(0);
      expect(server.store.applicationKeys.size).toBe(0);
      expect(server.store.customApis.size).toBe(0);
    });
  });

  it('the same for a failing run: exit 1 still', async () => {
    await withServer({ seed: 5, faults: ['delete-not-applied'] }, async (server) => {
      const r = await runClosingStdout(['--base-url', server.url, '--check', 'delete.repeat.404,create.valid.2xx']);
      expect(r.stderr).not.toMatch(/EPIPE|Error:/);
      expect(r.code).toBe(1);
      expect(server.store.applicationKeys.size).toBe(0);
    });
  });
});

describe('interrupted', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s mid-run: the checks stop, what the run created is deleted, a short report, exit 130', async (signal) => {
    await withServer({ seed: 5 }, async (server) => {
      const child = spawn(process.execPath, [BIN, '--base-url', server.url], { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      while (server.store.applicationKeys.size < 3) await new Promise((r) => setTimeout(r, 5));
      child.kill(signal);
      const code = await new Promise((r) => child.on('close', r));
      expect(code, out).toBe(130);
      expect(server.store.applicationKeys.size + server.store.customApis.size).toBe(0);
      expect(out).toMatch(/\d+ check\(s\): INTERRUPTED: the run was stopped before this check finished/);
      expect(out).toMatch(/exit 130: interrupted \(Ctrl-C or SIGTERM\)/);
      expect(out.split('\n').length).toBeLessThan(100);
    });
  });
});
