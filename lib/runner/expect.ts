// Assertions for checks. Each one says what was expected and what came back, and carries
// the exchange, so a failure always shows the request, the status and the body.
import type { HttpResponse } from '../transport/index.js';
import { CheckFailure } from '../evidence/index.js';
import { describeViolations, SCHEMA, validate, type SchemaId, type SchemaViolation } from '../contract/index.js';

/** The target broke a rule: a failure with its evidence (expected and actual as shown()). */
export function fail(message: string, detail: { expected: unknown; actual: unknown; res?: HttpResponse }): never {
  throw new CheckFailure(message, { expected: detail.expected, actual: detail.actual, exchange: detail.res?.exchange });
}

export type StatusRule = number | readonly number[] | { range: '2xx' | '4xx' };

function statusMatches(status: number, rule: StatusRule): boolean {
  if (typeof rule === 'number') return status === rule;
  if (Array.isArray(rule)) return rule.includes(status);
  const r = rule as { range: '2xx' | '4xx' };
  return r.range === '2xx' ? status >= 200 && status < 300 : status >= 400 && status < 500;
}

function describeRule(rule: StatusRule): string {
  if (typeof rule === 'number') return String(rule);
  if (Array.isArray(rule)) return rule.join(' or ');
  return (rule as { range: string }).range;
}

/** The status must follow the rule; `what` names the request in the failure message. */
export function expectStatus(res: HttpResponse, rule: StatusRule, what: string): void {
  if (statusMatches(res.status, rule)) return;
  const server = res.status >= 500 ? ' (a server error: spec/contract/README.md#errors.no-5xx counts any 5xx as a failure of the check that provoked it)' : '';
  fail(`${what}: status ${res.status}, expected ${describeRule(rule)}${server}`, {
    expected: `status ${describeRule(rule)}`,
    actual: `status ${res.status}`,
    res,
  });
}

/** The body must be JSON and match the schema; returns the parsed body. */
export function expectSchema(res: HttpResponse, schema: SchemaId, what: string): unknown {
  const body = res.json();
  expectValid(validate(schema, body), schema, res, what);
  return body;
}

/** No violations of `schema` (found when `res`'s body was read). */
export function expectValid(violations: SchemaViolation[], schema: SchemaId, res: HttpResponse, what: string): void {
  if (violations.length === 0) return;
  fail(`${what}: the body does not match ${schema.split('/').pop()}`, { expected: `a body matching ${schema}`, actual: describeViolations(violations), res });
}

/**
 * The Error shape (spec/contract/README.md#error, #errors.shape): a JSON body `{ errors: [...] }`
 * with at least one element of string title, status and detail, where status is the HTTP
 * status code as text.
 */
export function expectErrorBody(res: HttpResponse, what: string): void {
  const body = expectSchema(res, SCHEMA.error, `${what}: error body`) as { errors: Array<{ status: string }> };
  const wrong = body.errors.findIndex((e) => e.status !== String(res.status));
  if (wrong >= 0) {
    fail(`${what}: errors[${wrong}].status does not match the HTTP status`, {
      expected: `errors[${wrong}].status "${res.status}"`,
      actual: `errors[${wrong}].status ${JSON.stringify(body.errors[wrong]!.status)}`,
      res,
    });
  }
}

/** Rejected: a 4xx (never 2xx, never 5xx) with the Error shape. */
export function expectRejected(res: HttpResponse, what: string, rule: StatusRule = { range: '4xx' }): void {
  expectStatus(res, rule, what);
  expectErrorBody(res, what);
}

export function expectEmptyBody(res: HttpResponse, what: string): void {
  if (res.text.length === 0) return;
  fail(`${what}: the body is not empty`, { expected: 'an empty body', actual: `${res.exchange.bodyBytes} bytes: ${res.exchange.bodyExcerpt}`, res });
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && JSON_TYPE.test(value.trim());
}
