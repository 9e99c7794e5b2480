// report.html in a real browser (the system's Chromium, else the one @sparticuz/chromium carries;
// test/browser/chromium.ts), driven by playwright-core: it opens from
// a file with no network, the outcome and level filters work, and the summary renders.
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderHtml } from '../reporters/html.js';
import { fixedReport } from './fixtures/report.js';
import { launchChromium } from './browser/chromium.js';

let browser: Browser;

beforeAll(async () => {
  ({ browser } = await launchChromium());
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

it('opens offline, filters by outcome and level, and shows the summary', async () => {
  const report = fixedReport();
  const dir = mkdtempSync(join(tmpdir(), 'conformance-html-'));
  const file = join(dir, 'report.html');
  writeFileSync(file, renderHtml(report));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(file).href);

  // Self-contained: nothing but the file itself was fetched.
  expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
  expect(await page.textContent('#verdict')).toBe(report.exit.reason);
  const visible = async (): Promise<number> => page.locator('tr.result:visible').count();
  expect(await visible()).toBe(report.results.length);
  expect(await page.textContent('#shown')).toBe(`${report.results.length} of ${report.results.length} results shown`);

  // Hide passes: only the other outcomes remain.
  await page.uncheck('input[data-filter="outcome"][value="pass"]');
  const notPassing = report.results.filter((r) => r.outcome !== 'pass').length;
  expect(await visible()).toBe(notPassing);
  expect(await page.locator('tr.result:visible[data-outcome="pass"]').count()).toBe(0);
  expect(await page.locator('td.cell.dim[data-outcome="pass"]').count()).toBe(report.results.filter((r) => r.outcome === 'pass').length);

  // And MUST: what is left is SHOULD/INFO and not a pass.
  await page.uncheck('input[data-filter="level"][value="MUST"]');
  expect(await visible()).toBe(report.results.filter((r) => r.outcome !== 'pass' && r.level !== 'MUST').length);
  expect(await page.locator('tr.mrow:visible[data-level="MUST"]').count()).toBe(0);

  // Back to everything.
  await page.check('input[data-filter="outcome"][value="pass"]');
  await page.check('input[data-filter="level"][value="MUST"]');
  expect(await visible()).toBe(report.results.length);

  // A failure shows its evidence: the request as a command line and expected vs actual.
  const failed = page.locator('tr.result[data-outcome="fail"][data-level="MUST"]').first();
  await expect(failed.locator('details pre').first().textContent()).resolves.toMatch(/^curl -i -X DELETE/);

  const shot = join(dir, 'summary.png');
  await page.locator('header').screenshot({ path: shot });
  expect(statSync(shot).size).toBeGreaterThan(5_000);
  await page.close();
}, 60_000);
