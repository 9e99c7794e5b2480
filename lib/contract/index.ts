// The contract: its sections (the clauses a check cites), the catalogue of list operations, and
// the JSON Schemas of spec/, compiled once. schema.ts loads ajv and yaml only when it first
// validates, so the check catalogue (--list) imports this folder without them.
export { clauseLink, clauseText, CONTRACT_DOCUMENT, CONTRACT_SECTIONS, isContractAnchor, sectionPath, statementLink, type Clause } from './clauses.js';
export {
  catalogNames,
  endpointsOf,
  listPathsOf,
  loadCatalogSpec,
  mergeCatalog,
  parentSourceIn,
  placeholders,
  type CatalogOverrides,
  type CatalogSpec,
  type Endpoint,
  type PaginationSettings,
  type ParentSource,
} from './catalog.js';
export {
  contractDigest,
  describeViolations,
  SCHEMA,
  schemaDocuments,
  suiteDigest,
  useSchemaDocuments,
  validate,
  type SchemaId,
  type SchemaViolation,
} from './schema.js';
