// Cleanup deletes what the ledger holds and nothing else, and lists what it could not delete.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cleanUp, Ledger, ledgerPath, type LedgerRun, bmpTag } from '../lib/runner/index.js';
import type { RunningServer } from '../server/index.js';
import { BIN, cli, listening, settingsFor, TOKEN, withServer } from './support.js';

it('a token revoked before the cleanup, and a login again refused: said once, and each thing left says why', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(req.url === '/oauth/access_token' ? '{"error":"invalid_client"}' : '{"errors":[{"status":"401","title":"Unauthorized"}]}');
  });
  const { url, close } = await listening(server);
  const login = { tokenUrl: `${url}/oauth/access_token`, clientId: 'the-id', clientSecret: 'the-secret-4f1c', scope: 'cleanup-revoked' };
  const { settings, dispose } = settingsFor(url, { token: 'the-run-token-9d2e', login });
  try {
    const ledger = new Ledger(settings.ledgerPath);
    for (const id of ['a', 'b']) ledger.created({ kind: 'custom-api', id, name: `conformance-x-${id}`, deletePath: `/v2/x/${id}`, createdBy: 'test' });
    const report = await cleanUp(settings);
    expect(report.loginFailed).toMatch(/a new token was needed and the token endpoint refused the client credentials/);
    expect(report.loginFailed).not.toContain('the-secret-4f1c');
    expect(report.leftovers.map((l) => l.reason).sort()).toEqual([
      'DELETE /v2/x/a: not deleted, the cleanup could not log in',
      'DELETE /v2/x/b: not deleted, the cleanup could not log in',
    ]);
    // One login tried for both DELETEs (the form, then HTTP Basic), and none after it failed.
    expect(seen.filter((x) => x === 'POST /oauth/access_token')).toHaveLength(2);
  } finally {
    dispose();
    await close();
  }
});

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
    const entry = (id: string) => ({
      kind: 'application-key' as const,
      id,
      name: `conformance-x-${id}`,
      deletePath: `/v2/application-keys/${id}`,
      createdBy: 'test',
    });
    ledger.created(entry('ok'));
    ledger.created(entry('stuck'));
    ledger.created(entry('gone'));
    ledger.created(entry('already-deleted'));
    ledger.deleted('/v2/application-keys/already-deleted');
    ledger.created({ ...entry(''), deletePath: '' });
    ledger.created(entry('undead'));
    const report = await cleanUp(settings);
    expect(seen.sort()).toEqual([
      'DELETE /v2/application-keys/gone',
      'DELETE /v2/application-keys/ok',
      'DELETE /v2/application-keys/ok',
      'DELETE /v2/application-keys/stuck',
      'DELETE /v2/application-keys/undead',
      'DELETE /v2/application-keys/undead',
    ]);
    // 'ok' deleted; 'gone' answered 404 to the first DELETE: already gone, counted apart.
    expect(report).toMatchObject({ deleted: 1, alreadyGone: 1 });
    expect(report.leftovers.map((l) => l.reason)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/answered 500/),
        expect.stringMatching(/no id/),
        expect.stringMatching(/undead answered 204, and a second DELETE answered 204: it is still there/),
      ]),
    );
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

it('a DELETE answered 204 by a target that keeps what it deletes is no proof: the run lists what is still there, not "0 left over"', async () => {
  await withServer({ seed: 12, faults: ['delete-not-applied'] }, async (server) => {
    const r = await cli(['--base-url', server.url, '--check', 'delete.existing.204,delete.repeat.404,delete.bad-token.refused'], {
      env: { CONFORMANCE_TOKEN: TOKEN },
    });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const held = server.store.customApis.size;
    expect(held).toBeGreaterThan(0);
    expect(r.stdout).not.toMatch(/; 0 left over/);
    expect(r.stdout).toMatch(new RegExp(`${held} left over`));
    expect(r.stdout).toMatch(/it is still there \(the target does not apply deletes\)/);
  });
});

it('a cleanup DELETE whose connection is reset before the answer is sent again (a DELETE applied meanwhile answers 404 and counts as gone)', async () => {
  const tries = new Map<string, number>();
  const gone = new Set<string>();
  const server = createServer((req, res) => {
    const n = (tries.get(req.url!) ?? 0) + 1;
    tries.set(req.url!, n);
    // 'a': the first DELETE is cut off unanswered; 'b': applied, then cut off before the answer.
    if (n === 1 && req.url!.endsWith('/a')) return req.socket.destroy();
    if (n === 1 && req.url!.endsWith('/b')) {
      gone.add(req.url!);
      return req.socket.destroy();
    }
    if (gone.has(req.url!)) return res.writeHead(404).end();
    gone.add(req.url!);
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { settings, dispose } = settingsFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const ledger = new Ledger(settings.ledgerPath);
    for (const id of ['a', 'b'])
      ledger.created({ kind: 'application-key', id, name: `conformance-test0001-${id}`, deletePath: `/v2/application-keys/${id}`, createdBy: 'test' });
    const report = await cleanUp(settings);
    expect(report.leftovers).toEqual([]);
    expect(report.deleted).toBe(2);
    expect(new Ledger(settings.ledgerPath).open().created).toEqual([]);
  } finally {
    dispose();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

it('a create whose answer never came, found by its name but not deleted, stays in the ledger for the next cleanup', async () => {
  let deletes = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          data: [{ id: 'k1', name: 'conformance-test0001-k' }],
          meta: { page: { limit: 100, offset: 0, current: 1, total: 1 }, results: { total: 1 } },
        }),
      );
    } else {
      deletes++;
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { settings, dispose } = settingsFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const ledger = new Ledger(settings.ledgerPath);
    ledger.intend({ kind: 'application-key', name: 'conformance-test0001-k', collection: '/v2/application-keys', createdBy: 'test' });
    const first = await cleanUp(settings);
    expect(first.leftovers.map((l) => l.id)).toEqual(['k1']);
    // Known by id now: the next cleanup sends its DELETE again, with no search by name.
    expect(new Ledger(settings.ledgerPath).open()).toMatchObject({ created: [{ id: 'k1', deletePath: '/v2/application-keys/k1' }], unanswered: [] });
    const before = deletes;
    await cleanUp(settings);
    expect(deletes).toBeGreaterThan(before);
  } finally {
    dispose();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

describe('after a crash', () => {
  it('a create whose answer never came is found by its exact name when the name carries the run id; any other name is never deleted, only reported where something bears it', async () => {
    await withServer({ seed: 9 }, async (server) => {
      const { settings, dispose } = settingsFor(server.url, { runId: 'a1b2c3d4' });
      try {
        const post = (name: string) =>
          fetch(`${server.url}/v2/application-keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ data: { type: 'application_key', name } }),
          });
        // The run sent these and died before the answers came; the target made them all the same.
        const ours = 'conformance-a1b2c3d4-create.valid.2xx-1';
        const tagged = `${bmpTag('a1b2c3d4')}ééé`;
        for (const name of [ours, tagged, 'k']) expect((await post(name)).status).toBe(201);
        const ledger = new Ledger(settings.ledgerPath);
        // 'b' was sent too, and never made: nothing named so, so nothing to report.
        for (const name of [ours, tagged, 'k', 'b', 'conformance-a1b2c3d4-never-made'])
          ledger.intend({ kind: 'application-key', name, collection: '/v2/application-keys', createdBy: 'test' });
        const report = await cleanUp(settings);
        const names = [...server.store.applicationKeys.values()].map((k) => k.name);
        expect(names).toEqual(['k']);
        expect(report.deleted).toBe(2);
        const k = [...server.store.applicationKeys.values()][0]!.id;
        expect(report.leftovers.map((l) => `${l.name}: ${l.reason}`)).toEqual([
          `k: the target never answered its create (the run stopped, or the connection failed), and its name does not carry the run id: /v2/application-keys holds 1 named so (${k}), which may be anyone's; check by hand`,
        ]);
        // Reported once, then forgotten: a second cleanup has nothing left to say.
        expect(new Ledger(settings.ledgerPath).open()).toEqual({ created: [], unanswered: [], settings: [] });
      } finally {
        dispose();
      }
    });
  });

  it('conformance cleanup --run ID deletes what a killed run left, from its ledger', async () => {
    await withServer({ seed: 9 }, async (server) => {
      const child = spawn(
        process.execPath,
        [BIN, '--base-url', server.url, '--check', 'create.name.255-chars,create.name.verbatim,create.keys.distinct,delete.unauthenticated.refused'],
        { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      // Killed (no chance to clean up) as soon as the target holds something the run created.
      while (server.store.applicationKeys.size + server.store.customApis.size === 0) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      const runId = /run ([0-9a-f]{8})/.exec(out)?.[1];
      expect(runId, out).toBeTruthy();
      // The ledger says which process ran it, on which host: cleanup leaves a live one alone.
      expect(new Ledger(ledgerPath(runId!)).run()).toMatchObject({ runId, baseUrl: server.url, pid: child.pid, host: hostname() });
      const r = await cli(['cleanup', '--run', runId!], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`run ${runId} \\(${server.url.replace(/[.]/g, '\\.')}\\): deleted \\d+; 0 left over`));
      expect(server.store.applicationKeys.size + server.store.customApis.size).toBe(0);
      expect(existsSync(ledgerPath(runId!))).toBe(false);
      // Run again (a CI step retried): nothing left, and no error.
      const again = await cli(['cleanup', '--run', runId!], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).toMatch(new RegExp(`run ${runId}: no ledger .*nothing of it is left to delete here`));
    });
  });
});

describe('each run on its own target, and never one in progress', () => {
  /** A folder of the test's own, removed when it ends. */
  function ownDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** A key on `server`, made as a run would have made it. */
  async function keyOn(server: RunningServer, name: string): Promise<string> {
    const res = await fetch(`${server.url}/v2/application-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { type: 'application_key', name } }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { data: { id: string } }).data.id;
  }

  /** A run's ledger under `root` (the TMPDIR the CLI is given), holding one key it did not delete. */
  function ledgerOf(root: string, runId: string, id: string, run?: Partial<LedgerRun>): string {
    const path = join(root, 'conformance', runId, 'ledger.jsonl');
    const ledger = new Ledger(path);
    if (run) ledger.started({ runId, baseUrl: '', startedAt: new Date().toISOString(), ...run });
    ledger.created({ kind: 'application-key', id, name: `conformance-${runId}-k`, deletePath: `/v2/application-keys/${id}`, createdBy: 'test' });
    return path;
  }

  it('asks for the token only when something is left to delete', async () => {
    const root = ownDir('conformance-ledgers-');
    const env = { PATH: process.env.PATH ?? '', TMPDIR: root };
    const nothing = await cli(['cleanup'], { env });
    expect(nothing.code, nothing.stdout + nothing.stderr).toBe(0);
    expect(nothing.stdout).toContain('no run left anything to delete');
    ledgerOf(root, 'eeee0006', '00000000-0000-4000-8000-000000000006', { baseUrl: 'http://127.0.0.1:9' });
    const something = await cli(['cleanup'], { env });
    expect(something.code).toBe(2);
    expect(something.stderr).toContain('cleanup needs the token the run used: --token or CONFORMANCE_TOKEN');
  });

  it('--base-url (flag or environment) picks the runs that ran there and sends nothing elsewhere; a live run and an older ledger are left alone', async () => {
    await withServer({ seed: 1 }, (a) =>
      withServer({ seed: 2 }, async (b) => {
        // Each CLI run gets its own TMPDIR: only these ledgers are there.
        const root = ownDir('conformance-ledgers-');
        const env = { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root };
        const onA = await keyOn(a, 'conformance-aaaa0001-k');
        const onB = await keyOn(b, 'conformance-bbbb0002-k');
        const live = await keyOn(a, 'conformance-cccc0003-k');
        const old = await keyOn(a, 'conformance-dddd0004-k');
        ledgerOf(root, 'aaaa0001', onA, { baseUrl: a.url, pid: 999_999_999, host: hostname() });
        const ofB = ledgerOf(root, 'bbbb0002', onB, { baseUrl: b.url });
        // A run still going: this very test process, on this host.
        const ofLive = ledgerOf(root, 'cccc0003', live, { baseUrl: a.url, pid: process.pid, host: hostname() });
        // An older ledger: no run line, so no target.
        const ofOld = ledgerOf(root, 'dddd0004', old);

        // Neither a target nor a run named, and runs left things on two targets: the one token
        // would go to both, so nothing is sent and the user is asked to name one.
        const both = await cli(['cleanup'], { env });
        expect(both.code, both.stdout + both.stderr).toBe(2);
        expect(both.stderr).toMatch(/runs left things on 2 targets: .*aaaa0001.*bbbb0002.*name one: --base-url URL \(or --run ID\)/);
        expect(a.store.applicationKeys.has(onA) && b.store.applicationKeys.has(onB)).toBe(true);

        const onlyA = await cli(['cleanup', '--base-url', `${a.url}/`], { env });
        expect(onlyA.code, onlyA.stdout + onlyA.stderr).toBe(1);
        expect(onlyA.stdout).toContain(`run aaaa0001 (${a.url}): deleted 1; 0 left over`);
        expect(onlyA.stdout).toContain(`run cccc0003 is still in progress (pid ${process.pid}): not touched`);
        expect(onlyA.stdout).toMatch(/1 run\(s\) against targets other than .* \(--base-url\): not touched/);
        expect(onlyA.stderr).toMatch(/run dddd0004: its ledger does not record which target it ran against: not touched/);
        // B was never sent a request for A's selection, nor A one for B's key: B's ledger stays.
        expect(b.store.applicationKeys.has(onB)).toBe(true);
        expect(existsSync(ofB)).toBe(true);
        expect(a.store.applicationKeys.has(onA)).toBe(false);
        expect([...a.store.applicationKeys.keys()]).toEqual(expect.arrayContaining([live, old]));
        expect(existsSync(ofLive) && existsSync(ofOld)).toBe(true);

        // The environment's base URL selects as the flag does.
        const onlyB = await cli(['cleanup'], { env: { ...env, CONFORMANCE_BASE_URL: b.url } });
        expect(onlyB.stdout).toContain(`run bbbb0002 (${b.url}): deleted 1; 0 left over`);
        expect(b.store.applicationKeys.has(onB)).toBe(false);
        expect(existsSync(ofB)).toBe(false);
        expect(a.store.applicationKeys.has(live) && a.store.applicationKeys.has(old)).toBe(true);

        // The older ledger, on the target the user names for it.
        const named = await cli(['cleanup', '--run', 'dddd0004', '--base-url', a.url], { env });
        expect(named.code, named.stdout + named.stderr).toBe(0);
        expect(a.store.applicationKeys.has(old)).toBe(false);
        expect(a.store.applicationKeys.has(live)).toBe(true);
        expect(existsSync(ofLive)).toBe(true);
      }),
    );
  });

  it('a token the target refuses: one line per run, no delete sent, the ledger kept for another try', async () => {
    await withServer({ seed: 4 }, async (server) => {
      const root = ownDir('conformance-ledgers-');
      const k1 = await keyOn(server, 'conformance-eeee0005-k');
      const k2 = await keyOn(server, 'conformance-ffff0006-k');
      const of1 = ledgerOf(root, 'eeee0005', k1, { baseUrl: server.url, pid: 999_999_999, host: hostname() });
      ledgerOf(root, 'ffff0006', k2, { baseUrl: server.url, pid: 999_999_999, host: hostname() });
      const r = await cli(['cleanup', '--base-url', server.url], { env: { CONFORMANCE_TOKEN: 'not-the-token-9f3e', TMPDIR: root } });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      for (const line of lines)
        expect(line).toMatch(
          /^run (eeee0005|ffff0006) \(http:\/\/127\.0\.0\.1:\d+\): not cleaned \(1 left\): the target refused the token: GET .*\/v2\/settings answered 401/,
        );
      expect(r.stdout + r.stderr).not.toContain('not-the-token-9f3e');
      expect(server.store.applicationKeys.has(k1) && server.store.applicationKeys.has(k2)).toBe(true);
      expect(existsSync(of1)).toBe(true);
      // With the right token, the same command cleans both.
      const ok = await cli(['cleanup', '--base-url', server.url], { env: { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root } });
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(server.store.applicationKeys.has(k1) || server.store.applicationKeys.has(k2)).toBe(false);
    });
  });

  it('--run with a --base-url other than the target its ledger records is refused, naming both, before anything is sent', async () => {
    await withServer({ seed: 1 }, (a) =>
      withServer({ seed: 2 }, async (b) => {
        const root = ownDir('conformance-ledgers-');
        const onB = await keyOn(b, 'conformance-bbbb0005-k');
        const path = ledgerOf(root, 'bbbb0005', onB, { baseUrl: b.url });
        const env = { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root };
        const withFile = ownDir('conformance-cwd-');
        writeFileSync(join(withFile, 'conformance.config.yaml'), `base-url: ${a.url}\n`);
        const ways: Array<[string, string[], Record<string, string>, string | undefined]> = [
          ['--base-url', ['--base-url', a.url], env, undefined],
          ['CONFORMANCE_BASE_URL', [], { ...env, CONFORMANCE_BASE_URL: a.url }, undefined],
          [`${join(withFile, 'conformance.config.yaml')}: base-url`, [], env, withFile],
        ];
        for (const [label, flags, e, cwd] of ways) {
          const r = await cli(['cleanup', '--run', 'bbbb0005', ...flags], { env: e, ...(cwd ? { cwd } : {}) });
          expect(r.code, r.stdout + r.stderr).toBe(2);
          const [line, hint] = r.stderr.trim().split('\n');
          expect(line).toContain(`run bbbb0005 ran against ${b.url}, not ${a.url} (${label})`);
          expect(hint).toBe("Run 'conformance cleanup --help' for usage.");
        }
        expect(b.store.applicationKeys.has(onB)).toBe(true);
        expect(existsSync(path)).toBe(true);
        // Without --base-url, the run is cleaned where it ran.
        const r = await cli(['cleanup', '--run', 'bbbb0005'], { env: { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root } });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(b.store.applicationKeys.has(onB)).toBe(false);
      }),
    );
  });

  it('--run takes a run id, never a path: a folder named by one is not read, not removed, and the refusal says why (exit 2)', async () => {
    await withServer({ seed: 3 }, async (server) => {
      const root = ownDir('conformance-ledgers-');
      // A folder of the user's, with a file named as a ledger and another file beside it.
      const theirs = ownDir('conformance-theirs-');
      const fake = new Ledger(join(theirs, 'ledger.jsonl'));
      fake.started({ runId: 'aaaa0009', baseUrl: server.url, startedAt: new Date().toISOString() });
      writeFileSync(join(theirs, 'notes.txt'), 'keep me');
      for (const run of [join(theirs), `../../${theirs.split('/').pop()}`, 'ABCDEF12', 'aaaa000', 'aaaa0009/..']) {
        const r = await cli(['cleanup', '--run', run], { env: { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root } });
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toContain('--run takes a run id (8 hexadecimal digits');
        expect(r.stdout).toBe('');
      }
      expect(existsSync(join(theirs, 'notes.txt')) && existsSync(join(theirs, 'ledger.jsonl'))).toBe(true);
    });
  });

  it('a ledger whose last line was torn by a crash is read up to the tear, and says so', async () => {
    await withServer({ seed: 5 }, async (server) => {
      const root = ownDir('conformance-ledgers-');
      const k = await keyOn(server, 'conformance-abcd0007-k');
      const path = ledgerOf(root, 'abcd0007', k, { baseUrl: server.url, pid: 999_999_999, host: hostname() });
      writeFileSync(path, `${readFileSync(path, 'utf8')}{"op":"created","kind":"application-key","id":"zz`, { flag: 'w' });
      const r = await cli(['cleanup', '--run', 'abcd0007'], { env: { CONFORMANCE_TOKEN: TOKEN, TMPDIR: root } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toContain('run abcd0007: 1 line(s) of its ledger could not be read (a write cut short): read up to them');
      expect(r.stdout).toContain('deleted 1; 0 left over');
      expect(server.store.applicationKeys.has(k)).toBe(false);
      expect(existsSync(path)).toBe(false);
    });
  });
});
