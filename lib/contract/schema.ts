// The JSON Schemas of spec/, compiled once (ajv strict + ajv-formats) and looked up by $id.
// ajv, ajv-formats and yaml are loaded on the first validate(), not on import: the check
// catalogue (--list) imports this module and never validates anything. They are CommonJS, so
// require() loads them synchronously and validate() stays synchronous. Each schema is compiled
// when first used: the checks never use the results schema, the report writer only that one.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { parse as parseYamlType } from 'yaml';
import { packageRoot, readPackageVersion } from '../package/index.js';

const require = createRequire(import.meta.url);

export const SCHEMA = {
  error: 'https://conformance.local/spec/error.schema.json',
  applicationKeyCreateRequest: 'https://conformance.local/spec/application-key-create-request.schema.json',
  applicationKeyCreateResponse: 'https://conformance.local/spec/application-key-create-response.schema.json',
  listResponse: 'https://conformance.local/spec/list-meta.schema.json',
  results: 'https://conformance.local/spec/results.schema.json',
  attestation: 'https://conformance.local/spec/attestation.schema.json',
  record: 'https://conformance.local/spec/record.schema.json',
} as const;
export type SchemaId = (typeof SCHEMA)[keyof typeof SCHEMA];

export interface SchemaViolation {
  /** JSON pointer into the validated value, "" for the root. */
  path: string;
  message: string;
}

let documents: object[] | undefined;
let ajv: Ajv2020 | undefined;

/** The schemas of spec/, parsed (their YAML read once per process). */
export function schemaDocuments(): object[] {
  if (!documents) {
    const { parse: parseYaml } = require('yaml') as { parse: typeof parseYamlType };
    const dir = join(packageRoot, 'spec');
    documents = readdirSync(dir)
      .filter((f) => f.endsWith('.schema.yaml'))
      .sort()
      .map((file) => parseYaml(readFileSync(join(dir, file), 'utf8')) as object);
  }
  return documents;
}

/** Schemas parsed elsewhere: the vitest worker takes the main process's, and need not load yaml. */
export function useSchemaDocuments(docs: object[]): void {
  documents ??= docs;
}

/** Every schema of spec/, added on first use; each is compiled when first asked for. */
function loadSchemas(): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
  const addFormats = require('ajv-formats') as { default: (ajv: Ajv2020) => Ajv2020 };
  // Not checked against the meta-schema on every start (compiling the meta-schema costs more
  // than our schemas): they are the package's own, and test/schema.test.ts checks them.
  const out = new Ajv({ strict: true, allErrors: true, validateSchema: false });
  addFormats.default(out);
  // The contract leaves the timestamp format open ("Format of the timestamp strings: not shown");
  // the suite asks only that timestamps parse as dates (spec/contract/README.md#application-key).
  out.addFormat('parseable-date', (s: string) => !Number.isNaN(Date.parse(s)));
  for (const doc of schemaDocuments()) out.addSchema(doc);
  return out;
}

/** The compiled schema (ajv compiles it on the first getSchema and keeps it). */
function validator(id: SchemaId): ValidateFunction {
  ajv ??= loadSchemas();
  const fn = ajv.getSchema(id);
  if (!fn) throw new Error(`conformance: schema ${id} is missing from spec/`);
  return fn;
}

/** Validates a value; returns the violations (empty when valid). */
export function validate(id: SchemaId, value: unknown): SchemaViolation[] {
  const fn = validator(id);
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e: ErrorObject) => ({
    path: e.instancePath || '(root)',
    message: `${e.message ?? 'is invalid'}${e.params && 'allowedValue' in e.params ? ` (${JSON.stringify(e.params.allowedValue)})` : ''}`,
  }));
}

export function describeViolations(v: SchemaViolation[]): string {
  return v.map((x) => `${x.path} ${x.message}`).join('; ');
}

/** The files under `dir`, as '/'-separated paths relative to it, in code-unit order. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) return filesUnder(dir, rel);
      return entry.isFile() ? [rel] : [];
    })
    .sort();
}

/**
 * The contract digest: sha256 over the suite's version (package.json) and every file under
 * spec/ (the contract documents of spec/contract/, the schemas, the list operations): each
 * file's relative path, length and content, in path order. A certificate that carries it pins
 * what judged the product; the same files and version give the same digest wherever the
 * package is installed.
 */
export function contractDigest(root: string = packageRoot): string {
  const h = createHash('sha256');
  h.update(`version\0${readPackageVersion(root)}\0`);
  hashFiles(h, join(root, 'spec'), '');
  return `sha256:${h.digest('hex')}`;
}

/** Each file under `dir`, as `prefix/path` (or `path`), its length and its bytes, in path order, into `h`. */
function hashFiles(h: ReturnType<typeof createHash>, dir: string, prefix: string, keep: (file: string) => boolean = () => true): void {
  for (const file of filesUnder(dir).filter(keep)) {
    const body = readFileSync(join(dir, file));
    h.update(`${prefix ? `${prefix}/` : ''}${file}\0${body.length}\0`);
    h.update(body);
  }
}

/**
 * The suite's digest: sha256 over what the package runs, as package.json's `files` ships it:
 * package.json, the compiled code under dist/ (not its benches or build records) and spec/. A
 * certificate names it, so a suite that was changed under the same version number is told
 * apart from the one that was published. A checkout whose dist/ holds files a build no longer
 * writes has its own digest: build from a clean tree to match a published package.
 */
export function suiteDigest(root: string = packageRoot): string {
  const h = createHash('sha256');
  const pkg = readFileSync(join(root, 'package.json'));
  h.update(`package.json\0${pkg.length}\0`);
  h.update(pkg);
  if (existsSync(join(root, 'dist'))) hashFiles(h, join(root, 'dist'), 'dist', (f) => !f.startsWith('bench/') && !f.endsWith('.tsbuildinfo'));
  hashFiles(h, join(root, 'spec'), 'spec');
  return `sha256:${h.digest('hex')}`;
}
