// The harness as a library: run checks from your own code, against your own server.
export { RunContext, CheckContext, Session, runCheck, resultKey, loadFaker, type Check, type CheckResult, type FailureEvidence, type RunSettings, type PaginationSettings } from './check.js';
export { CheckFailure, CheckSkip, SuiteError, type Level, type Outcome, type SuiteErrorCode } from './outcome.js';
export { HttpClient, HttpResponse, type RequestSpec, type Auth } from './http.js';
export { cleanUp, type Leftover, type CleanupReport } from './cleanup.js';
export { endpointsOf, loadCatalogSpec, mergeCatalog, type Endpoint, type CatalogOverrides } from './catalog.js';
export { SCHEMA, validate, contractDigest } from './schema.js';
export { checkDefinitions, expandChecks, staticChecks, listChecks } from '../suites/index.js';
