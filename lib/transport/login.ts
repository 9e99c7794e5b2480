// Logging in with client credentials, as clients of the real platform do: POST the token URL,
// form-encoded grant_type=client_credentials, client_id and client_secret (or, where only that is
// taken, the credentials as HTTP Basic); the answer's access_token is the bearer token,
// expires_in (seconds) or expires (epoch seconds) when it ends. A 429, a gateway's 5xx or a
// dropped connection is waited out as the API's are. The contract does not show how a token is obtained (spec/contract/README.md#authentication):
// this is the platform's way, which the bundled server serves too (server/oauth.ts).
//
// A Login holds the token of one run in one process, shared by every HttpClient given the same
// LoginSettings (Login.shared): it logs in again before the token expires, and once on a 401 to a
// token that worked before or had reached its renewal time (HttpClient.request); those who need
// a new token meanwhile share that one login. Every token it obtains and the secret are
// registered with the Secrets of each client that uses it, so that they are masked by value
// wherever evidence goes.
import { type Secrets, SuiteError } from '../evidence/index.js';
import { packageVersion } from '../package/index.js';
import { gist, isHtml } from '../text/index.js';
import { DEFAULT_RETRY, retryAfterMs, type RetryPolicy } from './retry.js';

export interface LoginSettings {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Clients of one scope (a run's id) in one process share one Login. */
  scope: string;
  /** When the token handed with these settings (RunSettings.token) is to be renewed, in epoch ms; absent: only after a 401. */
  renewAt?: number;
}

/** Why a login gave no token: the credentials refused, no token endpoint there, a page that is no token, no answer. */
export type LoginFailure = 'refused' | 'absent' | 'not-a-token' | 'unreachable';

/** A login that gave no token: what the run says before it sends anything (exit 2), or mid-run. */
export class LoginError extends Error {
  readonly code = 'LOGIN';
  readonly failure: LoginFailure;
  constructor(failure: LoginFailure, message: string) {
    super(message);
    this.name = 'LoginError';
    this.failure = failure;
  }
}

/**
 * When a token obtained at `at` that lives `lifeMs` is renewed: at 80% of its life, or 30 s
 * before its end where that is sooner, but not before half of its life (a token of a few
 * seconds would otherwise be renewed for every request).
 */
export function renewalTime(at: number, lifeMs: number): number {
  return at + Math.min(0.8 * lifeMs, Math.max(lifeMs - 30_000, 0.5 * lifeMs));
}

/** The logins of this process, by scope and credentials. */
const SHARED = new Map<string, Login>();

export class Login {
  readonly settings: LoginSettings;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  /** The token endpoint took the credentials as HTTP Basic, not in the form. */
  #basic = false;
  /** A login that failed after the run had logged in: every later one fails so, at once. */
  #failed: LoginError | undefined;
  #token: string | undefined;
  #renewAt: number;
  #pending: Promise<string> | undefined;
  /** Tokens that some request got an answer other than 401 with. */
  readonly #worked = new Set<string>();
  readonly #secrets = new Set<Secrets>();
  /** Tokens obtained by this process so far. */
  logins = 0;

  constructor(settings: LoginSettings, timeoutMs: number, token?: string, retry: RetryPolicy = DEFAULT_RETRY) {
    this.settings = settings;
    this.#timeoutMs = timeoutMs;
    this.#retry = retry;
    this.#token = token || undefined;
    this.#renewAt = this.#token === undefined ? -Infinity : (settings.renewAt ?? Infinity);
    // A token handed over is the run's, which the preflight's answer showed to work (a 401 there
    // stops the run): a 401 to it in a worker, or in a replay after the run, is a revocation.
    if (this.#token !== undefined) this.#worked.add(this.#token);
  }

  /** The Login of `settings`' scope and credentials in this process, made (with `token`, if any, as its first) on first use. */
  static shared(settings: LoginSettings, timeoutMs: number, token?: string, retry?: RetryPolicy): Login {
    const key = [settings.scope, settings.tokenUrl, settings.clientId, settings.clientSecret].join('\n');
    let login = SHARED.get(key);
    if (!login) SHARED.set(key, (login = new Login(settings, timeoutMs, token, retry)));
    return login;
  }

  /** The logins of a scope are done with (the run is over): their tokens are dropped. */
  static forget(scope: string): void {
    for (const [key, login] of SHARED) if (login.settings.scope === scope) SHARED.delete(key);
  }

  /** When the current token is to be renewed (epoch ms; Infinity: only after a 401). */
  get renewAt(): number {
    return this.#renewAt;
  }

  /** Masks the secret and every token, now and to come, with `secrets` too. */
  mask(secrets: Secrets): void {
    this.#secrets.add(secrets);
    secrets.add(this.settings.clientSecret);
    secrets.add(basicCredentials(this.settings.clientId, this.settings.clientSecret));
    secrets.add(this.#token);
  }

  /** The token to send now: a new one when there is none yet or it is due (one login for all who ask meanwhile). */
  async token(): Promise<string> {
    if (this.#token !== undefined && Date.now() < this.#renewAt) return this.#token;
    return this.#login();
  }

  /** A request sent with `token` got an answer other than 401: the token works. */
  worked(token: string): void {
    this.#worked.add(token);
  }

  /**
   * After a 401 to a request sent with `token`: the token to send it again with, or undefined
   * when the 401 is the target's answer to it: `token` never worked, and had not lapsed when the
   * 401 came. A token lapses at its renewal time (or when a newer one replaced it): a request
   * sent with a token of seconds may reach the target after it ended, on a busy machine. A token
   * renewed already (by another request's 401, or on time) is not renewed again.
   */
  async renew(token: string): Promise<string | undefined> {
    const current = this.#token === token;
    if (!this.#worked.has(token) && current && Date.now() < this.#renewAt) return undefined;
    if (!current && this.#token !== undefined && !this.#pending) return this.#token;
    return this.#login();
  }

  #login(): Promise<string> {
    this.#pending ??= this.#fetch().finally(() => (this.#pending = undefined));
    return this.#pending;
  }

  #masked(text: string): string {
    let out = text;
    for (const s of this.#secrets) out = s.mask(out);
    return out;
  }

  /**
   * One login: the form with the credentials in its body, as the platform takes them; where
   * that is refused by an endpoint that is no API resource, once more with them as HTTP Basic
   * (RFC 6749 section 2.3.1, which every OAuth 2 token endpoint takes), and Basic from then on
   * where that worked. After a login that failed for good, every later one fails at once: a run
   * that cannot log in is not held up by a login per request.
   */
  async #fetch(): Promise<string> {
    if (this.#failed) throw this.#failed;
    try {
      let answer = await this.#post(this.#basic);
      if (!this.#basic && refusal(answer.res.status) && !asksBearer(answer.res)) {
        const basic = await this.#post(true);
        if (basic.res.ok) [answer, this.#basic] = [basic, true];
      }
      return this.#take(answer);
    } catch (e) {
      if (e instanceof LoginError && this.logins > 0) this.#failed = e;
      throw e;
    }
  }

  /**
   * POSTs the token URL until an answer that is not "later" comes: a 429, or a 502, 503 or 504,
   * or a dropped connection, is sent again after its Retry-After or a backoff, within the retry
   * policy's time budget, as the transport does for the API's requests (lib/transport/retry.ts).
   */
  async #post(basic: boolean): Promise<Answer> {
    const { tokenUrl, clientId, clientSecret } = this.settings;
    const what = this.#masked(`POST ${tokenUrl}`);
    const form = new URLSearchParams({ grant_type: 'client_credentials', ...(basic ? {} : { client_id: clientId, client_secret: clientSecret }) });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      'user-agent': `conformance/${packageVersion}`,
    };
    if (basic) headers.authorization = `Basic ${basicCredentials(clientId, clientSecret)}`;
    const started = Date.now();
    for (let retries = 0; ; retries++) {
      const at = Date.now();
      let wait: number | undefined;
      let why: string;
      try {
        const res = await fetch(tokenUrl, { method: 'POST', headers, body: form.toString(), redirect: 'manual', signal: AbortSignal.timeout(this.#timeoutMs) });
        const text = await res.text();
        if (!LATER.includes(res.status)) return { res, text, at, what };
        wait = retryAfterMs(res.headers.get('retry-after') ?? undefined);
        why = `answered ${res.status}: ${gist(this.#masked(text))}`;
      } catch (e) {
        // fetch's TypeError names the socket's error in its cause (an AggregateError of them when several addresses were tried).
        const err = e as { name?: string; code?: string; cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } };
        const code = err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.code;
        why = err.name === 'TimeoutError' ? `no answer within ${this.#timeoutMs} ms` : (code ?? err.cause?.message ?? 'no answer');
        // Nothing listens there, or no such host: a setting to fix, not a moment to wait out.
        if (code === undefined || NOWHERE.includes(code))
          throw new LoginError('unreachable', `cannot log in: the token endpoint cannot be reached: ${what} (${why}). Check --token-url and --base-url.`);
      }
      const { maxRetries, maxWaitMs, baseDelayMs, maxDelayMs, sleep } = this.#retry;
      const delay = wait ?? Math.min(maxDelayMs, baseDelayMs * 2 ** retries) * (0.5 + Math.random() / 2);
      if (retries >= maxRetries || Date.now() + delay - started > maxWaitMs)
        throw new LoginError(
          'unreachable',
          `cannot log in: the token endpoint did not give a token within the retry budget: ${what} ${why} (tried ${retries + 1} time(s)). ${
            why.startsWith('answered')
              ? 'It is busy or down: try again later.'
              : 'Its connections were dropped or stalled each time: check that it is up, and the scheme and port of --token-url.'
          }`,
        );
      await sleep(delay);
    }
  }

  /** The token of a final answer, or why there is none. */
  #take({ res, text, at, what }: Answer): string {
    const answered = `${what} answered ${res.status}`;
    const detail = (): string => gist(this.#masked(text));
    if (refusal(res.status)) {
      if (asksBearer(res))
        throw new LoginError(
          'not-a-token',
          `cannot log in: ${answered} asking for a bearer token (WWW-Authenticate: Bearer): that is an API resource, not a token endpoint. Check --token-url (default: the base URL and /oauth/access_token).`,
        );
      throw new LoginError(
        'refused',
        `the token endpoint refused the client credentials: ${answered}: ${detail()}. Check --client-id and the secret (CONFORMANCE_CLIENT_SECRET or --client-secret-file; its value is never shown), and that --token-url is the token endpoint.`,
      );
    }
    if (res.status === 404)
      throw new LoginError(
        'absent',
        `cannot log in: ${answered}: there is no token endpoint there. Check --token-url (default: the base URL and /oauth/access_token).`,
      );
    if (res.status >= 300 && res.status < 400)
      throw new LoginError(
        'not-a-token',
        `cannot log in: ${answered} to ${this.#masked(res.headers.get('location') ?? 'nowhere')}: a token endpoint answers, it does not redirect. Check --token-url.`,
      );
    if (res.status >= 500)
      throw new LoginError(
        'unreachable',
        `cannot log in: ${answered}: ${detail()}. The token endpoint failed on its side: see its logs, or try again when it is up.`,
      );
    if (res.status < 200 || res.status >= 300)
      throw new LoginError(
        'unreachable',
        `cannot log in: ${answered}: ${detail()}. A token endpoint answers 200 with a token, or 400/401 to refuse. Check --token-url.`,
      );
    const type = res.headers.get('content-type') ?? 'no Content-Type';
    let body: unknown;
    try {
      body = /html/i.test(type) || isHtml(text) ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const token = (body as { access_token?: unknown } | undefined)?.access_token;
    if (typeof token !== 'string' || token === '')
      throw new LoginError(
        'not-a-token',
        `cannot log in: ${answered} with ${type} and no access_token: ${detail()}. Is --token-url the API's token endpoint (not a login page)?`,
      );
    for (const s of this.#secrets) s.add(token);
    // A bearer token is visible ASCII (RFC 6750 section 2.1 is narrower still): a line break, a
    // space or a character beyond ASCII cannot go in a header, and no request could carry it.
    if (/[^\x21-\x7e]/.test(token))
      throw new LoginError(
        'not-a-token',
        `cannot log in: ${answered} with an access_token no Authorization header can carry (a space, a control character or a character beyond ASCII in it). Is --token-url the API's token endpoint?`,
      );
    const lifeMs = lifetimeMs(body as { expires_in?: unknown; expires?: unknown }, at);
    this.logins++;
    this.#token = token;
    this.#renewAt = lifeMs === undefined ? Infinity : renewalTime(at, lifeMs);
    return token;
  }
}

interface Answer {
  res: Response;
  text: string;
  /** When the request that got it was sent (epoch ms): a token's life counts from then. */
  at: number;
  /** The request, masked, for messages. */
  what: string;
}

/** The answers that say "later": not processed (429, 503), or a gateway's (502, 504). */
const LATER = [429, 502, 503, 504];

/** Socket errors that say nothing listens at the token URL, or there is no such host. */
const NOWHERE = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_INVALID_URL', 'EHOSTUNREACH', 'ENETUNREACH'];

/** The answers a token endpoint refuses a login with (RFC 6749 section 5.2: 400 or 401; 403 is met too). */
function refusal(status: number): boolean {
  return status === 400 || status === 401 || status === 403;
}

/** An answer that asks for a bearer token itself: the API's resources answer so (spec/contract/README.md#authentication), a token endpoint does not. */
function asksBearer(res: Response): boolean {
  return /^\s*bearer\b/i.test(res.headers.get('www-authenticate') ?? '');
}

/** HTTP Basic client credentials: each part form-encoded first (RFC 6749 section 2.3.1). */
export function basicCredentials(clientId: string, clientSecret: string): string {
  const form = (v: string): string => new URLSearchParams({ v }).toString().slice(2);
  return Buffer.from(`${form(clientId)}:${form(clientSecret)}`).toString('base64');
}

/**
 * How long a token lives from `at`, in ms: `expires_in` (seconds), else `expires` (epoch
 * seconds; a value past 10^11 is read as milliseconds), each a number or a string of one, as
 * token endpoints send them. Undefined when neither says: the token is then renewed only after a
 * 401. So is an `expires` already past when the answer came: the two hosts' clocks disagree, and
 * reading it as due now would log in again before every request.
 */
export function lifetimeMs(body: { expires_in?: unknown; expires?: unknown }, at: number): number | undefined {
  const number = (v: unknown): number | undefined => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
    return Number.isFinite(n) && n > 0 ? n : undefined;
  };
  const expiresIn = number(body.expires_in);
  if (expiresIn !== undefined) return expiresIn * 1000;
  const expires = number(body.expires);
  if (expires === undefined) return undefined;
  const end = expires > 1e11 ? expires : expires * 1000;
  return end > at ? end - at : undefined;
}

/** A login's failure as the suite's error of the request that needed the token. */
export function loginSuiteError(e: unknown): unknown {
  return e instanceof LoginError ? new SuiteError('LOGIN_FAILED', `a new token was needed and ${e.message.replace(/^cannot log in: /, '')}`) : e;
}
