// The contract travels with the suite: spec/contract/README.md states it in our words, its rule
// tables are what statements.yaml says, every check's clause and every statement's `at` lands
// on an anchor it has, and the contract digest covers it all and the suite's version.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCatalogSpec, CONTRACT_DOCUMENT, CONTRACT_SECTIONS, clauseText, sectionPath, statementLink, contractDigest } from '../lib/contract/index.js';
import { contractDocumentProblems, fillContractDocument, loadStatements } from '../lib/runner/index.js';
import { checkDefinitions } from '../suites/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const written = readFileSync(join(ROOT, CONTRACT_DOCUMENT), 'utf8');
// What the file must hold: the first test holds the file to it; the others check its content
// (so that `-u`, which rewrites the file, passes at once).
const document = fillContractDocument(written, loadStatements(), loadCatalogSpec());
const anchors = new Set([...document.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));

function anchorOf(link: string): string {
  expect(link.startsWith(`${CONTRACT_DOCUMENT}#`), link).toBe(true);
  return link.slice(CONTRACT_DOCUMENT.length + 1);
}

describe('spec/contract/README.md', () => {
  it('its generated tables are what statements.yaml and list-operations.yaml say (npm run generate rewrites them)', async () => {
    await expect(document).toMatchFileSnapshot(join(ROOT, CONTRACT_DOCUMENT));
  });

  it('lists every rule once, under a section that has a rule table', () => {
    expect(contractDocumentProblems(document, loadStatements())).toEqual([]);
    for (const s of loadStatements()) expect(document.split(`<a id="${s.id}"></a>`), s.id).toHaveLength(2);
  });

  it('has every section lib/contract/clauses.ts knows, once, in the same order', () => {
    const inDocument = [...document.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!).filter((a) => CONTRACT_SECTIONS.some((s) => s.anchor === a));
    expect(inDocument).toEqual(CONTRACT_SECTIONS.map((s) => s.anchor));
  });

  it('does not point readers outside the package', () => {
    expect(document).not.toMatch(/\.\.\/\.\.\/|shared\/contract/);
  });
});

describe('clauses are anchors of the contract document', () => {
  it("every check's clause links to a section the document has", () => {
    for (const c of checkDefinitions) expect(anchors.has(anchorOf(c.clauseLink)), c.id).toBe(true);
  });

  it('every statement names sections the document has, and its own link is an anchor', () => {
    for (const s of loadStatements()) {
      expect(s.at.length, s.id).toBeGreaterThan(0);
      for (const a of s.at) expect(anchors.has(a), `${s.id}: #${a}`).toBe(true);
      expect(anchors.has(anchorOf(statementLink(s.id))), s.id).toBe(true);
    }
  });

  it('a clause reads as its sections with the sections above them, then its detail', () => {
    expect(sectionPath('delete-custom-api')).toBe('Endpoints / Delete a Custom API');
    expect(sectionPath('list-operations')).toBe('Endpoints / List endpoints / The list operations');
    expect(clauseText({ at: 'delete-custom-api', detail: 'Failure 400' })).toBe('Endpoints / Delete a Custom API: Failure 400');
    expect(clauseText({ at: ['authentication', 'errors'] })).toBe('Authentication; Errors');
  });

  it('every spec/contract/README.md#anchor the code cites (comments and messages) is an anchor of the document', () => {
    const walk = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((f) => (f.isDirectory() ? walk(join(d, f.name)) : f.name.endsWith('.ts') ? [join(d, f.name)] : []));
    const cited = ['lib', 'suites', 'server', 'reporters', 'cli', 'selftest', 'bench', 'fixtures']
      .flatMap((d) => walk(join(ROOT, d)))
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/spec\/contract\/README\.md#([a-z0-9-]+(?:\.[a-z0-9-]+)*)/g)].map((m) => `${f.slice(ROOT.length + 1)}: #${m[1]}`),
      );
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((c) => !anchors.has(c.split('#')[1]!))).toEqual([]);
  });

  it('a statement naming no section, or an anchor the document lacks, is a problem of the document', () => {
    const bad = [
      { id: 'x.none', at: [], level: 'MUST' as const, text: 't', checks: ['a'] },
      { id: 'x.lost', at: ['refunds'], level: 'MUST' as const, text: 't', checks: ['a'] },
    ];
    expect(contractDocumentProblems(document, bad)).toEqual(
      expect.arrayContaining([expect.stringMatching(/x\.none names no section/), expect.stringMatching(/x\.lost: at names #refunds/)]),
    );
  });
});

describe('contractDigest', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of a package: package.json and spec/, written in the order given. */
  function pkg(files: Record<string, string>, version = '1.2.3'): string {
    const root = mkdtempSync(join(tmpdir(), 'conformance-digest-'));
    made.push(root);
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'conformance', version }));
    for (const [path, body] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), body);
    }
    return root;
  }
  const FILES = {
    'spec/error.schema.yaml': 'title: Error\n',
    'spec/list-operations.yaml': 'operations: []\n',
    'spec/contract/README.md': '# the contract\n',
    'spec/contract/statements.yaml': 'statements: []\n',
  };

  it('is the same for the same files and version, wherever they are and in whatever order they were written', () => {
    const reversed = Object.fromEntries(Object.entries(FILES).reverse());
    expect(contractDigest(pkg(FILES))).toBe(contractDigest(pkg(reversed)));
    expect(contractDigest(pkg(FILES))).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("changes with a contract document, any file under spec/, a file's name, and the suite's version", () => {
    const base = contractDigest(pkg(FILES));
    const variants = [
      pkg({ ...FILES, 'spec/contract/README.md': '# the contract, reworded\n' }),
      pkg({ ...FILES, 'spec/contract/statements.yaml': 'statements: [{ id: x }]\n' }),
      pkg({ ...FILES, 'spec/contract/notes/extra.md': 'more\n' }),
      pkg({ ...FILES, 'spec/error.schema.yaml': 'title: Error!\n' }),
      pkg({ ...Object.fromEntries(Object.entries(FILES).filter(([p]) => p !== 'spec/contract/README.md')), 'spec/contract/READ-ME.md': '# the contract\n' }),
      pkg(FILES, '1.2.4'),
    ].map((root) => contractDigest(root));
    for (const d of variants) expect(d).not.toBe(base);
    expect(new Set(variants).size).toBe(variants.length);
  });

  it("covers the package's own contract documents", () => {
    const copy = pkg({});
    writeFileSync(join(copy, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    cpSync(join(ROOT, 'spec'), join(copy, 'spec'), { recursive: true });
    const own = contractDigest();
    expect(contractDigest(copy)).toBe(own);
    for (const f of [CONTRACT_DOCUMENT, 'spec/contract/statements.yaml']) {
      const before = readFileSync(join(copy, f), 'utf8');
      writeFileSync(join(copy, f), `${before} `);
      expect(contractDigest(copy), f).not.toBe(own);
      writeFileSync(join(copy, f), before);
    }
    expect(contractDigest(copy)).toBe(own);
  });
});
