// A misbehaving front (rate limits, flaky networks): an in-process HTTP layer before
// an upstream (the reference server) that, request by request as its plan says, relays, answers
// a 429 or 503 of its own (the upstream never sees that attempt), resets the connection without
// answering (before or after the upstream processed the request), or never answers. It records
// what arrived and what reached the upstream, so a test can prove a POST was processed once.
import { Agent, createServer, request, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  /** Order of arrival at the front, from 0. */
  n: number;
  method: string;
  url: string;
  body: string;
  /** How many earlier arrivals were the same request (method, URL, credentials, body): 0 on a first attempt. */
  repeat: number;
  /** When it arrived (epoch ms). */
  at: number;
}

export type Act =
  | 'relay'
  /** The socket is destroyed without a byte of answer; the upstream never sees the request. */
  | 'reset'
  /** Relayed, and the upstream processes it, but the socket is destroyed instead of answering. */
  | 'lose-answer'
  /** Relayed; the answer's head and half its body are sent, then the socket is destroyed. */
  | 'cut-body'
  /** No answer, ever (until the front closes). */
  | 'hang'
  /** Answered by the front itself, with a Retry-After when given. */
  | { status: number; retryAfter?: string };

export type FrontPlan = (a: Arrival) => Act;

export interface Front {
  url: string;
  /** Every request that arrived, in order. */
  arrivals: Arrival[];
  /** The requests relayed to the upstream, in order. */
  relayed: Arrival[];
  close(): Promise<void>;
}

const HOP = ['connection', 'keep-alive', 'transfer-encoding', 'host'];

function without(headers: IncomingMessage['headers'], names: readonly string[]): IncomingMessage['headers'] {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));
}

export async function startFront(upstreamUrl: string, plan: FrontPlan): Promise<Front> {
  const upstream = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true });
  const arrivals: Arrival[] = [];
  const relayed: Arrival[] = [];
  const seen = new Map<string, number>();

  const relay = (req: IncomingMessage, res: ServerResponse, a: Arrival, lose: boolean, cut = false): void => {
    relayed.push(a);
    const up = request({ host: upstream.hostname, port: upstream.port, method: a.method, path: a.url, headers: without(req.headers, HOP), agent }, (upRes) => {
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        if (lose) {
          req.socket.destroy();
          return;
        }
        const status = upRes.statusCode ?? 502;
        const bodiless = status === 204 || status === 304;
        const body = Buffer.concat(chunks);
        res.writeHead(status, { ...without(upRes.headers, [...HOP, 'content-length']), ...(bodiless ? {} : { 'content-length': body.length }) });
        if (cut && !bodiless && body.length > 1) {
          res.write(body.subarray(0, body.length >> 1), () => req.socket.destroy());
          return;
        }
        res.end(bodiless ? undefined : body);
      });
      upRes.on('error', (err) => res.destroy(err));
    });
    up.on('error', (err) => res.destroy(err));
    up.end(a.body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      // The same request: its credentials too (a check sends one URL without a token, and with a wrong one).
      const key = `${req.method} ${req.url} ${req.headers.authorization ?? '-'} ${body}`;
      const repeat = seen.get(key) ?? 0;
      seen.set(key, repeat + 1);
      const a: Arrival = { n: arrivals.length, method: req.method ?? 'GET', url: req.url ?? '/', body, repeat, at: Date.now() };
      arrivals.push(a);
      const act = plan(a);
      if (act === 'relay' || act === 'lose-answer' || act === 'cut-body') relay(req, res, a, act === 'lose-answer', act === 'cut-body');
      else if (act === 'reset') req.socket.destroy();
      else if (act !== 'hang') {
        const text = JSON.stringify({ errors: [{ status: String(act.status), title: STATUS_CODES[act.status] ?? 'Error' }] });
        res.writeHead(act.status, { 'content-type': 'application/json', ...(act.retryAfter !== undefined ? { 'retry-after': act.retryAfter } : {}) });
        res.end(text);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    relayed,
    async close() {
      agent.destroy();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
