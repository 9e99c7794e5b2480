// Where a clause points: a section of spec/contract/README.md, the suite's own statement of the
// contract (shipped in the package), by the anchor of its heading. A check names its clause as
// `{ at: 'delete-custom-api', detail: 'Failure 400' }` and a rule of statements.yaml its sections
// as `at: [limits]`: references the compiler (for checks) and test/contract.test.ts (for rules)
// hold to the document, with nothing to parse. The text a report shows is made from them here.
// Pure data and string work (no file is read): the CLI and the reporters may import it freely.

/** The contract document, relative to the package root. */
export const CONTRACT_DOCUMENT = 'spec/contract/README.md';

export interface ContractSection {
  /** The `<a id>` of the section's heading in the document; stable, since links outlive wording. */
  readonly anchor: string;
  /** The section above it in the document, by anchor ("resources" above "application-key"). */
  readonly parent?: string;
  /** Its name, as clauses show it ("Delete a Custom API", under "Endpoints"). */
  readonly title: string;
}

/** The document's sections, in its order (which is the contract's). */
export const CONTRACT_SECTIONS = [
  { anchor: 'levels', title: 'Requirement levels' },
  { anchor: 'service', title: 'What the service does' },
  { anchor: 'resources', title: 'Resources' },
  { anchor: 'application-key', parent: 'resources', title: 'ApplicationKey' },
  { anchor: 'custom-api', parent: 'resources', title: 'Custom API' },
  { anchor: 'error', parent: 'resources', title: 'Error' },
  { anchor: 'pagination-information', parent: 'resources', title: 'Pagination information in list responses' },
  { anchor: 'states', title: 'States and transitions' },
  { anchor: 'endpoints', title: 'Endpoints' },
  { anchor: 'delete-custom-api', parent: 'endpoints', title: 'Delete a Custom API' },
  { anchor: 'create-application-key', parent: 'endpoints', title: 'Create an Application Key' },
  { anchor: 'list-endpoints', parent: 'endpoints', title: 'List endpoints' },
  { anchor: 'list-operations', parent: 'list-endpoints', title: 'The list operations' },
  { anchor: 'keyset-traversal', parent: 'endpoints', title: 'Keyset-style traversal' },
  { anchor: 'authentication', title: 'Authentication' },
  { anchor: 'events', title: 'Events' },
  { anchor: 'errors', title: 'Errors' },
  { anchor: 'limits', title: 'Limits' },
  { anchor: 'versioning', title: 'Versioning' },
] as const satisfies readonly ContractSection[];

/** The anchor of a section of the contract document: a clause can name no other. */
export type ContractAnchor = (typeof CONTRACT_SECTIONS)[number]['anchor'];

/** What a check enforces: one or more sections of the contract document, and where in them. */
export interface Clause {
  /** The section(s), by anchor; the first is where its link points. */
  readonly at: ContractAnchor | readonly ContractAnchor[];
  /** The row, field or case of the section meant ("Failure 400", "reserved_rate_limit"). */
  readonly detail?: string;
}

const byAnchor = new Map<string, ContractSection>(CONTRACT_SECTIONS.map((s) => [s.anchor, s]));

/** Whether `anchor` names a section of the document (statements.yaml is not typed: tests ask). */
export function isContractAnchor(anchor: string): anchor is ContractAnchor {
  return byAnchor.has(anchor);
}

/** A section's name with the sections above it: "Endpoints / Delete a Custom API". */
export function sectionPath(anchor: ContractAnchor): string {
  const names: string[] = [];
  for (let at = byAnchor.get(anchor); at; at = at.parent ? byAnchor.get(at.parent) : undefined) names.unshift(at.title);
  return names.join(' / ');
}

function anchorsOf(c: Clause): readonly ContractAnchor[] {
  return typeof c.at === 'string' ? [c.at] : c.at;
}

/** The clause as reports show it: "Endpoints / Delete a Custom API: Failure 400". */
export function clauseText(c: Clause): string {
  const where = anchorsOf(c).map(sectionPath).join('; ');
  return c.detail ? `${where}: ${c.detail}` : where;
}

/** The link of a clause, relative to the package root: the document at its first section. */
export function clauseLink(c: Clause): string {
  return `${CONTRACT_DOCUMENT}#${anchorsOf(c)[0]!}`;
}

/** The link of one rule of spec/contract/statements.yaml: the document anchors each by its id. */
export function statementLink(id: string): string {
  return `${CONTRACT_DOCUMENT}#${id}`;
}
