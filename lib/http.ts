// The one HTTP layer every check uses (undici, keep-alive). It bounds requests in flight,
// times out, caps response size, records every exchange with secrets masked, and turns
// transport failures into SuiteErrors: a refused connection is never the target's fault.
// Against a real target (issue 8) it waits out 429 and 503 answers and sends a GET again after
// a reset connection (undici's RetryAgent, with the policy below), lowers its in-flight bound
// when 429s arrive, stops sending once the target has stopped answering, and counts all of it.
import { setTimeout as delay } from 'node:timers/promises';
import { createRequire } from 'node:module';
import type { Agent, RetryAgent, RetryHandler, request as UndiciRequest } from 'undici';
import { BODY_EXCERPT_MAX, REQUEST_BODY_MAX, type Exchange } from './exchange.js';
import { CheckFailure, SuiteError } from './outcome.js';
import { MASK, type Secrets } from './secrets.js';
import { packageVersion } from './package.js';

export interface HttpClientOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  maxBodyBytes: number;
  concurrency: number;
  secrets: Secrets;
  /** How 429, 503 and reset GETs are retried: DEFAULT_RETRY, any part overridden. */
  retry?: Partial<RetryPolicy>;
  /** Failed attempts in a row (timeouts, refused or reset connections) that open the breaker. */
  breakerAfter?: number;
  /** The breaker's state, shared by every client of one run (Breaker.forRun); default: its own. */
  breaker?: Breaker;
}

export interface RetryPolicy {
  /** Most retries of one request, whatever their cause. */
  maxRetries: number;
  /** Most time one request spends waiting between its attempts, all waits together. */
  maxWaitMs: number;
  /** The first wait when an answer names no Retry-After; it doubles with each retry, with jitter. */
  baseDelayMs: number;
  /** The longest wait the backoff chooses (a Retry-After may ask for more, within maxWaitMs). */
  maxDelayMs: number;
  /** How the client waits; tests shrink time with it. */
  sleep: (ms: number) => Promise<void>;
}

/** Issue 8: a few retries, and a bounded wait, per request. */
export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 4, maxWaitMs: 30_000, baseDelayMs: 500, maxDelayMs: 8_000, sleep: (ms) => delay(ms) };

/** Failed attempts in a row after which the target is taken for down (issue 8). */
export const BREAKER_AFTER = 5;

/**
 * What the transport did (issue 8), kept by the client for the run and by each Session for
 * its check (shared work counts for the check that started it), so a summary can add them up.
 */
export interface TransportStats {
  /** Requests sent, each counted once however many attempts it took. */
  requests: number;
  /** Attempts beyond the first. */
  retries: number;
  /** Of those: GETs sent again after their connection was reset before the answer. */
  resetRetries: number;
  /** 429 and 503 answers waited out (each one followed by a retry). */
  waitedOut: number;
  /** Time spent waiting between attempts. */
  waitedMs: number;
  /** Requests not sent: the breaker was open. */
  refused: number;
  /** The lowest in-flight bound a 429 answered to these requests lowered the client to. */
  concurrencyLoweredTo?: number;
  /** The breaker opened on one of these requests, after this many failed attempts in a row. */
  breakerOpenedAfter?: number;
}

export function noTransport(): TransportStats {
  return { requests: 0, retries: 0, resetRetries: 0, waitedOut: 0, waitedMs: 0, refused: 0 };
}

/** The stats of several checks (or runs) as one: counts added, the lowest bound, the breaker if any opened. */
export function sumTransport(all: ReadonlyArray<TransportStats | undefined>): TransportStats {
  const sum = noTransport();
  for (const t of all) {
    if (!t) continue;
    sum.requests += t.requests;
    sum.retries += t.retries;
    sum.resetRetries += t.resetRetries;
    sum.waitedOut += t.waitedOut;
    sum.waitedMs += t.waitedMs;
    sum.refused += t.refused;
    if (t.concurrencyLoweredTo !== undefined) sum.concurrencyLoweredTo = Math.min(sum.concurrencyLoweredTo ?? Infinity, t.concurrencyLoweredTo);
    if (t.breakerOpenedAfter !== undefined) sum.breakerOpenedAfter = Math.max(sum.breakerOpenedAfter ?? 0, t.breakerOpenedAfter);
  }
  return sum;
}

/** Answers that say the request was not processed: any method is sent again (issue 8). */
const NOT_PROCESSED = [429, 503];
/** A connection closed before the answer: only a GET is sent again, a POST or DELETE may have been applied. */
const RESET = ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'];
/** Answers without a 429 after which a lowered in-flight bound climbs back by one. */
const CLIMB_AFTER = 20;
/**
 * Where the in-flight bound starts when the ceiling is higher (issue 9): it doubles each time
 * as many answers as it allows come in without a 429, so a target that keeps up is soon asked
 * at the ceiling, and one that rate-limits is not met with the whole ceiling at once.
 */
const START_IN_FLIGHT = 8;
/**
 * A GET whose connection was reset while the target answered another request this recently
 * (ms) is sent again without counting toward the breaker: a burst of resets on kept-alive
 * connections while the target answers others (a server closing idle connections just as they
 * are reused, its event loop held up) is no outage. If the target has stopped, the GET's later
 * attempts come after this window and count.
 */
const ALIVE_WITHIN_MS = 2_000;

/**
 * Retry-After (RFC 9110 section 10.2.3) in ms from `now`: delay-seconds or an HTTP date.
 * Undefined when absent, unreadable, zero or past: the backoff decides then.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) > 0 ? Number(v) * 1000 : undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) || at <= now ? undefined : at - now;
}

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

/** Bounds requests in flight; the bound can move (issue 8: 429s lower it, answers raise it back). */
class Semaphore {
  #limit: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  constructor(n: number) {
    this.#limit = n;
  }
  get limit(): number {
    return this.#limit;
  }
  /** A lower bound takes effect as requests finish: none in flight is cut short. */
  set limit(n: number) {
    this.#limit = n;
    this.#wake();
  }
  /** `first`: ahead of every request waiting (a retry, which has waited its turn already). */
  async acquire(first = false): Promise<void> {
    if (this.#active < this.#limit) {
      this.#active++;
      return;
    }
    await new Promise<void>((resolve) => (first ? this.#waiting.unshift(resolve) : this.#waiting.push(resolve)));
  }
  release(): void {
    this.#active--;
    this.#wake();
  }
  #wake(): void {
    while (this.#active < this.#limit && this.#waiting.length > 0) {
      this.#active++;
      this.#waiting.shift()!();
    }
  }
}

/** One request on its way through its attempts. */
interface Attempts {
  readonly method: string;
  /** `METHOD url`, masked, for messages. */
  readonly what: string;
  /** Adds to the client's stats and to the caller's. */
  readonly count: (f: (s: TransportStats) => void) => void;
  /** Starts and stops the current attempt's timeout. */
  readonly arm: () => void;
  readonly disarm: () => void;
  /** Attempts sent so far. */
  sent: number;
  waitedMs: number;
  /** The in-flight bound's generation when the current attempt was sent (see #lower). */
  epoch: number;
  /** Whether the request holds a slot of the semaphore: it gives it back while it waits. */
  holding: boolean;
  /** The final answer has begun (its headers arrived). */
  answered: boolean;
}

function buildQuery(query: Record<string, string | number> | undefined): string {
  if (!query) return '';
  const parts = Object.entries(query).map(([k, v]) => {
    const key = /^[A-Za-z0-9_\-.[\]]+$/.test(k) ? k : encodeURIComponent(k);
    return `${key}=${encodeURIComponent(String(v)).replace(/%3A/gi, ':')}`;
  });
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A transport failure of the request `what` (`METHOD url`, masked) as the suite's error. */
function transportError(err: unknown, what: string, timeoutMs: number): SuiteError {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new SuiteError('TIMEOUT', `${what}: no complete answer within ${timeoutMs} ms`);
  }
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT'].includes(code)) {
    return new SuiteError('TARGET_UNREACHABLE', `${what}: cannot reach the target (${code})`);
  }
  return new SuiteError('CONNECTION_CLOSED', `${what}: the request failed before a full answer (${code || e.message || 'unknown error'})`);
}

function maskHeaders(headers: Record<string, string>, secrets: Secrets): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = k === 'authorization' ? `Bearer ${MASK}` : secrets.mask(v);
  return out;
}

/**
 * The circuit breaker's state. One per run, shared by the clients of every area (each vitest
 * area file builds its own client, in one worker): a target that stopped answering during one
 * area is not asked again, five timeouts at a time, by each area after it.
 */
export class Breaker {
  static readonly #runs = new Map<string, Breaker>();
  /** Requests answered, and failed attempts since the last answer. */
  answered = 0;
  failures = 0;
  /** Set when the breaker opens: why every later request fails at once. */
  down?: string;

  static forRun(runId: string): Breaker {
    let b = Breaker.#runs.get(runId);
    if (!b) Breaker.#runs.set(runId, (b = new Breaker()));
    return b;
  }
}

export class HttpClient {
  readonly options: HttpClientOptions;
  readonly #agent: Agent;
  readonly #slots: Semaphore;
  readonly #base: string;
  readonly #retry: RetryPolicy;
  readonly #breakerAfter: number;
  readonly #stats = noTransport();
  /** The in-flight bound's generation: a 429 lowers the bound once per generation. */
  #epoch = 0;
  /** Answers since the last 429 (the bound climbs back by one every CLIMB_AFTER). */
  #calm = 0;
  #stopped = false;
  /**
   * A 429 or 503 asked to wait: nothing new is sent until the wait is over, so a target that
   * limits requests per second is not met by the requests queued behind the one it refused.
   */
  #paused: Promise<void> | undefined;
  #pausedUntil = 0;
  /** No 429 yet: the bound doubles as answers come in (see START_IN_FLIGHT). */
  #slowStart = true;
  /** When the target last answered (performance.now()). */
  #answeredAt = -Infinity;
  readonly #breaker: Breaker;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#agent = new (loadUndici().Agent)({ keepAliveTimeout: 10_000, connections: options.concurrency });
    this.#slots = new Semaphore(Math.min(options.concurrency, START_IN_FLIGHT));
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#breakerAfter = options.breakerAfter ?? BREAKER_AFTER;
    this.#breaker = options.breaker ?? new Breaker();
    options.secrets.add(options.token);
  }

  /** What the transport did so far, for the whole client. */
  get stats(): TransportStats {
    return { ...this.#stats };
  }

  /**
   * The run was stopped (Ctrl-C, SIGTERM): every check is under way at once, so a stop must
   * reach the checks themselves. Nothing more is sent; requests in flight end as they end.
   */
  stop(): void {
    this.#stopped = true;
  }

  /** The in-flight bound now: below the configured concurrency while it starts, and after 429s. */
  get concurrency(): number {
    return this.#slots.limit;
  }

  url(path: string, query?: Record<string, string | number>): string {
    return `${this.#base}${path}${buildQuery(query)}`;
  }

  /** Sends one request; `stats` (a Session's) counts what it took besides the client's own. */
  async request(spec: RequestSpec, stats?: TransportStats): Promise<HttpResponse> {
    const { secrets, timeoutMs, maxBodyBytes } = this.options;
    const url = this.url(spec.path, spec.query);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `conformance/${packageVersion}`, ...spec.headers };
    const auth = spec.auth ?? 'token';
    if (auth === 'token') headers.authorization = `Bearer ${this.options.token}`;
    else if (typeof auth === 'object') {
      secrets.add(auth.bearer);
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

    const what = `${spec.method} ${secrets.mask(url)}`;
    const count = (f: (s: TransportStats) => void): void => {
      f(this.#stats);
      if (stats) f(stats);
    };
    // Issue 8: once the target has stopped answering, nothing more is sent (and what was
    // queued behind the requests that timed out fails at once too).
    const refused = (): SuiteError => {
      count((s) => s.refused++);
      return new SuiteError('TARGET_DOWN', `${what}: not sent: ${this.#breaker.down}`);
    };
    // One reason for every check a stop cut short, so the report groups them in one line.
    const interrupted = (): SuiteError => new SuiteError('INTERRUPTED', 'the run was stopped before this check finished');
    if (this.#stopped) throw interrupted();
    if (this.#breaker.down) throw refused();
    while (this.#paused) await this.#paused;
    await this.#slots.acquire();
    if (this.#breaker.down || this.#stopped) {
      this.#slots.release();
      throw this.#stopped ? interrupted() : refused();
    }
    count((s) => s.requests++);
    // The timeout covers one attempt, not the waits between attempts (issue 8): undici's
    // RetryAgent carries one signal across all attempts, so the signal is ours to fire, and
    // the retry policy disarms it while it waits and arms it again for the next attempt.
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const a: Attempts = {
      method: spec.method,
      what,
      count,
      arm: () => (timer = setTimeout(() => abort.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)),
      disarm: () => clearTimeout(timer),
      sent: 1,
      waitedMs: 0,
      epoch: this.#epoch,
      holding: true,
      answered: false,
    };
    const started = performance.now();
    let status = 0;
    let responseHeaders: Record<string, string> = {};
    let text = '';
    let bytes = 0;
    // One go at the exchange: the request (undici's RetryAgent sends it again after a 429, a 503
    // or, for a GET, a reset before the answer: see #policy), then the answer's body.
    const attempt = async (): Promise<string> => {
      const res = await loadUndici().request(url, {
        method: spec.method,
        headers,
        body,
        // A DELETE's connection is not reused: a target that puts a body on its 204 (which an
        // HTTP/1.1 client cannot see as one) must not poison the next request on the socket.
        reset: spec.method === 'DELETE',
        // A RetryAgent per request: its retry callback is this request's policy (and state).
        dispatcher: new (loadUndici().RetryAgent)(this.#agent, { statusCodes: NOT_PROCESSED, retry: this.#policy(a) }),
        signal: abort.signal,
        // Per attempt too; set so that undici's defaults (300 s) never cut a longer timeout short.
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      a.answered = true;
      this.#heard(res.statusCode);
      status = res.statusCode;
      responseHeaders = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) responseHeaders[k] = Array.isArray(v) ? v.join(', ') : String(v);
      }
      bytes = 0;
      // Read with events rather than an async iterator: a promise per chunk costs more than the
      // chunk on a run of thousands of pages.
      return await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        res.body.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > maxBodyBytes) {
            res.body.destroy();
            reject(new SuiteError('RESPONSE_TOO_LARGE', `${what}: response body over the ${maxBodyBytes}-byte cap`));
          } else chunks.push(chunk);
        });
        // One chunk (most pages) is decoded where it lies, not copied first.
        res.body.on('end', () => resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)).toString('utf8')));
        res.body.on('error', reject);
      });
    };
    a.arm();
    try {
      // A GET whose answer is cut off once it began (the connection dropped mid-body) is sent
      // again whole (#startOver): undici would ask for the rest with a Range request, which an
      // API need not honour.
      for (;;) {
        try {
          text = await attempt();
          break;
        } catch (err) {
          if (!(await this.#startOver(a, err))) throw err;
        }
      }
    } catch (err) {
      if (err instanceof SuiteError) throw err;
      const code = (err as { code?: string }).code;
      if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
        // The target's answer broke HTTP itself (most often: a body on a 204, or a wrong
        // Content-Length). That is the target's failure, not the suite's.
        throw new CheckFailure(`${what}: the response is malformed`, {
          expected: 'a well-formed HTTP response (no body on a 204; a body as long as its Content-Length)',
          actual: 'the body did not match the response framing (a body on a 204, or a wrong Content-Length)',
          exchange: { method: spec.method, url: secrets.mask(url), requestHeaders: maskHeaders(headers, secrets), status: 0, responseHeaders: {}, bodyExcerpt: '(malformed response)', bodyBytes: 0, durationMs: performance.now() - started, attempts: a.sent },
        });
      }
      const failure = transportError(err, what, timeoutMs);
      this.#failed(failure, count);
      // Many requests are in flight when a target stops answering, and they fail together: those
      // that fail once the breaker is open say so, and are reported as one group, not each alone.
      if (this.#breaker.down) throw new SuiteError('TARGET_DOWN', `${what}: sent, no answer (${failure.code}); ${this.#breaker.down}`);
      throw failure;
    } finally {
      a.disarm();
      if (a.holding) this.#slots.release();
    }
    const durationMs = performance.now() - started;

    let parsed: { ok: true; value: unknown } | { ok: false } = { ok: false };
    if (text.length > 0) {
      try {
        parsed = { ok: true, value: JSON.parse(text) };
        secrets.addFromBody(parsed.value, text);
      } catch {
        parsed = { ok: false };
      }
    }
    const maskedHeaders = maskHeaders(headers, secrets);
    const maskedResponseHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(responseHeaders)) maskedResponseHeaders[k] = secrets.mask(v);
    const exchange: Exchange = {
      method: spec.method,
      url: secrets.mask(url),
      requestHeaders: maskedHeaders,
      requestBody: body === undefined ? undefined : secrets.mask(body).slice(0, REQUEST_BODY_MAX * 2),
      requestBodyBytes: body === undefined ? undefined : Buffer.byteLength(body),
      status,
      responseHeaders: maskedResponseHeaders,
      bodyExcerpt: text.length <= BODY_EXCERPT_MAX ? secrets.mask(text) : `${secrets.maskedHead(text, BODY_EXCERPT_MAX)}… (${text.length - BODY_EXCERPT_MAX} more characters)`,
      bodyBytes: bytes,
      durationMs,
      attempts: a.sent,
    };
    return new HttpResponse(status, responseHeaders, text, exchange, parsed);
  }

  /**
   * The decision undici's RetryAgent asks for after each failed attempt; re-sending (the string
   * body replayed) and discarding the 429's body stay undici's. Its default decision cannot
   * serve issue 8: its `methods` hold for answers and resets alike, where here any method is
   * sent again after a 429 or 503 (the request was not processed) but only a GET after a reset
   * (a POST or DELETE may have been applied); it caps a Retry-After at maxTimeout and retries
   * before the time asked; it has no jitter, no total wait per request, and counts nothing.
   * While it waits, the request gives its slot back, so a lowered bound holds for retries too.
   */
  #policy(a: Attempts): RetryHandler.RetryCallback {
    return (err, _context, done) => {
      a.disarm();
      const e = err as { code?: string; statusCode?: number; headers?: Record<string, string | string[] | undefined> };
      const status = e.code === 'UND_ERR_REQ_RETRY' && NOT_PROCESSED.includes(e.statusCode ?? 0) ? e.statusCode! : undefined;
      // A reset once the answer has begun is not retried: undici would resume the body with a
      // Range request, which an API need not honour.
      const reset = status === undefined && a.method === 'GET' && !a.answered && RESET.includes(e.code ?? '');
      // Anything else fails as it is: request() says why and counts it toward the breaker.
      if (status === undefined && !reset) return done(err);
      const { maxRetries, maxWaitMs } = this.#retry;
      const header = e.headers?.['retry-after'];
      const wait = (status !== undefined ? retryAfterMs(Array.isArray(header) ? header[0] : header) : undefined) ?? this.#backoff(a.sent);
      if (status !== undefined) {
        this.#heard(status);
        if (status === 429) this.#lower(a);
      }
      if (a.sent > maxRetries || a.waitedMs + wait > maxWaitMs) {
        if (status === undefined) return done(err);
        const why = a.sent > maxRetries ? `its ${maxRetries} retries are spent` : `${wait} ms more (${header === undefined ? 'backoff' : `Retry-After: ${header}`}) would pass its ${maxWaitMs} ms of waiting`;
        const verdict = status === 429 ? 'no verdict rests on a rate-limited answer' : 'the target could not serve it';
        return done(new SuiteError(status === 429 ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE', `${a.what}: still ${status} after ${a.sent} attempt${a.sent === 1 ? '' : 's'} and ${a.waitedMs} ms of waiting: ${why}; ${verdict}`));
      }
      if (reset && performance.now() - this.#answeredAt > ALIVE_WITHIN_MS) this.#failed(transportError(err, a.what, this.options.timeoutMs), a.count);
      if (this.#breaker.down) return done(new SuiteError('TARGET_DOWN', `${a.what}: not sent again: ${this.#breaker.down}`));
      void this.#nextAttempt(a, wait, reset, status !== undefined).then((go) => done(go ? null : new SuiteError('TARGET_DOWN', `${a.what}: not sent again: ${this.#breaker.down}`)));
    };
  }

  /**
   * Between two attempts of `a`: counts the retry, gives the slot back for `wait` ms (holding
   * every request not yet sent meanwhile when `pause`: a 429 or 503 asked to wait), takes a slot
   * again ahead of those queued, and arms the next attempt's timeout. False when the breaker
   * opened meanwhile: nothing more is sent.
   */
  async #nextAttempt(a: Attempts, wait: number, reset: boolean, pause: boolean): Promise<boolean> {
    a.count((s) => {
      s.retries++;
      if (reset) s.resetRetries++;
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
    if (this.#breaker.down) return false;
    a.epoch = this.#epoch;
    a.arm();
    return true;
  }

  /**
   * A GET's answer was cut off after it began: whether to send it again whole, after its backoff
   * (its slot given back meanwhile), within its retries and its time for waiting, while the run
   * goes on and the breaker is shut. The target answered, so this counts toward no breaker.
   */
  async #startOver(a: Attempts, err: unknown): Promise<boolean> {
    const code = (err as { code?: string }).code ?? '';
    if (a.method !== 'GET' || !a.answered || !RESET.includes(code) || this.#stopped || this.#breaker.down) return false;
    const { maxRetries, maxWaitMs } = this.#retry;
    const wait = this.#backoff(a.sent);
    if (a.sent > maxRetries || a.waitedMs + wait > maxWaitMs) return false;
    a.disarm();
    a.answered = false;
    // A stop during the wait ends it here (the timeout armed again is disarmed by request()).
    return (await this.#nextAttempt(a, wait, true, false)) && !this.#stopped;
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

  /**
   * Issue 8: a 429 halves the in-flight bound (down to 1), once per generation of the bound:
   * answers to attempts sent before the last cut say nothing of the new bound.
   */
  #lower(a: Attempts): void {
    this.#calm = 0;
    this.#slowStart = false;
    if (a.epoch !== this.#epoch || this.#slots.limit === 1) return;
    this.#epoch++;
    const limit = (this.#slots.limit = Math.max(1, Math.floor(this.#slots.limit / 2)));
    a.count((s) => (s.concurrencyLoweredTo = Math.min(s.concurrencyLoweredTo ?? limit, limit)));
  }

  /** An attempt was answered: the failures in a row end; a real answer lets a lowered bound climb back slowly. */
  #heard(status: number): void {
    this.#breaker.failures = 0;
    this.#answeredAt = performance.now();
    if (NOT_PROCESSED.includes(status)) return;
    this.#breaker.answered++;
    if (this.#slots.limit >= this.options.concurrency) return;
    if (this.#slowStart && ++this.#calm >= this.#slots.limit) {
      this.#slots.limit = Math.min(this.options.concurrency, this.#slots.limit * 2);
      this.#calm = 0;
    } else if (!this.#slowStart && ++this.#calm >= CLIMB_AFTER) {
      this.#slots.limit++;
      this.#calm = 0;
    }
  }

  /** Issue 8: an attempt failed in transport; `breakerAfter` of them in a row open the breaker. */
  #failed(e: SuiteError, count: Attempts['count']): void {
    if (++this.#breaker.failures < this.#breakerAfter || this.#breaker.down) return;
    this.#breaker.down = `the target stopped answering after ${this.#breaker.answered} answered requests (${this.#breaker.failures} attempts in a row failed, the last: ${e.code}: ${e.message}); nothing more is sent to it`;
    const after = this.#breaker.failures;
    count((s) => (s.breakerOpenedAfter = after));
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
