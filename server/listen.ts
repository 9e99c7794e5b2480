// A listening socket for the reference server, before the server itself is built. It needs
// node:http alone, so a run can have its URL (what the checks are given) at once, and load and
// seed the server (server/index.ts: faker, the store) while vitest starts its worker.
//
// The socket holds against slow clients and floods (SocketLimits): a client that sends its
// headers slowly (slowloris) or keeps a socket idle is cut off after a few seconds, and no more
// than `maxConnections` sockets are open at once: past that, a new connection closes the socket
// that has been idle longest, so thousands of idle sockets cannot stop a client that sends
// requests (nor use up the process's open files: 1,024 by default on Linux).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How long a socket may take or sit idle, and how many may be open at once. */
export interface SocketLimits {
  /**
   * Milliseconds a request's headers may take to arrive, from its first byte (or from the
   * connection, for its first request). Default 10,000: the suite's client sends a request's
   * headers in one write, so only a stalled or deliberately slow client (slowloris) waits this
   * long; a request held up behind a busy event loop (a CI runner) has ample room.
   */
  headersTimeoutMs?: number;
  /**
   * Milliseconds a whole request (headers and body, at most 1 MB) may take to arrive. Default
   * 30,000: a 1 MB body at a modem's pace still arrives; a body trickled in to hold the socket
   * does not. At least headersTimeoutMs (Node's rule).
   */
  requestTimeoutMs?: number;
  /**
   * Milliseconds an idle kept-alive socket stays open after an answer. Default 5,000 (advertised
   * as `Keep-Alive: timeout=5`; Node closes a second later): the suite's client (undici) closes
   * its own end 2 s before the advertised time and reuses a socket at once within a burst of
   * requests, so it never meets a socket the server closed under it.
   */
  keepAliveTimeoutMs?: number;
  /**
   * Milliseconds a socket may send and read nothing while a request is in flight (a client that
   * stops reading its answer holds it otherwise). Default 30,000: every route answers at once,
   * so only a client that no longer reads waits this long.
   */
  socketTimeoutMs?: number;
  /**
   * Sockets open at once. Default 512: half the 1,024 open files a Linux process has by default,
   * which leaves room for the process's other files, and twice the suite's highest concurrency
   * (256). Past it, a new connection closes the socket idle longest (one that never sent a
   * request first): a socket with a request in flight is never closed for another. When every
   * socket has a request in flight, the new one gets 503 with Retry-After and is closed.
   */
  maxConnections?: number;
}

export const DEFAULT_SOCKET_LIMITS: Readonly<Required<SocketLimits>> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  socketTimeoutMs: 30_000,
  maxConnections: 512,
});

export interface Listening {
  server: Server;
  url: string;
  port: number;
  /** Closes the socket and every connection on it. */
  close(): Promise<void>;
}

/** The limits with their defaults; a TypeError names a value that is not a whole number, at least 1. */
export function socketLimits(options: SocketLimits = {}): Required<SocketLimits> {
  const limits = { ...DEFAULT_SOCKET_LIMITS };
  for (const name of Object.keys(DEFAULT_SOCKET_LIMITS) as Array<keyof SocketLimits>) {
    const value: unknown = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
      throw new TypeError(`${name} must be a whole number, at least 1 (got ${String(value)})`);
    limits[name] = value;
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new TypeError(`headersTimeoutMs (${limits.headersTimeoutMs}) must not be more than requestTimeoutMs (${limits.requestTimeoutMs})`);
  return limits;
}

/**
 * Node checks the headers and request timeouts on an interval (30 s by default, which let an
 * idle socket stay about 35 s): a quarter of the shorter one, at most a second, so a slow
 * client is cut off at most that much late. Each check walks only the sockets with a request
 * under way.
 */
function checkingInterval(limits: Required<SocketLimits>): number {
  return Math.max(10, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

const BUSY_BODY = JSON.stringify({
  errors: [{ title: 'Service Unavailable', status: '503', detail: 'Every connection the server keeps has a request under way; try again in a second.' }],
});
const BUSY_ANSWER = `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BUSY_BODY)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${BUSY_BODY}`;

/**
 * At most `max` sockets open: past that, a new one closes the socket idle longest, else is
 * refused. Idle means no request in flight: a socket that has not sent a whole request yet
 * (idle, or slow: a slowloris) goes before one that has been answered, oldest first; kept-alive
 * sockets go in the order they were last answered.
 */
function capConnections(server: Server, max: number): void {
  /** Requests in flight, per open socket. */
  const inFlight = new Map<Socket, number>();
  /** Open sockets with nothing in flight that have never had a request, oldest first. */
  const fresh = new Set<Socket>();
  /** Open sockets with nothing in flight that were answered, least recently first. */
  const idle = new Set<Socket>();
  const forget = (socket: Socket): boolean => {
    fresh.delete(socket);
    idle.delete(socket);
    return inFlight.delete(socket);
  };
  const first = (set: Set<Socket>): Socket | undefined => set.values().next().value;

  server.on('connection', (socket: Socket) => {
    if (inFlight.size >= max) {
      const victim = first(fresh) ?? first(idle);
      if (victim) {
        forget(victim);
        // The descriptor is closed at once: the count of open files never grows past the cap.
        victim.destroy();
      } else {
        // Every socket is answering a request: this one is told so and closed (its answer is a
        // few hundred bytes, into the kernel's buffer; it is closed even if it reads nothing).
        socket.end(BUSY_ANSWER);
        socket.once('finish', () => socket.destroy());
        socket.setTimeout(1_000, () => socket.destroy());
        return;
      }
    }
    inFlight.set(socket, 0);
    fresh.add(socket);
    socket.once('close', () => forget(socket));
  });

  // Added before the handler (serveOn): it sees every request first.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const n = inFlight.get(socket);
    if (n === undefined) return;
    inFlight.set(socket, n + 1);
    fresh.delete(socket);
    idle.delete(socket);
    res.once('close', () => {
      const left = inFlight.get(socket);
      if (left === undefined) return;
      inFlight.set(socket, left - 1);
      if (left - 1 === 0 && !socket.destroyed) idle.add(socket);
    });
  });
}

/** Listens on `host:port` (port 0: a free one). Requests wait, unanswered, until a handler is attached. */
export async function listen(options: { port?: number; host?: string } & SocketLimits = {}): Promise<Listening> {
  const limits = socketLimits(options);
  const server: Server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: checkingInterval(limits),
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.timeout = limits.socketTimeoutMs;
  capConnections(server, limits.maxConnections);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
