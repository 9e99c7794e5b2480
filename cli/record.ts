// `conformance publish BUNDLE... --out DIR --key PUBLIC.pem`: a record of verified certificates
// others can read. Each bundle is checked as `conformance verify` checks it; those that verify
// are copied byte for byte into DIR/bundles/ and listed in DIR/index.json and DIR/index.html
// (reporters/record.ts). DIR is plain static files with relative links, to host as it is.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ATTESTATION_FILE } from '../reporters/attestation.js';
import { checkBundle, type BundleCheck, type BundleFolder, type Finding } from '../reporters/bundle-check.js';
import {
  bundleName,
  bundlePath,
  mergeRecord,
  readRecordIndex,
  recordEntry,
  recordViolations,
  renderRecord,
  renderRecordIndex,
  sameCertificate,
  RECORD_BUNDLES,
  RECORD_INDEX,
  RECORD_PAGE,
  type RecordEntry,
} from '../reporters/record.js';
import { describeProfile } from '../reporters/verdict.js';
import { parseFlags, UsageError, type Io } from './io.js';
import { DEFAULT_WINDOW, readBundle, readVerifyingKey, thisSuite, windowOf } from './verify.js';
import { errorWord } from '../lib/text/index.js';

export const PUBLISH_HELP = `Usage: conformance publish BUNDLE... --out DIR --key PUBLIC.pem [--key ...]
                           [--strict] [--window N]
  Publishes certification bundles (the folders --certify wrote) as a record others can read:
  - DIR/index.html, a page of the certificates: product, version, profile (full, or partial
    with the operations declared absent or empty), date the run finished, suite version,
    verdict, target, the signing key's sha256, and links to the bundle, its report.html and
    its certificate.json;
  - DIR/index.json, the same for programs (spec/record.schema.yaml);
  - DIR/bundles/PRODUCT-VERSION-RUN/, a copy of each bundle, byte for byte, that
    conformance verify still verifies.
  The folder is plain static files with relative links: it needs no network and no script to
  read, and can be hosted as it is. No key material is written, only public keys' sha256.
  Each BUNDLE is checked as conformance verify checks it; only one that verifies is published.
  One that does not is refused in one line that names it and what is wrong; the others are
  published all the same. Publishing into a DIR that holds a record adds to it: its
  certificates are kept, newest first, and a bundle published again (the same run, signed by
  the same key) replaces its own entry.
  --out DIR        the record's folder: new, empty, or one publish wrote (a folder holding
                   anything else is refused, and nothing in it is touched)
  --key FILE       a signer's public key (PEM); repeat it for several signers: a bundle is
                   published when one of them verifies it
  --strict         as verify --strict: SHOULD failures, another contract digest, or a suite
                   whose package digest differs from this one's refuse the bundle too
  --window N       release lines (minor versions) before this one still accepted
                   (default ${DEFAULT_WINDOW})
  Exit: 0 every bundle published, 1 a bundle was refused as not valid (the others were
  published), 2 could not publish (no --key, a bundle or DIR that cannot be read, a DIR that is
  not a record) or a bundle could not be checked (made by a newer suite).`;

const OPTIONS = {
  out: { type: 'string' },
  key: { type: 'string', multiple: true },
  strict: { type: 'boolean' },
  window: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What DIR holds now: the record's entries, or why it is not a record to publish into. */
function existingRecord(dir: string): { entries: RecordEntry[] } | { refused: string } {
  if (!existsSync(dir)) return { entries: [] };
  try {
    if (!statSync(dir).isDirectory()) return { refused: 'is not a folder' };
    const index = join(dir, RECORD_INDEX);
    if (!existsSync(index)) {
      return readdirSync(dir).length
        ? { refused: `holds files but no ${RECORD_INDEX}: it is not a record publish wrote (give a new or empty folder)` }
        : { entries: [] };
    }
    return { entries: readRecordIndex(readFileSync(index, 'utf8')).certificates };
  } catch (e) {
    if (e instanceof Error && !(e as { code?: string }).code) return { refused: `holds an ${RECORD_INDEX} that is ${e.message}: not a record publish wrote` };
    return { refused: `cannot read it (${errorWord(e)})` };
  }
}

/** A finding in one line: file, field, message, cut for the screen. */
function said(f: Finding): string {
  const where = f.file ? `${f.file}${f.field ? ` ${f.field}` : ''}: ` : '';
  const text = `${where}${f.message}`;
  return text.length > 320 ? `${text.slice(0, 317)}...` : text;
}

/**
 * Why a bundle is refused, in one line: its first two invalid findings (or, none being invalid,
 * what could not be checked). With several keys, the check shown is the one with the fewest
 * invalid findings: a bundle that failed only for the key it was not signed with is told by
 * what is wrong with it, not by the other signers' keys.
 */
function refusal(name: string, checks: readonly BundleCheck[], keys: number): string {
  const invalid = (c: BundleCheck): Finding[] => c.findings.filter((f) => f.severity === 'invalid');
  const best = [...checks].sort((a, b) => invalid(a).length - invalid(b).length)[0]!;
  const shown = invalid(best).length ? invalid(best) : best.findings.filter((f) => f.severity === 'unchecked');
  const lines = shown.map((f) =>
    keys > 1 && f.file === ATTESTATION_FILE && f.field === 'dsseEnvelope.signatures'
      ? `${ATTESTATION_FILE}: the signature verifies with none of the ${keys} keys given`
      : said(f),
  );
  const more = lines.length > 2 ? `; and ${lines.length - 2} more (conformance verify ${name} --key ... says all)` : '';
  return `refused ${name} (${best.exit === 1 ? 'not valid' : 'could not be checked'}): ${lines.slice(0, 2).join('; ')}${more}`;
}

/** Writes a file whole or not at all: a reader never sees half an index. */
function writeWhole(path: string, content: string): void {
  const part = `${path}.${process.pid}.part`;
  writeFileSync(part, content);
  renameSync(part, path);
}

/** The bundle's files into DIR/bundles/NAME/, exactly the bytes that were checked; an older copy of the same certificate is replaced whole. */
function copyBundle(dir: string, name: string, files: BundleFolder): void {
  const to = join(dir, RECORD_BUNDLES, name);
  const part = join(dir, RECORD_BUNDLES, `.${name}.${process.pid}.part`);
  rmSync(part, { recursive: true, force: true });
  mkdirSync(part, { recursive: true });
  for (const [file, body] of files) writeFileSync(join(part, file), body);
  rmSync(to, { recursive: true, force: true });
  renameSync(part, to);
}

export async function publishRecord(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags({ args, options: OPTIONS, allowPositionals: true }, 'publish');
  if (values.help) {
    io.out(PUBLISH_HELP);
    return 0;
  }
  if (!positionals.length) throw new UsageError('which bundles? (conformance publish BUNDLE... --out DIR --key PUBLIC.pem)', 'publish');
  if (values.out === undefined) throw new UsageError('--out DIR is needed: the folder the record is written to', 'publish');
  if (!values.key?.length)
    throw new UsageError(
      "--key is needed: a record holds verified certificates only (the signer's public key, PEM; repeat --key for several signers)",
      'publish',
    );
  const window = windowOf(values.window, 'publish');
  const keys = [...new Map(values.key.map((file) => readVerifyingKey(file, io, 'publish')).map((k) => [k.hint, k])).values()];
  const out = resolve(io.cwd, values.out);

  // Everything is read before anything is written: a bundle or a DIR that cannot be used stops
  // the command with nothing changed.
  const record = existingRecord(out);
  if ('refused' in record) {
    io.err(`conformance publish: --out ${values.out} ${record.refused}; nothing written`);
    return 2;
  }
  const bundles: Array<{ name: string; files: BundleFolder }> = [];
  for (const name of positionals) {
    const dir = resolve(io.cwd, name);
    try {
      if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
      bundles.push({ name, files: readBundle(dir) });
    } catch (e) {
      io.err(`conformance publish: cannot read the bundle ${name} (${errorWord(e)}): a bundle is the folder --certify wrote; nothing written`);
      return 2;
    }
  }

  const suite = thisSuite(window);
  const accepted: Array<{ entry: RecordEntry; files: BundleFolder; name: string }> = [];
  let worst: 0 | 1 | 2 = 0;
  for (const b of bundles) {
    const checks: BundleCheck[] = [];
    let verified: { check: BundleCheck; hint: string } | undefined;
    for (const key of keys) {
      const check = checkBundle(b.files, suite, { key, strict: values.strict === true });
      checks.push(check);
      if (check.exit === 0 && check.predicate) {
        verified = { check, hint: key.hint };
        break;
      }
    }
    if (!verified) {
      io.err(`conformance publish: ${refusal(b.name, checks, keys.length)}`);
      const exit = checks.some((c) => c.exit === 1) ? 1 : 2;
      worst = worst === 1 || exit === 1 ? 1 : 2;
      continue;
    }
    const entry = recordEntry(verified.check.predicate!, verified.hint, '');
    // The same certificate given twice in one command: the last one given is published.
    const twice = accepted.findIndex((a) => sameCertificate(a.entry, entry));
    if (twice >= 0) accepted.splice(twice, 1);
    accepted.push({ entry, files: b.files, name: b.name });
  }
  if (!accepted.length) {
    io.err(`conformance publish: no bundle verified: nothing published, ${values.out} left as it was`);
    return worst || 1;
  }

  // A certificate published again keeps its folder; a new one gets a name no other entry, and
  // no folder already under bundles/, has.
  const folders = join(out, RECORD_BUNDLES);
  const onDisk = existsSync(folders) && statSync(folders).isDirectory() ? readdirSync(folders) : [];
  const taken = new Set([...onDisk, ...record.entries.map((e) => e.bundle.split('/')[1]!)]);
  const placed = accepted.map((a) => {
    const before = record.entries.find((e) => sameCertificate(e, a.entry));
    const name = before ? before.bundle.split('/')[1]! : bundleName(a.entry, taken);
    taken.add(name);
    return { ...a, folder: name, entry: { ...a.entry, bundle: bundlePath(name) } };
  });
  const index = mergeRecord(
    record.entries,
    placed.map((p) => p.entry),
    new Date().toISOString(),
  );
  const wrong = recordViolations(index);
  if (wrong) throw new Error(`the record index breaks spec/record.schema.yaml: ${wrong}`);

  try {
    mkdirSync(join(out, RECORD_BUNDLES), { recursive: true });
    for (const p of placed) copyBundle(out, p.folder, p.files);
    writeWhole(join(out, RECORD_INDEX), renderRecordIndex(index));
    writeWhole(join(out, RECORD_PAGE), renderRecord(index));
  } catch (e) {
    io.err(`conformance publish: cannot write the record to ${values.out} (${errorWord(e)})`);
    return 2;
  }
  for (const p of placed) {
    const e = p.entry;
    const product = [e.product ?? '(product not declared)', e.productVersion].filter((x) => x !== null).join(' ');
    io.out(`published ${p.name}: ${product}, ${describeProfile(e.profile)}, run ${e.runId} finished ${e.date}, key sha256:${e.keySha256} -> ${e.bundle}`);
  }
  io.out(`record written to ${values.out}: ${RECORD_PAGE} and ${RECORD_INDEX}, ${index.certificates.length} certificate(s), ${placed.length} published now`);
  return worst;
}
