// docs/certification.md's way to verify a bundle without this suite (openssl, jq, coreutils),
// run as the page gives it: it accepts a signed bundle, Ed25519 or ECDSA P-256, and stops on a
// file changed, a file added and a wrong key.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signingKey } from '../reporters/attestation.js';
import { bundleFiles, writeFiles } from '../reporters/write.js';
import { fixedReport } from './fixtures/report.js';

const MARKER = '<!-- verify-with-openssl';

/** The shell block under the marker, with BUNDLE and KEY set to ours. */
function docsScript(bundle: string, key: string): string {
  const page = readFileSync(resolve(import.meta.dirname, '../docs/certification.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(page.indexOf(MARKER)))![1]!;
  const lines = block.split('\n');
  expect(lines[0]).toBe('BUNDLE=bundle KEY=acme.pub');
  return [`BUNDLE='${bundle}' KEY='${key}'`, ...lines.slice(1)].join('\n');
}

function signedBundle(type: 'ed25519' | 'p256'): { bundle: string; pub: string } {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-openssl-'));
  const pair = type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pub = join(dir, 'signer.pub');
  writeFileSync(pub, pair.publicKey.export({ type: 'spki', format: 'pem' }));
  const key = signingKey(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  const bundle = join(dir, 'bundle');
  writeFiles(
    bundle,
    bundleFiles(fixedReport(), (s) => s, { key, mustChecks: ['delete.existing.204'] }),
  );
  return { bundle, pub };
}

const run = (script: string) => spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { encoding: 'utf8' });

const tools = ['jq', 'openssl', 'sha256sum', 'base64'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);

describe.skipIf(tools.length > 0)(
  `verifying with openssl and jq (docs/certification.md)${tools.length ? `: skipped, ${tools.join(', ')} not installed` : ''}`,
  () => {
    it.each(['ed25519', 'p256'] as const)('a signed bundle (%s) verifies', (type) => {
      const { bundle, pub } = signedBundle(type);
      const r = run(docsScript(bundle, pub));
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect(r.stdout + r.stderr).toMatch(type === 'ed25519' ? /Signature Verified Successfully/ : /Verified OK/);
      expect(r.stdout).toMatch(/results\.json: OK/);
    });

    it('a changed file, an added file and a wrong key each stop it', () => {
      const { bundle, pub } = signedBundle('ed25519');
      writeFileSync(join(bundle, 'results.json'), readFileSync(join(bundle, 'results.json'), 'utf8').replace('"pass"', '"fail"'));
      const changed = run(docsScript(bundle, pub));
      expect(changed.status).not.toBe(0);
      expect(changed.stdout + changed.stderr).toMatch(/results\.json: FAILED/);

      const added = signedBundle('ed25519');
      writeFileSync(join(added.bundle, 'extra.txt'), 'x');
      const r = run(docsScript(added.bundle, added.pub));
      expect(r.status).not.toBe(0);
      expect(r.stdout).toMatch(/< extra\.txt/);

      const other = signedBundle('ed25519');
      const wrong = run(docsScript(other.bundle, pub));
      expect(wrong.status).not.toBe(0);
      expect(wrong.stdout + wrong.stderr).toMatch(/Signature Verification Failure/);
    });
  },
);
