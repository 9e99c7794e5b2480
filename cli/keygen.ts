// `conformance keygen`: a key pair to sign certification bundles with (--signing-key) and to
// verify them by (conformance verify --key), as PEM files openssl and cosign read too.
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseFlags, UsageError, type Io } from './io.js';
import { errorWord } from '../lib/text/index.js';

export const KEYGEN_HELP = `Usage: conformance keygen [--out PREFIX] [--type ed25519|p256] [--force]
  Writes a key pair for signing certification bundles: PREFIX.key (the private key, PKCS#8
  PEM, readable by its owner only) and PREFIX.pub (the public key, SubjectPublicKeyInfo PEM).
  Keep the private key to yourself; hand the public key to whoever verifies your bundles.
  --out PREFIX     where to write (default: conformance-signing, so conformance-signing.key
                   and conformance-signing.pub in the current folder)
  --type T         ed25519 (default) or p256 (ECDSA over P-256)
  --force          overwrite files that exist
  Then: conformance --certify DIR --signing-key PREFIX.key ...
        conformance verify DIR --key PREFIX.pub
  The same with openssl: docs/certification.md.`;

export async function keygen(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(
    {
      args,
      options: { out: { type: 'string' }, type: { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    },
    'keygen',
  );
  if (values.help) {
    io.out(KEYGEN_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}' (the prefix goes with --out)`, 'keygen');
  const type = values.type ?? 'ed25519';
  if (type !== 'ed25519' && type !== 'p256') throw new UsageError(`--type takes ed25519 or p256 (got '${type}')`, 'keygen');
  // `--out acme.key` means the pair acme.key and acme.pub, not acme.key.key.
  const prefix = resolve(io.cwd, (values.out ?? 'conformance-signing').replace(/\.(key|pub)$/, ''));
  const files = { key: `${prefix}.key`, pub: `${prefix}.pub` };
  const there = Object.values(files).filter((f) => existsSync(f));
  if (there.length && !values.force)
    throw new UsageError(`${there.join(' and ')} already exist${there.length > 1 ? '' : 's'}: choose another --out, or --force to overwrite`, 'keygen');
  const pair = type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  try {
    writeFileSync(files.key, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    chmodSync(files.key, 0o600);
    writeFileSync(files.pub, pair.publicKey.export({ type: 'spki', format: 'pem' }));
  } catch (e) {
    throw new UsageError(
      `cannot write ${files.key} and ${files.pub} (${errorWord(e)}${(e as { code?: string }).code === 'ENOENT' ? ': the folder does not exist' : ''})`,
      'keygen',
    );
  }
  const { keyHint } = await import('../reporters/attestation.js');
  io.out(`private key: ${files.key} (${type === 'ed25519' ? 'Ed25519' : 'ECDSA P-256'}; keep it secret)`);
  io.out(`public key:  ${files.pub} (key sha256:${keyHint(pair.publicKey)}; hand it to whoever verifies)`);
  return 0;
}
