// The four outcomes of a check (spec/contract/README.md#levels) and the errors that carry
// them out of a check's code. A CheckFailure blames the target; a SuiteError says the suite
// itself could not do its work; a CheckSkip says why the check does not apply.
import type { Exchange } from './exchange.js';

export type Level = 'MUST' | 'SHOULD' | 'INFO';
export type Outcome = 'pass' | 'fail' | 'error' | 'skip';

export interface Evidence {
  expected: string;
  actual: string;
  /** The exchange the verdict rests on, if any. */
  exchange?: Exchange;
  /** Earlier exchanges of the same check, oldest first (setup, the first delete, ...). */
  history?: Exchange[];
}

/**
 * A value as evidence shows it. Checks often quote what the target sent, and the target can
 * send anything (or nothing): `JSON.stringify(undefined)` is not a string, and evidence that
 * cannot be printed must never turn a verdict into a crash of the suite.
 */
export function shown(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'absent';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export class CheckFailure extends Error {
  readonly expected: string;
  readonly actual: string;
  readonly exchange?: Exchange;
  constructor(message: string, detail: { expected: unknown; actual: unknown; exchange?: Exchange }) {
    super(message);
    this.name = 'CheckFailure';
    this.expected = shown(detail.expected);
    this.actual = shown(detail.actual);
    this.exchange = detail.exchange;
  }
}

export class CheckSkip extends Error {
  /** Skipped because the list holds too few records to exercise the rule (CheckContext.skipForRecords). */
  readonly wantsRecords: boolean;

  constructor(reason: string, options: { wantsRecords?: boolean } = {}) {
    super(reason);
    this.name = 'CheckSkip';
    this.wantsRecords = options.wantsRecords === true;
  }
}

/**
 * Stable codes for the suite's own failures, so reports and tests can tell them apart (a
 * result's errorCode; spec/results.schema.yaml lists the same, a test holds them equal).
 */
export const SUITE_ERROR_CODES = [
  'TARGET_UNREACHABLE',
  'TIMEOUT',
  'CONNECTION_CLOSED',
  'RESPONSE_TOO_LARGE',
  /** Still 429 when the request's retry budget ran out: no verdict rests on "ask later". */
  'RATE_LIMITED',
  /**
   * No longer given: a 503 still there when the retry budget runs out is the answer, and fails
   * the check that sent it (spec/contract/README.md#errors.no-5xx). Kept so that results written
   * by earlier versions still read (merge).
   */
  'SERVICE_UNAVAILABLE',
  /** The circuit breaker is open: the target stopped answering mid-run, later requests are not sent. */
  'TARGET_DOWN',
  /** A new token was needed mid-run and the login with the client credentials gave none: the request was not sent. */
  'LOGIN_FAILED',
  /** The run was stopped (Ctrl-C, SIGTERM): the request was not sent. */
  'INTERRUPTED',
  /** The run stopped at the preflight (a refused token, a dead host): no check ran, and the report says why. */
  'NOT_RUN',
  'SUITE_BUG',
] as const;

export type SuiteErrorCode = (typeof SUITE_ERROR_CODES)[number];

/**
 * How many times in all a piece of work is tried when its tries end on a request perhaps
 * applied (SuiteError.mayHaveApplied): such a request cannot be sent again as it is, but the
 * work can start over with new data (Session.create, runCheck). Three lost in a row leave it
 * in error.
 */
export const TRIES_WHEN_LOST = 3;

export class SuiteError extends Error {
  readonly code: SuiteErrorCode;
  /**
   * A POST or DELETE was sent and no whole answer came back (a reset, a timeout): the target
   * may or may not have applied it, so it is not sent again as it is. The check that sent it
   * is run again from its start instead (runCheck).
   */
  readonly mayHaveApplied: boolean;
  constructor(code: SuiteErrorCode, message: string, options: { mayHaveApplied?: boolean } = {}) {
    super(message);
    this.name = 'SuiteError';
    this.code = code;
    this.mayHaveApplied = options.mayHaveApplied === true;
  }
}
