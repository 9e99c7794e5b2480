// Transformations around the plain reference server: how a fault or a variant rewrites the
// request the plain server receives, or the answer it gives, without a branch of its own in
// the plain server. Each is a piece of a Behaviour (Behaviour.around), applied in the order
// the pieces come (variants, then faults): the first piece's request transformation sees the
// request first, and its answer transformation the plain answer first.
import type { IncomingHttpHeaders } from 'node:http';

/**
 * An answer, before it is written: what a route gives (server/http.ts), and what an answer
 * transformation rewrites. `raw`: bytes written to the socket past Node's HTTP layer (which
 * would refuse them: a body on a 204), instead of status, headers and body.
 */
export interface Answer {
  status: number;
  headers: Record<string, string | number>;
  body?: string | Buffer;
  raw?: string;
}

/** What a transformation is told of a request, and may rewrite before the plain server reads it. */
export interface Asked {
  method: string;
  /** The name of the route the request reached (server/routes.ts, Route.name); absent when none did. */
  route?: string;
  /** The route's path parameters, decoded (empty where there are none, or they are not correctly encoded). */
  params: readonly string[];
  /** Whether the route's handler took the request (false: the server refused it first, or none was found). */
  handled: boolean;
  headers: IncomingHttpHeaders;
  /** The server's own bearer token: a transformation that lets a request in gives it this one. */
  token: string;
}

/** What a page transformation is told of the list request, as the plain server read it. */
export interface PageAsked {
  /** The path template of spec/list-operations.yaml (absent: a list of the store's own things). */
  template?: string;
  /** The request's query parameters, as sent. */
  query: URLSearchParams;
  /** page[limit] and page[offset] as the server took them (the default, the cap applied). */
  limit: number;
  offset: number;
  /** How many records the request selects (the filter applied, page[offset] and page[limit] not). */
  total: number;
}

/** What a query transformation is told of the store: its page length now, and the one it started with. */
export interface StoreAsked {
  /** The default page length now (PUT /v2/settings may have changed it). */
  pageLength: number;
  /** The default page length the server started with (its behaviour's). */
  initialPageLength: number;
  /** The query string as it came, undecoded (`?page%5Blimit%5D=5`; empty without one): what a store that matches names on it reads. */
  search?: string;
}

/** What a hold is told of a request its route has taken: the request, its path and query as sent. */
export interface Held {
  asked: Asked;
  /** The path, trailing slashes cut (a list's concrete path). */
  path: string;
  query: URLSearchParams;
}

/** One fault's or variant's transformations; each one it leaves out is the identity. */
export interface Around {
  /**
   * A piece with state of its own (a pool of workers, a lock): each server built from the
   * behaviour gets the piece this makes, so two servers in one process share nothing.
   */
  fresh?(): Around;
  /**
   * Holds a request its route has taken, before the route reads it, until the promise settles
   * (a server with a capacity, or time for a race): what it throws is the answer. Never for
   * the token endpoint, outside the contract.
   */
  hold?(held: Held): Promise<void> | void;
  /** The request's method and headers, before the server checks the token. */
  request?(asked: Asked): Asked;
  /** The text of a JSON body, before it is parsed: what it throws is the answer (a crash: a 500). */
  bodyText?(text: string, asked: Asked): void;
  /** A JSON body, parsed, as the route will read it: what it throws is the answer. */
  body?(value: unknown, asked: Asked): unknown;
  /** A list request's query parameters, before the list reads them: what it throws is the answer. */
  query?(query: URLSearchParams, store: StoreAsked): URLSearchParams;
  /** A list page, parsed, before it is sent: what it returns is sent (as JSON), what it throws is the answer. */
  page?(page: Record<string, unknown>, asked: PageAsked): unknown;
  /** Any answer of the API (not the token endpoint's own), before it is written. */
  answer?(answer: Answer, asked: Asked): Answer;
}

/** `value` passed through the transformations of `pieces` that have `step`, in order. */
export function through<K extends 'request' | 'body' | 'query' | 'answer' | 'page', V, A extends unknown[]>(
  pieces: readonly Around[],
  step: K,
  value: V,
  ...args: A
): V {
  let out = value;
  for (const piece of pieces) {
    const f = piece[step] as ((v: V, ...a: A) => V) | undefined;
    if (f) out = f.call(piece, out, ...args);
  }
  return out;
}

/** The pieces, each with state of its own (Around.fresh) made anew: those of one server. */
export function freshPieces(pieces: readonly Around[]): Around[] {
  return pieces.map((p) => p.fresh?.() ?? p);
}

/** Whether some piece has `step`: the plain path takes no detour without one. */
export function has(pieces: readonly Around[], step: keyof Around): boolean {
  return pieces.some((p) => p[step] !== undefined);
}
