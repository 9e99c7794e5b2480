// The official @elasticpath/js-sdk driven through `conformance proxy` in front of the reference
// server: once per variant (a correct server making another allowed choice), where the traffic
// must break no MUST rule and warn only where the variant says; and in front of faults the
// SDK's traffic shows, whose checks must fail.
import { gateway, MemoryStorageFactory } from '@elasticpath/js-sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startReferenceServer } from '../server/index.js';
import { VARIANTS } from '../server/variants.js';
import type { RunReport } from '../reporters/model.js';
import { startProxy } from './fixtures/proxy.js';
import { spawn } from 'node:child_process';
import { BIN, TOKEN } from './support.js';
import { listeningUrl } from '../bench/support.js';
import { READS_SETTLE_MS } from '../suites/delete/custom-api.js';

interface Key {
  client_id: string;
  client_secret: string;
}

beforeAll(() => {
  // The SDK says on the console each time it has no token yet: not this test's output.
  vi.spyOn(console, 'info').mockImplementation(() => undefined);
});
afterAll(() => vi.restoreAllMocks());

/** What a client built on the SDK does: log in, make and read Custom APIs, page, sort, delete, read a deleted one, make a key. */
async function sdkSession(address: string, settle: boolean): Promise<void> {
  const res = await fetch(`${address}/v2/application-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'application_key', name: 'js-sdk-admin' } }),
  });
  const key = ((await res.json()) as { data: Key }).data;
  const ep = gateway({
    client_id: key.client_id,
    client_secret: key.client_secret,
    host: new URL(address).host,
    protocol: 'http',
    storage: new MemoryStorageFactory(),
  } as never);
  await ep.Authenticate();
  const ids: string[] = [];
  for (const name of ['sdk-alpha', 'sdk-beta', 'sdk-gamma']) {
    const made = (await ep.CustomApis.Create({
      type: 'custom_api',
      name,
      slug: name,
      api_type: `${name.replace('-', '_')}_ext`,
      description: 'through the proxy',
      // The SDK's type asks for fields the contract does not (allow_upserts): sent as the contract has it.
    } as never)) as unknown as { data: { id: string } };
    ids.push(made.data.id);
  }
  await ep.CustomApis.All();
  await ep.CustomApis.Sort('-id').All();
  await ep.CustomApis.Sort('id').Limit(1).Offset(1).All();
  await ep.CustomApis.Sort('id').Limit(1).Offset(2).All();
  await ep.CustomApis.Delete(ids[1]!);
  // A read of a deleted id is judged once the store's reads had READS_SETTLE_MS to settle.
  if (settle) await new Promise((r) => setTimeout(r, READS_SETTLE_MS + 100));
  await ep.CustomApis.Get(ids[1]!).catch(() => undefined);
  for (const id of [ids[0]!, ids[2]!]) await ep.CustomApis.Delete(id);
  await ep.ApplicationKeys.Create({ type: 'application_key', name: 'made-by-sdk' } as never);
  await ep.ApplicationKeys.All();
}

async function sdkThroughProxy(options: { variants?: string[]; faults?: string[] }): Promise<RunReport & { code: number }> {
  const server = await startReferenceServer({ token: TOKEN, seed: 11, ...options });
  try {
    const proxy = await startProxy(server.url);
    await sdkSession(
      proxy.address,
      (options.faults ?? []).some((f) => f.startsWith('delete-')),
    );
    const { code, report } = await proxy.stop();
    return { ...report, code };
  } finally {
    await server.close();
  }
}

const failures = (r: RunReport, level?: string): string[] =>
  r.results.filter((x) => x.outcome === 'fail' && (level === undefined || x.level === level)).map((x) => `${x.id}${x.operation ? ` [${x.operation}]` : ''}`);

describe('@elasticpath/js-sdk through conformance proxy, in front of `conformance serve`', () => {
  it("the CLI's own server and proxy, each a process of its own: no rule broken", async () => {
    const server = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--token', TOKEN, '--seed', '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await listeningUrl(server);
      const proxy = spawn(process.execPath, [BIN, 'proxy', '--upstream', url, '--port', '0'], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      let printed = '';
      proxy.stdout!.on('data', (d: Buffer) => (printed += d.toString()));
      const exited = new Promise<number | null>((resolve) => proxy.once('exit', (code) => resolve(code)));
      while (!/conformance proxy: http:\/\/\S+/.test(printed)) await new Promise((r) => setTimeout(r, 20));
      await sdkSession(/conformance proxy: (http:\/\/\S+)/.exec(printed)![1]!, false);
      proxy.kill('SIGTERM');
      expect(await exited, printed).toBe(0);
      expect(printed).toMatch(/every MUST check passed|no MUST check failed/);
    } finally {
      server.kill();
    }
  }, 60_000);
});

describe('@elasticpath/js-sdk through conformance proxy', () => {
  it('the conforming server and every variant: no MUST rule broken, SHOULD warnings only where the variant declares them', async () => {
    for (const v of [undefined, ...VARIANTS]) {
      const r = await sdkThroughProxy(v ? { variants: [v.name] } : {});
      expect(failures(r, 'MUST'), v?.name ?? 'conforming').toEqual([]);
      for (const f of r.results.filter((x) => x.outcome === 'fail')) expect(v?.warns ?? [], `${v?.name ?? 'conforming'}: ${f.id} ${f.reason}`).toContain(f.id);
      expect(r.code, v?.name).toBe(0);
      // The traffic exercised rules of every operation the SDK touched.
      expect(r.results.filter((x) => x.outcome === 'pass').map((x) => x.id)).toEqual(
        expect.arrayContaining(['delete.existing.204', 'create.keys.distinct', 'list.page.arithmetic']),
      );
    }
  }, 120_000);

  it("a fault the SDK's traffic shows fails its check", async () => {
    for (const [fault, check] of [
      ['delete-200-with-body', 'delete.existing.204'],
      ['delete-soft-reads-find-it', 'delete.repeat.404'],
      ['create-repeated-secret', 'create.keys.distinct'],
      ['page-total-in-records', 'list.page.arithmetic [custom-apis]'],
    ] as const) {
      const r = await sdkThroughProxy({ faults: [fault] });
      expect(failures(r), fault).toContain(check);
    }
  }, 60_000);
});
