// Certificates others can verify: a signed bundle verifies; every kind of tampering fails with
// the file named; a narrowed or baselined run is refused with the reason; a suite version
// outside the window is refused; a witnessed re-run finds no difference against the same
// server and names the checks that differ against a broken one; no key material leaks.
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openAttestation, signingKey, verifyingKey, type Statement } from '../reporters/attestation.js';
import { checkBundle } from '../reporters/bundle-check.js';
import { readBundle, thisSuite } from '../cli/verify.js';
import { cli, reseal, started, TOKEN, withServer, type Ran } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'conformance-attest-'));
const bundle = join(dir, 'bundle');
const ed = { key: join(dir, 'ed.key'), pub: join(dir, 'ed.pub') };
const ec = { key: join(dir, 'ec.key'), pub: join(dir, 'ec.pub') };
const other = join(dir, 'other.pub');
let made: Ran;

beforeAll(async () => {
  for (const k of [ed, ec]) {
    const r = await cli(['keygen', '--out', k.key.replace(/\.key$/, ''), ...(k === ec ? ['--type', 'p256'] : [])]);
    expect(r.code, r.stderr).toBe(0);
  }
  writeFileSync(other, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
  // The key from the environment, as CI hands it over: the PEM itself.
  made = await cli(['--certify', bundle, '--empty', 'catalog-rules', '--product', 'Reference', '--product-version', '1.0'], {
    env: { CONFORMANCE_SIGNING_KEY: readFileSync(ed.key, 'utf8') },
  });
  expect(made.code, made.stdout + made.stderr).toBe(0);
}, 120_000);

/** A copy of the bundle to tamper with. */
function copy(): string {
  const to = mkdtempSync(join(tmpdir(), 'conformance-tamper-'));
  cpSync(bundle, to, { recursive: true });
  return to;
}

const edit = (d: string, file: string, f: (text: string) => string): void => writeFileSync(join(d, file), f(readFileSync(join(d, file), 'utf8')));

/** Rewrites a bundle's files and signs it again with `key`: a consistent bundle, honestly signed. */
function resign(d: string, keyFile: string, change: (files: Map<string, string>, statement: Statement) => void): void {
  const files = new Map(
    readdirSync(d)
      .filter((n) => n !== 'attestation.json')
      .map((n) => [n, readFileSync(join(d, n), 'utf8')]),
  );
  const statement = openAttestation(readFileSync(join(d, 'attestation.json'), 'utf8')).statement as Statement;
  change(files, statement);
  const attestation = reseal(files, statement, signingKey(readFileSync(keyFile, 'utf8')));
  for (const [n, c] of files) writeFileSync(join(d, n), c);
  writeFileSync(join(d, 'attestation.json'), attestation);
}

const verify = (d: string, ...args: string[]): Promise<Ran> => cli(['verify', d, ...args]);

describe('a signed bundle', () => {
  it('is written beside the bundle and verifies: exit 0, with the profile and the signer', async () => {
    expect(readdirSync(bundle).sort()).toEqual([
      'SHA256SUMS',
      'attestation.json',
      'certificate.json',
      'config.json',
      'junit.xml',
      'report.html',
      'results.json',
    ]);
    expect(made.stdout).toMatch(/profile: partial \(empty: catalog-rules\)/);
    const r = await verify(bundle, '--key', ed.pub);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/signature\s+valid, Ed25519 key sha256:[0-9a-f]{64}/);
    expect(r.stdout).toMatch(/profile\s+partial \(empty: catalog-rules\)/);
    expect(r.stdout).toMatch(/files\s+6 of 6 as signed/);
    expect(r.stdout).toMatch(/completeness\s+\d+ planned MUST results present/);
    expect(r.stdout).toMatch(/verified: .*\(exit 0\)/);
    // The statement: an in-toto Statement v1 over every other file, with our predicate.
    const { statement } = openAttestation(readFileSync(join(bundle, 'attestation.json'), 'utf8'));
    const s = statement as Statement;
    expect(s._type).toBe('https://in-toto.io/Statement/v1');
    expect(s.subject.map((x) => x.name).sort()).toEqual(['SHA256SUMS', 'certificate.json', 'config.json', 'junit.xml', 'report.html', 'results.json']);
    expect(s.predicate).toMatchObject({
      product: { name: 'Reference', version: '1.0' },
      target: { baseUrl: 'bundled reference server', embedded: true },
      verdict: { certifiable: true, exit: 0 },
      profile: { name: 'partial', absent: [], empty: ['catalog-rules'] },
    });
    expect(s.predicate.suite.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // report.html says the profile at the top; certificate.json names it.
    expect(readFileSync(join(bundle, 'report.html'), 'utf8')).toMatch(/id="profile"><b>profile:<\/b> partial \(empty: catalog-rules\)/);
    expect(JSON.parse(readFileSync(join(bundle, 'certificate.json'), 'utf8')).profile).toEqual({ name: 'partial', absent: [], empty: ['catalog-rules'] });
  });

  it('holds no key material and no token in any file or output', () => {
    const pem = readFileSync(ed.key, 'utf8');
    const body = pem
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join('');
    const all = [made.stdout, made.stderr, ...readdirSync(bundle).map((n) => readFileSync(join(bundle, n), 'utf8'))].join('\n');
    expect(all).not.toContain(body);
    expect(all).not.toContain(Buffer.from(body, 'base64').toString('hex'));
  });

  it('without a key: the rest is checked, the signature is not, exit 2', async () => {
    const r = await verify(bundle);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/\? attestation.json: no --key given: the signature is not checked/);
  });

  it('an ECDSA P-256 key signs and verifies too; a key of another kind is refused with its reason', async () => {
    const d = copy();
    resign(d, ec.key, () => {});
    expect((await verify(d, '--key', ec.pub)).code).toBe(0);
    const rsa = join(dir, 'rsa.key');
    writeFileSync(rsa, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const r = await cli(['--certify', join(dir, 'never'), '--signing-key', rsa, '--check', 'delete.existing.204']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--signing-key .*rsa\.key: a key of type rsa: the suite signs and verifies with Ed25519 or ECDSA P-256 keys/);
    const nope = await cli(['--signing-key', ed.key, '--check', 'delete.existing.204']);
    expect(nope.code).toBe(2);
    expect(nope.stderr).toMatch(/--signing-key signs a certification bundle: it goes with --certify DIR/);
  });
});

describe('the key, as users hand it over', () => {
  it('a key pasted without its PEM lines is never echoed; a PEM with its line breaks written as \\n is read', async () => {
    const body = readFileSync(ed.key, 'utf8').split('\n')[1]!;
    const r = await cli(['--certify', join(dir, 'never2'), '--check', 'delete.existing.204'], { env: { CONFORMANCE_SIGNING_KEY: body } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CONFORMANCE_SIGNING_KEY: neither a PEM private key .* nor a file that can be read/);
    expect(r.stdout + r.stderr).not.toContain(body);
    const escaped = readFileSync(ed.key, 'utf8').trimEnd().split('\n').join('\\n');
    const d = join(dir, 'escaped');
    const ok = await cli(['--certify', d, '--check', 'delete.existing.204'], { env: { CONFORMANCE_SIGNING_KEY: escaped } });
    expect(ok.stdout).toMatch(/signed \(attestation\.json\) by Ed25519 key sha256:[0-9a-f]{64}/);
    expect(readdirSync(d)).toContain('attestation.json');
  });

  it('keygen --out acme.key writes acme.key and acme.pub, and says so when the folder is missing', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'conformance-keygen-'));
    expect((await cli(['keygen', '--out', 'acme.key'], { cwd })).code).toBe(0);
    expect(readdirSync(cwd).sort()).toEqual(['acme.key', 'acme.pub']);
    const again = await cli(['keygen', '--out', 'acme'], { cwd });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exist: choose another --out, or --force to overwrite/);
    const missing = await cli(['keygen', '--out', 'no/such/acme'], { cwd });
    expect(missing.stderr).toMatch(/cannot write .*acme\.key and .*acme\.pub \(ENOENT: the folder does not exist\)/);
  });
});

describe('tampering fails, naming the file', () => {
  it.each([
    [
      'a result flipped',
      (d: string) => edit(d, 'results.json', (t) => t.replace('"outcome": "pass"', '"outcome": "fail"')),
      /✗ results\.json: changed after signing/,
    ],
    [
      'a check removed',
      (d: string) =>
        edit(d, 'results.json', (t) => {
          const j = JSON.parse(t) as { results: unknown[] };
          j.results.splice(3, 1);
          return JSON.stringify(j, null, 2);
        }),
      /✗ results\.json: changed after signing/,
    ],
    ['a file added', (d: string) => writeFileSync(join(d, 'extra.txt'), 'hello'), /✗ extra\.txt: added after signing/],
    ['a file removed', (d: string) => rmSync(join(d, 'junit.xml')), /✗ junit\.xml: removed after signing/],
    [
      "the certificate's verdict changed",
      (d: string) => edit(d, 'certificate.json', (t) => t.replace('"certifiable": true', '"certifiable": false')),
      /✗ certificate\.json: changed after signing/,
    ],
    [
      'the signature replaced',
      (d: string) =>
        edit(d, 'attestation.json', (t) => {
          const j = JSON.parse(t) as { dsseEnvelope: { signatures: Array<{ sig: string }> } };
          j.dsseEnvelope.signatures[0]!.sig = Buffer.alloc(64, 7).toString('base64');
          return JSON.stringify(j);
        }),
      /✗ attestation\.json dsseEnvelope\.signatures: the signature does not verify/,
    ],
  ])('%s', async (_, tamper, named) => {
    const d = copy();
    tamper(d);
    const r = await verify(d, '--key', ed.pub);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(named);
    expect(r.stdout).toMatch(/NOT VALID/);
  });

  it('a wrong key', async () => {
    const r = await verify(bundle, '--key', other);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ attestation\.json dsseEnvelope\.signatures: the signature does not verify with the key given/);
  });

  it('results that contradict the certificate, signed again by the key holder: the file and the field', async () => {
    const d = copy();
    resign(d, ed.key, (files) => {
      const results = JSON.parse(files.get('results.json')!) as { results: Array<{ outcome: string; level: string }> };
      results.results.find((r) => r.outcome === 'pass' && r.level === 'MUST')!.outcome = 'fail';
      files.set('results.json', JSON.stringify(results, null, 2));
    });
    const r = await verify(d, '--key', ed.pub);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ results\.json summary: says MUST \d+ pass, 0 fail.*its results add up to MUST \d+ pass, 1 fail/);
    expect(r.stdout).toMatch(/✗ certificate\.json certifiable: says true, results\.json's results give false \(1 MUST check\(s\) failed\)/);
  });

  it("a MUST check the suite plans, left out of both the results and the plan: missing, and the plan is not this suite's", async () => {
    const d = copy();
    resign(d, ed.key, (files, statement) => {
      const results = JSON.parse(files.get('results.json')!) as { results: Array<{ id: string; level: string }>; summary: unknown };
      const gone = results.results.findIndex((r) => r.id === 'delete.existing.204');
      results.results.splice(gone, 1);
      files.set('results.json', JSON.stringify(results, null, 2));
      statement.predicate.mustChecks = statement.predicate.mustChecks.filter((k) => k !== 'delete.existing.204');
    });
    const r = await verify(d, '--key', ed.pub);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /✗ attestation\.json predicate\.mustChecks: not this suite's plan for the run's settings: 1 MUST result\(s\) left out \(delete\.existing\.204\)/,
    );
  });
});

describe('runs that cannot certify, and suites outside the window', () => {
  it('a narrowed run: refused, with the reason', async () => {
    const d = join(dir, 'narrowed');
    const r = await cli(['--certify', d, '--signing-key', ed.key, '--check', 'delete.existing.204']);
    expect(r.code).toBe(1);
    const v = await verify(d, '--key', ed.pub);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/✗ config\.json: the run was narrowed by --check: a certification runs every check: the run cannot certify/);
  });

  it.each([
    [
      'a baseline',
      (c: Record<string, unknown>, report: Record<string, unknown>) => void (report.baseline = { file: 'known.yaml', known: 0, stale: [] }),
      /the run had a baseline \(known\.yaml\)/,
    ],
    ['--explore 0', (c: Record<string, unknown>) => void (c.explore = 0), /the run drew no requests \(--explore 0\)/],
    ['a request budget below the default', (c: Record<string, unknown>) => void (c.requestBudget = 200), /the request budget was 200, below the default 1000/],
  ])('%s: refused, with the reason, even signed', async (_, change, why) => {
    const d = copy();
    resign(d, ed.key, (files) => {
      const results = JSON.parse(files.get('results.json')!) as Record<string, unknown> & { config: Record<string, unknown> };
      change(results.config, results);
      files.set('results.json', JSON.stringify(results, null, 2));
      files.set('config.json', JSON.stringify(results.config, null, 2));
    });
    const r = await verify(d, '--key', ed.pub);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(why);
  });

  it('a suite version outside the window is refused; within it, named; a newer one cannot be checked', () => {
    const files = readBundle(bundle);
    const key = verifyingKey(readFileSync(ed.pub, 'utf8'));
    const at = (version: string, window = 2, strict = false) =>
      checkBundle(files, { ...thisSuite(window), version, contractDigest: `sha256:${'0'.repeat(64)}` }, { key, strict });
    const far = at('0.4.0');
    expect(far.exit).toBe(1);
    expect(far.findings).toContainEqual(
      expect.objectContaining({
        severity: 'invalid',
        file: 'certificate.json',
        field: 'suite',
        message: expect.stringMatching(
          /made by conformance 0\.1\.0, outside the window of accepted versions \(0\.4\.0 and the 2 release line\(s\) before it\)/,
        ),
      }),
    );
    expect(at('0.4.0', 3).findings.filter((f) => f.field === 'suite')).toEqual([expect.objectContaining({ severity: 'note' })]);
    const newer = at('0.0.9');
    expect(newer.findings).toContainEqual(expect.objectContaining({ severity: 'unchecked', message: expect.stringMatching(/newer than this suite/) }));
    // Another version's contract digest is named, not refused (--strict refuses it).
    expect(at('0.3.0').findings).toContainEqual(expect.objectContaining({ severity: 'note', field: 'contractDigest' }));
    expect(at('0.3.0', 2, true).findings).toContainEqual(expect.objectContaining({ severity: 'invalid', field: 'contractDigest' }));
    // The same version with another contract: not the published suite.
    expect(at('0.1.0').findings).toContainEqual(
      expect.objectContaining({ severity: 'invalid', field: 'contractDigest', message: expect.stringMatching(/although the version is the same/) }),
    );
  });
});

describe('a witnessed re-run', () => {
  it('against the same reference server: no difference, exit 0', async () => {
    const r = await verify(bundle, '--key', ed.pub, '--rerun', '--rerun-dir', join(dir, 'again'));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/re-run: the same verdict on all \d+ results/);
  });

  it('against a broken server: the checks that differ, exit 1', async () => {
    // A fault that fails at once: one that leaves a deleted record listed is waited for as long as
    // the time buffer (60 s) in every sequence and replay, and would make this test's time the seed's.
    await withServer({ faults: ['delete-unknown-204'] }, async (server) => {
      const r = await cli(['verify', bundle, '--key', ed.pub, '--rerun', '--base-url', server.url, '--rerun-dir', join(dir, 'broken')], {
        env: { CONFORMANCE_TOKEN: TOKEN },
      });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/re-run: \d+ result\(s\) differ from the bundle's:/);
      expect(r.stdout).toMatch(/ {2}delete\.unknown-id\.404: bundle pass, re-run fail \(MUST\)/);
      expect(r.stdout).not.toContain(TOKEN);
    });
  }, 180_000);

  it('stopped by SIGTERM (a cancelled CI job): nothing compared, what it created deleted, exit 130', async () => {
    await withServer({}, async (server) => {
      const {
        child,
        out: output,
        closed,
      } = started(['verify', bundle, '--key', ed.pub, '--rerun', '--base-url', server.url, '--rerun-dir', join(dir, 'stopped')]);
      while (server.store.applicationKeys.size < 3) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGTERM');
      const code = await closed;
      const out = output();
      expect(code, out).toBe(130);
      expect(out).toMatch(/the re-run was interrupted \(Ctrl-C or SIGTERM\): its results are cut short, nothing is compared/);
      expect(out).not.toMatch(/re-run: \d+ result\(s\) differ/);
      expect(out).toMatch(/the bundle verified; the re-run was interrupted \(exit 130\)/);
      expect(server.store.applicationKeys.size + server.store.customApis.size).toBe(0);
    });
  }, 120_000);
});

describe('a bundle made against a target with --change-settings', () => {
  it('is re-run with every outcome setting it records (--change-settings too), and a run without the flag is refused once, naming the flag', async () => {
    await withServer({ seed: 7 }, async (server) => {
      const env = { CONFORMANCE_TOKEN: TOKEN, CONFORMANCE_SIGNING_KEY: readFileSync(ed.key, 'utf8') };
      const target = ['--base-url', server.url, '--seed', '4', '--empty', 'catalog-rules'];
      const made = await cli([...target, '--change-settings', '--certify', join(dir, 'changed')], { env });
      expect(made.code, made.stdout + made.stderr).toBe(0);
      const again = await cli(
        ['verify', join(dir, 'changed'), '--key', ed.pub, '--rerun', '--base-url', server.url, '--rerun-dir', join(dir, 'changed-again')],
        {
          env: { CONFORMANCE_TOKEN: TOKEN },
        },
      );
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).toMatch(/the re-run takes every setting that decides outcomes from the bundle \(.*--change-settings.*\): .*--change-settings/);
      expect(again.stdout).toMatch(/re-run: the same verdict on all \d+ results/);
      // verify takes no outcome setting: the bundle decides it.
      const flag = await cli(['verify', join(dir, 'changed'), '--rerun', '--base-url', server.url, '--change-settings'], { env: { CONFORMANCE_TOKEN: TOKEN } });
      expect(flag.code).toBe(2);
      expect(flag.stderr).toMatch(/--change-settings: verify takes no setting that decides outcomes; a re-run \(--rerun\) takes each of them from the bundle/);
      // Without --change-settings: refused, the reason said once after the checks it kept from running.
      const off = await cli([...target, '--certify', join(dir, 'unchanged')], { env });
      expect(off.code).toBe(1);
      const line = off.stdout.split('\n').find((l) => l.startsWith('certifiable: no'))!;
      expect(line, off.stdout).toMatch(/list\.settings\.default-follows, list\.settings\.limit-overrides, .*: not run: --change-settings is off/);
      expect(line.match(/--change-settings is off/g)).toHaveLength(1);
    });
  }, 240_000);
});
