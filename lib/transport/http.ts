// The one HTTP layer every check uses (undici, keep-alive). It bounds the requests in flight,
// times out each attempt, caps each response body and the bytes of all bodies being read at
// once, records every exchange with secrets masked, and turns transport failures into
// SuiteErrors: a refused connection is never the target's fault.
//
// It is built so that a correct target gets the same verdict behind a hostile network, or from
// a busy machine, as on a calm run:
// - A 429 or 503 answer means "not processed": any request is sent again after the Retry-After
//   the target names (seconds or an HTTP date), else after an exponential backoff with jitter,
//   for as long as the request's time budget lasts (RetryPolicy.maxWaitMs), not a small count.
//   A 429 is never the answer a check judges. A GET answered 502 or 504 (a gateway whose service
//   dropped the connection) is sent again the same way. A 5xx still there when the budget is
//   spent is the answer: the check that sent it fails (spec/contract/README.md#errors.no-5xx).
// - A GET is sent again, within the same budget, after a reset connection (before or during its
//   answer) and after a timeout (once the target has answered anything); a POST or DELETE
//   never is, as it may have been applied.
// - The in-flight bound follows the target's latency (Limiter): it starts low, grows while
//   answers come as fast as unloaded ones of their kind, shrinks as soon as they slow down; a
//   429 or a timeout halves it. --max-rate spaces sends evenly besides (RateCap), and so does the
//   rate a target that answers 429 was found to admit (RateLearner): paced just under it, a
//   per-second limit is met without a 429 for each request over it; a 429 the learned rate
//   accounts for lowers that rate, not what is in flight.
// - The breaker stops all sending once the target has failed at several moments apart in time
//   with no answer between; requests that were in flight together and fail together are one
//   such moment, so a busy moment does not end the run but a target that is gone does.
// - One budget bounds the bytes of all response bodies being read at once in the process: a
//   response that would pass it pauses until others finish; the oldest reader always goes on.
//   A body over the cap is refused as such (RESPONSE_TOO_LARGE), as soon as it is known.
// undici's RetryAgent resends after 429s, 503s and resets before the answer, with the policy
// below; everything else is done here. Everything done is counted (TransportStats).
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { Agent, RetryAgent, RetryHandler, request as UndiciRequest } from 'undici';
import { BODY_EXCERPT_MAX, REQUEST_BODY_MAX, type Exchange, CheckFailure, SuiteError, MASK, type Secrets } from '../evidence/index.js';
import { packageVersion } from '../package/index.js';
import { BodyBudget } from './body-budget.js';
import { Breaker, BREAKER_AFTER } from './breaker.js';
import { latencyClass, Limiter } from './limiter.js';
import { LoadRecorder, type LoadReport, type Way } from './load.js';
import { Login, loginSuiteError, type LoginSettings } from './login.js';
import { RateCap, RateLearner } from './rate.js';
import { DEFAULT_RETRY, retryAfterMs, type RetryPolicy } from './retry.js';
import { noTransport, type TransportStats } from './transport-stats.js';

export interface HttpClientOptions {
  baseUrl: string;
  token: string;
  /** How long one attempt may take, from sending it to the end of its answer. */
  timeoutMs: number;
  /** The largest response body read; a larger one is refused (RESPONSE_TOO_LARGE). */
  maxBodyBytes: number;
  /** Requests in flight at most: the ceiling of the Limiter's limit. */
  concurrency: number;
  /** Requests sent a second at most (--max-rate); absent: no cap. */
  maxRate?: number;
  secrets: Secrets;
  /** How 429s, transient 5xx answers, resets and timed-out GETs are retried: DEFAULT_RETRY, any part overridden. */
  retry?: Partial<RetryPolicy>;
  /** Failures at moments apart in time, with no answer between, that open the breaker. */
  breakerAfter?: number;
  /** The breaker's state, shared by every client of one run (Breaker.forRun); default: its own. */
  breaker?: Breaker;
  /** The bytes of response bodies being read at once, shared by every client of the process (BodyBudget.shared by default). */
  bodyBudget?: BodyBudget;
  /**
   * Client credentials: requests with the token (auth 'token') carry the Login's (Login.shared,
   * `token` its first), renewed before it expires and once on a 401 to a token that worked or
   * had lapsed (Login.renew).
   */
  login?: LoginSettings;
}

/** "Ask later": any method is sent again (undici's RetryAgent, #policy), and it is never an answer. */
const RATE_LIMITED = 429;
/**
 * Whether a `method` answered `status` is sent again before the answer counts (#waitOut),
 * within the request's time budget (spec/contract/README.md#errors: what is waited out).
 * A 503 says the service did not take the request up (RFC 9110 section 15.6.4), so any method
 * is sent again, a POST too, as before; a gateway that did forward the request and lost its
 * service's answer says 502 or 504. Those may follow a request that was applied, so only a GET
 * (it changes nothing) is sent again after one; a POST's or a DELETE's 502 or 504 is its
 * answer. A 500 is never sent again: the service answered, and failed.
 */
export function transient(method: string, status: number): boolean {
  return status === 503 || (method === 'GET' && (status === 502 || status === 504));
}
/** A gateway's or an unavailable service's answer: it says nothing of the target's latency. */
const GATEWAY_STATUSES = [502, 503, 504];
/** A connection closed before the answer: only a GET is sent again, a POST or DELETE may have been applied. */
const RESET = ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'];
/**
 * A GET whose connection was reset while the target answered another request this recently
 * (ms) is sent again without counting toward the breaker: a burst of resets on kept-alive
 * connections while the target answers others (a server closing idle connections just as they
 * are reused, its event loop held up) is no outage. If the target has stopped, the GET's later
 * attempts come after this window and count.
 */
const ALIVE_WITHIN_MS = 2_000;
export type Auth = 'token' | 'none' | { bearer: string };

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  /** Path below the base URL, starting with "/". */
  path: string;
  /** Query parameters; keys are sent as written (brackets literal, as the official SDK does). */
  query?: Record<string, string | number>;
  /** A JSON body; sets Content-Type: application/json. */
  json?: unknown;
  /** A raw body, sent as is, with `contentType` if given. */
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Default "token": the configured bearer token. */
  auth?: Auth;
  /**
   * Nothing waits on this request in sequence (one of a batch drawn at once): it is sent when no
   * other request waits for a slot, so the round trips a run makes one after another (keyset
   * walks, traversals) are not queued behind it.
   */
  background?: boolean;
  /** The way of asking that sends it, for the count of requests by way (LoadReport.asked); default `probes`. */
  way?: Way;
}

export class HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  readonly exchange: Exchange;
  readonly #parsed: { ok: true; value: unknown } | { ok: false };

  constructor(status: number, headers: Record<string, string>, text: string, exchange: Exchange, parsed: { ok: true; value: unknown } | { ok: false }) {
    this.status = status;
    this.headers = headers;
    this.text = text;
    this.exchange = exchange;
    this.#parsed = parsed;
  }

  get isJson(): boolean {
    return this.#parsed.ok;
  }

  /** The parsed body; a body that is not JSON is the target's failure. */
  json(): unknown {
    if (this.#parsed.ok) return this.#parsed.value;
    throw new CheckFailure('the response body is not JSON', {
      expected: 'a JSON body',
      actual: this.text.length === 0 ? 'an empty body' : `a body that does not parse as JSON: ${this.exchange.bodyExcerpt}`,
      exchange: this.exchange,
    });
  }
}

/**
 * undici, loaded when the first client is made: listing or selecting checks (which import this
 * module for its types and HttpResponse) never pays for it. It ships CommonJS.
 */
let undici: { Agent: typeof Agent; RetryAgent: typeof RetryAgent; request: typeof UndiciRequest } | undefined;
function loadUndici(): NonNullable<typeof undici> {
  return (undici ??= createRequire(import.meta.url)('undici') as NonNullable<typeof undici>);
}

/**
 * Bounds requests in flight; the bound moves as the Limiter says. Background requests (RequestSpec.background) wait behind every other: a slot
 * goes to one only when no other request waits. Under a rate (`pace`: the wait before the next
 * send may go, 0 when it may go now, its turn then taken), a slot is given only at a send's turn,
 * in that same order: a request waiting for its turn holds no slot, and a chain of requests sent
 * one after another is not queued behind turns a batch has taken.
 */
class Semaphore {
  #limit: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #background: Array<() => void> = [];
  readonly #pace: (now: number) => number;
  /** Armed while requests wait for the rate's next turn. */
  #timer: NodeJS.Timeout | undefined;
  constructor(n: number, pace: (now: number) => number = () => 0) {
    this.#limit = n;
    this.#pace = pace;
  }
  get limit(): number {
    return this.#limit;
  }
  get active(): number {
    return this.#active;
  }
  /** A lower bound takes effect as requests finish: none in flight is cut short. */
  set limit(n: number) {
    this.#limit = n;
    this.#wake();
  }
  /**
   * `first`: ahead of every request waiting (a retry, which has waited its turn already);
   * `background`: behind every request that is not.
   */
  async acquire(first = false, background = false): Promise<void> {
    if (this.#active < this.#limit && this.#waiting.length + this.#background.length === 0 && this.#pace(performance.now()) === 0) {
      this.#active++;
      return;
    }
    await new Promise<void>((resolve) => {
      if (first) this.#waiting.unshift(resolve);
      else if (background) this.#background.push(resolve);
      else this.#waiting.push(resolve);
      this.#wake();
    });
  }
  release(): void {
    this.#active--;
    this.#wake();
  }
  #wake(): void {
    while (this.#active < this.#limit && this.#waiting.length + this.#background.length > 0) {
      const wait = this.#pace(performance.now());
      if (wait > 0) {
        this.#timer ??= setTimeout(() => {
          this.#timer = undefined;
          this.#wake();
        }, wait);
        return;
      }
      this.#active++;
      (this.#waiting.shift() ?? this.#background.shift())!();
    }
  }
}

/** Why an attempt is followed by another: counted apart in the stats. */
type Cause = 'answer' | 'reset' | 'timeout';

/** One request on its way through its attempts. */
interface Attempts {
  readonly method: string;
  /** Its latency class (latencyClass): the requests its latency is compared with. */
  readonly cls: string;
  /** `METHOD url`, masked, for messages. */
  readonly what: string;
  /** Adds to the client's stats and to the caller's. */
  readonly count: (f: (s: TransportStats) => void) => void;
  /** Starts the current attempt's timeout, afresh (and notes when the attempt was sent). */
  readonly arm: () => void;
  /** Stops it for good (the attempt is over). */
  readonly disarm: () => void;
  /** Stops it for a while and starts it again with the time it had left: the attempt waits on this process, not on the target. */
  readonly suspend: () => void;
  readonly resume: () => void;
  /** Attempts sent so far. */
  sent: number;
  /** When the current attempt was sent (performance.now()). */
  sentAt: number;
  /** Time spent toward the time budget: waits between attempts, and attempts that timed out after the first. */
  waitedMs: number;
  /** The in-flight bound's generation when the current attempt was sent (Limiter.epoch). */
  epoch: number;
  /** Whether the request holds a slot of the semaphore: it gives it back while it waits. */
  holding: boolean;
  /** The current attempt's answer has begun (its headers arrived). */
  answered: boolean;
  /** The current attempt's failure has been counted toward the breaker already. */
  failureCounted: boolean;
}

function buildQuery(query: Record<string, string | number> | undefined): string {
  if (!query) return '';
  const parts = Object.entries(query).map(([k, v]) => {
    const key = /^[A-Za-z0-9_\-.[\]]+$/.test(k) ? k : encodeURIComponent(k);
    return `${key}=${encodeURIComponent(String(v)).replace(/%3A/gi, ':')}`;
  });
  return parts.length ? `?${parts.join('&')}` : '';
}

function errorCode(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code ?? e?.cause?.code ?? '';
}

/** The attempt took too long: our own timer, or undici's (which stand behind it). */
function isTimeout(err: unknown): boolean {
  const e = err as { name?: string } | undefined;
  const code = errorCode(err);
  return e?.name === 'TimeoutError' || e?.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * A transport failure of the request `what` (`METHOD url`, masked) after `attempts` attempts, as
 * the suite's error. `unsafe`: the request is one that is never sent again (a POST, a DELETE),
 * so a timeout or a closed connection leaves it perhaps applied (SuiteError.mayHaveApplied).
 */
function transportError(err: unknown, what: string, timeoutMs: number, attempts = 1, unsafe = false): SuiteError {
  const e = err as { message?: string };
  const code = errorCode(err);
  if (isTimeout(err)) {
    return new SuiteError('TIMEOUT', `${what}: no complete answer within ${timeoutMs} ms${attempts > 1 ? ` (${attempts} attempts)` : ''}`, {
      mayHaveApplied: unsafe,
    });
  }
  if (
    [
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
      'CERT_HAS_EXPIRED',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
    ].includes(code)
  ) {
    return new SuiteError('TARGET_UNREACHABLE', `${what}: cannot reach the target (${code})`);
  }
  return new SuiteError('CONNECTION_CLOSED', `${what}: the request failed before a full answer (${code || e?.message || 'unknown error'})`, {
    mayHaveApplied: unsafe,
  });
}

/** Header values masked, all in one search. */
function maskValues(headers: Record<string, string>, secrets: Secrets): Record<string, string> {
  const names = Object.keys(headers);
  const values = secrets.maskAll(names.map((k) => headers[k]!));
  return Object.fromEntries(names.map((k, i) => [k, values[i]!]));
}

/** Schemes an Authorization value may start with that are shown as sent (a value that starts otherwise may be a bare token). */
const SCHEMES = /^(Bearer|Basic|Digest|Token|Negotiate|ApiKey)(\s+|$)/i;

/**
 * An Authorization value masked: a known scheme kept as sent, so the evidence says which was
 * sent (an empty `Bearer `, another scheme), and whatever follows it hidden; anything else hidden
 * whole.
 */
export function maskAuthorization(value: string): string {
  const m = SCHEMES.exec(value);
  if (!m) return MASK;
  const rest = value.slice(m[0].length);
  return `${m[1]}${m[2] ? ' ' : ''}${rest ? MASK : ''}`;
}

/** A request's headers masked, the Authorization value whatever it holds. */
function maskHeaders(headers: Record<string, string>, secrets: Secrets): Record<string, string> {
  const out = maskValues(headers, secrets);
  if ('authorization' in out) out.authorization = maskAuthorization(headers.authorization!);
  return out;
}

/** One exchange as it happened, unmasked: what responseOf makes an answer of. */
export interface RawExchange {
  method: string;
  /** The URL, already masked (a token may stand in its query). */
  maskedUrl: string;
  requestHeaders: Record<string, string>;
  requestBody?: string;
  status: number;
  responseHeaders: Record<string, string>;
  text: string;
  bodyBytes: number;
  durationMs: number;
  attempts?: number;
  outage?: boolean;
}

/**
 * The answer of an exchange, with its evidence masked: the body parsed (any client_secret in it
 * learned as a secret first), the Authorization header masked whatever it holds. The client's
 * own requests and the exchanges a proxy or a HAR file shows (lib/runner/observed.ts) are made one
 * way.
 */
export function responseOf(x: RawExchange, secrets: Secrets, mask = true): HttpResponse {
  let parsed: { ok: true; value: unknown } | { ok: false } = { ok: false };
  if (x.text.length > 0) {
    try {
      parsed = { ok: true, value: JSON.parse(x.text) };
      secrets.addFromBody(parsed.value, x.text);
    } catch {
      parsed = { ok: false };
    }
  }
  const { text } = x;
  // Unmasked: for an answer only judged, whose evidence is made again, masked, if it is ever shown.
  if (!mask) {
    const raw: Exchange = {
      method: x.method,
      url: x.maskedUrl,
      requestHeaders: x.requestHeaders,
      ...(x.requestBody !== undefined ? { requestBody: x.requestBody } : {}),
      status: x.status,
      responseHeaders: x.responseHeaders,
      bodyExcerpt: text.slice(0, BODY_EXCERPT_MAX),
      bodyBytes: x.bodyBytes,
      durationMs: x.durationMs,
    };
    return new HttpResponse(x.status, x.responseHeaders, text, raw, parsed);
  }
  const exchange: Exchange = {
    method: x.method,
    url: x.maskedUrl,
    requestHeaders: maskHeaders(x.requestHeaders, secrets),
    requestBody: x.requestBody === undefined ? undefined : secrets.mask(x.requestBody).slice(0, REQUEST_BODY_MAX * 2),
    requestBodyBytes: x.requestBody === undefined ? undefined : Buffer.byteLength(x.requestBody),
    status: x.status,
    responseHeaders: maskValues(x.responseHeaders, secrets),
    bodyExcerpt:
      text.length <= BODY_EXCERPT_MAX
        ? secrets.mask(text)
        : `${secrets.maskedHead(text, BODY_EXCERPT_MAX)}… (${text.length - BODY_EXCERPT_MAX} more characters)`,
    bodyBytes: x.bodyBytes,
    durationMs: x.durationMs,
    ...(x.attempts !== undefined ? { attempts: x.attempts } : {}),
    ...(x.outage ? { outage: true } : {}),
  };
  return new HttpResponse(x.status, x.responseHeaders, text, exchange, parsed);
}

/** One reason for every check a stop cut short, so the report groups them in one line. */
const interrupted = (): SuiteError => new SuiteError('INTERRUPTED', 'the run was stopped before this check finished');

/**
 * The timer of one request's attempts. The timeout covers one attempt, not the waits between
 * attempts: undici's RetryAgent carries one signal across the attempts it makes, so the signal
 * is ours to fire, and the retry policy disarms it while it waits and arms it again for the next
 * attempt. A whole new attempt (after a timeout, or an answer cut off) gets a new signal (fresh).
 */
function attemptClock(timeoutMs: number): { fresh(): AbortSignal; arm(): void; disarm(): void; suspend(): void; resume(): void; end(): void } {
  let abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let left = timeoutMs;
  let since = 0;
  let over = false;
  const start = (): void => {
    since = performance.now();
    const t: NodeJS.Timeout = setTimeout(
      () => {
        // Given up only after the sockets have been read once more: on a machine so busy that
        // this timer fires late, an answer that arrived in time is waiting to be read, and the
        // I/O phase of the event loop runs before setImmediate's callbacks.
        setImmediate(() => {
          if (timer !== t) return;
          timer = undefined;
          abort.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
        });
      },
      Math.max(0, left),
    );
    timer = t;
  };
  const disarm = (): void => {
    clearTimeout(timer);
    timer = undefined;
  };
  return {
    fresh: () => {
      abort = new AbortController();
      return abort.signal;
    },
    arm: () => {
      clearTimeout(timer);
      left = timeoutMs;
      start();
    },
    disarm,
    suspend: () => {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      left -= performance.now() - since;
    },
    resume: () => {
      if (timer === undefined && !over) start();
    },
    end: () => {
      over = true;
      disarm();
    },
  };
}

export class HttpClient {
  readonly options: HttpClientOptions;
  readonly #agent: Agent;
  readonly #slots: Semaphore;
  readonly #base: string;
  readonly #retry: RetryPolicy;
  readonly #breakerAfter: number;
  readonly #budget: BodyBudget;
  readonly #stats = noTransport();
  readonly #limiter: Limiter;
  readonly #rate: RateCap;
  readonly #learner = new RateLearner();
  readonly #load: LoadRecorder;
  #stopped = false;
  /**
   * A 429 or 503 asked to wait: nothing new is sent until the wait is over, so a target that
   * limits requests per second is not met by the requests queued behind the one it refused.
   */
  #paused: Promise<void> | undefined;
  #pausedUntil = 0;
  /** When the target last answered (performance.now()). */
  #answeredAt = -Infinity;
  /** When the latest attempt the service itself answered (not a 429, not a gateway's 502, 503 or 504) was sent. */
  #upAt = -Infinity;
  readonly #breaker: Breaker;
  readonly #login: Login | undefined;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#agent = new (loadUndici().Agent)({ keepAliveTimeout: 10_000, connections: options.concurrency });
    this.#limiter = new Limiter(options.concurrency);
    this.#slots = new Semaphore(this.#limiter.limit, (now) => this.#rate.take(now, this.#learner.rate(now)));
    this.#rate = new RateCap(options.maxRate);
    this.#load = new LoadRecorder(options.concurrency, options.maxRate);
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#breakerAfter = options.breakerAfter ?? BREAKER_AFTER;
    this.#breaker = options.breaker ?? new Breaker();
    this.#budget = options.bodyBudget ?? BodyBudget.shared;
    options.secrets.add(options.token);
    this.#login = options.login ? Login.shared(options.login, options.timeoutMs, options.token, this.#retry) : undefined;
    this.#login?.mask(options.secrets);
  }

  /** How many times this process logged in with the client's credentials (0: it has none). */
  get logins(): number {
    return this.#login?.logins ?? 0;
  }

  /** What the transport did so far, for the whole client. */
  get stats(): TransportStats {
    return { ...this.#stats };
  }

  /** How hard the client has pushed the target so far. */
  load(): LoadReport {
    return this.#load.report();
  }

  /**
   * The run was stopped (Ctrl-C, SIGTERM): every check is under way at once, so a stop must
   * reach the checks themselves. Nothing more is sent; requests in flight end as they end.
   */
  stop(): void {
    this.#stopped = true;
  }

  /** The in-flight bound now: the Limiter's, at most the configured concurrency. */
  get concurrency(): number {
    return this.#slots.limit;
  }

  url(path: string, query?: Record<string, string | number>): string {
    return `${this.#base}${path}${buildQuery(query)}`;
  }

  /** The URL, headers and body of a request as it is sent (the JSON written; the token is put in once a slot is had: #exchange). */
  #outgoing(spec: RequestSpec): { url: string; headers: Record<string, string>; body: string | undefined } {
    const url = this.url(spec.path, spec.query);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `conformance/${packageVersion}`, ...spec.headers };
    const auth = spec.auth ?? 'token';
    if (typeof auth === 'object') {
      this.options.secrets.add(auth.bearer);
      headers.authorization = `Bearer ${auth.bearer}`;
    }
    let body: string | undefined;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] = spec.contentType ?? 'application/json';
    } else if (spec.body !== undefined) {
      body = spec.body;
      if (spec.contentType) headers['content-type'] = spec.contentType;
    }
    return { url, headers, body };
  }

  /**
   * A slot to send in, once the client may send at all: nothing is sent once the run was
   * stopped, or once the target has stopped answering (and what was queued behind the requests
   * that failed fails at once too).
   */
  async #admit(spec: RequestSpec, what: string, count: (f: (s: TransportStats) => void) => void): Promise<void> {
    const refused = (): SuiteError => {
      count((s) => s.refused++);
      return new SuiteError('TARGET_DOWN', `${what}: not sent: ${this.#breaker.down}`);
    };
    if (this.#stopped) throw interrupted();
    if (this.#breaker.down) throw refused();
    while (this.#paused) await this.#paused;
    await this.#slots.acquire(false, spec.background);
    this.#sent();
    if (this.#breaker.down || this.#stopped) {
      this.#slots.release();
      throw this.#stopped ? interrupted() : refused();
    }
    count((s) => s.requests++);
  }

  /** Notes a send (the rate's turn was taken with the slot: Semaphore). */
  #sent(): void {
    this.#load.sent(performance.now(), this.#slots.active, this.#slots.limit);
  }

  /**
   * Sends one request; `stats` (a Session's) counts what it took besides the client's own.
   * With a Login, a request with the token gets the Login's, and one answered 401 with a token
   * that worked before (or had lapsed: Login.renew) is sent once more with a new one: its
   * answer stands, a 401 too. A request without the token, or with a wrong one on purpose,
   * never logs in.
   */
  async request(spec: RequestSpec, stats?: TransportStats): Promise<HttpResponse> {
    const login = this.#login;
    if (!login || (spec.auth ?? 'token') !== 'token') return this.#exchange(spec, stats, () => this.options.token);
    // The token as it is when the request gets its slot: one taken while it queued may have expired since.
    let sent = '';
    const res = await this.#exchange(spec, stats, async () => (sent = await login.token()));
    if (res.status !== 401) {
      login.worked(sent);
      return res;
    }
    const renewed = await login.renew(sent).catch((e: unknown) => Promise.reject(loginSuiteError(e)));
    if (renewed === undefined) return res;
    const again = await this.#exchange(spec, stats, () => renewed);
    if (again.status !== 401) login.worked(renewed);
    return again;
  }

  /** One request, through its attempts; `token()` gives the token where it sends one, once it has a slot. */
  async #exchange(spec: RequestSpec, stats: TransportStats | undefined, token: () => string | Promise<string>): Promise<HttpResponse> {
    const { secrets, timeoutMs } = this.options;
    const { url, headers, body } = this.#outgoing(spec);
    const what = `${spec.method} ${secrets.mask(url)}`;
    const count = (f: (s: TransportStats) => void): void => {
      f(this.#stats);
      if (stats) f(stats);
    };
    await this.#admit(spec, what, count);
    if ((spec.auth ?? 'token') === 'token') {
      try {
        headers.authorization = `Bearer ${await token()}`;
      } catch (e) {
        this.#slots.release();
        throw loginSuiteError(e);
      }
    }
    this.#load.asked(spec.way ?? 'probes');
    const clock = attemptClock(timeoutMs);
    const a: Attempts = {
      method: spec.method,
      cls: latencyClass(spec.method, spec.path, spec.query),
      what,
      count,
      arm: () => {
        a.sentAt = performance.now();
        clock.arm();
      },
      disarm: clock.disarm,
      suspend: clock.suspend,
      resume: clock.resume,
      sent: 1,
      sentAt: 0,
      waitedMs: 0,
      epoch: this.#limiter.epoch,
      holding: true,
      answered: false,
      failureCounted: false,
    };
    const started = performance.now();
    let status = 0;
    let responseHeaders: Record<string, string> = {};
    let text = '';
    let bytes = 0;
    // One go at the exchange: the request (undici's RetryAgent sends it again after a 429 or,
    // for a GET, a reset before the answer: see #policy), then the answer's body.
    const attempt = async (): Promise<string> => {
      const signal = clock.fresh();
      const res = await loadUndici().request(url, {
        method: spec.method,
        headers,
        body,
        // A DELETE's connection is not reused: a target that puts a body on its 204 (which an
        // HTTP/1.1 client cannot see as one) must not poison the next request on the socket.
        reset: spec.method === 'DELETE',
        // A RetryAgent per request: its retry callback is this request's policy (and state).
        dispatcher: new (loadUndici().RetryAgent)(this.#agent, { statusCodes: [RATE_LIMITED], retry: this.#policy(a) }),
        signal,
        // Our own timer (above) times each attempt out; undici's stand behind it, later, so
        // that neither its defaults (300 s) nor its own timers decide first.
        headersTimeout: 2 * timeoutMs + 1_000,
        bodyTimeout: 2 * timeoutMs + 1_000,
      });
      a.answered = true;
      this.#heard(res.statusCode, a, performance.now() - a.sentAt);
      status = res.statusCode;
      responseHeaders = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) responseHeaders[k] = Array.isArray(v) ? v.join(', ') : String(v);
      }
      bytes = 0;
      return this.#read(res.body, Number(res.headers['content-length'] ?? 0), a, (n) => (bytes = n));
    };
    /** When this request was first answered by a gateway (502, 503, 504). */
    let gatewaySince: number | undefined;
    a.arm();
    try {
      // A GET whose answer is cut off once it began (the connection dropped mid-body), or that
      // timed out, is sent again whole (#again): undici would ask for the rest of a cut answer
      // with a Range request, which an API need not honour, and does not retry a timeout. An
      // answer to be waited out (#waitOut) is read whole first, so the last one can stand.
      for (;;) {
        try {
          text = await attempt();
        } catch (err) {
          if (!(await this.#again(a, err))) throw err;
          continue;
        }
        if (GATEWAY_STATUSES.includes(status)) gatewaySince ??= performance.now();
        if (!(await this.#waitOut(a, status, responseHeaders))) break;
        if (this.#stopped) throw interrupted();
      }
    } catch (err) {
      throw this.#failure(err, spec, { url, headers, what, started }, a);
    } finally {
      clock.end();
      if (a.holding) this.#slots.release();
    }
    const durationMs = performance.now() - started;
    // A gateway's answer that outlasted its waits (it was sent again at least once) while no
    // request sent since the first of them reached the service: the service is down, and the
    // answer is no verdict on this request. One answered once has no such time to tell by.
    const outage = GATEWAY_STATUSES.includes(status) && a.sent > 1 && gatewaySince !== undefined && this.#upAt < gatewaySince;
    return responseOf(
      {
        method: spec.method,
        maskedUrl: what.slice(spec.method.length + 1),
        requestHeaders: headers,
        requestBody: body,
        status,
        responseHeaders,
        text,
        bodyBytes: bytes,
        durationMs,
        attempts: a.sent,
        ...(outage ? { outage } : {}),
      },
      secrets,
    );
  }

  /** What a request that got no usable answer throws: the target's failure, or the transport's. */
  #failure(err: unknown, spec: RequestSpec, sent: { url: string; headers: Record<string, string>; what: string; started: number }, a: Attempts): Error {
    const { secrets, timeoutMs } = this.options;
    const { url, headers, what, started } = sent;
    if (err instanceof SuiteError) return err;
    const code = errorCode(err);
    if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      // The target's answer broke HTTP itself (most often: a body on a 204, or a wrong
      // Content-Length). That is the target's failure, not the suite's.
      return new CheckFailure(`${what}: the response is malformed`, {
        expected: 'a well-formed HTTP response (no body on a 204; a body as long as its Content-Length)',
        actual: 'the body did not match the response framing (a body on a 204, or a wrong Content-Length)',
        exchange: {
          method: spec.method,
          url: secrets.mask(url),
          requestHeaders: maskHeaders(headers, secrets),
          status: 0,
          responseHeaders: {},
          bodyExcerpt: '(malformed response)',
          bodyBytes: 0,
          durationMs: performance.now() - started,
          attempts: a.sent,
        },
      });
    }
    // A POST or DELETE lost on the way may have been applied (the work is done again above this
    // layer, with new data); one that timed out counts so only when the target answered other
    // requests meanwhile: a target that answers nothing is not sent more of them.
    const lost = spec.method !== 'GET' && (!isTimeout(err) || this.#answeredAt > a.sentAt);
    const failure = transportError(err, what, timeoutMs, a.sent, lost);
    if (!a.failureCounted) {
      if (isTimeout(err)) this.#lower(a, 'timeout');
      this.#failed(failure, a);
    }
    // Many requests are in flight when a target stops answering, and they fail together: those
    // that fail once the breaker is open say so, and are reported as one group, not each alone.
    if (this.#breaker.down) return new SuiteError('TARGET_DOWN', `${what}: sent, no answer (${failure.code}); ${this.#breaker.down}`);
    return failure;
  }

  /**
   * Reads the body of `a`'s answer as text, within maxBodyBytes and the body budget: when the
   * budget is spent the stream is paused (undici stops reading the socket) and the attempt's
   * timeout is suspended, as the wait is this process's, not the target's. `progress` follows
   * the bytes read. Over the cap (or declared over it by its Content-Length, `declared`), the
   * body is refused with RESPONSE_TOO_LARGE, and that error is the one the attempt ends with,
   * whatever destroying the stream raises after it.
   * Read with events rather than an async iterator: a promise per chunk costs more than the
   * chunk on a run of thousands of pages.
   */
  async #read(stream: Readable, declared: number, a: Attempts, progress: (bytes: number) => void): Promise<string> {
    const { maxBodyBytes } = this.options;
    const budget = this.#budget;
    const hold = budget.open();
    let bytes = 0;
    try {
      return await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let settled = false;
        let overCap: SuiteError | undefined;
        const fail = (err: unknown): void => {
          if (settled) return;
          settled = true;
          reject(overCap ?? err);
        };
        const refuse = (): void => {
          overCap = new SuiteError(
            'RESPONSE_TOO_LARGE',
            `${a.what}: the response body is over the ${maxBodyBytes}-byte cap (--max-body-bytes)${declared > maxBodyBytes ? ` (Content-Length: ${declared})` : ''}; it was not read further`,
          );
          chunks.length = 0;
          fail(overCap);
          stream.destroy(overCap);
        };
        stream.on('error', fail);
        stream.on('end', () => {
          if (settled) return;
          settled = true;
          // One chunk (most pages) is decoded where it lies, not copied first.
          resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)).toString('utf8'));
        });
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          bytes += chunk.length;
          progress(bytes);
          if (bytes > maxBodyBytes) return refuse();
          chunks.push(chunk);
          if (!budget.take(hold, chunk.length, () => (a.resume(), stream.resume()))) {
            stream.pause();
            a.suspend();
          }
        });
        // A body whose length is declared over the cap is refused before a byte of it is read.
        if (declared > maxBodyBytes) refuse();
      });
    } finally {
      budget.release(hold);
    }
  }

  /**
   * The decision undici's RetryAgent asks for after each failed attempt; re-sending (the string
   * body replayed) and discarding the 429's body stay undici's. Its default decision cannot
   * serve here: its `methods` hold for answers and resets alike, where here any method is
   * sent again after a 429 (the request was not processed) but only a GET after a reset
   * (a POST or DELETE may have been applied); it caps a Retry-After at maxTimeout and retries
   * before the time asked; it has no jitter, no time budget per request, and counts nothing.
   * While it waits, the request gives its slot back, so a lowered bound holds for retries too.
   */
  #policy(a: Attempts): RetryHandler.RetryCallback {
    return (err, _context, done) => {
      a.disarm();
      const e = err as { code?: string; statusCode?: number; headers?: Record<string, string | string[] | undefined> };
      const status = e.code === 'UND_ERR_REQ_RETRY' && e.statusCode === RATE_LIMITED ? RATE_LIMITED : undefined;
      // A reset once the answer has begun is not retried here: undici would resume the body
      // with a Range request, which an API need not honour (#again sends it again whole).
      const reset = status === undefined && a.method === 'GET' && !a.answered && RESET.includes(e.code ?? '');
      // Anything else fails as it is: request() says why and counts it toward the breaker.
      if (status === undefined && !reset) return done(err);
      const { maxRetries, maxWaitMs } = this.#retry;
      const header = e.headers?.['retry-after'];
      const wait = (status !== undefined ? retryAfterMs(Array.isArray(header) ? header[0] : header) : undefined) ?? this.#backoff(a.sent);
      // A 429 the rate learned accounts for lowers that rate (RateLearner), and only the refused
      // request waits its Retry-After: the others go on at the new rate. Otherwise what is in
      // flight is halved, and nothing new is sent until the wait is over (#pause).
      let paced: number | undefined;
      if (status !== undefined) {
        this.#heard(status);
        const now = performance.now();
        this.#load.answered(now, 0, status);
        const cuts = this.#learner.cuts;
        paced = this.#learner.limited(now, a.sentAt, header === undefined ? undefined : retryAfterMs(Array.isArray(header) ? header[0] : header));
        if (paced === undefined) this.#lower(a, 'rate-limited');
        else if (this.#learner.cuts > cuts) this.#load.paced(now, paced);
      }
      if (a.sent > maxRetries || a.waitedMs + wait > maxWaitMs) {
        if (status === undefined) return done(err);
        const why =
          a.sent > maxRetries
            ? `its ${maxRetries} retries are spent`
            : `${wait} ms more (${header === undefined ? 'backoff' : `Retry-After: ${header}`}) would pass its ${maxWaitMs} ms of waiting`;
        return done(
          new SuiteError(
            'RATE_LIMITED',
            `${a.what}: still ${status} after ${a.sent} attempt${a.sent === 1 ? '' : 's'} and ${Math.round(a.waitedMs)} ms of waiting: ${why}; no verdict rests on a rate-limited answer`,
          ),
        );
      }
      if (reset && performance.now() - this.#answeredAt > ALIVE_WITHIN_MS) this.#failed(transportError(err, a.what, this.options.timeoutMs), a);
      if (this.#breaker.down) return done(new SuiteError('TARGET_DOWN', `${a.what}: not sent again: ${this.#breaker.down}`));
      void this.#nextAttempt(a, wait, reset ? 'reset' : 'answer', status !== undefined && paced === undefined).then((go) =>
        done(go ? null : new SuiteError('TARGET_DOWN', `${a.what}: not sent again: ${this.#breaker.down}`)),
      );
    };
  }

  /**
   * An answer of `status` to `a`'s attempt, read whole: whether the request is sent again
   * (after its wait, true) or the answer stands (false). A transient one (see transient) is
   * waited out after the Retry-After it names, else the backoff, while the request's time budget
   * lasts; a 503 holds every request not yet sent meanwhile, as a 429 does. Past the budget
   * the answer stands, and is judged (a 5xx fails the check that sent it, under
   * spec/contract/README.md#errors.no-5xx).
   */
  async #waitOut(a: Attempts, status: number, headers: Record<string, string>): Promise<boolean> {
    if (!transient(a.method, status) || this.#stopped) return false;
    const { maxRetries, maxWaitMs } = this.#retry;
    const wait = retryAfterMs(headers['retry-after']) ?? this.#backoff(a.sent);
    if (a.sent > maxRetries || a.waitedMs + wait > maxWaitMs) return false;
    a.disarm();
    if (!(await this.#nextAttempt(a, wait, 'answer', status === 503))) throw new SuiteError('TARGET_DOWN', `${a.what}: not sent again: ${this.#breaker.down}`);
    return true;
  }

  /**
   * Between two attempts of `a`: counts the retry, gives the slot back for `wait` ms (holding
   * every request not yet sent meanwhile when `pause`: a 429 or 503 asked to wait), takes a slot
   * again ahead of those queued, and arms the next attempt's timeout. False when the breaker
   * opened meanwhile: nothing more is sent.
   */
  async #nextAttempt(a: Attempts, wait: number, cause: Cause, pause: boolean): Promise<boolean> {
    a.count((s) => {
      s.retries++;
      if (cause === 'reset') s.resetRetries++;
      else if (cause === 'timeout') s.timeoutRetries++;
      else s.waitedOut++;
      s.waitedMs += wait;
    });
    a.sent++;
    a.waitedMs += wait;
    a.holding = false;
    this.#slots.release();
    const slept = this.#retry.sleep(wait);
    if (pause) this.#pause(slept, wait);
    await slept;
    await this.#slots.acquire(true);
    a.holding = true;
    this.#sent();
    if (this.#breaker.down) return false;
    a.epoch = this.#limiter.epoch;
    a.answered = false;
    a.failureCounted = false;
    a.arm();
    return true;
  }

  /**
   * A whole attempt failed in a way undici does not retry: whether to send the request again
   * whole, after its backoff (its slot given back meanwhile), within its time budget, while the
   * run goes on and the breaker is shut. Only a GET is: one whose answer was cut off after it
   * began (the target answered, so this counts toward no breaker), or one that timed out once
   * the target has answered something. A timeout of any method is counted here: it lowers the
   * in-flight bound, counts toward the breaker, and its time toward the request's budget.
   */
  async #again(a: Attempts, err: unknown): Promise<boolean> {
    // Over the cap, or a decision of the retry policy (RATE_LIMITED, TARGET_DOWN): final.
    if (err instanceof SuiteError) return false;
    const timedOut = isTimeout(err);
    const cut = a.method === 'GET' && a.answered && RESET.includes(errorCode(err));
    if (!timedOut && !cut) return false;
    if (timedOut) {
      if (a.sent > 1) a.waitedMs += performance.now() - a.sentAt;
      this.#lower(a, 'timeout');
      this.#failed(transportError(err, a.what, this.options.timeoutMs, a.sent), a);
      a.failureCounted = true;
      // Not before the target has answered anything: a first request that times out (the
      // preflight's) says the target is not there, or --timeout is too short for it, and
      // sending it again would only put off saying so.
      if (a.method !== 'GET' || (this.#breaker.answered === 0 && this.#answeredAt === -Infinity)) return false;
    }
    if (this.#stopped || this.#breaker.down) return false;
    const { maxRetries, maxWaitMs } = this.#retry;
    const wait = this.#backoff(a.sent);
    if (a.sent > maxRetries || a.waitedMs + wait > maxWaitMs) return false;
    a.disarm();
    // A stop during the wait ends it here (the timeout armed again is disarmed by request()).
    return (await this.#nextAttempt(a, wait, timedOut ? 'timeout' : 'reset', false)) && !this.#stopped;
  }

  /** Holds every request not yet sent until `slept` (a retry's wait of `ms`) is over (see #paused). */
  #pause(slept: Promise<unknown>, ms: number): void {
    const until = Date.now() + ms;
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    const p: Promise<void> = slept.then(() => {
      if (this.#paused === p) this.#paused = undefined;
    });
    this.#paused = p;
  }

  /** Exponential backoff with jitter ("equal jitter": half fixed, half random), capped. */
  #backoff(sent: number): number {
    const { baseDelayMs, maxDelayMs } = this.#retry;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (sent - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  /** A 429 or a timeout of `a` halves the in-flight bound (Limiter.backOff). */
  #lower(a: Attempts, cause: 'rate-limited' | 'timeout'): void {
    this.#moved(a, this.#limiter.backOff(cause, a.epoch), cause);
  }

  /** The Limiter moved the bound to `limit` (undefined: it did not), for `cause` if it went down. */
  #moved(a: Attempts, limit: number | undefined, cause: 'rate-limited' | 'timeout' | 'latency'): void {
    if (limit === undefined) return;
    const down = limit < this.#slots.limit;
    this.#slots.limit = limit;
    if (!down) return;
    this.#load.backedOff(performance.now(), cause, limit);
    // Latency's back-offs are the Limiter at work, said in the load report; these are the run's troubles.
    a.count((s) => {
      if (cause === 'rate-limited') s.concurrencyLoweredTo = Math.min(s.concurrencyLoweredTo ?? limit, limit);
      else if (cause === 'timeout') s.latencyLoweredTo = Math.min(s.latencyLoweredTo ?? limit, limit);
    });
  }

  /**
   * An attempt was answered (`ms` after it was sent, for an answer that is not a 429 nor a
   * gateway's 502, 503 or 504): the failures in a row end, and the Limiter judges its latency.
   */
  #heard(status: number, a?: Attempts, ms?: number): void {
    this.#breaker.failures = 0;
    this.#answeredAt = performance.now();
    if (status === RATE_LIMITED) return;
    // Whatever answered it, a gateway too, admitted the request: it counts toward the rate admitted.
    this.#learner.answered(this.#answeredAt);
    if (GATEWAY_STATUSES.includes(status)) return;
    // When the request so answered was sent: an answer to one sent before a gateway answer
    // elsewhere (the service went down while it was in flight) says nothing of the time after.
    if (a) this.#upAt = Math.max(this.#upAt, a.sentAt);
    this.#breaker.answered++;
    if (a === undefined || ms === undefined) return;
    this.#load.answered(this.#answeredAt, ms, status);
    this.#moved(a, this.#limiter.answered(a.cls, ms, a.epoch, this.#slots.active), 'latency');
  }

  /**
   * An attempt of `a` failed in transport (a timeout, a refused or reset connection): it counts
   * toward the breaker unless it is part of a moment already counted (see Breaker.count), and
   * `breakerAfter` such moments with no answer between open it, or two after a long silence
   * (Breaker.opens).
   */
  #failed(e: SuiteError, a: Attempts): void {
    const b = this.#breaker;
    if (b.down || !b.count(a.sentAt) || !b.opens(this.#breakerAfter)) return;
    const silent = Math.round(b.silentFor() / 1000);
    b.down = `the target stopped answering under the run after ${b.answered} answered requests (nothing answered for ${silent} s with requests in flight; ${b.failures} failures in a row, at moments apart in time; the last: ${e.code}: ${e.message}); nothing more is sent to it`;
    const after = b.failures;
    a.count((s) => (s.breakerOpenedAfter = after));
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
