// A real headless Chromium loads a page that calls the reference server through fetch, via
// `conformance proxy`, while Playwright records the traffic as a HAR file. `conformance judge`
// on that file must give the verdicts the proxy gave for the same traffic: the proxy and the HAR
// reader hold the same exchanges to the same rules.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import type { RunReport } from '../reporters/model.js';
import { startReferenceServer } from '../server/index.js';
import { launchChromium } from './browser/chromium.js';
import { startProxy } from './fixtures/proxy.js';
import { TOKEN } from './support.js';
import { READS_SETTLE_MS } from '../suites/delete/custom-api.js';

const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The page: a storefront's admin screen, in a script that calls the API with fetch. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>admin</title><script>
const auth = { authorization: 'Bearer ${TOKEN}' };
const json = { ...auth, 'content-type': 'application/json' };
// Every answer is read, as an application reads them (a body never read is not in the HAR file).
const call = async (path, init) => { const r = await fetch(path, init); await r.text(); return r; };
window.done = (async () => {
  await call('/v2/settings', { headers: auth });
  await call('/v2/accounts?page[limit]=500', { headers: auth });
  await call('/v2/accounts?sort=created_at&page[limit]=4', { headers: auth });
  await call('/v2/accounts?sort=created_at&page[limit]=4&page[offset]=4', { headers: auth });
  await call('/v2/accounts?sort=-updated_at&filter=gt(created_at,2026-01-01T00:00:00.000Z)&page[limit]=6', { headers: auth });
  await call('/v2/application-keys', { method: 'POST', headers: json, body: JSON.stringify({ data: { type: 'application_key', name: 'from the browser' } }) });
  await call('/v2/application-keys', { method: 'POST', headers: json, body: JSON.stringify({ data: { type: 'application_key', name: '' } }) });
  const made = await (await fetch('/v2/settings/extensions/custom-apis', { method: 'POST', headers: json, body: JSON.stringify({ data: { type: 'custom_api', name: 'browser', slug: 'browser-api', api_type: 'browser_api_ext', description: 'made in a page' } }) })).json();
  await call('/v2/settings/extensions/custom-apis/' + made.data.id, { method: 'DELETE', headers: auth });
  // Reads of a deleted id are judged once a store's reads had READS_SETTLE_MS to settle.
  await new Promise((r) => setTimeout(r, ${READS_SETTLE_MS + 100}));
  await call('/v2/settings/extensions/custom-apis/' + made.data.id, { headers: auth });
  await call('/v2/settings/extensions/custom-apis/' + made.data.id, { method: 'DELETE', headers: auth });
  return 'done';
})();
</script>`;

async function recorded(faults: string[]): Promise<{ viaProxy: RunReport & { code: number }; viaHar: RunReport & { code: number } }> {
  const server = await startReferenceServer({ token: TOKEN, seed: 13, records: 30, faults });
  const dir = mkdtempSync(join(tmpdir(), 'conformance-har-'));
  dirs.push(dir);
  try {
    const proxy = await startProxy(server.url);
    const har = join(dir, 'browser.har');
    // A browser of its own: the sandbox's Chromium runs as one process, which closing a context may end.
    const { browser } = await launchChromium();
    const context = await browser.newContext({ recordHar: { path: har, content: 'embed' } });
    const page = await context.newPage();
    // The page itself is served by the browser, on the proxy's origin: its fetches go to the proxy.
    await page.route(`${proxy.address}/admin.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: PAGE }));
    await page.goto(`${proxy.address}/admin.html`);
    expect(await page.evaluate(() => (window as unknown as { done: Promise<string> }).done)).toBe('done');
    await context.close();
    await browser.close().catch(() => undefined);
    const { code, report } = await proxy.stop();
    const lines: string[] = [];
    const harCode = await main(['judge', har, '--report-dir', join(dir, 'out')], {
      out: (l) => lines.push(l),
      err: (l) => lines.push(l),
      env: { NO_COLOR: '1' },
      cwd: dir,
      isTTY: false,
    });
    const viaHar = JSON.parse(readFileSync(join(dir, 'out', 'results.json'), 'utf8')) as RunReport;
    return { viaProxy: { ...report, code }, viaHar: { ...viaHar, code: harCode } };
  } finally {
    await server.close();
  }
}

const verdicts = (r: RunReport): string[] => r.results.map((x) => `${x.id} ${x.operation ?? ''} ${x.outcome}`);
const failed = (r: RunReport): string[] => r.results.filter((x) => x.outcome === 'fail').map((x) => `${x.id}${x.operation ? ` [${x.operation}]` : ''}`);

describe('a HAR file Chromium recorded', () => {
  it('gets the verdicts the proxy gave, on the conforming server and on faults', async () => {
    for (const [faults, expected] of [
      [[], []],
      [['limit-uncapped'], ['list.limit.max [accounts]']],
      [['name-empty-accepted'], ['create.name.empty.rejected']],
      [['delete-soft-reads-find-it'], ['delete.repeat.404']],
    ] as const) {
      const { viaProxy, viaHar } = await recorded([...faults]);
      expect(failed(viaProxy), faults.join()).toEqual(expected);
      expect(verdicts(viaHar), faults.join()).toEqual(verdicts(viaProxy));
      expect(viaHar.code).toBe(viaProxy.code);
      // The traffic was judged, not merely read: rules of every operation the page used passed or failed.
      expect(viaHar.results.filter((x) => x.outcome !== 'skip').length).toBeGreaterThan(15);
    }
  }, 120_000);
});
