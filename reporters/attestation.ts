// The signed attestation of a certification bundle (attestation.json): an in-toto Statement v1
// in a DSSE envelope, held in a Sigstore bundle (v0.3) whose verification material is a public
// key's hint. Its subjects are every other file of the bundle by sha256; its predicate
// (PREDICATE_TYPE, docs/certification.md) says who ran which suite against what, and the
// verdict. The formats are the Sigstore packages' (@sigstore/bundle builds and reads the
// bundle, @sigstore/core encodes what DSSE signs, @sigstore/verify checks the signature), so
// cosign and any other Sigstore client read the same file; nothing needs the network.
import { createHash, createPrivateKey, createPublicKey, sign as signBytes, type KeyObject } from 'node:crypto';
import { bundleFromJSON, bundleToJSON, toDSSEBundle } from '@sigstore/bundle';
import { dsse } from '@sigstore/core';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import { resultKey } from '../lib/runner/index.js';
import type { Profile } from './verdict.js';
import type { RunReport, Summary } from './model.js';

export const ATTESTATION_FILE = 'attestation.json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** The predicate's type: its fields are documented in docs/certification.md ("The attestation"). */
export const PREDICATE_TYPE = 'https://conformance.dev/attestation/certification/v1';

/** A key that signs: Ed25519 or ECDSA P-256 (the two DSSE and Sigstore clients verify everywhere). */
export interface SigningKey {
  key: KeyObject;
  /** sha256 of the public key (SubjectPublicKeyInfo, DER), hex: the bundle's key hint. */
  hint: string;
  algorithm: KeyAlgorithm;
}

export type KeyAlgorithm = 'Ed25519' | 'ECDSA P-256';

export class KeyError extends Error {
  readonly code = 'KEY';
  constructor(message: string) {
    super(message);
    this.name = 'KeyError';
  }
}

function algorithmOf(key: KeyObject): KeyAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'Ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ECDSA P-256';
  const named = key.asymmetricKeyType === 'ec' ? `ECDSA ${key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim() : (key.asymmetricKeyType ?? 'unknown');
  throw new KeyError(`a key of type ${named}: the suite signs and verifies with Ed25519 or ECDSA P-256 keys (conformance keygen writes one)`);
}

/** sha256 of a public key's SubjectPublicKeyInfo (DER), hex: how a bundle names the key that signed it. */
export function keyHint(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

/** A PEM private key, read for signing. The message never holds the key. */
export function signingKey(pem: string, passphrase?: string): SigningKey {
  const encrypted = /-----BEGIN (ENCRYPTED PRIVATE KEY|[A-Z ]*PRIVATE KEY-----\s*Proc-Type: 4,ENCRYPTED)/.test(pem);
  if (encrypted && !passphrase) throw new KeyError('an encrypted private key: give its passphrase in CONFORMANCE_SIGNING_KEY_PASSPHRASE');
  let key: KeyObject;
  try {
    key = createPrivateKey(passphrase ? { key: pem, format: 'pem', passphrase } : { key: pem, format: 'pem' });
  } catch {
    throw new KeyError(encrypted ? 'the passphrase in CONFORMANCE_SIGNING_KEY_PASSPHRASE does not decrypt it' : 'not a PEM private key');
  }
  const algorithm = algorithmOf(key);
  return { key, hint: keyHint(createPublicKey(key)), algorithm };
}

/** A PEM public key (or a private one, whose public half is taken), read for verifying. */
export function verifyingKey(pem: string): { key: KeyObject; hint: string; algorithm: KeyAlgorithm } {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new KeyError('not a PEM public key');
  }
  return { key, hint: keyHint(key), algorithm: algorithmOf(key) };
}

/** A subject of the statement: a file of the bundle by its sha256. */
export interface Subject {
  name: string;
  digest: { sha256: string };
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: Subject[];
  predicateType: typeof PREDICATE_TYPE;
  predicate: Predicate;
}

/** What the attestation claims (docs/certification.md, "The attestation"). */
export interface Predicate {
  product: { name: string | null; version: string | null };
  /** The target, without credentials, query or fragment; the bundled server says so. */
  target: { baseUrl: string; embedded: boolean };
  run: { id: string; seed: number; startedAt: string; finishedAt: string };
  suite: { name: string; version: string; digest: string };
  contract: { digest: string };
  profile: Profile;
  verdict: { certifiable: boolean; why: string; exit: number };
  counts: Summary;
  /** Every MUST result the suite planned for this run (`id` or `id operation`): what completeness is judged by. */
  mustChecks: string[];
}

/**
 * The MUST results a run plans, as the predicate lists them (`id`, or `id operation`): every
 * check of level MUST, on every operation but the lists beyond the contract's 26.
 */
export function mustPlan(checks: ReadonlyArray<{ id: string; level: string; operation?: string }>, extraOperations: readonly string[]): string[] {
  return checks
    .filter((c) => c.level === 'MUST' && !(c.operation !== undefined && extraOperations.includes(c.operation)))
    .map((c) => resultKey(c))
    .sort();
}

export const sha256 = (content: string | Buffer): string => createHash('sha256').update(content).digest('hex');

/** A URL as a certificate may show it: no user, password, query or fragment. */
export function publicUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** The target as a certificate names it: the bundled reference server, or the URL without credentials. */
export function certifiedTarget(target: { baseUrl: string; embedded: boolean }): string {
  return target.embedded ? 'bundled reference server' : publicUrl(target.baseUrl);
}

export function predicateOf(report: RunReport, suite: { digest: string }, mustChecks: readonly string[]): Predicate {
  const c = report.certification;
  return {
    product: { name: report.product?.name ?? null, version: report.product?.version ?? null },
    target: { baseUrl: certifiedTarget(report.target), embedded: report.target.embedded },
    run: { id: report.runId, seed: report.seed, startedAt: report.startedAt, finishedAt: report.finishedAt },
    suite: { name: report.tool.name, version: report.tool.version, digest: suite.digest },
    contract: { digest: report.contractDigest },
    profile: c?.profile ?? { name: 'full', absent: [], empty: [] },
    verdict: { certifiable: c?.certifiable ?? false, why: c?.why ?? '', exit: report.exit.code },
    counts: report.summary,
    mustChecks: [...mustChecks].sort(),
  };
}

export function statementOf(files: ReadonlyArray<{ name: string; content: string }>, predicate: Predicate): Statement {
  return {
    _type: STATEMENT_TYPE,
    subject: files.map((f) => ({ name: f.name, digest: { sha256: sha256(f.content) } })),
    predicateType: PREDICATE_TYPE,
    predicate,
  };
}

/** DSSE's signature over the payload: Ed25519 over the bytes, ECDSA P-256 over their SHA-256 (DER). */
function signPae(payload: Buffer, key: SigningKey): Buffer {
  const pae = dsse.preAuthEncoding(PAYLOAD_TYPE, payload);
  return signBytes(key.algorithm === 'Ed25519' ? null : 'sha256', pae, key.key);
}

/** attestation.json: the statement, signed, as a Sigstore bundle. */
export function signStatement(statement: Statement, key: SigningKey): string {
  const payload = Buffer.from(JSON.stringify(statement));
  const bundle = toDSSEBundle({ artifact: payload, artifactType: PAYLOAD_TYPE, signature: signPae(payload, key), keyHint: key.hint });
  return `${JSON.stringify(bundleToJSON(bundle), null, 2)}\n`;
}

/** What attestation.json holds, read without trusting it yet. */
export interface OpenedAttestation {
  /** The key hint the bundle names. */
  hint: string;
  /** The statement, parsed from the envelope (not yet verified). */
  statement: unknown;
  /** The bundle, for verifySignature. */
  bundle: ReturnType<typeof bundleFromJSON>;
}

/** Reads attestation.json; throws with what is wrong with its shape. */
export function openAttestation(text: string): OpenedAttestation {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${(e as Error).message})`);
  }
  let bundle: ReturnType<typeof bundleFromJSON>;
  try {
    bundle = bundleFromJSON(json);
  } catch (e) {
    throw new Error(`not a Sigstore bundle (${(e as Error).message})`);
  }
  const content = bundle.content;
  if (content.$case !== 'dsseEnvelope') throw new Error('the Sigstore bundle holds no DSSE envelope');
  if (content.dsseEnvelope.payloadType !== PAYLOAD_TYPE)
    throw new Error(`the envelope's payloadType is ${JSON.stringify(content.dsseEnvelope.payloadType)}, not ${PAYLOAD_TYPE}`);
  const material = bundle.verificationMaterial.content;
  const hint = material?.$case === 'publicKey' ? material.publicKey.hint : '';
  let statement: unknown;
  try {
    statement = JSON.parse(content.dsseEnvelope.payload.toString('utf8'));
  } catch (e) {
    throw new Error(`the envelope's payload is not JSON (${(e as Error).message})`);
  }
  return { hint, statement, bundle };
}

/**
 * Whether the envelope's signature verifies with `publicKey`. No transparency log, certificate
 * or timestamp is asked for: the key given is the trust.
 */
export function verifySignature(opened: OpenedAttestation, publicKey: KeyObject): { ok: true } | { ok: false; why: string } {
  const trust = toTrustMaterial({ mediaType: '', tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] }, () => ({
    publicKey,
    validFor: () => true,
  }));
  try {
    new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(opened.bundle));
    return { ok: true };
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
}
