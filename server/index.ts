// The bundled reference server: an in-memory implementation of the contract that every
// check passes against, and, with a fault switched on, a server that breaks one rule.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { combineBehaviours, namedBehaviours, type Behaviour } from './behaviour.js';
import { freshPieces, has, through, type Around, type Asked, type Held } from './around.js';
import { errorAnswer, HttpError, requestUrl, writeAnswer, type Reply, type RequestUrl } from './http.js';
import { listRoute, ROUTES, type Route, type RouteContext } from './routes.js';
import { Store } from './store.js';
import { listen, type Listening, type SocketLimits } from './listen.js';
import { dataShapeOf } from './lists.js';
import { FAULTS } from './faults.js';
import { VARIANTS } from './variants.js';
import { DEFAULT_TOKEN_LIFETIME_SECONDS, issuedAccess, tokenRoute, type Access } from './oauth.js';

export { CONFORMING, type Behaviour, type ListFaultScope } from './behaviour.js';
export { FAULTS, type Fault } from './faults.js';
export { VARIANTS, type Variant } from './variants.js';
export { DEFAULT_MAX_RECORDS, Store } from './store.js';
export { DEFAULT_SOCKET_LIMITS, type SocketLimits } from './listen.js';
export { DEFAULT_TOKEN_LIFETIME_SECONDS, TOKEN_PATH, type TokenAnswer } from './oauth.js';

export interface ReferenceServerOptions {
  /** The bearer token the server accepts. */
  token: string;
  /** Named faults (server/faults.ts) to switch on. */
  faults?: readonly string[];
  /** Named legitimate variants (server/variants.ts) to switch on. */
  variants?: readonly string[];
  /** Direct overrides, applied last. */
  behaviour?: Partial<Behaviour>;
  /** Seeds the ids the server hands out and the data of its lists. */
  seed?: number;
  /** Records in an ordinary list (orders always hold more than 10,000). */
  records?: number;
  /** Keep catalog rules empty (default true). */
  emptyList?: boolean;
  /** List records created in the last 30 seconds, as by a server that seeds at start-up. */
  recentRecords?: boolean;
  /** Lifetime of a token from POST /oauth/access_token, in seconds (default 3600, the platform's). */
  tokenLifetimeSeconds?: number;
  /** The clock those tokens expire by, in epoch milliseconds (default Date.now): tests move it. */
  now?: () => number;
  /**
   * The most Application Keys, Custom APIs and working tokens the server holds, each (default
   * 10,000, DEFAULT_MAX_RECORDS): past it, a create gets 409 with the Error shape.
   */
  maxRecords?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  store: Store;
  behaviour: Behaviour;
  close(): Promise<void>;
}

/**
 * What the Authorization header allows: the server's own token everything; a token from
 * POST /oauth/access_token what its grant allows (server/oauth.ts).
 */
function accessOf(header: string | undefined, want: Buffer, store: Store, now: () => number): Access | 'missing' | 'wrong' {
  if (!header) return 'missing';
  const m = /^Bearer\s+(.+)$/i.exec(header);
  if (!m) return 'wrong';
  const text = m[1]!.trim();
  const given = Buffer.from(text);
  if (given.length === want.length && timingSafeEqual(given, want)) return 'full';
  return issuedAccess(store, text, now()) ?? 'wrong';
}

/** The path parameters of `route`, decoded; undefined when they are not correctly percent-encoded. */
function pathParams(route: Route, path: string): string[] | undefined {
  try {
    return route.pattern
      .exec(path)!
      .slice(1)
      .map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

export function resolveBehaviour(options: Pick<ReferenceServerOptions, 'faults' | 'variants' | 'behaviour'>): Behaviour {
  return combineBehaviours([
    ...namedBehaviours('variant', VARIANTS, options.variants ?? []),
    ...namedBehaviours('fault', FAULTS, options.faults ?? []),
    ...(options.behaviour ? [options.behaviour] : []),
  ]);
}

/**
 * A token is what every request but the token endpoint's is checked against: without one,
 * Buffer.from would throw a TypeError that names nothing of ours, and an empty or blank one
 * (the header's token is trimmed) would make a server that refuses everything.
 */
function requireToken(options: Partial<Pick<ReferenceServerOptions, 'token'>> | undefined, caller: string): string {
  const token: unknown = options?.token;
  if (typeof token !== 'string' || token.trim() === '') throw new TypeError(`${caller}: options.token (a non-empty string) is required`);
  return token;
}

/** The request held by each piece that holds, one after another. */
async function hold(pieces: readonly Around[], held: Held): Promise<void> {
  for (const piece of pieces) await piece.hold?.(held);
}

export function createReferenceHandler(
  options: ReferenceServerOptions,
  given?: Store,
): {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  behaviour: Behaviour;
  store: Store;
} {
  const token = Buffer.from(requireToken(options, 'createReferenceHandler'));
  const resolved = resolveBehaviour(options);
  // Pieces with state (a pool, a lock) are this server's own.
  const b = has(resolved.around, 'fresh') ? { ...resolved, around: freshPieces(resolved.around) } : resolved;
  // The list data follows the behaviour: microsecond times for the micros style, its id format.
  const store =
    given ??
    new Store({
      seed: options.seed,
      records: options.records,
      emptyList: options.emptyList,
      recentRecords: options.recentRecords,
      shape: dataShapeOf(b),
      maxRecords: options.maxRecords,
    });

  const lifetimeSeconds = options.tokenLifetimeSeconds ?? b.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
  if (!Number.isInteger(lifetimeSeconds) || lifetimeSeconds < 1)
    throw new TypeError(`tokenLifetimeSeconds must be a whole number of seconds, at least 1 (got ${lifetimeSeconds})`);
  const now = options.now ?? Date.now;
  const routes = [...ROUTES, tokenRoute({ lifetimeSeconds, now })];

  const tokenText = token.toString();
  const requests = has(b.around, 'request');
  const answers = has(b.around, 'answer');
  const holds = has(b.around, 'hold');

  /**
   * Throws a refusal, or hands the request to its route (which may answer later: its promise).
   * `asked` is the request as the transformations around the server see it: they may rewrite
   * it once its route is known, before the token is checked.
   */
  function handle(req: IncomingMessage, res: ServerResponse, asked: Asked, reply: Reply): void | Promise<void> {
    const host = req.headers.host ?? 'localhost';
    let url: RequestUrl;
    try {
      url = requestUrl(req.url ?? '/', host);
    } catch {
      throw new HttpError(400, 'The request URL is malformed.');
    }
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const candidates = routes.filter((r) => r.pattern.test(path));
    const list = candidates.length ? undefined : store.lists.templates.find((t) => t.pattern.test(path) && !b.absentPaths.includes(t.template));
    if (list) candidates.push(listRoute(list));
    const route = candidates.find((r) => r.method === req.method);
    const params = route ? pathParams(route, path) : [];
    asked.route = route?.name;
    asked.params = params ?? [];
    if (requests) Object.assign(asked, through(b.around, 'request', { ...asked }));
    const access = accessOf(asked.headers.authorization, token, store, now);
    const full = access === 'full';
    const authenticated = full || access === 'read';
    // A path whose every route is open (the token endpoint) answers a wrong method with 405.
    const open = route ? route.open?.(b) === true : candidates.length > 0 && candidates.every((r) => r.open?.(b));
    if (!authenticated && !open) {
      req.resume();
      throw new HttpError(
        access === 'missing' ? 401 : b.wrongTokenStatus,
        access === 'missing' ? 'An Authorization header with a bearer token is required.' : 'The bearer token is not valid.',
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (!route) {
      req.resume();
      if (candidates.length) {
        const allow = [...new Set(candidates.map((r) => r.method))].join(', ');
        throw new HttpError(405, `${req.method} is not allowed here; allowed: ${allow}.`, { allow });
      }
      throw new HttpError(404, 'Not found');
    }
    if (!full && !open && route.method !== 'GET') {
      req.resume();
      throw new HttpError(403, 'A token from an implicit grant can only read (GET); log in with grant_type client_credentials to change anything.');
    }
    if (!params) throw new HttpError(400, 'The request path is not correctly percent-encoded.');
    asked.handled = true;
    // The route reads the store as it is once the request is let through (after any hold).
    const run = (): void | Promise<void> => {
      const ctx: RouteContext = {
        req,
        res,
        reply: route.outsideContract ? (answer) => writeAnswer(res, answer) : reply,
        params,
        url,
        query: new URLSearchParams(url.search),
        store,
        b,
        ...(store.pageLength !== undefined ? { pageLength: store.pageLength } : {}),
        baseUrl: `http://${host}`,
        authenticated,
        asked,
      };
      return route.handle(ctx);
    };
    if (!holds || route.outsideContract) return run();
    return hold(b.around, { asked, path, query: new URLSearchParams(url.search) }).then(run);
  }

  // Most routes answer at once; only those that read a body return a promise.
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const asked: Asked = { method: req.method ?? '', params: [], headers: req.headers, token: tokenText, handled: false };
    // The answer, through the transformations around the server (none: written as it is).
    const reply: Reply = answers ? (answer) => writeAnswer(res, through(b.around, 'answer', answer, asked)) : (answer) => writeAnswer(res, answer);
    const fail = (err: unknown): void => reply(errorAnswer(err instanceof HttpError ? err : new HttpError(500, 'The server failed to handle the request.'), b));
    try {
      handle(req, res, asked, reply)?.catch(fail);
    } catch (err) {
      fail(err);
    }
  };
  return { handler, behaviour: b, store };
}

/** The reference server on a socket already listening (server/listen.ts). */
export function serveOn(listening: Listening, options: ReferenceServerOptions): RunningServer {
  requireToken(options, 'serveOn');
  const { handler, behaviour, store } = createReferenceHandler(options);
  listening.server.on('request', handler);
  return { url: listening.url, port: listening.port, store, behaviour, close: listening.close };
}

/**
 * The reference server on a socket of its own. `SocketLimits` (server/listen.ts) bound how long
 * a slow or idle client may hold a socket and how many sockets are open at once.
 */
export async function startReferenceServer(options: ReferenceServerOptions & SocketLimits & { port?: number; host?: string }): Promise<RunningServer> {
  requireToken(options, 'startReferenceServer');
  const listening = await listen(options);
  try {
    return serveOn(listening, options);
  } catch (err) {
    await listening.close();
    throw err;
  }
}
