// Cleanup deletes what the ledger holds and nothing else, and lists what it could not delete.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanUp } from '../lib/cleanup.js';
import { Ledger, ledgerPath } from '../lib/ledger.js';
import { bmpTag } from '../lib/run-names.js';
import { BIN, cli, settingsFor, TOKEN, withServer } from './support.js';

it('deletes only ledger entries still outstanding, and reports the ones it could not delete', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    // A second DELETE of what was deleted finds nothing; 'undead' is never really deleted.
    const again = seen.includes(`${req.method} ${req.url}`);
    seen.push(`${req.method} ${req.url}`);
    res.statusCode = req.url?.endsWith('/stuck') ? 500 : req.url?.endsWith('/gone') || (again && !req.url?.endsWith('/undead')) ? 404 : 204;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { settings, dispose } = settingsFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const ledger = new Ledger(settings.ledgerPath);
    const entry = (id: string) => ({ kind: 'application-key' as const, id, name: `conformance-x-${id}`, deletePath: `/v2/application-keys/${id}`, createdBy: 'test' });
    ledger.created(entry('ok'));
    ledger.created(entry('stuck'));
    ledger.created(entry('gone'));
    ledger.created(entry('already-deleted'));
    ledger.deleted('/v2/application-keys/already-deleted');
    ledger.created({ ...entry(''), deletePath: '' });
    ledger.created(entry('undead'));
    const report = await cleanUp(settings);
    expect(seen.sort()).toEqual(['DELETE /v2/application-keys/gone', 'DELETE /v2/application-keys/ok', 'DELETE /v2/application-keys/ok', 'DELETE /v2/application-keys/stuck', 'DELETE /v2/application-keys/undead', 'DELETE /v2/application-keys/undead']);
    expect(report.deleted).toBe(2);
    expect(report.leftovers.map((l) => l.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/answered 500/), expect.stringMatching(/no id/), expect.stringMatching(/undead answered 204, and a second DELETE answered 204: it is still there/)]));
    expect(report.leftovers).toHaveLength(3);
    // A second cleanup finds only the leftovers.
    seen.length = 0;
    await cleanUp(settings);
    expect(seen.sort()).toEqual(['DELETE /v2/application-keys/stuck', 'DELETE /v2/application-keys/undead', 'DELETE /v2/application-keys/undead']);
  } finally {
    dispose();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

describe('after a crash', () => {
  it('a create whose answer never came is found by its exact name when the name carries the run id; any other name is never looked for', async () => {
    await withServer({ seed: 9 }, async (server) => {
      const { settings, dispose } = settingsFor(server.url, { runId: 'a1b2c3d4' });
      try {
        const post = (name: string) => fetch(`${server.url}/v2/application-keys`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ data: { type: 'application_key', name } }) });
        // The run sent these and died before the answers came; the target made them all the same.
        const ours = 'conformance-a1b2c3d4-create.valid.2xx-1';
        const tagged = `${bmpTag('a1b2c3d4')}ééé`;
        for (const name of [ours, tagged, 'k']) expect((await post(name)).status).toBe(201);
        const ledger = new Ledger(settings.ledgerPath);
        for (const name of [ours, tagged, 'k', 'conformance-a1b2c3d4-never-made']) ledger.intend({ kind: 'application-key', name, collection: '/v2/application-keys', createdBy: 'test' });
        const report = await cleanUp(settings);
        const names = [...server.store.applicationKeys.values()].map((k) => k.name);
        expect(names).toEqual(['k']);
        expect(report.deleted).toBe(2);
        expect(report.leftovers.map((l) => `${l.name}: ${l.reason}`)).toEqual([expect.stringMatching(/^k: the target never answered its create .*, and its name does not carry the run id/)]);
        // Reported once, then forgotten: a second cleanup has nothing left to say.
        expect(new Ledger(settings.ledgerPath).open()).toEqual({ created: [], unanswered: [] });
      } finally {
        dispose();
      }
    });
  });

  it('conformance cleanup --run ID deletes what a killed run left, from its ledger', async () => {
    await withServer({ seed: 9 }, async (server) => {
      const child = spawn(process.execPath, [BIN, '--base-url', server.url, '--check', 'create.name.255-chars,create.name.verbatim,create.keys.distinct,delete.unauthenticated.refused'], { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      // Killed (no chance to clean up) as soon as the target holds something the run created.
      while (server.store.applicationKeys.size + server.store.customApis.size === 0) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      const runId = /run ([0-9a-f]{8})/.exec(out)?.[1];
      expect(runId, out).toBeTruthy();
      const r = await cli(['cleanup', '--run', runId!], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`run ${runId} \\(${server.url.replace(/[.]/g, '\\.')}\\): deleted \\d+; 0 left over`));
      expect(server.store.applicationKeys.size + server.store.customApis.size).toBe(0);
      expect(existsSync(ledgerPath(runId!))).toBe(false);
    });
  });
});
