// The one HTTP layer every check uses (undici, keep-alive). It bounds requests in flight,
// times out, caps response size, records every exchange with secrets masked, and turns
// transport failures into SuiteErrors: a refused connection is never the target's fault.
import { Agent, request as undiciRequest } from 'undici';
import { BODY_EXCERPT_MAX, excerpt, REQUEST_BODY_MAX, type Exchange } from './exchange.js';
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

class Semaphore {
  #free: number;
  readonly #waiting: Array<() => void> = [];
  constructor(n: number) {
    this.#free = n;
  }
  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

function buildQuery(query: Record<string, string | number> | undefined): string {
  if (!query) return '';
  const parts = Object.entries(query).map(([k, v]) => {
    const key = /^[A-Za-z0-9_\-.[\]]+$/.test(k) ? k : encodeURIComponent(k);
    return `${key}=${encodeURIComponent(String(v)).replace(/%3A/gi, ':')}`;
  });
  return parts.length ? `?${parts.join('&')}` : '';
}

function transportError(err: unknown, method: string, url: string, timeoutMs: number): SuiteError {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const what = `${method} ${url}`;
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

export class HttpClient {
  readonly options: HttpClientOptions;
  readonly #agent: Agent;
  readonly #slots: Semaphore;
  readonly #base: string;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#agent = new Agent({ keepAliveTimeout: 10_000, connections: options.concurrency });
    this.#slots = new Semaphore(options.concurrency);
    options.secrets.add(options.token);
  }

  url(path: string, query?: Record<string, string | number>): string {
    return `${this.#base}${path}${buildQuery(query)}`;
  }

  async request(spec: RequestSpec): Promise<HttpResponse> {
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

    await this.#slots.acquire();
    const started = performance.now();
    let status: number;
    let responseHeaders: Record<string, string>;
    let text: string;
    let bytes = 0;
    try {
      const res = await undiciRequest(url, {
        method: spec.method,
        headers,
        body,
        // A DELETE's connection is not reused: a target that puts a body on its 204 (which an
        // HTTP/1.1 client cannot see as one) must not poison the next request on the socket.
        reset: spec.method === 'DELETE',
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      responseHeaders = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) responseHeaders[k] = Array.isArray(v) ? v.join(', ') : String(v);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
        if (bytes > maxBodyBytes) {
          res.body.destroy();
          throw new SuiteError('RESPONSE_TOO_LARGE', `${spec.method} ${url}: response body over the ${maxBodyBytes}-byte cap`);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof SuiteError) throw err;
      const code = (err as { code?: string }).code;
      if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
        // The target's answer broke HTTP itself (most often: a body on a 204, or a wrong
        // Content-Length). That is the target's failure, not the suite's.
        throw new CheckFailure(`${spec.method} ${secrets.mask(url)}: the response is malformed`, {
          expected: 'a well-formed HTTP response (no body on a 204; a body as long as its Content-Length)',
          actual: 'the body did not match the response framing (a body on a 204, or a wrong Content-Length)',
          exchange: { method: spec.method, url: secrets.mask(url), requestHeaders: maskHeaders(headers, secrets), status: 0, responseHeaders: {}, bodyExcerpt: '(malformed response)', bodyBytes: 0, durationMs: performance.now() - started },
        });
      }
      throw transportError(err, spec.method, secrets.mask(url), timeoutMs);
    } finally {
      this.#slots.release();
    }
    const durationMs = performance.now() - started;

    let parsed: { ok: true; value: unknown } | { ok: false } = { ok: false };
    if (text.length > 0) {
      try {
        parsed = { ok: true, value: JSON.parse(text) };
        secrets.addFromBody(parsed.value);
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
      bodyExcerpt: excerpt(secrets.mask(text), BODY_EXCERPT_MAX),
      bodyBytes: bytes,
      durationMs,
    };
    return new HttpResponse(status, responseHeaders, text, exchange, parsed);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
