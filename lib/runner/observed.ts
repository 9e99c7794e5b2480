// Exchanges the suite did not send but saw: through `conformance proxy`, or read from a HAR file
// (lib/runner/har.ts). Each becomes an HttpResponse like the suite's own answers
// (lib/transport/http.ts responseOf), so the predicates the checks use judge it as they are, with
// evidence masked as in a run: the traffic's bearer tokens and Basic credentials, and any
// client_secret it carries, are learned as secrets before anything of it is written.
import { responseOf, type HttpResponse } from '../transport/index.js';
import type { Secrets } from '../evidence/index.js';

export interface Observed {
  method: string;
  /** The absolute URL, as sent. */
  url: string;
  /** Header names in lower case. */
  requestHeaders: Record<string, string>;
  requestBody?: string;
  status: number;
  /** Header names in lower case. */
  responseHeaders: Record<string, string>;
  /** The body as text (decoded from base64 where a HAR file stores it so). */
  responseBody: string;
  /** Its size in bytes as received. */
  bodyBytes: number;
  /**
   * The answer's body is not known whole: longer than the proxy keeps (--max-body-bytes), in an
   * encoding it does not decode, or not recorded (a HAR file holds no text for a body the page
   * never read). Such an exchange is not judged.
   */
  unread?: boolean;
  /** The request's body is not known (an encoding the proxy does not decode, or cut): not judged either. */
  requestUnread?: boolean;
  /** When the request was sent, and when its answer had come, in epoch milliseconds. */
  startedAt: number;
  durationMs: number;
}

/** The credentials a request carries: a bearer token, or the parts of a Basic credential. */
export function credentialsOf(headers: Record<string, string>): string[] {
  const auth = headers.authorization;
  if (!auth) return [];
  const [scheme, value = ''] = auth.trim().split(/\s+/, 2);
  if (/^bearer$/i.test(scheme ?? '')) return [value];
  if (/^basic$/i.test(scheme ?? '')) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return [value, ...(colon >= 0 ? [decoded.slice(0, colon), decoded.slice(colon + 1)] : [decoded])].filter((x) => x.length > 0);
  }
  return [value || (scheme ?? '')].filter((x) => x.length > 0);
}

/** A body parsed as JSON, every client_secret in it learned; undefined when it is absent or not JSON. */
function learnedJson(text: string | undefined, secrets: Secrets): unknown {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    secrets.addFromBody(value, text);
    return value;
  } catch {
    // Not JSON: nothing named client_secret to learn.
    return undefined;
  }
}

/**
 * Learns the secrets a request carries (its credentials, every client_secret in its body) and
 * returns its body parsed as JSON, or undefined. Its answer's are learned by observedResponse, or,
 * for an answer that is not read as one, by learnAnswer.
 */
export function learnRequest(o: Observed, secrets: Secrets): unknown {
  for (const c of credentialsOf(o.requestHeaders)) secrets.add(c);
  return learnedJson(o.requestBody, secrets);
}

/** Learns every client_secret in an answer that observedResponse does not read. */
export function learnAnswer(o: Observed, secrets: Secrets): void {
  learnedJson(o.responseBody, secrets);
}

/**
 * The observed answer as the checks read answers, every client_secret in it learned; learn the
 * request's secrets first (learnRequest). `masked: false` leaves its evidence unmasked, for an
 * answer that is only judged: masking costs a search of every secret the traffic has shown, and
 * most answers are never shown.
 */
export function observedResponse(o: Observed, secrets: Secrets, masked = true): HttpResponse {
  return responseOf(
    {
      method: o.method,
      maskedUrl: masked ? secrets.mask(o.url) : o.url,
      requestHeaders: o.requestHeaders,
      ...(o.requestBody !== undefined ? { requestBody: o.requestBody } : {}),
      status: o.status,
      responseHeaders: o.responseHeaders,
      text: o.responseBody,
      bodyBytes: o.bodyBytes,
      durationMs: o.durationMs,
    },
    secrets,
    masked,
  );
}

/** The operations of the contract an observed exchange can fall on (suites/observed.ts sorts them). */
export type ObservedOperation = 'delete-custom-api' | 'get-custom-api' | 'create-application-key' | 'store-settings' | 'list';

/** One observed exchange, as the checks' observers read it. */
export interface Seen {
  /** Its place in the traffic, from 0. */
  index: number;
  x: Observed;
  /** The answer, read as the suite reads its own (evidence masked). */
  res: HttpResponse;
  operation: ObservedOperation;
  /** The id in the path (a Custom API's), decoded. */
  id?: string;
  /** The request body parsed as JSON; undefined when it is absent or not JSON. */
  sent?: unknown;
  /**
   * Whether the request carried credentials (an Authorization header): 'unknown' where the
   * traffic's record strips them (a sanitized HAR export holds no Authorization header at all).
   */
  credentials: 'present' | 'absent' | 'unknown';
}

/** What the traffic showed before an exchange, for rules that take more than one. */
export interface SeenBefore {
  /** Custom APIs whose DELETE was answered 2xx, by id: the first such answer. */
  deleted: ReadonlyMap<string, Seen>;
  /** Application Keys created (answered 2xx), in order. */
  created: readonly Seen[];
}

/**
 * How a check judges an exchange it did not send, with the predicate its own run uses: true when
 * the exchange could show its rule (and kept it); a broken rule throws, as in a run
 * (lib/runner/expect.ts); false when the exchange says nothing of it.
 */
export type Observer = (seen: Seen, before: SeenBefore) => boolean;
