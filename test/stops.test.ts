// A run against a target that stops answering partway: the run stops in a few lines, writes its
// reports, and cleans up once the target answers again, or names the command that will.
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import type { RunningServer } from '../server/index.js';
import { cli, TOKEN, withServer } from './support.js';

/**
 * A front that forwards the first `answered` requests to `server`, then holds every later one
 * until healed; with `healOnRead`, it heals itself when a held GET /v2/settings comes (the
 * run's cleanup asking whether the target is back).
 */
async function hangingFront(server: RunningServer, answered: number, healOnRead = false) {
  const up = new URL(server.url);
  let n = 0;
  let healed = false;
  const held: ServerResponse[] = [];
  const front = createServer((req, res) => {
    if (++n > answered && !healed) {
      held.push(res);
      req.resume();
      if (healOnRead && req.method === 'GET' && req.url === '/v2/settings') healed = true;
      return;
    }
    const out = request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  onTestFinished(async () => {
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    heal: () => {
      healed = true;
    },
  };
}

/** What the suite created on `server` and has not deleted: keys and Custom APIs named for a run. */
function leftOn(server: RunningServer): number {
  const ours = (name: unknown): boolean => typeof name === 'string' && /conformance-[0-9a-f]{8}-|§|🧪/.test(name);
  return (
    [...server.store.applicationKeys.values()].filter((k) => ours((k as { name?: unknown }).name)).length +
    [...server.store.customApis.values()].filter((c) => ours((c as { name?: unknown }).name)).length
  );
}

it('a target that stops answering after 40 requests: at most 40 lines, the reports written, and a cleanup that waits for it, then names its command', async () => {
  await withServer({ seed: 21 }, async (server) => {
    const front = await hangingFront(server, 40);
    const dir = mkdtempSync(join(tmpdir(), 'conformance-hang-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const r = await cli(['--base-url', front.url, '--timeout', '1000', '--report-dir', dir], { env: { CONFORMANCE_TOKEN: TOKEN } });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const lines = `${r.stdout}${r.stderr}`.trimEnd().split('\n');
    expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(40);
    expect(r.stdout).toMatch(/waiting up to 5 s for the target to answer again, to delete the \d+ thing\(s\) this run created/);
    const run = /deleted once the target answers again by: npx conformance cleanup --run ([0-9a-f]{8})$/m.exec(r.stdout)?.[1];
    expect(run, r.stdout).toBeDefined();
    for (const f of ['results.json', 'junit.xml']) expect(existsSync(join(dir, f))).toBe(true);
    expect((JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { exit: { code: number } }).exit.code).toBe(2);
    // Once the target answers again, the command the run named removes everything it made.
    expect(leftOn(server)).toBeGreaterThan(0);
    front.heal();
    const c = await cli(['cleanup', '--run', run!, '--base-url', front.url], { env: { CONFORMANCE_TOKEN: TOKEN } });
    expect(leftOn(server)).toBe(0);
    // What it cannot look for (a create whose body was not JSON, so its name carries no run id) it lists, and says so.
    for (const line of c.stdout.split('\n').filter((l) => l.includes('left over:')))
      expect(line).toMatch(/never answered its create.*check \/v2\/application-keys by hand/);
  });
}, 120_000);

it('a target that comes back while the run waits for it: the run cleans up itself, nothing left', async () => {
  await withServer({ seed: 22 }, async (server) => {
    const front = await hangingFront(server, 40, true);
    const r = await cli(['--base-url', front.url, '--timeout', '1000'], { env: { CONFORMANCE_TOKEN: TOKEN } });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(/waiting up to 5 s for the target to answer again/);
    expect(r.stdout).toMatch(/Cleanup\n {2}deleted \d+ resource\(s\) this run created and had not deleted; \d left over/);
    expect(leftOn(server)).toBe(0);
  });
}, 120_000);
