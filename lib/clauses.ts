// Where a clause points: from a check's `clause` ("Endpoints / Delete a Custom API: Failure 400")
// or a statement's `source` (contract "Limits" (name length); READING "Pagination") to a section
// of spec/contract/README.md, the suite's own statement of the contract, shipped in the package.
// Pure data and string work (no file is read): the CLI and the reporters may import it freely.
// test/contract.test.ts holds every anchor here to the document and every check's clause to a link.

/** The contract document, relative to the package root. */
export const CONTRACT_DOCUMENT = 'spec/contract/README.md';

export interface ContractSection {
  /** The `<a id>` of the section's heading in the document; stable, since links outlive wording. */
  anchor: string;
  /** The section above it in the contract, by anchor ("Resources" above "ApplicationKey"). */
  parent?: string;
  /** Names the contract gives the section, without a trailing parenthesis. */
  contract: readonly string[];
  /** Names a statement's `READING "…"` source gives the section, besides its contract names. */
  reading: readonly string[];
}

/** The document's sections, in its order (which is the contract's). */
export const CONTRACT_SECTIONS: readonly ContractSection[] = [
  { anchor: 'levels', contract: [], reading: ['Requirement levels'] },
  { anchor: 'service', contract: ['What the service does'], reading: [] },
  { anchor: 'resources', contract: ['Resources', 'Resources and their fields'], reading: [] },
  { anchor: 'application-key', parent: 'resources', contract: ['ApplicationKey'], reading: [] },
  { anchor: 'custom-api', parent: 'resources', contract: ['Custom API'], reading: [] },
  { anchor: 'error', parent: 'resources', contract: ['Error'], reading: [] },
  { anchor: 'pagination-information', parent: 'resources', contract: ['Pagination information in list responses', 'Pagination information'], reading: [] },
  { anchor: 'states', contract: ['States and transitions'], reading: [] },
  { anchor: 'endpoints', contract: ['Endpoints'], reading: [] },
  { anchor: 'delete-custom-api', parent: 'endpoints', contract: ['Delete a Custom API'], reading: ['Delete a Custom API'] },
  { anchor: 'create-application-key', parent: 'endpoints', contract: ['Create an Application Key'], reading: ['Create an Application Key'] },
  { anchor: 'list-endpoints', parent: 'endpoints', contract: ['List endpoints'], reading: ['Pagination'] },
  { anchor: 'list-operations', parent: 'list-endpoints', contract: [], reading: ['The list operations'] },
  { anchor: 'keyset-traversal', parent: 'endpoints', contract: ['Keyset-style traversal'], reading: [] },
  { anchor: 'authentication', contract: ['Authentication'], reading: ['Authentication'] },
  { anchor: 'events', contract: ['Events'], reading: [] },
  { anchor: 'errors', contract: ['Errors'], reading: ['Errors'] },
  { anchor: 'limits', contract: ['Limits'], reading: [] },
  { anchor: 'versioning', contract: ['Versioning'], reading: [] },
];

const byAnchor = new Map(CONTRACT_SECTIONS.map((s) => [s.anchor, s]));

/** Without any parenthesis: "List endpoints (shared conventions)" → "List endpoints". */
function bare(name: string): string {
  let out = name;
  for (let prev = ''; prev !== out; ) {
    prev = out;
    out = out.replace(/\s*\([^()]*\)/g, '');
  }
  return out.trim();
}

/**
 * A clause part in the checks' style, "Parent / Section: detail": the section by its contract
 * name. The detail (a row of the section: "Failure 400") is not a place of its own. A parent
 * given must be the section's own; a section named alone is found wherever it is.
 */
function checkStyle(part: string): string | undefined {
  const path = bare(part).split(':')[0]!.split('/').map((p) => p.trim());
  const name = path.pop()!;
  const found = CONTRACT_SECTIONS.filter((s) => s.contract.includes(name));
  return found.find((s) => {
    let at: ContractSection | undefined = s;
    for (const parent of [...path].reverse()) {
      at = at?.parent ? byAnchor.get(at.parent) : undefined;
      if (!at?.contract.includes(parent)) return false;
    }
    return true;
  })?.anchor;
}

/** A statement's source part, `contract "A" (detail), "B"` or `READING "C"`: every name in it. */
function sourceStyle(document: 'contract' | 'READING', part: string): Array<string | undefined> {
  return [...part.matchAll(/"([^"]+)"/g)].map(([, name]) => {
    const n = bare(name!);
    return CONTRACT_SECTIONS.find((s) => (document === 'contract' ? s.contract : s.reading).includes(n))?.anchor;
  });
}

export interface ResolvedClause {
  /** The anchors named, in the order named, each once. */
  anchors: string[];
  /** The parts that name no section of the document. */
  unresolved: string[];
}

/** Resolves a check's clause or a statement's source (parts separated by ";") to sections. */
export function resolveClause(clause: string): ResolvedClause {
  const anchors: string[] = [];
  const unresolved: string[] = [];
  for (const raw of clause.split(';')) {
    const part = raw.trim();
    if (!part) continue;
    const source = /^(contract|READING)\s+"/.exec(part);
    const found = source ? sourceStyle(source[1] as 'contract' | 'READING', part) : [checkStyle(part)];
    if (!found.length || found.some((a) => a === undefined)) unresolved.push(part);
    for (const a of found) if (a !== undefined && !anchors.includes(a)) anchors.push(a);
  }
  return { anchors, unresolved };
}

/**
 * The link for a clause, relative to the package root: `spec/contract/README.md#<anchor>` of
 * the first section it names, or the document itself when it names none.
 */
export function clauseLink(clause: string): string {
  const [first] = resolveClause(clause).anchors;
  return first ? `${CONTRACT_DOCUMENT}#${first}` : CONTRACT_DOCUMENT;
}

/** The link of one rule of spec/contract/statements.yaml: the document anchors each by its id. */
export function statementLink(id: string): string {
  return `${CONTRACT_DOCUMENT}#${id}`;
}
