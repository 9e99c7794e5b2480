// `conformance proxy --upstream URL`: a reverse proxy in front of a target that forwards every
// request unchanged and streams every answer back unchanged, while the suite's rules judge each
// exchange on an operation of the contract (suites/observed.ts). Ctrl-C, SIGTERM or
// --until-idle ends it; then the report is written as a run's.
//
// What is kept of a body to judge it is at most --max-body-bytes (a longer one is still passed
// on whole, and judged only by what its head shows: it counts as not JSON). Compressed answers
// are decompressed for the judgement within the same bound.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { DEFAULT_MAX_BODY_BYTES } from '../lib/configuration/index.js';
import type { Observed } from '../lib/runner/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { TrafficJudge } from '../suites/observed.js';
import { parseFlags, UsageError, type Io } from './io.js';
import { OBSERVE_HELP, OBSERVE_OPTIONS, observedReport, observeFlags, publishObserved } from './observe.js';
import { commandSettings } from './settings.js';
import { errorWord } from '../lib/text/index.js';

export const PROXY_HELP = `Usage: conformance proxy --upstream URL [--port N] [--host H] [--until-idle S] [options]
  Listens on --host:--port and forwards every request to URL unchanged, streaming every answer
  back unchanged; each exchange on an operation of the contract is judged by the rules one
  exchange, or the exchanges before it, can show. Point a test suite, an SDK or a browser at it.
  Ctrl-C or SIGTERM ends it and writes the reports; so does --until-idle.
  --upstream URL          the target (http or https), as --base-url for a run
  --port N                port to listen on (default 0: a free one, printed)
  --host H                address to listen on (default 127.0.0.1)
  --until-idle S          stop once S seconds have passed with no request in flight (for CI)
  --max-body-bytes N      most bytes of one body kept to judge it (1024 or more, default
                          ${DEFAULT_MAX_BODY_BYTES}; CONFORMANCE_MAX_BODY_BYTES too); never more is buffered
${OBSERVE_HELP}`;

const OPTIONS = {
  ...OBSERVE_OPTIONS,
  upstream: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'until-idle': { type: 'string' },
  'max-body-bytes': { type: 'string' },
} as const;

/** Headers of one connection, not of the message: never forwarded (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !named.has(k)) out[k] = v;
  return out;
}

/** Header values as one string each, for the judgement (lower-case names). */
function flat(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Keeps the first `max` bytes of a stream's chunks: what is judged of a body. */
class Head {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  bytes = 0;
  constructor(readonly max: number) {}
  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.#kept >= this.max) return;
    const part = chunk.length <= this.max - this.#kept ? chunk : chunk.subarray(0, this.max - this.#kept);
    this.#chunks.push(part);
    this.#kept += part.length;
  }
  get truncated(): boolean {
    return this.bytes > this.#kept;
  }
  buffer(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/**
 * A body as text for the judgement, decompressed as its Content-Encoding says, within `max` bytes;
 * `unread` where it was cut, or is in an encoding not decoded here (zstd, or corrupt): not judged.
 */
function decoded(head: Head, encoding: string | string[] | undefined): { text: string; unread: boolean } {
  const raw = head.buffer();
  const coding = String(encoding ?? '')
    .trim()
    .toLowerCase();
  if (head.truncated) return { text: '', unread: true };
  if (!coding || coding === 'identity') return { text: raw.toString('utf8'), unread: false };
  try {
    const options = { maxOutputLength: head.max };
    const plain =
      coding === 'gzip' || coding === 'x-gzip'
        ? gunzipSync(raw, options)
        : coding === 'br'
          ? brotliDecompressSync(raw, options)
          : coding === 'deflate'
            ? inflateSync(raw, options)
            : undefined;
    return plain ? { text: plain.toString('utf8'), unread: false } : { text: '', unread: true };
  } catch {
    return { text: '', unread: true };
  }
}

function positiveInt(raw: string | undefined, flag: string, min: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`${flag} takes a whole number from ${min} (got '${raw}')`, 'proxy');
  return Number(raw);
}

/** The proxy's own flags, read and checked, and the judgement's (cli/observe.ts). */
async function proxyFlags(args: string[], io: Io) {
  const { values, positionals } = parseFlags({ args, options: OPTIONS, allowPositionals: true }, 'proxy');
  if (values.help) return undefined;
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'proxy');
  if (values.upstream === undefined) throw new UsageError('--upstream URL is required (the target to forward to)', 'proxy');
  let upstream: URL;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new UsageError(`--upstream is not a URL: '${values.upstream}'`, 'proxy');
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new UsageError(`--upstream must be http or https (got ${upstream.protocol})`, 'proxy');
  if (upstream.username || upstream.password)
    throw new UsageError('--upstream must not carry credentials (user:password@): the clients send their own', 'proxy');
  if (upstream.search || upstream.hash) throw new UsageError('--upstream is a base URL: no query or fragment', 'proxy');
  const port = positiveInt(values.port, '--port', 0, 0);
  if (port > 65535) throw new UsageError(`--port takes 0 to 65535 (got ${port})`, 'proxy');
  const idle = values['until-idle'] !== undefined ? positiveInt(values['until-idle'], '--until-idle', 1, 0) : undefined;
  // The most of a body kept to judge it: a run's setting, read as a run reads it.
  const { maxBodyBytes } = await commandSettings(values, io, 'proxy', ['max-body-bytes']);
  const flags = await observeFlags(values, io, 'proxy');
  flags.settings.basePath = upstream.pathname.replace(/\/$/, '');
  return { upstream, port, host: values.host ?? '127.0.0.1', idle, maxBody: maxBodyBytes, flags };
}

/** What forwarding needs and tells: the upstream, the judge, and when an exchange begins and ends. */
interface Forwarding {
  upstream: URL;
  /** The upstream's path prefix, without its last slash. */
  base: string;
  maxBody: number;
  judge: TrafficJudge;
  /** What kept the proxy from seeing an exchange, counted. */
  suiteErrors: Map<string, number>;
  began(): void;
  ended(): void;
}

/**
 * The request handler: each request forwarded unchanged and its answer streamed back
 * unchanged, while the head of both bodies (up to maxBody) is kept and the exchange judged.
 */
function forwarder(f: Forwarding): (req: IncomingMessage, res: ServerResponse) => void {
  const { upstream, base, maxBody, judge, suiteErrors } = f;
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  /** An answer of the proxy's own, in the Error shape (it is never judged: the target did not give it). */
  const refuse = (res: ServerResponse, status: number, title: string, detail: string): void => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ errors: [{ title, status: String(status), detail: `conformance proxy: ${detail}` }] }));
  };

  return (req: IncomingMessage, res: ServerResponse): void => {
    f.began();
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      f.ended();
    };
    res.on('close', settle);
    const path = req.url ?? '/';
    // Origin form only (`/v2/...`): a proxy request (`GET http://host/...`) or `OPTIONS *` is not
    // for a reverse proxy, and forwarding it would change what it asks.
    if (!path.startsWith('/')) return refuse(res, 400, 'Bad Request', `only requests for a path are forwarded (got '${path.slice(0, 80)}')`);
    const started = performance.timeOrigin + performance.now();
    const requestHead = new Head(maxBody);
    // The path as sent, after the upstream's own prefix: never re-parsed, so dot segments and
    // escapes reach the upstream as the client wrote them.
    const observedUrl = `${upstream.origin}${base}${path}`;
    const headers = { ...forwardable(req.headers), host: upstream.host };
    let clientGone = false;
    let out: ReturnType<typeof send>;
    try {
      out = send(
        { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, path: `${base}${path}`, method: req.method, headers },
        (answer) => {
          const responseHead = new Head(maxBody);
          const status = answer.statusCode ?? 502;
          const passed = forwardable(answer.headers);
          // A 204 or 304 has no body whatever its Content-Length says (Node's parser reads none): one
          // passed on would have the client wait for bytes that never come on a kept-alive connection.
          if (status === 204 || status === 304) delete passed['content-length'];
          res.writeHead(status, answer.statusMessage, passed);
          answer.on('data', (chunk: Buffer) => {
            responseHead.add(chunk);
            // A slow client holds the upstream back: nothing piles up in the proxy's memory.
            if (!res.write(chunk)) {
              answer.pause();
              res.once('drain', () => answer.resume());
            }
          });
          answer.on('end', () => {
            res.end();
            const body = decoded(responseHead, answer.headers['content-encoding']);
            const request = requestHead.bytes > 0 ? decoded(requestHead, req.headers['content-encoding']) : undefined;
            const x: Observed = {
              method: (req.method ?? 'GET').toUpperCase(),
              url: observedUrl,
              // As the upstream got them: its Host, so that the replay's curl reaches it.
              requestHeaders: { ...flat(req.headers), host: upstream.host },
              ...(request !== undefined ? { requestBody: request.text } : {}),
              ...(request?.unread ? { requestUnread: true } : {}),
              status,
              responseHeaders: flat(answer.headers),
              responseBody: body.text,
              bodyBytes: responseHead.bytes,
              ...(body.unread ? { unread: true } : {}),
              startedAt: started,
              durationMs: performance.timeOrigin + performance.now() - started,
            };
            judge.see(x);
            settle();
          });
          answer.on('error', () => {
            res.destroy();
            settle();
          });
        },
      );
    } catch (e) {
      // A path Node will not send (a character HTTP forbids there): refused, not forwarded changed.
      return refuse(res, 400, 'Bad Request', `the request cannot be forwarded as sent (${errorWord(e)})`);
    }
    out.on('error', (e: NodeJS.ErrnoException) => {
      // The client went away first: its request was cut by the proxy, not by the upstream.
      if (!clientGone) {
        // The upstream could not be reached or broke the connection: the client is told, and the
        // report says the proxy could not see this exchange (a target's outage is not a rule broken).
        const why = `the upstream ${upstream.origin} could not be reached, closed the connection, or sent an answer HTTP does not allow (${e.code ?? e.message})`;
        suiteErrors.set(why, (suiteErrors.get(why) ?? 0) + 1);
        refuse(res, 502, 'Bad Gateway', 'the upstream could not be reached');
      }
      settle();
    });
    req.on('data', (chunk: Buffer) => {
      requestHead.add(chunk);
      if (!out.write(chunk)) {
        req.pause();
        out.once('drain', () => req.resume());
      }
    });
    req.on('end', () => out.end());
    // A client that goes away: its request to the upstream is dropped too.
    const gone = (): void => {
      if (res.writableFinished) return;
      clientGone = true;
      out.destroy();
      settle();
    };
    req.on('error', gone);
    res.on('close', gone);
  };
}

export async function proxy(
  args: string[],
  io: Io,
  signals: { once(event: 'SIGINT' | 'SIGTERM', listener: () => void): void; off?(event: 'SIGINT' | 'SIGTERM', listener: () => void): void } = process,
): Promise<number> {
  const given = await proxyFlags(args, io);
  if (!given) {
    io.out(PROXY_HELP);
    return 0;
  }
  const { upstream, port, idle, maxBody, flags } = given;
  const secrets = new Secrets();
  const judge = new TrafficJudge(flags.settings, secrets);
  judge.prepare();
  const suiteErrors = new Map<string, number>();
  const startedAt = new Date();
  const base = upstream.pathname.replace(/\/$/, '');
  let inFlight = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  let finish: (why: string) => void = () => undefined;
  const done = new Promise<string>((resolve) => (finish = resolve));
  const armIdle = (): void => {
    if (idle === undefined) return;
    clearTimeout(idleTimer);
    if (inFlight === 0) idleTimer = setTimeout(() => finish(`no request for ${idle} s (--until-idle)`), idle * 1000);
  };
  const began = (): void => {
    inFlight++;
    clearTimeout(idleTimer);
  };
  const ended = (): void => {
    inFlight--;
    armIdle();
  };

  const server = createServer(forwarder({ upstream, base, maxBody, judge, suiteErrors, began, ended }));
  const listening = await new Promise<AddressInfo | Error>((resolve) => {
    server.once('error', (e) => resolve(e));
    server.listen(port, given.host, () => resolve(server.address() as AddressInfo));
  });
  if (listening instanceof Error) {
    io.err(`conformance: proxy cannot listen on ${given.host}:${port}: ${errorWord(listening)}`);
    return 2;
  }
  const host = listening.family === 'IPv6' ? `[${listening.address}]` : listening.address;
  io.out(
    `conformance proxy: http://${host}:${listening.port} -> ${upstream.origin}${base}${idle !== undefined ? ` (stops after ${idle} s without a request)` : ' (Ctrl-C or SIGTERM ends it and writes the reports)'}`,
  );
  const onSignal = (): void => finish('interrupted (Ctrl-C or SIGTERM)');
  signals.once('SIGINT', onSignal);
  signals.once('SIGTERM', onSignal);
  armIdle();
  const why = await done;
  signals.off?.('SIGINT', onSignal);
  signals.off?.('SIGTERM', onSignal);
  clearTimeout(idleTimer);
  io.out(`conformance proxy: stopping: ${why}`);
  // New connections are refused; the exchanges in flight are given 10 s to finish and be judged.
  server.close();
  server.closeIdleConnections();
  const deadline = Date.now() + 10_000;
  while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  server.closeAllConnections();
  const errors = [...suiteErrors].map(([w, n]) => (n > 1 ? `${w} (${n} times)` : w));
  if (inFlight > 0) errors.push(`${inFlight} exchange(s) still in flight after 10 s were not judged`);
  const report = observedReport(`${upstream.origin}${base}`, judge.results(), judge.counts, flags, startedAt, errors);
  return publishObserved(report, judge.counts, flags, secrets, io);
}
