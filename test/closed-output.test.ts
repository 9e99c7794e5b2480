// Output piped to a reader that closes early (`| head`) or a terminal that went away
// never crashes the run and never skips its cleanup; the exit code stays the verdict's.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { BIN, listening, started, TOKEN, withServer } from './support.js';

/** Runs the CLI, closes its stdout after the first chunk, and returns its exit code and stderr. */
function runClosingStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

/**
 * Runs the CLI against `url`, sends `signal` `afterMs` after it has printed its settings (its
 * handlers are in place a moment later), and returns its exit code, its output, and how long it
 * took to end once signalled.
 */
function interruptAfter(url: string, afterMs: number, signal: NodeJS.Signals, args: string[] = []): Promise<{ code: unknown; out: string; endedMs: number }> {
  const child = spawn(process.execPath, [BIN, '--base-url', url, ...args], {
    env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let timer: NodeJS.Timeout | undefined;
  let signalledAt = Infinity;
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    if (!timer && out.includes('page length'))
      timer = setTimeout(() => {
        signalledAt = performance.now();
        child.kill(signal);
      }, afterMs);
  });
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, out, endedMs: performance.now() - signalledAt });
    }),
  );
}

describe('interrupted', () => {
  // The checks load while the preflight runs (cli/run.ts); they wait for it. A stop reaches them
  // at the gate whenever it comes (while vitest is created, about 0.3 s from the settings' lines,
  // while its worker loads, or once it waits), and ends the preflight without its answer.
  it.each([100, 800, 2_000])(
    'Ctrl-C %i ms after the settings, against a target that never answers: no check, no wait for the timeout, exit 130',
    async (afterMs) => {
      const seen: string[] = [];
      const server = createServer((req) => void seen.push(`${req.method} ${req.url}`));
      const { url, close } = await listening(server);
      try {
        const { code, out, endedMs } = await interruptAfter(url, afterMs, 'SIGINT', ['--timeout', '30000']);
        expect(code, out).toBe(130);
        expect(endedMs, out).toBeLessThan(5_000);
        expect(seen).toEqual(['GET /v2/settings']);
        expect(out).not.toMatch(/^[✓✗!] /m);
        expect(out).toMatch(/exit 130: interrupted \(Ctrl-C or SIGTERM\) during the preflight: no check ran, nothing was created/);
      } finally {
        await close();
      }
    },
  );

  it.each(['SIGINT', 'SIGTERM'] as const)('%s mid-run: the checks stop, what the run created is deleted, a short report, exit 130', async (signal) => {
    await withServer({ seed: 5 }, async (server) => {
      const { child, out: output, closed } = started(['--base-url', server.url]);
      while (server.store.applicationKeys.size < 3) await new Promise((r) => setTimeout(r, 5));
      child.kill(signal);
      const code = await closed;
      const out = output();
      expect(code, out).toBe(130);
      expect(server.store.applicationKeys.size + server.store.customApis.size).toBe(0);
      expect(out).toMatch(/\d+ check\(s\): INTERRUPTED: the run was stopped before this check finished/);
      expect(out).toMatch(/exit 130: interrupted \(Ctrl-C or SIGTERM\)/);
      expect(out.split('\n').length).toBeLessThan(100);
    });
  });
});
