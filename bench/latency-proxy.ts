// A proxy that puts a round trip of `latencyMs` between the suite and a target, and counts what
// passes through it: requests, requests per list operation, the most in flight at once, and the
// critical path: the longest chain of requests each sent only after the one before it was
// answered. That chain, times the round trip, is the least a run can take however many requests
// it sends at once.
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxyFigures {
  requests: number;
  /** The longest chain of requests, each sent after the previous one was answered. */
  criticalPath: number;
  maxInFlight: number;
  /** From the first request to the last answer, in seconds. */
  spanS: number;
  /** Within that span, the seconds with no request in flight: the suite busy with itself. */
  idleS: number;
  /** Requests per path, numbers and ids folded (`/v2/orders`, `/pcm/hierarchies/:id/nodes`). */
  byPath: Map<string, number>;
}

export interface LatencyProxy {
  url: string;
  figures(): ProxyFigures;
  reset(): void;
  close(): Promise<void>;
}

function fold(url: string): string {
  const path = url.split('?')[0]!;
  return path
    .split('/')
    .map((s) => (/^[0-9a-f-]{8,}$/i.test(s) || /^\d+$/.test(s) || s.length > 24 ? ':id' : s))
    .join('/');
}

/** Half the round trip on the way in, half on the way out, as a network would. */
export async function startLatencyProxy(targetUrl: string, latencyMs: number): Promise<LatencyProxy> {
  const target = new URL(targetUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let requests = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  // The depth of the deepest chain among requests already answered: a request sent now can
  // only have waited for those.
  let answeredDepth = 0;
  let criticalPath = 0;
  let byPath = new Map<string, number>();
  let firstAt = 0;
  let lastAt = 0;
  let idleMs = 0;
  // PROXY_TIMELINE=FILE: every request's start (ms), chain depth and URL, written on close.
  const timeline: string[] = [];
  const half = latencyMs / 2;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const depth = answeredDepth + 1;
    requests++;
    const now = performance.now();
    if (firstAt === 0) firstAt = now;
    else if (inFlight === 0) idleMs += now - lastAt;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const key = fold(req.url ?? '/');
    if (process.env.PROXY_TIMELINE) timeline.push(`${(now - (firstAt || now)).toFixed(0)} ${depth} ${req.method} ${req.url}`);
    byPath.set(key, (byPath.get(key) ?? 0) + 1);
    const done = (): void => {
      inFlight--;
      lastAt = performance.now();
      answeredDepth = Math.max(answeredDepth, depth);
      criticalPath = Math.max(criticalPath, depth);
    };
    // Streams piped both ways (no body is parsed or copied whole): the proxy's own CPU stays
    // small beside the suite's and the server's on the same machine.
    const forward = (): void => {
      const headers = { ...req.headers };
      delete headers.connection;
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
        const answer = (): void => {
          const out = { ...upRes.headers };
          delete out.connection;
          delete out['keep-alive'];
          res.writeHead(upRes.statusCode ?? 502, out);
          upRes.pipe(res);
        };
        if (half > 0) setTimeout(answer, half);
        else answer();
      });
      up.on('error', (err) => {
        if (res.headersSent) return res.destroy();
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${err.message}`);
      });
      req.pipe(up);
    };
    res.on('close', done);
    if (half > 0) setTimeout(forward, half);
    else forward();
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    figures: () => ({ requests, criticalPath, maxInFlight, spanS: (lastAt - firstAt) / 1000, idleS: idleMs / 1000, byPath: new Map(byPath) }),
    reset: () => {
      requests = inFlight = maxInFlight = answeredDepth = criticalPath = firstAt = lastAt = idleMs = 0;
      byPath = new Map();
    },
    close: async () => {
      if (process.env.PROXY_TIMELINE) (await import('node:fs')).writeFileSync(process.env.PROXY_TIMELINE, timeline.join('\n'));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}
