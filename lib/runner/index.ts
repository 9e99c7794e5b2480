// The checks and their run: a check as data and the context it runs in, the assertions it makes,
// the names it creates and the ledger of what it created, the cleanup, the preflight, the
// exchanges observed elsewhere (a proxy, a HAR file), and the statements-to-checks matrix. Light
// on import (the check catalogue loads it for --list): faker, ajv and undici come later.
export {
  CheckContext,
  errorResult,
  GATE,
  gateChannel,
  judgedByItsRule,
  loadFaker,
  resultHead,
  resultKey,
  runCheck,
  RunContext,
  Session,
  stopChannel,
  type Check,
  type CheckHeader,
  type CheckResult,
  type FailureEvidence,
  type RunSettings,
  type ServerErrorRule,
  type Written,
  type WrittenCheck,
} from './check.js';
export {
  expectEmptyBody,
  expectErrorBody,
  expectRejected,
  expectSchema,
  expectStatus,
  expectValid,
  fail,
  isJsonContentType,
  type StatusRule,
} from './expect.js';
export { hash32, seededRandom } from './random.js';
export { astralTag, bmpTag, tracesTo } from './run-names.js';
export { isRunId, Ledger, ledgerPath, ledgersRoot, newRunId, runInProgress, sameTarget, type LedgerRun, type SettingChange } from './ledger.js';
export { cleanUp, cleanUpAfterOutage, keepingLedger, restoreSetting, type CleanupReport, type Leftover } from './cleanup.js';
export { checkTarget, preflight } from './preflight.js';
export { refusalLookUp, type Left, type RefusalLookUp } from './refused.js';
export { learnAnswer, learnRequest, observedResponse, type Observed, type ObservedOperation, type Seen, type SeenBefore } from './observed.js';
export { HarError, readHar } from './har.js';
export {
  contractDocumentProblems,
  fillContractDocument,
  loadStatements,
  renderTraceability,
  STATEMENTS_FILE,
  traceabilityProblems,
  type Statement,
} from './traceability.js';
