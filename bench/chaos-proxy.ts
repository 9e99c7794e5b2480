// A proxy that puts the troubles of a real network and of real servers between the suite and a
// target (bench/real-world.ts): rate limits (random 429s, and a per-key limit of requests a
// second), reset connections, latency spikes, a gateway that
// loses some of its service's answers, a target that stops answering, a login page in place of
// the API, and servers that spell their JSON the way
// PHP or .NET do and echo the caller's token back. Every decision comes from a seeded generator,
// drawn once per request in the order requests arrive: the same seed gives the same sequence of
// decisions (which request gets which depends on the arrival order, as with any real network).
//
// node:http alone; bodies are streamed through except where a mode must see or cut them.
import { Agent, createServer, request as httpRequest, type IncomingMessage, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { seededRandom } from '../lib/runner/index.js';

export const CHAOS_MODES = ['429', 'rate100', 'resets', 'latency', 'gateway', 'hang', 'html', 'echo-php', 'echo-dotnet'] as const;
export type ChaosMode = (typeof CHAOS_MODES)[number] | 'calm';
/** rate100: the requests admitted in any 1 s by default. */
export const PER_SECOND = 100;

export interface ChaosOptions {
  /** Seeds every decision (default 1). */
  seed?: number;
  /** 429: the share of requests answered 429 with a Retry-After (default 0.3). */
  rateLimitShare?: number;
  /** 429 and rate100: the Retry-After given, in whole seconds (default 1). */
  retryAfterS?: number;
  /** 429: the chance that a request starts a burst of 429s without Retry-After (default 0.01). */
  burstChance?: number;
  /** 429: consecutive requests a burst answers 429 without Retry-After (default 5). */
  burstLength?: number;
  /** rate100: the requests admitted in any 1 s (a sliding window); the others answered 429 (default PER_SECOND). */
  perSecond?: number;
  /** resets: the share of requests whose connection is destroyed before any answer (default 0.03). */
  resetShare?: number;
  /** resets: the share whose connection is destroyed halfway through the body (default 0.015). */
  midBodyShare?: number;
  /** latency: the share of requests delayed by 1 to 5 s (default 0.05); the others get 0-20 ms. */
  spikeShare?: number;
  /**
   * gateway: the share of GETs whose answer the gateway loses after the target has served them,
   * answering 502 of its own (default 1/15); as many others are answered 300 ms late.
   */
  gatewayShare?: number;
  /** hang: requests answered before the target stops answering (default 40). */
  hangAfter?: number;
  /**
   * echo-*: a 201 that holds a client_secret comes back as 200, as many PHP and .NET back ends
   * answer a create (default true). That is allowed (a SHOULD), so the run still exits as a calm
   * one does, but its warning carries the re-spelled answer as evidence: without it every check
   * passes, no evidence is written, and the search for leaked secrets has nothing to search.
   */
  createdAs200?: boolean;
}

export interface ChaosCounts {
  requests: number;
  forwarded: number;
  /** 429 with Retry-After, and 429 without it (bursts). */
  limited: number;
  limitedNoRetryAfter: number;
  /** Connections destroyed before the answer, and halfway through a body, by method. */
  resetBefore: Record<string, number>;
  resetMidBody: Record<string, number>;
  spikes: number;
  /** GETs the gateway answered 502 after the target served them, and answers it gave 300 ms late. */
  badGateway: number;
  late: number;
  /** Requests left unanswered by `hang`. */
  hung: number;
  html: number;
  /** Answers whose JSON was re-spelled and given the `echo` member (of them, 201s answered as 200). */
  echoed: number;
  createdAs200: number;
  /** Every `client_secret` string that passed through a re-spelled answer. */
  secretsSeen: Set<string>;
}

export interface ChaosProxy {
  url: string;
  mode: ChaosMode;
  counts(): ChaosCounts;
  /** The trouble ends: every later request is forwarded as it is (the target is back). */
  recover(): void;
  close(): Promise<void>;
}

/** The header the echo modes copy the request's Authorization value into. */
export const ECHO_HEADER = 'x-echo-authorization';

const LOGIN_PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Example Commerce</title></head>
<body><form method="post" action="/login"><h1>Sign in</h1>
<label>Email <input type="email" name="email"></label>
<label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button></form></body></html>
`;

// --- How PHP and .NET spell a JSON string ----------------------------------------------

const hex4 = (c: number, upper: boolean): string => {
  const h = c.toString(16).padStart(4, '0');
  return `\\u${upper ? h.toUpperCase() : h}`;
};

/** The escapes JSON encoders write for these characters, whatever else they escape as `\uXXXX`. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** PHP's json_encode with no flags: `\/` for every `/`, non-ASCII as `\uxxxx` (lower-case hex). */
export function phpString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const c = s.charCodeAt(i);
    if (ch === '"') out += '\\"';
    else if (ch === '/') out += '\\/';
    else if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (c < 0x20 || c > 0x7e)
      out += hex4(c, false); // UTF-16 units: a surrogate pair as two escapes, as PHP does
    else out += ch;
  }
  return `${out}"`;
}

/**
 * System.Text.Json with its default encoder: `"`, `+`, `<`, `>`, `&`, `'`, `` ` `` and every
 * non-ASCII character as `\uXXXX` (upper-case hex); `/` as it is.
 */
export function dotnetString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const c = s.charCodeAt(i);
    if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (c < 0x20 || c > 0x7e || '"+<>&\'`'.includes(ch)) out += hex4(c, true);
    else out += ch;
  }
  return `${out}"`;
}

/** JSON.stringify's structure with another spelling of strings (keys included). */
export function spellJson(value: unknown, str: (s: string) => string): string {
  if (typeof value === 'string') return str(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => spellJson(v === undefined ? null : v, str)).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) if (v !== undefined) parts.push(`${str(k)}:${spellJson(v, str)}`);
  return `{${parts.join(',')}}`;
}

/** Every string member named client_secret, at any depth. */
function clientSecrets(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) clientSecrets(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'client_secret' && typeof v === 'string') into.push(v);
      else clientSecrets(v, into);
    }
  }
  return into;
}

// --- The proxy ---------------------------------------------------------------------------

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function answerHeaders(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...h };
  delete out.connection;
  delete out['keep-alive'];
  return out;
}

/** The target's answer passed on as it is. */
const pipeAnswer =
  (res: ServerResponse) =>
  (up: IncomingMessage): void => {
    res.writeHead(up.statusCode ?? 502, answerHeaders(up.headers));
    up.pipe(res);
  };

/** ChaosOptions with every default filled in. */
type ChaosSettings = Required<ChaosOptions>;

function settle(options: ChaosOptions): ChaosSettings {
  return {
    seed: options.seed ?? 1,
    rateLimitShare: options.rateLimitShare ?? 0.3,
    retryAfterS: options.retryAfterS ?? 1,
    burstChance: options.burstChance ?? 0.01,
    burstLength: options.burstLength ?? 5,
    perSecond: options.perSecond ?? PER_SECOND,
    resetShare: options.resetShare ?? 0.03,
    midBodyShare: options.midBodyShare ?? 0.015,
    spikeShare: options.spikeShare ?? 0.05,
    gatewayShare: options.gatewayShare ?? 1 / 15,
    hangAfter: options.hangAfter ?? 40,
    createdAs200: options.createdAs200 ?? true,
  };
}

/** Counts before the first request. */
export function noCounts(): ChaosCounts {
  return {
    requests: 0,
    forwarded: 0,
    limited: 0,
    limitedNoRetryAfter: 0,
    resetBefore: {},
    resetMidBody: {},
    spikes: 0,
    badGateway: 0,
    late: 0,
    hung: 0,
    html: 0,
    echoed: 0,
    createdAs200: 0,
    secretsSeen: new Set(),
  };
}

const bump = (m: Record<string, number>, k: string): void => void (m[k] = (m[k] ?? 0) + 1);

/** What a proxy's mode works with: its settings, its one generator, its counts and its ways to answer. */
interface Chaos {
  settings: ChaosSettings;
  random: () => number;
  counts: ChaosCounts;
  /** 429: the requests the burst under way still answers 429 without Retry-After. */
  burstLeft: number;
  /** rate100: when each request of the last second was admitted (performance.now()), oldest first. */
  admitted: number[];
  /** Calls `fn` in `ms` milliseconds, unless the proxy is closed first. */
  later(ms: number, fn: () => void): void;
  /**
   * The request sent on to the target; `onAnswer` gets its answer (or 502 is sent). The body is
   * read first (bodies the suite sends are small), so a request that meets a kept-alive
   * connection the target has just closed is sent once more on a new one: the proxy's own
   * connections must add no trouble beside the one its mode adds.
   */
  forward(req: IncomingMessage, res: ServerResponse, onAnswer: (up: IncomingMessage) => void): void;
}

/** Chaos.forward, to this target through this agent. */
function forwarder(target: URL, agent: Agent, counts: ChaosCounts): Chaos['forward'] {
  return (req, res, onAnswer) => {
    counts.forwarded++;
    const headers = { ...req.headers };
    delete headers.connection;
    const fail = (err: Error): void => {
      if (res.headersSent || res.destroyed) return void res.destroy();
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`chaos proxy: ${err.message}`);
    };
    readAll(req).then((body) => {
      const send = (again: boolean): void => {
        const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, onAnswer);
        up.on('error', (err) => (!again && up.reusedSocket && !res.headersSent ? send(true) : fail(err)));
        up.end(body);
      };
      send(false);
    }, fail);
  };
}

type Handler = (c: Chaos, req: IncomingMessage, res: ServerResponse) => void;

/** A 429 with the Error shape, with the Retry-After of the settings or none. */
function refuse(c: Chaos, req: IncomingMessage, res: ServerResponse, retryAfter: boolean): void {
  req.resume();
  const body = JSON.stringify({ errors: [{ status: '429', title: 'Too Many Requests', detail: 'Rate limit exceeded.' }] });
  res.writeHead(429, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(retryAfter ? { 'retry-after': String(c.settings.retryAfterS) } : {}),
  });
  res.end(body);
}

/** 429: a share answered 429 with Retry-After, now and then a burst of 429s without it; the others forwarded. */
const rateLimit: Handler = (c, req, res) => {
  if (c.burstLeft > 0) {
    c.burstLeft--;
    c.counts.limitedNoRetryAfter++;
    return refuse(c, req, res, false);
  }
  const r = c.random();
  if (r < c.settings.burstChance) {
    c.burstLeft = c.settings.burstLength - 1;
    c.counts.limitedNoRetryAfter++;
    return refuse(c, req, res, false);
  }
  if (r < c.settings.burstChance + c.settings.rateLimitShare) {
    c.counts.limited++;
    return refuse(c, req, res, true);
  }
  c.forward(req, res, pipeAnswer(res));
};

// rate100: a per-key limit of requests a second, as a platform's API gateway keeps (how many a
// client may send is not stated: spec/contract/README.md#limits.request-rate). A sliding window:
// at most perSecond requests admitted in any 1 s, counted as they arrive; a refused one does not
// count, and is answered 429 with Retry-After.
const perSecond: Handler = (c, req, res) => {
  const now = performance.now();
  const window = c.admitted;
  let old = 0;
  while (old < window.length && window[old]! <= now - 1000) old++;
  if (old) window.splice(0, old);
  if (window.length >= c.settings.perSecond) {
    c.counts.limited++;
    return refuse(c, req, res, true);
  }
  window.push(now);
  c.forward(req, res, pipeAnswer(res));
};

/** resets: a share of connections destroyed before any answer, a share halfway through the body; the others forwarded. */
const resets: Handler = (c, req, res) => {
  const r = c.random();
  const method = req.method ?? '?';
  if (r < c.settings.resetShare) {
    // Before any answer; half of these before the request reached the target, half after.
    if (c.random() < 0.5) {
      bump(c.counts.resetBefore, method);
      req.socket.destroy();
      return;
    }
    c.forward(req, res, (up) => {
      up.resume();
      bump(c.counts.resetBefore, method);
      req.socket.destroy();
    });
    return;
  }
  if (r < c.settings.resetShare + c.settings.midBodyShare) return cutMidBody(c, req, res, method);
  c.forward(req, res, pipeAnswer(res));
};

/** resets, halfway: the target's answer read whole, its head and half its body sent, then the connection destroyed. */
function cutMidBody(c: Chaos, req: IncomingMessage, res: ServerResponse, method: string): void {
  c.forward(req, res, (up) => {
    void readAll(up).then(
      (body) => {
        const h = answerHeaders(up.headers);
        delete h['transfer-encoding'];
        h['content-length'] = String(body.length);
        res.writeHead(up.statusCode ?? 502, h);
        if (body.length < 2) {
          // Nothing to cut in half: the connection goes before the answer.
          bump(c.counts.resetBefore, method);
          req.socket.destroy();
          return;
        }
        bump(c.counts.resetMidBody, method);
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => req.socket.destroy());
      },
      () => req.socket.destroy(),
    );
  });
}

/** latency: every request forwarded late, 0-20 ms, and a share of them 1 to 5 s. */
const latency: Handler = (c, req, res) => {
  const spike = c.random() < c.settings.spikeShare;
  const ms = spike ? 1000 + Math.floor(c.random() * 4000) : Math.floor(c.random() * 20);
  if (spike) c.counts.spikes++;
  c.later(ms, () => c.forward(req, res, pipeAnswer(res))); // the body waits in the request meanwhile
};

// A load balancer whose connection to the service drops now and then: the service served the
// request, the gateway answers 502 of its own. Only GETs: a POST or DELETE so answered may
// have been applied, and its 502 stands as its answer (lib/transport/http.ts), a failure of a
// correct target that no client can tell from a real one.
const gateway: Handler = (c, req, res) => {
  const r = c.random();
  if (req.method === 'GET' && r < c.settings.gatewayShare) {
    return c.forward(req, res, (up) => {
      up.resume();
      c.counts.badGateway++;
      const body = '<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>';
      res.writeHead(502, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }
  if (r < 2 * c.settings.gatewayShare) {
    c.counts.late++;
    return c.later(300, () => c.forward(req, res, pipeAnswer(res)));
  }
  c.forward(req, res, pipeAnswer(res));
};

/** hang: the first requests forwarded, then none answered. */
const hang: Handler = (c, req, res) => {
  if (c.counts.requests <= c.settings.hangAfter) return c.forward(req, res, pipeAnswer(res));
  // Read the request, never answer: the connection stays open until the client gives up.
  c.counts.hung++;
  req.resume();
};

/** html: a login page for every request, 200. */
const loginPage: Handler = (c, req, res) => {
  c.counts.html++;
  req.resume();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(LOGIN_PAGE) });
  res.end(LOGIN_PAGE);
};

/** Forwards; an answer holding a client_secret comes back re-spelled, with the caller's Authorization echoed. */
function echo(c: Chaos, req: IncomingMessage, res: ServerResponse, str: (s: string) => string): void {
  const authorization = req.headers.authorization;
  c.forward(req, res, (up) => {
    if (!/json/i.test(String(up.headers['content-type'] ?? ''))) return pipeAnswer(res)(up);
    void readAll(up).then(
      (body) => {
        const h = answerHeaders(up.headers);
        delete h['transfer-encoding'];
        let out = body;
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        const secrets = clientSecrets(parsed);
        if (secrets.length) {
          c.counts.echoed++;
          for (const s of secrets) c.counts.secretsSeen.add(s);
          let value = parsed;
          if (authorization !== undefined && value && typeof value === 'object' && !Array.isArray(value)) value = { ...value, echo: authorization };
          out = Buffer.from(spellJson(value, str));
          // The header in the same spelling, without its quotes (it is ASCII either way).
          if (authorization !== undefined) h[ECHO_HEADER] = str(authorization).slice(1, -1);
        }
        h['content-length'] = String(out.length);
        let status = up.statusCode ?? 502;
        if (secrets.length && status === 201 && c.settings.createdAs200) {
          status = 200;
          c.counts.createdAs200++;
        }
        res.writeHead(status, h);
        res.end(out);
      },
      () => res.destroy(),
    );
  });
}

/** What each mode does with a request the proxy takes. */
const HANDLERS: Record<ChaosMode, Handler> = {
  calm: (c, req, res) => c.forward(req, res, pipeAnswer(res)),
  '429': rateLimit,
  rate100: perSecond,
  resets,
  latency,
  gateway,
  hang,
  html: loginPage,
  'echo-php': (c, req, res) => echo(c, req, res, phpString),
  'echo-dotnet': (c, req, res) => echo(c, req, res, dotnetString),
};

/**
 * The proxy in front of `targetUrl`, listening on a port of its own on 127.0.0.1: each request
 * counted and given to its mode's handler, until recover() (then forwarded as it is).
 */
export async function startChaosProxy(targetUrl: string, mode: ChaosMode, options: ChaosOptions = {}): Promise<ChaosProxy> {
  const settings = settle(options);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const counts = noCounts();
  const timers = new Set<NodeJS.Timeout>();
  const chaos: Chaos = {
    settings,
    random: seededRandom(settings.seed),
    counts,
    burstLeft: 0,
    admitted: [],
    later: (ms, fn) => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
    },
    forward: forwarder(new URL(targetUrl), agent, counts),
  };
  const sockets = new Set<Socket>();
  const handle = HANDLERS[mode];
  let recovered = false;
  const server: Server = createServer((req, res) => {
    if (recovered) return chaos.forward(req, res, pipeAnswer(res));
    counts.requests++;
    handle(chaos, req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  server.keepAliveTimeout = 30_000;
  // A hung request must outlive the client's patience, not be cut by node's own 300 s default.
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mode,
    counts: () => ({ ...counts, resetBefore: { ...counts.resetBefore }, resetMidBody: { ...counts.resetMidBody }, secretsSeen: new Set(counts.secretsSeen) }),
    recover: () => void (recovered = true),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await closed;
      agent.destroy();
    },
  };
}
