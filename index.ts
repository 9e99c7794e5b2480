// The harness as a library: run checks from your own code, against your own server. It sits
// above every layer it gathers (lib/ and suites/), so nothing below imports it.
export {
  RunContext,
  CheckContext,
  Session,
  runCheck,
  resultKey,
  loadFaker,
  type Check,
  type CheckResult,
  type FailureEvidence,
  type RunSettings,
} from './lib/runner/index.js';
export { CheckFailure, CheckSkip, SuiteError, type Level, type Outcome, type SuiteErrorCode } from './lib/evidence/index.js';
export { HttpClient, HttpResponse, type RequestSpec, type Auth } from './lib/transport/index.js';
export { cleanUp, type Leftover, type CleanupReport } from './lib/runner/index.js';
export { endpointsOf, loadCatalogSpec, mergeCatalog, type Endpoint, type CatalogOverrides, type PaginationSettings } from './lib/contract/index.js';
export { SCHEMA, validate, contractDigest } from './lib/contract/index.js';
export { checkDefinitions, expandChecks, staticChecks, listChecks } from './suites/index.js';
