// The traceability matrix in docs/ is generated, not hand-kept, and complete both ways.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { CONTRACT_DOCUMENT } from '../lib/contract/index.js';
import { loadStatements, renderTraceability, traceabilityProblems } from '../lib/runner/index.js';
import { checkDefinitions } from '../suites/index.js';

it('every check enforces a statement, every MUST statement has a check, every named check exists', () => {
  expect(traceabilityProblems(loadStatements(), checkDefinitions)).toEqual([]);
});

it('docs/traceability.md is what the generator writes (npm run generate rewrites it, with -u)', async () => {
  await expect(renderTraceability(loadStatements(), checkDefinitions)).toMatchFileSnapshot('../docs/traceability.md');
});

it('every link of docs/traceability.md into the contract document lands on an anchor it has', () => {
  const doc = readFileSync(resolve(import.meta.dirname, '..', CONTRACT_DOCUMENT), 'utf8');
  const anchors = new Set([...doc.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));
  const links = [...renderTraceability(loadStatements(), checkDefinitions).matchAll(/\]\(\.\.\/([^)#]+)#([^)]+)\)/g)];
  expect(links.length).toBeGreaterThan(checkDefinitions.length);
  for (const [link, file, anchor] of links) {
    expect(file, link).toBe(CONTRACT_DOCUMENT);
    expect(anchors.has(anchor!), link).toBe(true);
  }
});

it('finds what is missing', () => {
  const statements = [
    { id: 's.must', at: ['limits'], level: 'MUST' as const, text: 't' },
    { id: 's.named', at: ['limits'], level: 'SHOULD' as const, text: 't', checks: ['no.such'] },
  ];
  expect(traceabilityProblems(statements, [{ id: 'lonely.check', level: 'MUST', title: 't', clause: 'Limits', clauseLink: '' }])).toEqual([
    'check lonely.check enforces no statement',
    'MUST statement s.must has no check',
    'statement s.must has neither checks nor a reason it is unchecked',
    'statement s.named names unknown check no.such',
  ]);
});
