// The reference server's wire layer: bounded body reading, JSON answers, and the contract's
// Error shape for every refusal. Nothing a client sends can make it throw past this layer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Behaviour } from './behaviour.js';
import { through, type Answer, type Asked } from './around.js';

export type { Answer } from './around.js';

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

/** Where a route hands its answer: written at once, or through the answer transformations first. */
export type Reply = (answer: Answer) => void;

/** JSON already serialized, as text or as its UTF-8 bytes. */
export function jsonText(status: number, text: string | Buffer, headers: Record<string, string> = {}): Answer {
  return {
    status,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': typeof text === 'string' ? Buffer.byteLength(text) : text.length },
    body: text,
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return jsonText(status, JSON.stringify(body), headers);
}

export function empty(status: number): Answer {
  return { status, headers: {} };
}

/** The body of an answer as a JSON value (undefined when it has none, or it is not JSON). */
export function bodyOf(answer: Answer): unknown {
  if (answer.body === undefined) return undefined;
  try {
    return JSON.parse(answer.body.toString()) as unknown;
  } catch {
    return undefined;
  }
}

/** The answer with another JSON body, its other headers kept. */
export function withBody(answer: Answer, body: unknown): Answer {
  const { 'content-length': _length, 'content-type': _type, ...headers } = answer.headers;
  return jsonText(answer.status, JSON.stringify(body), headers as Record<string, string>);
}

export function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (answer.raw !== undefined) {
    res.socket?.end(answer.raw);
    return;
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

export function errorBody(status: number, detail: string, b: Pick<Behaviour, 'extraFields'>): unknown {
  const item = {
    title: TITLES[status] ?? 'Error',
    status: String(status),
    detail,
    ...(b.extraFields ? { source: { pointer: '' }, meta: { code: `E${status}` } } : {}),
  };
  return { errors: [item], ...(b.extraFields ? { meta: { request_id: 'req-0' } } : {}) };
}

/** A refusal as an answer with the Error shape (spec/contract/README.md#error). */
export function errorAnswer(err: HttpError, b: Pick<Behaviour, 'extraFields'>): Answer {
  return json(err.status, errorBody(err.status, err.message, b), err.headers);
}

/**
 * An answer with the Error shape, given another status: its title, status and code follow; its
 * detail and headers stay, unless `instead` gives others.
 */
export function restatus(answer: Answer, status: number, instead: { detail?: string; headers?: Record<string, string> } = {}): Answer {
  const body = bodyOf(answer) as { errors: Array<Record<string, unknown>> };
  const errors = body.errors.map((e) => ({
    ...e,
    title: TITLES[status] ?? 'Error',
    status: String(status),
    ...(instead.detail !== undefined ? { detail: instead.detail } : {}),
    ...(isCoded(e.meta) ? { meta: { ...e.meta, code: `E${status}` } } : {}),
  }));
  const headers = instead.headers ?? answer.headers;
  return { ...withBody({ ...answer, headers }, { ...body, errors }), status };
}

const isCoded = (meta: unknown): meta is Record<string, unknown> => typeof meta === 'object' && meta !== null && 'code' in meta;

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
 * 400 for an empty or malformed body. The body, parsed, as the transformations around the server
 * make it (server/around.ts).
 */
export async function readJson(req: IncomingMessage, b: Behaviour, asked: Asked): Promise<unknown> {
  const raw = await readBody(req);
  const type = req.headers['content-type'];
  if (raw.length === 0) throw new HttpError(400, 'A request body is required.');
  if (!b.lenientContentType && (!type || !JSON_TYPE.test(type))) throw new HttpError(415, 'The request body must be sent as application/json.');
  const text = raw.toString('utf8');
  for (const piece of b.around) piece.bodyText?.(text, asked);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.');
  }
  return through(b.around, 'body', value, asked);
}
