// The JSON Schemas of spec/, compiled once (ajv strict + ajv-formats) and looked up by $id.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from './package.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const SCHEMA = {
  error: 'https://conformance.local/spec/error.schema.json',
  applicationKeyCreateRequest: 'https://conformance.local/spec/application-key-create-request.schema.json',
  applicationKeyCreateResponse: 'https://conformance.local/spec/application-key-create-response.schema.json',
  listResponse: 'https://conformance.local/spec/list-meta.schema.json',
  results: 'https://conformance.local/spec/results.schema.json',
} as const;
export type SchemaId = (typeof SCHEMA)[keyof typeof SCHEMA];

export interface SchemaViolation {
  /** JSON pointer into the validated value, "" for the root. */
  path: string;
  message: string;
}

let compiled: Map<string, ValidateFunction> | undefined;

function compileAll(): Map<string, ValidateFunction> {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // The contract leaves the timestamp format open ("Format of the timestamp strings: not
  // shown"); READING.md asks only that timestamps parse as dates.
  ajv.addFormat('parseable-date', (s: string) => !Number.isNaN(Date.parse(s)));
  const dir = join(packageRoot, 'spec');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.yaml')).sort()) {
    ajv.addSchema(parseYaml(readFileSync(join(dir, file), 'utf8')) as object);
  }
  const out = new Map<string, ValidateFunction>();
  for (const id of Object.values(SCHEMA)) {
    const fn = ajv.getSchema(id);
    if (!fn) throw new Error(`conformance: schema ${id} is missing from spec/`);
    out.set(id, fn);
  }
  return out;
}

/** Validates a value; returns the violations (empty when valid). */
export function validate(id: SchemaId, value: unknown): SchemaViolation[] {
  compiled ??= compileAll();
  const fn = compiled.get(id)!;
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e: ErrorObject) => ({
    path: e.instancePath || '(root)',
    message: `${e.message ?? 'is invalid'}${e.params && 'allowedValue' in e.params ? ` (${JSON.stringify(e.params.allowedValue)})` : ''}`,
  }));
}

export function describeViolations(v: SchemaViolation[]): string {
  return v.map((x) => `${x.path} ${x.message}`).join('; ');
}

/**
 * The contract digest: sha256 over every file of spec/ (name and content, in name order), so
 * a report says exactly which schemas and catalog the suite judged by.
 */
export function contractDigest(): string {
  const dir = join(packageRoot, 'spec');
  const h = createHash('sha256');
  for (const file of readdirSync(dir).sort()) {
    h.update(`${file}\0`);
    h.update(readFileSync(join(dir, file)));
    h.update('\0');
  }
  return `sha256:${h.digest('hex')}`;
}
