// A listening socket for the reference server, before the server itself is built. It needs
// node:http alone, so a run can have its URL (what the checks are given) at once, and load and
// seed the server (server/index.ts: faker, the store) while vitest starts its worker.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: Server;
  url: string;
  port: number;
  /** Closes the socket and every connection on it. */
  close(): Promise<void>;
}

/** Listens on `host:port` (port 0: a free one). Requests wait, unanswered, until a handler is attached. */
export async function listen(options: { port?: number; host?: string } = {}): Promise<Listening> {
  const server: Server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 });
  server.keepAliveTimeout = 5_000;
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
