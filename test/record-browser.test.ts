// The published record's index.html in a real browser (test/browser/chromium.ts), from files on
// disk as a host would serve them: it opens with no network, shows each certificate's product,
// version and profile as text (a value written to look like markup stays text), and its links
// lead to files that are there. The record is a fabricated index rendered by reporters/record.ts,
// beside folders laid out as publish lays them out.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderHtml } from '../reporters/html.js';
import { RECORD_FORMAT, renderRecord, renderRecordIndex, type RecordEntry, type RecordIndex } from '../reporters/record.js';
import { fixedReport } from './fixtures/report.js';
import { launchChromium } from './browser/chromium.js';

let browser: Browser;

beforeAll(async () => {
  ({ browser } = await launchChromium());
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

function entry(n: number, over: Partial<RecordEntry>): RecordEntry {
  return {
    product: 'Acme',
    productVersion: '1.0',
    profile: { name: 'full', absent: [], empty: [] },
    date: `2026-0${n}-01T12:00:00.000Z`,
    suiteVersion: '0.1.0',
    suiteDigest: `sha256:${'a'.repeat(64)}`,
    contractDigest: `sha256:${'b'.repeat(64)}`,
    target: { baseUrl: 'https://shop.example', embedded: false },
    runId: `run0000${n}`,
    keySha256: String(n).repeat(64),
    certifiable: true,
    bundle: `bundles/cert-${n}/`,
    ...over,
  };
}

it('opens offline, shows each certificate, and its links lead to the bundle files', async () => {
  const certificates = [
    entry(3, { product: '<img src=x onerror="document.title=1">', productVersion: '3.0' }),
    entry(2, { product: 'Beta', productVersion: '2.1', profile: { name: 'partial', absent: ['orders'], empty: ['catalog-rules', 'promotions'] } }),
    entry(1, { product: null, productVersion: null }),
  ];
  const index: RecordIndex = { format: RECORD_FORMAT, generated: '2026-04-01T00:00:00.000Z', certificates };
  const dir = mkdtempSync(join(tmpdir(), 'conformance-record-page-'));
  for (const c of certificates) {
    mkdirSync(join(dir, c.bundle), { recursive: true });
    writeFileSync(join(dir, c.bundle, 'report.html'), renderHtml(fixedReport()));
    writeFileSync(join(dir, c.bundle, 'certificate.json'), '{}\n');
  }
  writeFileSync(join(dir, 'index.json'), renderRecordIndex(index));
  writeFileSync(join(dir, 'index.html'), renderRecord(index));

  const page = await browser.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(pathToFileURL(join(dir, 'index.html')).href);
  expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
  expect(await page.title()).toBe('Conformance certificates');
  expect(dialogs).toEqual([]);

  const rows = page.locator('tr.certificate');
  expect(await rows.count()).toBe(3);
  const cell = (i: number, name: string): Promise<string | null> => rows.nth(i).locator(`td.${name}`).textContent();
  expect(await cell(0, 'product')).toBe('<img src=x onerror="document.title=1">');
  expect(await cell(0, 'version')).toBe('3.0');
  expect(await cell(0, 'profile')).toBe('full');
  expect(await cell(1, 'product')).toBe('Beta');
  expect(await cell(1, 'version')).toBe('2.1');
  expect(await rows.nth(1).locator('td.profile li').allTextContents()).toEqual(['absent: orders', 'empty: catalog-rules, promotions']);
  expect(await cell(2, 'product')).toBe('(not declared)');
  expect(await page.locator('img').count()).toBe(0);

  // Every link is relative and leads to a file or folder that is there.
  const hrefs = await page.locator('a').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), (a as HTMLAnchorElement).href]));
  expect(hrefs).toHaveLength(1 + certificates.length * 3);
  for (const [raw, resolved] of hrefs) {
    expect(raw).not.toMatch(/^[a-z]+:|^\//);
    expect(existsSync(fileURLToPath(resolved!)), raw!).toBe(true);
  }

  // Followed: the report of a certificate opens.
  await rows.nth(1).locator('a', { hasText: 'report' }).click();
  await page.waitForURL(/\/bundles\/cert-2\/report\.html$/);
  expect(await page.textContent('#verdict')).toBe(fixedReport().exit.reason);
  expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
  await page.close();
}, 60_000);
