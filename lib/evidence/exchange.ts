// One recorded HTTP exchange: what a failing check shows as evidence. Everything in it has
// already been masked (lib/evidence/secrets.ts) when it is built, so it is safe to print or
// serialise.
export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  /** The request body (masked), cut to REQUEST_BODY_MAX characters. */
  requestBody?: string;
  requestBodyBytes?: number;
  status: number;
  responseHeaders: Record<string, string>;
  /** The start of the response body (masked). */
  bodyExcerpt: string;
  bodyBytes: number;
  /** From the first attempt to the answer, waits between retries included. */
  durationMs: number;
  /** Attempts the answer took (a 429, a 503 or a reset GET is sent again). */
  attempts?: number;
  /**
   * A 502, 503 or 504 that outlasted its waits while the service answered no request at all:
   * an outage (the suite could not work), not a verdict on the request (lib/runner/check.ts).
   */
  outage?: boolean;
}

export const REQUEST_BODY_MAX = 1200;
export const BODY_EXCERPT_MAX = 600;

export function excerpt(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The request as a command line a person can paste (the token is already masked). */
export function toCurl(x: Pick<Exchange, 'method' | 'url' | 'requestHeaders' | 'requestBody' | 'requestBodyBytes'>): string {
  const parts = ['curl', '-i', '-X', x.method, shellQuote(x.url)];
  for (const [k, v] of Object.entries(x.requestHeaders)) {
    if (k === 'user-agent' || k === 'content-length') continue;
    parts.push('-H', shellQuote(`${k}: ${v}`));
  }
  if (x.requestBody !== undefined) {
    const cut = x.requestBodyBytes !== undefined && x.requestBody.length > REQUEST_BODY_MAX;
    parts.push('--data-raw', shellQuote(cut ? excerpt(x.requestBody, REQUEST_BODY_MAX) : x.requestBody));
  }
  // curl reads [ and ] in a URL as a range to expand (page[limit]) unless told not to.
  if (/[[\]]/.test(x.url)) parts.push('--globoff');
  return parts.join(' ');
}

/** One line per exchange, for the history of a check. */
export function exchangeLine(x: Exchange): string {
  const retried = x.attempts !== undefined && x.attempts > 1 ? `, after ${x.attempts} attempts` : '';
  return `${x.method} ${x.url} -> ${x.status} (${x.bodyBytes} bytes, ${Math.round(x.durationMs)} ms${retried})`;
}
