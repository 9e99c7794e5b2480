// Evidence: one recorded exchange, the outcomes a check ends in and the errors that carry them,
// and the secrets masked by value in everything recorded.
export { MASK, Secrets } from './secrets.js';
export { BODY_EXCERPT_MAX, exchangeLine, REQUEST_BODY_MAX, toCurl, type Exchange } from './exchange.js';
export { CheckFailure, CheckSkip, shown, SUITE_ERROR_CODES, SuiteError, TRIES_WHEN_LOST, type Level, type Outcome, type SuiteErrorCode } from './outcome.js';
