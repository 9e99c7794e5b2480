// Before any check, one authenticated read shows that the target is there, speaks JSON and
// takes the token. A run against a wrong token, a dead host, a login page or a redirect
// would otherwise end in hundreds of failures that blame the target, or of errors that say
// nothing: here it ends in one line that says what to do (exit 2).
import { isJsonContentType } from './expect.js';
import { HttpClient, transient, type HttpResponse } from '../transport/index.js';
import { sameTarget } from './ledger.js';
import { type Secrets, SuiteError } from '../evidence/index.js';
import { gist, printable } from '../text/index.js';

/** What the preflight read: first the store settings, then a plain list if those are not served. */
const READS = ['/v2/settings', '/v2/accounts', '/v2/customers'];

export type PreflightResult = { ok: true; note: string } | { ok: false; line: string };

function describe(res: HttpResponse): string {
  return `${res.exchange.method} ${res.exchange.url} answered ${res.status}`;
}

/**
 * Reads the target once (twice more at most, where /v2/settings is not served) with the
 * configured token. `base` is the base URL as given, for the redirect advice.
 */
export async function preflight(http: Pick<HttpClient, 'request'>, base: string, api?: ApiProbe, loggedIn = false): Promise<PreflightResult> {
  let last: HttpResponse | undefined;
  /** The first read answered with a 5xx. */
  let failed: HttpResponse | undefined;
  for (const path of READS) {
    let res: HttpResponse;
    try {
      res = await http.request({ method: 'GET', path, way: 'preflight' });
    } catch (err) {
      if (err instanceof SuiteError) {
        const why =
          {
            TIMEOUT: 'did not answer in time',
            TARGET_UNREACHABLE: 'cannot be reached',
            TARGET_DOWN: 'stopped answering',
            RATE_LIMITED: 'kept answering 429 (rate limited) beyond the retry budget',
            RESPONSE_TOO_LARGE: 'answered a body over the --max-body-bytes cap',
            CONNECTION_CLOSED: 'closed the connection',
          }[err.code as string] ?? 'failed';
        const advice =
          err.code === 'RATE_LIMITED'
            ? 'Try again later, or with a lower --concurrency.'
            : err.code === 'RESPONSE_TOO_LARGE'
              ? 'Is --base-url the API? If its answers are that large, raise --max-body-bytes.'
              : 'Check --base-url and that the server is up (and --timeout for a slow one).';
        return { ok: false, line: `the target ${why}: ${err.message}. ${advice}` };
      }
      throw err;
    }
    last = res;
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.location;
      const to = location ? (URL.canParse(location, res.exchange.url) ? new URL(location, res.exchange.url).toString() : printable(location)) : undefined;
      // Where the same path sits under another base, that base is the advice; elsewhere (a login
      // page), only that the target sends its clients away.
      const moved = to?.endsWith(path) ? to.slice(0, -path.length) : undefined;
      const host = (u: string): string => (URL.canParse(u) ? new URL(u).host : u);
      const advice =
        moved === undefined
          ? `It leads to ${to ?? 'nowhere (no Location header)'}, not to the API: give the API's own base URL with --base-url (not ${base}).`
          : sameTarget(moved, base)
            ? 'It sends its clients back to the same address (a redirect loop): the server, or a proxy in front of it, is misconfigured.'
            : host(moved) !== host(base)
              ? `It moved to another host (${host(moved)}): if that host is the API's and one you trust with the token, use --base-url ${moved} (not ${base}).`
              : `Use --base-url ${moved} (not ${base}).`;
      return { ok: false, line: `the target redirects: ${describe(res)}${to ? ` to ${to}` : ''}. ${advice}` };
    }
    if (res.status === 401 || res.status === 403) {
      const advice = loggedIn
        ? "The token came from the token endpoint just now: the client credentials log in, but the API does not take what they obtain (check --token-url, and the key's access)."
        : 'Check --token or CONFORMANCE_TOKEN (its value is never shown).';
      return { ok: false, line: `the target refused the token: ${describe(res)}. ${advice}` };
    }
    if (res.status >= 500) {
      // A 502, 503 or 504 here outlasted the read's whole time budget (lib/transport/http.ts waits
      // them out): the service is not there, as when its host cannot be reached. Any other 5xx may
      // be one route's failure, which the checks judge: the other reads are tried first.
      if (transient('GET', res.status)) return outage(res);
      failed ??= res;
      continue;
    }
    const type = res.headers['content-type'];
    if (res.text.length > 0 && (!res.isJson || (type !== undefined && /html/i.test(type)))) {
      return {
        ok: false,
        line: `the target does not answer JSON: ${describe(res)} with ${type ?? 'no Content-Type'}: ${gist(res.exchange.bodyExcerpt)}. Is --base-url the API (not a web page or a login page)?`,
      };
    }
    if (res.status !== 404) return { ok: true, note: `${describe(res)}${isJsonContentType(type) ? '' : ` (Content-Type ${type ?? 'none'})`}` };
  }
  // Nothing the preflight reads is served. A server of this API serves some of what the
  // contract names: every other read of it is tried (at once) before the run goes on.
  // A read answered with a 5xx and none served: a target that fails every read is down (an
  // outage stops the run, exit 2); where some read is served, each 5xx fails the check that
  // provokes it (spec/contract/README.md#errors.no-5xx).
  if (!api) return failed ? outage(failed) : { ok: true, note: `${describe(last!)} (none of ${READS.join(', ')} is served)` };
  const others = api.paths.filter((p) => !READS.includes(p));
  const answers = await Promise.all(
    others.map((path) =>
      http.request({ method: 'GET', path, way: 'preflight' }).then(
        (res) => res,
        () => undefined,
      ),
    ),
  );
  const served = answers.find((res) => res !== undefined && res.status !== 404 && res.status < 500);
  if (served) return { ok: true, note: `${describe(served)} (none of ${READS.join(', ')} is served)` };
  failed ??= answers.find((res) => res !== undefined && res.status >= 500);
  if (failed) return outage(failed);
  const tried = READS.length + others.length;
  if (api.allowAll404)
    return {
      ok: true,
      note: `every one of the ${tried} reads the contract names answered 404 (such as ${describe(last!)}); the checks run all the same (--allow-all-404)`,
    };
  return {
    ok: false,
    line: `the target answers 404 to every one of the ${tried} reads the contract names (such as ${describe(last!)}): this does not look like the API. Check --base-url (${base}): it may lack the API's path prefix. If the server really serves none of them, --allow-all-404 runs the checks anyway.`,
  };
}

/** A target that answers its reads with a 5xx, to the end of their waits: down, not judged. */
function outage(res: HttpResponse): PreflightResult {
  const attempts = res.exchange.attempts !== undefined && res.exchange.attempts > 1 ? ` (still, after ${res.exchange.attempts} attempts)` : '';
  return {
    ok: false,
    line: `the target answers its reads with a server error: ${describe(res)}${attempts}: ${gist(res.exchange.bodyExcerpt)}. It is not serving the API now (an outage), so nothing is judged: try again when it is up.`,
  };
}

/** What else to read before a run gives up on a target that serves none of READS. */
export interface ApiProbe {
  /** The reads the contract names (its list operations without placeholders). */
  paths: readonly string[];
  /** Go on when every one answers 404 (--allow-all-404). */
  allowAll404: boolean;
}

/**
 * The preflight on a client of its own (one request at a time), closed when it is done: before
 * a run's checks, and before a cleanup sends its deletes.
 */
export async function checkTarget(
  target: { baseUrl: string; token: string; timeoutMs: number; maxBodyBytes: number; login?: unknown },
  base: string,
  secrets: Secrets,
  api?: ApiProbe,
): Promise<PreflightResult> {
  // One request at a time for the first reads; the rest of the API's reads, if it comes to them, a few at once.
  const http = new HttpClient({
    baseUrl: target.baseUrl,
    token: target.token,
    timeoutMs: target.timeoutMs,
    maxBodyBytes: target.maxBodyBytes,
    concurrency: api ? 8 : 1,
    secrets,
  });
  try {
    return await preflight(http, base, api, target.login !== undefined);
  } finally {
    await http.close();
  }
}
