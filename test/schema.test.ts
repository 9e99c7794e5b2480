// The schemas of spec/ are JSON Schema 2020-12: lib/contract/schema.ts does not check them against
// the meta-schema when it loads them (that costs more than the checks' own validation), so this
// does.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { SUITE_ERROR_CODES } from '../lib/evidence/index.js';
import { SCHEMA, schemaDocuments, validate } from '../lib/contract/index.js';

describe('spec/*.schema.yaml', () => {
  it('every schema is valid against the 2020-12 meta-schema', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const docs = schemaDocuments();
    expect(docs.length).toBeGreaterThanOrEqual(Object.keys(SCHEMA).length);
    for (const doc of docs) expect(ajv.validateSchema(doc), `${(doc as { $id?: string }).$id}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
  });

  it('every schema the suite names compiles and validates', () => {
    for (const id of Object.values(SCHEMA)) expect(Array.isArray(validate(id, {}))).toBe(true);
  });
});

describe('spec/results.schema.yaml', () => {
  it("a result's errorCode is one of the suite's codes, the same list as lib/evidence/outcome.ts", () => {
    const doc = parseYaml(readFileSync(resolve(import.meta.dirname, '../spec/results.schema.yaml'), 'utf8')) as {
      properties: { results: { items: { properties: { errorCode: { enum: string[] } } } } };
    };
    expect(doc.properties.results.items.properties.errorCode.enum).toEqual([...SUITE_ERROR_CODES]);
  });
});
