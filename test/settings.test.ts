// The store's page length changed and restored (--change-settings, suites/list/settings.ts):
// the checks on the conforming server, its variants and its mutants; nothing changed without
// the flag; the original value back after Ctrl-C, and after a crash through `conformance cleanup`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ledgerPath } from '../lib/runner/index.js';
import { createReferenceHandler, type ReferenceServerOptions } from '../server/index.js';
import { storeChecks } from '../suites/index.js';
import { BIN, byId, cli, endpoints, listening, paginationSettings, runAgainst, TOKEN } from './support.js';

const IDS = storeChecks.map((c) => c.id);
const ONLY = ['--check', IDS.join(',')];

/** The three checks against a reference server built from `options`, the flag on. */
function runSettingsChecks(options: Partial<ReferenceServerOptions>) {
  return runAgainst({ seed: 3, ...options }, storeChecks, {
    changeSettings: true,
    pagination: paginationSettings(endpoints(['accounts', 'orders', 'customers'])),
  });
}

/**
 * A reference server whose every request is counted by method and path, and, once `hold` says
 * so, left unanswered (a run stopped between the change and the restore).
 */
async function watchedServer(hold: (req: IncomingMessage, seen: string[]) => boolean = () => false) {
  const { handler, store } = createReferenceHandler({ token: TOKEN, seed: 3 });
  const seen: string[] = [];
  const held: ServerResponse[] = [];
  let holding = true;
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    if (holding && hold(req, seen)) held.push(res);
    else handler(req, res);
  });
  const l = await listening(server);
  return {
    url: l.url,
    store,
    seen,
    /** From now on every request is answered (those held stay held). */
    release: () => (holding = false),
    close: () => (held.forEach((r) => r.destroy()), l.close()),
  };
}

/** The CLI as a child process; its output gathered; resolves once `until` holds. */
function runChild(args: string[]): { child: ChildProcess; out: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return { child, out: () => out, closed: new Promise((r) => child.on('close', (code) => r(code))) };
}

async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Held once the store's page length has been changed: the next request after the first PUT. */
const afterFirstPut = (req: IncomingMessage, seen: string[]): boolean => seen.slice(0, -1).includes('PUT /v2/settings') && req.method === 'GET';

describe('the checks of the store page length', () => {
  it('pass on the conforming server and restore the original length', async () => {
    const { results, cleanup } = await runSettingsChecks({});
    expect(results.map((r) => `${r.id}: ${r.outcome} ${r.reason ?? ''}`)).toEqual(IDS.map((id) => `${id}: pass `));
    // Restored by the checks themselves: nothing left for the cleanup.
    expect(cleanup.restored).toBeUndefined();
    expect(cleanup.leftovers).toEqual([]);
    expect(results.reduce((n, r) => n + (r.transport?.requests ?? 0), 0)).toBeLessThanOrEqual(3 * 16);
  });

  it.each(['settings-over-100-refused', 'settings-over-100-clamped', 'page-length-40'])('pass on the variant %s', async (variant) => {
    const { results } = await runSettingsChecks({ variants: [variant] });
    expect(results.map((r) => `${r.id}: ${r.outcome} ${r.reason ?? ''}`)).toEqual(IDS.map((id) => `${id}: pass `));
  });

  it('skip, as the contract allows, on a target without a settings endpoint', async () => {
    const { results } = await runSettingsChecks({ variants: ['no-settings-endpoint'] });
    for (const r of results) expect(`${r.outcome} ${r.reason ?? ''}`).toMatch(/^skip .*GET \/v2\/settings answered 404.*as the contract allows/);
  });

  it.each([
    ['settings-ignored', 'list.settings.default-follows'],
    ['settings-override-limit', 'list.settings.limit-overrides'],
    ['settings-over-100-served', 'list.settings.over-100'],
  ])('catch the mutant %s with %s alone', async (fault, id) => {
    const { results } = await runSettingsChecks({ faults: [fault] });
    const by = byId(results);
    for (const other of IDS) expect(by.get(other)?.outcome, `${other}: ${by.get(other)?.reason ?? ''}`).toBe(other === id ? 'fail' : 'pass');
  });
});

describe('--change-settings', () => {
  it('off against a --base-url target: no PUT is sent, and each check skips naming the flag', async () => {
    const server = await watchedServer();
    try {
      const r = await cli(['--base-url', server.url, ...ONLY], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(server.seen.filter((s) => !s.startsWith('GET '))).toEqual([]);
      expect(r.stdout).toMatch(/left alone \(--change-settings/);
      expect(r.stdout.match(/not run: --change-settings is off/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
      expect(server.store.pageLength).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  /** A run with the flag, stopped by `signal` once the store's length is changed and before it is restored. */
  async function stoppedMidway(server: Awaited<ReturnType<typeof watchedServer>>, signal: NodeJS.Signals): Promise<ReturnType<typeof runChild>> {
    const run = runChild(['--base-url', server.url, '--change-settings', ...ONLY, '--seed', '5', '--timeout', '2000']);
    await until(() => server.store.pageLength !== undefined && server.seen.at(-1)?.startsWith('GET ') === true);
    expect(server.store.pageLength).not.toBe(25);
    run.child.kill(signal);
    return run;
  }

  it('Ctrl-C between the change and the restore: the run puts the original back, exit 130', async () => {
    const server = await watchedServer(afterFirstPut);
    try {
      const run = await stoppedMidway(server, 'SIGINT');
      expect(await run.closed, run.out()).toBe(130);
      expect(server.store.pageLength, run.out()).toBe(25);
      // Requests in flight end as they end (here, at the timeout); then the run's cleanup restores the length.
      expect(run.out()).toMatch(/restored page_length 25 \(PUT \/v2\/settings\)/);
    } finally {
      await server.close();
    }
  });

  it('a run killed between the change and the restore: conformance cleanup --run ID restores it from the ledger', async () => {
    const server = await watchedServer(afterFirstPut);
    try {
      const run = await stoppedMidway(server, 'SIGKILL');
      const changed = server.store.pageLength;
      await run.closed;
      server.release();
      expect(server.store.pageLength).toBe(changed);
      const runId = /run ([0-9a-f]{8})/.exec(run.out())?.[1];
      expect(runId, run.out()).toBeTruthy();
      const r = await cli(['cleanup', '--run', runId!], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(`run ${runId} (${server.url}): restored page_length 25 (PUT /v2/settings)`);
      expect(server.store.pageLength).toBe(25);
      expect(existsSync(ledgerPath(runId!))).toBe(false);
    } finally {
      await server.close();
    }
  });
});
