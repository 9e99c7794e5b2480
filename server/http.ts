// The reference server's wire layer: bounded body reading, JSON answers, and the contract's
// Error shape for every refusal. Nothing a client sends can make it throw past this layer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Behaviour } from './behaviour.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** What the server reads of a request's URL: as new URL(target, baseUrl) has it. */
export interface RequestUrl {
  href: string;
  pathname: string;
  search: string;
}

/**
 * Request targets the URL parser keeps as they are: a path of plain characters, not starting
 * with `//`, with no `.` or `..` segment (and no `%`: `%2e` is a dot there); a query of plain
 * characters or `%` (nothing the parser would percent-encode; it leaves a `%` in a query as it
 * is, and clients encode `page[limit]` as `page%5Blimit%5D`), no fragment. The common case,
 * read without a parse; test/server.test.ts holds it to the parser.
 */
const PLAIN_TARGET = /^(?![^?]*\/\.\.?(?:[/?]|$))\/(?!\/)[\w\-.~!$&()*+,;=:@/]*(?:\?[\w\-.~!$&()*+,;=:@/?[\]%]*)?$/;

/** `http://host` as the URL parser writes it, by Host header; null where the host is not valid. */
const origins = new Map<string, string | null>();

/**
 * The request's URL, as new URL(target, `http://${host}`) has it (which throws when it is
 * malformed); a plain target (PLAIN_TARGET) is kept as it is, after its host's origin.
 */
export function requestUrl(target: string, host: string): RequestUrl {
  if (PLAIN_TARGET.test(target)) {
    let origin = origins.get(host);
    if (origin === undefined) {
      try {
        origin = new URL('/', `http://${host}`).href.slice(0, -1);
      } catch {
        origin = null;
      }
      if (origins.size >= 1000) origins.clear();
      origins.set(host, origin);
    }
    if (origin !== null) {
      const q = target.indexOf('?');
      return { href: `${origin}${target}`, pathname: q < 0 ? target : target.slice(0, q), search: q < 0 || q === target.length - 1 ? '' : target.slice(q) };
    }
  }
  const url = new URL(target, `http://${host}`);
  return { href: url.href, pathname: url.pathname, search: url.search };
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
};

/** A refusal: becomes a response with the Error shape. */
export class HttpError extends Error {
  readonly code = 'HTTP_REFUSAL';
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.headers = headers;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  sendJsonText(res, status, JSON.stringify(body), contentType);
}

/** JSON already serialized, as text or as its UTF-8 bytes. */
export function sendJsonText(res: ServerResponse, status: number, text: string | Buffer, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': typeof text === 'string' ? Buffer.byteLength(text) : text.length });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}

export function errorBody(status: number, detail: string, b: Behaviour): unknown {
  const item = {
    title: TITLES[status] ?? 'Error',
    status: b.errorStatusAsNumber ? status : String(status),
    detail,
    ...(b.extraFields ? { source: { pointer: '' }, meta: { code: `E${status}` } } : {}),
  };
  return b.errorsArray ? { errors: [item], ...(b.extraFields ? { meta: { request_id: 'req-0' } } : {}) } : { error: item };
}

export function sendError(res: ServerResponse, err: HttpError, b: Behaviour): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  if (err.status === 401 && !b.unauthorizedAsJson) {
    res.writeHead(401, { 'content-type': 'text/plain' });
    res.end('Unauthorized');
    return;
  }
  sendJson(res, err.status, errorBody(err.status, err.message, b), b.errorContentType);
}

/** Reads the body up to MAX_BODY_BYTES; a larger one is refused with 413 without buffering it. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      req.resume();
      reject(new HttpError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`, { connection: 'close' }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        refused = true;
        reject(new HttpError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`, { connection: 'close' }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => reject(e));
  });
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The body of a request that must carry JSON: 415 for another media type (unless the behaviour is
 * lenient: spec/contract/README.md#create.open-bodies leaves the Content-Type of a JSON body open),
 * 400 for an empty or malformed body (or `malformedJsonStatus`, which a fault may set to 500).
 */
export async function readJson(req: IncomingMessage, b: Behaviour): Promise<unknown> {
  const raw = await readBody(req);
  const type = req.headers['content-type'];
  if (raw.length === 0) throw new HttpError(400, 'A request body is required.');
  if (!b.lenientContentType && (!type || !JSON_TYPE.test(type))) throw new HttpError(415, 'The request body must be sent as application/json.');
  const text = raw.toString('utf8');
  // A fault of the body's parser (Behaviour.readBody): what it throws is a crash, a 500.
  if (b.readBody) b.readBody(text);
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(b.malformedJsonStatus, 'The request body is not valid JSON.');
  }
}
