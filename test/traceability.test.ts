// The traceability matrix in docs/ is generated, not hand-kept, and complete both ways.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { loadStatements, renderTraceability, traceabilityProblems } from '../lib/traceability.js';
import { checkDefinitions } from '../suites/index.js';

it('every check enforces a statement, every MUST statement has a check, every named check exists', () => {
  expect(traceabilityProblems(loadStatements(), checkDefinitions)).toEqual([]);
});

it('docs/traceability.md is what the generator writes (run npm run traceability after a change)', () => {
  const committed = readFileSync(resolve(import.meta.dirname, '../docs/traceability.md'), 'utf8');
  expect(committed).toBe(renderTraceability(loadStatements(), checkDefinitions));
});

it('finds what is missing', () => {
  const statements = [{ id: 's.must', source: 'x', level: 'MUST' as const, text: 't' }, { id: 's.named', source: 'x', level: 'SHOULD' as const, text: 't', checks: ['no.such'] }];
  expect(traceabilityProblems(statements, [{ id: 'lonely.check', level: 'MUST', title: 't' }])).toEqual([
    'check lonely.check enforces no statement',
    'MUST statement s.must has no check',
    'statement s.must has neither checks nor a reason it is unchecked',
    'statement s.named names unknown check no.such',
  ]);
});
