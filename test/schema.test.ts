// The schemas of spec/ are JSON Schema 2020-12: lib/schema.ts does not check them against the
// meta-schema when it loads them (that costs more than the checks' own validation), so this does.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { SCHEMA, schemaDocuments, validate } from '../lib/schema.js';

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
