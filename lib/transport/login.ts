// Logging in with client credentials, as clients of the real platform do: POST the token URL,
// form-encoded grant_type=client_credentials, client_id and client_secret; the answer's
// access_token is the bearer token, expires_in (seconds) or expires (epoch seconds) when it
// ends. The contract does not show how a token is obtained (spec/contract/README.md#authentication):
// this is the platform's way, which the bundled server serves too (server/oauth.ts).
//
// A Login holds the token of one run in one process, shared by every HttpClient given the same
// LoginSettings (Login.shared): it logs in again before the token expires, and once on a 401 to a
// token that worked before (HttpClient.request); those who need a new token meanwhile share that
// one login. Every token it obtains and the secret are registered with the Secrets of each
// client that uses it, so that they are masked by value wherever evidence goes.
import { type Secrets, SuiteError } from '../evidence/index.js';
import { packageVersion } from '../package/index.js';
import { gist, isHtml } from '../text/index.js';

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
  #token: string | undefined;
  #renewAt: number;
  #pending: Promise<string> | undefined;
  /** Tokens that some request got an answer other than 401 with. */
  readonly #worked = new Set<string>();
  readonly #secrets = new Set<Secrets>();
  /** Tokens obtained by this process so far. */
  logins = 0;

  constructor(settings: LoginSettings, timeoutMs: number, token?: string) {
    this.settings = settings;
    this.#timeoutMs = timeoutMs;
    this.#token = token || undefined;
    this.#renewAt = this.#token === undefined ? -Infinity : (settings.renewAt ?? Infinity);
  }

  /** The Login of `settings`' scope and credentials in this process, made (with `token`, if any, as its first) on first use. */
  static shared(settings: LoginSettings, timeoutMs: number, token?: string): Login {
    const key = [settings.scope, settings.tokenUrl, settings.clientId, settings.clientSecret].join('\n');
    let login = SHARED.get(key);
    if (!login) SHARED.set(key, (login = new Login(settings, timeoutMs, token)));
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
   * when `token` never worked (the 401 is the target's answer to it). A token renewed already
   * (by another request's 401, or on time) is not renewed again.
   */
  async renew(token: string): Promise<string | undefined> {
    if (!this.#worked.has(token)) return undefined;
    if (this.#token !== token && this.#token !== undefined && !this.#pending) return this.#token;
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

  async #fetch(): Promise<string> {
    const { tokenUrl, clientId, clientSecret } = this.settings;
    const at = Date.now();
    const what = this.#masked(`POST ${tokenUrl}`);
    let res: Response;
    let text: string;
    try {
      res = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': `conformance/${packageVersion}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await res.text();
    } catch (e) {
      // fetch's TypeError names the socket's error in its cause (an AggregateError of them when several addresses were tried).
      const err = e as { name?: string; code?: string; cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } };
      const why =
        err.name === 'TimeoutError'
          ? `no answer within ${this.#timeoutMs} ms`
          : (err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.code ?? err.cause?.message ?? 'no answer');
      throw new LoginError('unreachable', `cannot log in: the token endpoint cannot be reached: ${what} (${why}). Check --token-url and --base-url.`);
    }
    const answered = `${what} answered ${res.status}`;
    const detail = (): string => this.#masked(gist(text));
    if (res.status === 400 || res.status === 401 || res.status === 403)
      throw new LoginError(
        'refused',
        `the token endpoint refused the client credentials: ${answered}: ${detail()}. Check --client-id and the secret (CONFORMANCE_CLIENT_SECRET or --client-secret-file; its value is never shown).`,
      );
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
    if (res.status < 200 || res.status >= 300) throw new LoginError('unreachable', `cannot log in: ${answered}: ${detail()}`);
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
    const { expires_in: expiresIn, expires } = body as { expires_in?: unknown; expires?: unknown };
    const lifeMs =
      typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn * 1000 : typeof expires === 'number' && expires * 1000 > at ? expires * 1000 - at : undefined;
    for (const s of this.#secrets) s.add(token);
    this.logins++;
    this.#token = token;
    this.#renewAt = lifeMs === undefined ? Infinity : renewalTime(at, lifeMs);
    return token;
  }
}

/** A login's failure as the suite's error of the request that needed the token. */
export function loginSuiteError(e: unknown): unknown {
  return e instanceof LoginError ? new SuiteError('TARGET_UNREACHABLE', `a new token was needed and ${e.message.replace(/^cannot log in: /, '')}`) : e;
}
