// The public record of verified certificates (`conformance publish`): index.json, its entries
// read from each bundle's signed statement, and index.html, a page rendered from index.json
// alone. The page is a pure function of the index; writing files is cli/record.ts's. Every value
// of an entry came from a vendor's bundle, so the page escapes every one of them, and it loads
// nothing and runs nothing: a certifying body hosts the folder as plain static files.
import { describeViolations, SCHEMA, validate } from '../lib/contract/index.js';
import type { Predicate } from './attestation.js';
import { esc } from './html.js';
import type { Profile } from './verdict.js';

/** index.json's `format`: a reader checks it before trusting the rest (spec/record.schema.yaml). */
export const RECORD_FORMAT = 'conformance-record/v1';
export const RECORD_INDEX = 'index.json';
export const RECORD_PAGE = 'index.html';
/** The folder of DIR that holds the copies of the bundles. */
export const RECORD_BUNDLES = 'bundles';

/** One verified certificate of the record. */
export interface RecordEntry {
  product: string | null;
  productVersion: string | null;
  profile: Profile;
  /** When the run finished (the signed statement's run.finishedAt). */
  date: string;
  suiteVersion: string;
  suiteDigest: string;
  contractDigest: string;
  target: { baseUrl: string; embedded: boolean };
  runId: string;
  /** sha256 of the public key that verified the bundle (attestation.ts keyHint): no key material. */
  keySha256: string;
  certifiable: boolean;
  /** The copy of the bundle, relative to the record's folder: `bundles/<name>/`. */
  bundle: string;
}

export interface RecordIndex {
  format: typeof RECORD_FORMAT;
  generated: string;
  certificates: RecordEntry[];
}

/** The entry of a verified bundle: what its signed statement says, the key that verified it, where its copy goes. */
export function recordEntry(predicate: Predicate, keySha256: string, bundle: string): RecordEntry {
  return {
    product: predicate.product.name,
    productVersion: predicate.product.version,
    profile: { name: predicate.profile.name, absent: [...predicate.profile.absent], empty: [...predicate.profile.empty] },
    date: predicate.run.finishedAt,
    suiteVersion: predicate.suite.version,
    suiteDigest: predicate.suite.digest,
    contractDigest: predicate.contract.digest,
    target: { baseUrl: predicate.target.baseUrl, embedded: predicate.target.embedded },
    runId: predicate.run.id,
    keySha256,
    certifiable: predicate.verdict.certifiable,
    bundle,
  };
}

/** A part of a folder name: letters, digits, dot, dash and underscore, at most `max` of them. */
const safePart = (s: string, max: number): string =>
  s
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, max)
    .replace(/[-._]+$/, '');

/**
 * The folder name of a bundle's copy: product-version-runId, each part made safe for a path
 * (and for a URL, unescaped), starting with a letter or digit so it is never `.` or `..`; a
 * name `taken` already gets a suffix (-2, -3, ...).
 */
export function bundleName(entry: Pick<RecordEntry, 'product' | 'productVersion' | 'runId'>, taken: ReadonlySet<string>): string {
  const base = [
    safePart(entry.product ?? '', 60) || 'product',
    safePart(entry.productVersion ?? '', 40) || 'unversioned',
    safePart(entry.runId, 40) || 'run',
  ].join('-');
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  return name;
}

/** The bundle folder an entry links to, as index.json writes it. */
export const bundlePath = (name: string): string => `${RECORD_BUNDLES}/${name}/`;

/**
 * Whether two entries are the same certificate published again: the same run signed by the
 * same key. The run id alone is eight random hex digits: two vendors' runs may share one, and
 * one vendor's bundle must never replace another's.
 */
export const sameCertificate = (a: RecordEntry, b: RecordEntry): boolean => a.runId === b.runId && a.keySha256 === b.keySha256;

/** Newest first; the same date in product, then run order, so the order never depends on input order. */
function byDate(a: RecordEntry, b: RecordEntry): number {
  const d = Date.parse(b.date) - Date.parse(a.date);
  if (d) return d;
  const p = (a.product ?? '').localeCompare(b.product ?? '');
  return p || a.runId.localeCompare(b.runId) || a.keySha256.localeCompare(b.keySha256);
}

/** The record with `added` published into it: an entry of the same certificate is replaced, the rest kept, newest first. */
export function mergeRecord(existing: readonly RecordEntry[], added: readonly RecordEntry[], generated: string): RecordIndex {
  const kept = existing.filter((e) => !added.some((a) => sameCertificate(a, e)));
  return { format: RECORD_FORMAT, generated, certificates: [...kept, ...added].sort(byDate) };
}

/** Why `value` is not a record index of this format (spec/record.schema.yaml), or undefined. */
export function recordViolations(value: unknown): string | undefined {
  const v = validate(SCHEMA.record, value);
  return v.length ? describeViolations(v) : undefined;
}

/** index.json's text: throws with what is wrong when it is not a record index. */
export function readRecordIndex(text: string): RecordIndex {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${(e as Error).message})`);
  }
  const wrong = recordViolations(value);
  if (wrong) throw new Error(`not a ${RECORD_FORMAT} index (${wrong.slice(0, 300)})`);
  return value as RecordIndex;
}

export function renderRecordIndex(index: RecordIndex): string {
  return `${JSON.stringify(index, null, 2)}\n`;
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header,section{margin:0 auto;max-width:1400px;padding:12px 24px}
h1{font-size:22px;margin:8px 0}p{margin:6px 0}
table{border-collapse:collapse;background:#fff;width:100%}th,td{border:1px solid #dde1e7;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
.ok{color:#14532d;font-weight:600}.bad{color:#7f1d1d;font-weight:600}
.partial{color:#7c4a03;font-weight:600}.lists{margin:2px 0 0;padding-left:16px;font-size:12px}
code{font-size:12px;word-break:break-all}.note{color:#5b6575;font-size:12px}
td.links a{display:block;white-space:nowrap}
`;

/** The profile cell: full, or partial with the operations declared absent or empty. */
function profileCell(p: Profile): string {
  if (p.name === 'full') return 'full';
  const lists = [
    p.absent.length ? `<li>absent: ${p.absent.map(esc).join(', ')}</li>` : '',
    p.empty.length ? `<li>empty: ${p.empty.map(esc).join(', ')}</li>` : '',
  ].join('');
  return `<span class="partial">partial</span>${lists ? `<ul class="lists">${lists}</ul>` : ''}`;
}

/** A link to a file of the entry's bundle copy; the path is the schema's `bundles/<safe name>/`, escaped all the same. */
const link = (e: RecordEntry, file: string, text: string): string => `<a href="${esc(`${e.bundle}${file}`)}">${esc(text)}</a>`;

/** `2026-11-26 15:14 UTC`: a date-time to the minute, in UTC (index.json has it whole). */
function utcMinute(date: string): string {
  const t = Date.parse(date);
  return Number.isNaN(t) ? date : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function row(e: RecordEntry): string {
  const product = e.product ?? '(not declared)';
  const cells = [
    `<td class="product">${esc(product)}</td>`,
    `<td class="version">${esc(e.productVersion ?? '(not declared)')}</td>`,
    `<td class="profile">${profileCell(e.profile)}</td>`,
    `<td class="date"><time datetime="${esc(e.date)}">${esc(utcMinute(e.date))}</time></td>`,
    `<td class="suite">conformance ${esc(e.suiteVersion)}</td>`,
    `<td class="verdict">${e.certifiable ? '<span class="ok">certifiable</span>' : '<span class="bad">not certifiable</span>'}</td>`,
    `<td class="target">${esc(e.target.baseUrl)}</td>`,
    `<td class="key"><code>sha256:${esc(e.keySha256)}</code></td>`,
    `<td class="links">${link(e, '', 'bundle')}${link(e, 'report.html', 'report')}${link(e, 'certificate.json', 'certificate')}</td>`,
  ];
  return `<tr class="certificate" data-run="${esc(e.runId)}">${cells.join('')}</tr>`;
}

/**
 * index.html: a table of the record's certificates, newest first, as index.json holds them.
 * Self-contained (inline CSS), no script, and a content security policy that lets the page
 * load nothing: a value a vendor wrote cannot make it fetch or run anything.
 */
export function renderRecord(index: RecordIndex): string {
  const n = index.certificates.length;
  const rows = index.certificates.map(row).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Conformance certificates</title>
<style>${CSS}</style></head><body>
<header><h1>Conformance certificates</h1>
<p id="summary">${n} verified certificate${n === 1 ? '' : 's'}, newest first; generated ${esc(index.generated)}.</p>
<p class="note">Each certificate's bundle verified, signature and files, with the public key whose sha256 is shown. Check a copy yourself with: <code>conformance verify bundles/NAME --key PUBLIC_KEY.pem</code>. The same list, for programs: <a href="${RECORD_INDEX}">${RECORD_INDEX}</a>.</p>
</header>
<section><table id="certificates">
<thead><tr><th>Product</th><th>Version</th><th>Profile</th><th>Date (run finished)</th><th>Suite</th><th>Verdict</th><th>Target</th><th>Signing key</th><th>Files</th></tr></thead>
<tbody>
${rows}
</tbody></table></section>
</body></html>
`;
}
