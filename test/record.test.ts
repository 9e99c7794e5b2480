// `conformance publish`: only bundles that verify go into the record; a tampered bundle or one
// signed by another key is refused and named; the copies still verify; publishing again adds
// to the record; a folder that is not a record is left alone. Two certification runs against
// the bundled reference server (the built CLI, as a vendor runs it) make the bundles; publish
// runs in-process.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import { readBundle, thisSuite, DEFAULT_WINDOW } from '../cli/verify.js';
import { SCHEMA, validate } from '../lib/contract/index.js';
import { checkBundle } from '../reporters/bundle-check.js';
import { verifyingKey } from '../reporters/attestation.js';
import { bundleName, mergeRecord, readRecordIndex, renderRecord, RECORD_FORMAT, type RecordEntry, type RecordIndex } from '../reporters/record.js';
import { cli } from './support.js';

interface Said {
  code: number;
  out: string[];
  err: string[];
}

let work: string;

async function run(args: string[]): Promise<Said> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, cwd: work, isTTY: false };
  return { code: await main(args, io), out, err };
}

const readIndex = (dir: string): RecordIndex => JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as RecordIndex;
const fresh = (name: string): string => join(mkdtempSync(join(work, `${name}-`)), 'record');

/** Bundle A: Acme 5.1 signed by key one; bundle B: Beta 2.0 signed by key two. */
const A = { product: 'Acme <Shop> & Co', version: '5.1' };
const B = { product: 'Beta', version: '2.0' };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'conformance-record-'));
  for (const k of ['one', 'two', 'other']) expect((await run(['keygen', '--out', k])).code).toBe(0);
  // The bundled server keeps catalog-rules empty: declared, both runs certify (a partial profile).
  const certify = (dir: string, key: string, p: { product: string; version: string }) =>
    cli(['--certify', join(work, dir), '--signing-key', join(work, key), '--empty', 'catalog-rules', '--product', p.product, '--product-version', p.version]);
  const [a, b] = await Promise.all([certify('a', 'one.key', A), certify('b', 'two.key', B)]);
  expect(a.code, a.stdout + a.stderr).toBe(0);
  expect(b.code, b.stdout + b.stderr).toBe(0);
}, 90_000);

describe('conformance publish', () => {
  it('publishes a verified bundle: index.json by its schema, index.html, a copy that still verifies', async () => {
    const out = fresh('one');
    const r = await run(['publish', 'a', '--out', out, '--key', 'one.pub']);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out.at(-1)).toMatch(/^record written to .*: index\.html and index\.json, 1 certificate\(s\), 1 published now$/);

    const index = readIndex(out);
    expect(validate(SCHEMA.record, index)).toEqual([]);
    expect(index.format).toBe(RECORD_FORMAT);
    const certificate = JSON.parse(readFileSync(join(work, 'a', 'certificate.json'), 'utf8')) as Record<string, unknown>;
    const key = verifyingKey(readFileSync(join(work, 'one.pub'), 'utf8'));
    expect(index.certificates).toEqual([
      {
        product: A.product,
        productVersion: A.version,
        profile: { name: 'partial', absent: [], empty: ['catalog-rules'] },
        date: certificate.finishedAt,
        suiteVersion: (certificate.suite as string).replace(/^conformance /, ''),
        suiteDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        contractDigest: certificate.contractDigest,
        target: { baseUrl: 'bundled reference server', embedded: true },
        runId: certificate.runId,
        keySha256: key.hint,
        certifiable: true,
        bundle: `bundles/Acme-Shop-Co-5.1-${certificate.runId as string}/`,
      },
    ]);

    // The copy is the bundle byte for byte, and verifies where it is.
    const copy = join(out, index.certificates[0]!.bundle);
    const original = readBundle(join(work, 'a'));
    const copied = readBundle(copy);
    expect([...copied.keys()]).toEqual([...original.keys()]);
    for (const [name, body] of original) expect(copied.get(name)!.equals(body), name).toBe(true);
    expect(checkBundle(copied, thisSuite(DEFAULT_WINDOW), { key, strict: false }).exit).toBe(0);

    // The page: every value escaped, the links relative, nothing secret.
    const page = readFileSync(join(out, 'index.html'), 'utf8');
    expect(page).toContain('Acme &lt;Shop&gt; &amp; Co');
    expect(page).not.toContain('<Shop>');
    expect(page).toContain(`href="${index.certificates[0]!.bundle}report.html"`);
    expect(page).toContain(`sha256:${key.hint}`);
    expect(page).not.toMatch(/PRIVATE KEY|BEGIN PUBLIC KEY/);
  });

  it('refuses a tampered bundle, naming it and what changed (exit 1), and publishes the others', async () => {
    const tampered = join(work, 'tampered');
    cpSync(join(work, 'a'), tampered, { recursive: true });
    const results = join(tampered, 'results.json');
    writeFileSync(results, readFileSync(results, 'utf8').replace(/"durationMs": \d+/, '"durationMs": 1'));
    const out = fresh('tampered');
    const r = await run(['publish', 'tampered', 'b', '--out', out, '--key', 'two.pub', '--key', 'one.pub']);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([expect.stringMatching(/^conformance publish: refused tampered \(not valid\): results\.json: changed after signing/)]);
    const index = readIndex(out);
    expect(index.certificates.map((c) => c.product)).toEqual([B.product]);
    expect(existsSync(join(out, 'index.html'))).toBe(true);
  });

  it('refuses a bundle no key given verifies, and writes nothing when none verified (exit 1)', async () => {
    const out = fresh('wrong-key');
    const r = await run(['publish', 'a', '--out', out, '--key', 'other.pub']);
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(
      /^conformance publish: refused a \(not valid\): attestation\.json dsseEnvelope\.signatures: the signature does not verify with the key given/,
    );
    expect(r.err[1]).toMatch(/no bundle verified: nothing published/);
    expect(existsSync(out)).toBe(false);
  });

  it('publishing again adds to the record: entries kept, newest first, the same certificate replaced in its folder', async () => {
    const out = fresh('again');
    expect((await run(['publish', 'a', '--out', out, '--key', 'one.pub'])).code).toBe(0);
    const first = readIndex(out).certificates[0]!;
    // Several keys: each bundle is published under the key that verifies it.
    const r = await run(['publish', 'b', '--out', out, '--key', 'one.pub', '--key', 'two.pub']);
    expect(r.code, r.err.join('\n')).toBe(0);
    const second = readIndex(out);
    expect(second.certificates).toHaveLength(2);
    expect(second.certificates).toContainEqual(first);
    const dates = second.certificates.map((c) => Date.parse(c.date));
    expect(dates).toEqual([...dates].sort((x, y) => y - x));
    const two = verifyingKey(readFileSync(join(work, 'two.pub'), 'utf8'));
    expect(second.certificates.find((c) => c.product === B.product)!.keySha256).toBe(two.hint);

    // The same bundle again: its entry and folder replaced, not doubled.
    expect((await run(['publish', 'a', '--out', out, '--key', 'one.pub'])).code).toBe(0);
    const third = readIndex(out);
    expect(third.certificates).toEqual(second.certificates);
    expect(third.generated >= second.generated).toBe(true);
    expect(validate(SCHEMA.record, third)).toEqual([]);
    const page = readFileSync(join(out, 'index.html'), 'utf8');
    expect(page.match(/<tr class="certificate"/g)).toHaveLength(2);
  });

  it('leaves a folder that is not a record alone (exit 2)', async () => {
    const notOurs = fresh('not-ours');
    mkdirSync(notOurs, { recursive: true });
    writeFileSync(join(notOurs, 'index.json'), '{"certificates": "mine"}');
    const r = await run(['publish', 'a', '--out', notOurs, '--key', 'one.pub']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^conformance publish: --out .* holds an index\.json that is not a conformance-record\/v1 index .*: not a record publish wrote; nothing written$/,
      ),
    ]);
    expect(readFileSync(join(notOurs, 'index.json'), 'utf8')).toBe('{"certificates": "mine"}');
    expect(existsSync(join(notOurs, 'index.html'))).toBe(false);

    const site = fresh('site');
    mkdirSync(site, { recursive: true });
    writeFileSync(join(site, 'index.html'), 'my own page');
    const s = await run(['publish', 'a', '--out', site, '--key', 'one.pub']);
    expect(s.code).toBe(2);
    expect(s.err[0]).toMatch(/holds files but no index\.json/);
    expect(readFileSync(join(site, 'index.html'), 'utf8')).toBe('my own page');
  });

  it('usage: no --key, an unreadable bundle, no bundle (exit 2)', async () => {
    const noKey = await run(['publish', 'a', '--out', fresh('no-key')]);
    expect(noKey).toEqual({
      code: 2,
      out: [],
      err: [expect.stringMatching(/^conformance: --key is needed: a record holds verified certificates only/), "Run 'conformance publish --help' for usage."],
    });
    const missing = await run(['publish', 'a', 'no-such-bundle', '--out', fresh('missing'), '--key', 'one.pub']);
    expect(missing.code).toBe(2);
    expect(missing.err).toEqual([
      'conformance publish: cannot read the bundle no-such-bundle (ENOENT): a bundle is the folder --certify wrote; nothing written',
    ]);
    expect((await run(['publish', '--out', 'x', '--key', 'one.pub'])).err[0]).toMatch(/^conformance: which bundles\?/);
    const help = await run(['publish', '--help']);
    expect(help.code).toBe(0);
    expect(help.out[0]).toMatch(/^Usage: conformance publish BUNDLE\.\.\. --out DIR --key PUBLIC\.pem/);
  });
});

/** A certificate as index.json holds it, for the pure functions. */
function entry(over: Partial<RecordEntry> = {}): RecordEntry {
  return {
    product: 'Acme',
    productVersion: '1.0',
    profile: { name: 'full', absent: [], empty: [] },
    date: '2026-01-02T03:04:05.000Z',
    suiteVersion: '0.1.0',
    suiteDigest: `sha256:${'a'.repeat(64)}`,
    contractDigest: `sha256:${'b'.repeat(64)}`,
    target: { baseUrl: 'https://shop.example', embedded: false },
    runId: '0000abcd',
    keySha256: 'c'.repeat(64),
    certifiable: true,
    bundle: 'bundles/Acme-1.0-0000abcd/',
    ...over,
  };
}

describe('the record, as data', () => {
  it('folder names are safe, never . or .., and unique', () => {
    expect(bundleName({ product: '../../etc', productVersion: '1/2', runId: 'ab' }, new Set())).toBe('etc-1-2-ab');
    expect(bundleName({ product: null, productVersion: null, runId: '..' }, new Set())).toBe('product-unversioned-run');
    expect(bundleName({ product: 'Acme', productVersion: '1.0', runId: 'x' }, new Set(['Acme-1.0-x', 'Acme-1.0-x-2']))).toBe('Acme-1.0-x-3');
    expect(validate(SCHEMA.record, { format: RECORD_FORMAT, generated: '2026-01-01T00:00:00Z', certificates: [entry({ bundle: 'bundles/../' })] })).not.toEqual(
      [],
    );
  });

  it("a run id alone does not replace another signer's certificate; the same run and key does", () => {
    const mine = entry();
    const theirs = entry({ keySha256: 'd'.repeat(64), product: 'Other' });
    const newer = entry({ date: '2026-03-01T00:00:00.000Z', runId: '1111aaaa' });
    const merged = mergeRecord([mine], [theirs, newer], '2026-03-02T00:00:00.000Z');
    expect(merged.certificates.map((c) => [c.product, c.runId])).toEqual([
      ['Acme', '1111aaaa'],
      ['Acme', '0000abcd'],
      ['Other', '0000abcd'],
    ]);
    const again = mergeRecord(merged.certificates, [entry({ productVersion: '1.0.1' })], '2026-03-03T00:00:00.000Z');
    expect(again.certificates).toHaveLength(3);
    expect(again.certificates.filter((c) => c.keySha256 === mine.keySha256 && c.runId === mine.runId).map((c) => c.productVersion)).toEqual(['1.0.1']);
    expect(() => readRecordIndex(JSON.stringify(again))).not.toThrow();
    expect(() => readRecordIndex('[]')).toThrow(/not a conformance-record\/v1 index/);
    expect(() => readRecordIndex('{')).toThrow(/not JSON/);
  });

  it('the page escapes every value a vendor wrote and loads nothing', () => {
    const hostile = entry({
      product: '<script>alert(1)</script>',
      productVersion: '"><img src=x onerror=alert(2)>',
      profile: { name: 'partial', absent: ['<b>orders</b>'], empty: ["a'b"] },
      target: { baseUrl: 'javascript:alert(3)', embedded: false },
      runId: '"onmouseover="x',
    });
    const page = renderRecord({ format: RECORD_FORMAT, generated: '2026-01-01T00:00:00.000Z', certificates: [hostile] });
    expect(page).not.toMatch(/<script|<img|<b>|onmouseover="/);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('absent: &lt;b&gt;orders&lt;/b&gt;');
    expect(page).toContain('empty: a&#39;b');
    expect(page).toContain("content=\"default-src 'none'; style-src 'unsafe-inline'\"");
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
