// Benchmark of the reference server itself (goals 3 and 4 of bench/goals.ts).
//
// Goal 3: a list page of 100 records served at 60% or more of the raw node:http floor. The
// reference server and a bare node:http server that writes the same bytes (the page, fetched
// once from the reference server) each run in a process of their own, pinned to core 0; one
// load generator (undici Pool, 10 connections, no pipelining), also a process of its own,
// pinned to core 1, loads them in turn A/B/A/B for a fixed time each (5 rounds of 2 s by
// default), and the req/s of the rounds are summed. Where taskset is missing nothing is
// pinned. When the load generator uses a whole core against the floor, the floor is the
// client's limit, not the server's, and the ratio is flattered: --raw-load loads with a
// lighter client (rawClient) to check.
//
// Goal 4: a keyset traversal (sort=id, filter=gt(id,last), page[limit]=100) of a million
// records over one keep-alive connection in under 2 s, with the server under 1 GB resident:
// three traversals of one server, the median reported. The client is made cheap (rawClient,
// scanPage): it reads each page's record count and last id without parsing the JSON, and
// parses every thousandth page in full to check that reading.
//
// Both print the machine's own load (CPU stolen by the host, used by other processes): the
// figures are only worth much on a quiet machine.
//
//   npm run build && node dist/bench/server.js              both goals
//   node dist/bench/server.js --seconds 3 --rounds 8         longer goal 3 rounds
//   node dist/bench/server.js --goal 3 --raw-load            one goal, the light load client
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { cpuSeconds, listeningUrl, peakRssMb, pinned, startServer, TOKEN } from './support.js';

const PAGE_PATH = '/v2/customers?page[limit]=100';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const SERVER_CPU = 0;
const CLIENT_CPU = 1;

export interface ThroughputFigures {
  /** Requests per second over all rounds, for the reference server and the floor. */
  referenceRps: number;
  floorRps: number;
  ratio: number;
  met: boolean;
  pageBytes: number;
  /** Server CPU time per request (µs): what each costs, less swayed by other load on the machine. */
  referenceUsPerRequest: number;
  floorUsPerRequest: number;
  /** CPU cores each side used while loaded (near 1: that side was the bottleneck). */
  referenceServerCpu: number;
  floorServerCpu: number;
  clientCpu: number;
  client: 'undici' | 'raw';
  pinned: boolean;
  machine: MachineLoad;
}

export interface TraversalFigures {
  records: number;
  pages: number;
  /** The median run's time; the others' in `runs`. */
  seconds: number;
  runs: number[];
  /** Server CPU time over the traversal, per page (µs). */
  serverUsPerPage: number;
  /** Client CPU time over the traversal, per page (µs): the HTTP client, and reading the page. */
  clientUsPerPage: number;
  /** Of which reading the record count and last id out of the pages, in all (ms). */
  clientScanMs: number;
  /** The first request, which builds the list of a million records (s). */
  buildS: number;
  peakRssMb: number;
  met: boolean;
  machine: MachineLoad;
}

export interface ServerFigures {
  throughput?: ThroughputFigures;
  traversal?: TraversalFigures;
}

// --- The machine's own load ------------------------------------------------------------------

/** Shares of the machine's CPU time over a measurement (0 to 1). */
export interface MachineLoad {
  /** Taken by the host for other machines (steal). */
  stolen: number;
  /** Busy in all (user, system, steal…), this benchmark's processes included. */
  busy: number;
}

function cpuTicks(): number[] {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return [];
  }
}

async function measuringLoad<T>(fn: () => Promise<T>): Promise<[T, MachineLoad]> {
  const before = cpuTicks();
  const out = await fn();
  const d = cpuTicks().map((x, i) => x - (before[i] ?? x));
  const all = d.reduce((a, b) => a + b, 0) || 1;
  // user nice system idle iowait irq softirq steal…
  return [out, { stolen: (d[7] ?? 0) / all, busy: 1 - ((d[3] ?? 0) + (d[4] ?? 0)) / all }];
}

// --- A light HTTP/1.1 client -------------------------------------------------------------------

interface RawClient {
  /** One GET; the body is valid until the next get() (its memory is reused). */
  get(path: string): Promise<{ status: number; body: Buffer }>;
  close(): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * A minimal HTTP/1.1 client: one keep-alive socket, one GET at a time, each answer read by its
 * Content-Length (the reference server and the floor always send one; anything else, such as
 * a chunked answer, is refused as an error). The socket reads into one buffer of its own
 * (net's onread), not into a fresh buffer and a stream per read. Several times cheaper per
 * request than undici, which matters where the client's cost per page is part of what is timed.
 */
async function rawClient(url: string): Promise<RawClient> {
  const { hostname, port, host } = new URL(url);
  const reads = Buffer.allocUnsafe(256 * 1024);
  let body = Buffer.allocUnsafe(64 * 1024);
  let head: Buffer | undefined; // the answer's first bytes, until its header is complete
  let status = 0;
  let need = -1; // body bytes of the answer being read; -1: reading its header
  let got = 0;
  let waiting: { resolve: (r: { status: number; body: Buffer }) => void; reject: (e: Error) => void } | undefined;
  const fail = (e: Error): void => {
    waiting?.reject(e);
    waiting = undefined;
    socket.destroy();
  };
  const read = (chunk: Buffer): void => {
    let rest = chunk;
    if (need < 0) {
      head = head ? Buffer.concat([head, chunk]) : chunk;
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        head = Buffer.from(head); // (chunk lies in `reads`, which the next read overwrites)
        return;
      }
      const lines = head.toString('latin1', 0, end).split('\r\n');
      status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? NaN);
      const length = lines.find((l) => /^content-length:/i.test(l));
      if (!length || lines.some((l) => /^transfer-encoding:/i.test(l))) return fail(new Error(`an answer without Content-Length: ${lines[0]}`));
      need = Number(length.slice(length.indexOf(':') + 1).trim());
      if (need > body.length) body = Buffer.allocUnsafe(need);
      got = 0;
      rest = head.subarray(end + HEAD_END.length);
      head = undefined;
    }
    if (got + rest.length > need) return fail(new Error('more bytes than the answer holds'));
    // A body read in one piece is handed over where it lies (nothing more is read before the
    // next request); one read in pieces is gathered.
    const whole = got === 0 && rest.length === need;
    if (!whole) body.set(rest, got);
    got += rest.length;
    if (got === need) {
      need = -1;
      const w = waiting;
      waiting = undefined;
      w?.resolve({ status, body: whole ? rest : body.subarray(0, got) });
    }
  };
  const socket: Socket = connect({
    port: Number(port),
    host: hostname.replace(/^\[|\]$/g, ''),
    noDelay: true,
    onread: { buffer: reads, callback: (n) => (read(reads.subarray(0, n)), true) },
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('the connection closed')));
  return {
    get(path) {
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`);
      });
    },
    close: () => socket.end(),
  };
}

// --- Goal 3: the processes the throughput rounds run in ----------------------------------------

const SELF = fileURLToPath(import.meta.url);

/** The floor: node:http writing one prebuilt body (read from stdin) to every request. */
async function floorProcess(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
  server.keepAliveTimeout = 5_000; // as the reference server
  server.listen(0, '127.0.0.1', () => console.log(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
}

interface LoadResult {
  requests: number;
  failures: number;
  seconds: number;
  cpuSeconds: number;
}

/**
 * The load generator: `connections` loops, each sending the next GET as soon as the last
 * answer ended, for `seconds`. An answer counts when it is a 200 of exactly `bytes` bytes.
 * With undici, a Pool with dispatch (no body stream); raw: one rawClient per connection.
 */
async function loadProcess(client: 'undici' | 'raw', url: string, path: string, seconds: number, connections: number, bytes: number): Promise<void> {
  let one: () => Promise<boolean>;
  let close: () => Promise<void>;
  if (client === 'raw') {
    const clients = await Promise.all(Array.from({ length: connections }, () => rawClient(url)));
    const free = [...clients];
    one = async () => {
      const c = free.pop()!;
      const r = await c.get(path).catch(() => undefined);
      free.push(c);
      return r?.status === 200 && r.body.length === bytes;
    };
    close = async () => clients.forEach((c) => c.close());
  } else {
    const pool = new Pool(url, { connections, pipelining: 1 });
    one = () =>
      new Promise((resolve) => {
        let status = 0;
        let got = 0;
        pool.dispatch(
          { method: 'GET', path, headers: AUTH },
          {
            onRequestStart: () => {}, // (its presence marks the handler as of undici's current interface)
            onResponseStart: (_c, s) => void (status = s),
            onResponseData: (_c, chunk) => void (got += chunk.length),
            onResponseEnd: () => resolve(status === 200 && got === bytes),
            onResponseError: () => resolve(false),
          },
        );
      });
    close = () => pool.close();
  }
  const result: LoadResult = { requests: 0, failures: 0, seconds: 0, cpuSeconds: 0 };
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        if (await one()) result.requests++;
        else result.failures++;
      }
    }),
  );
  result.seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  result.cpuSeconds = (used.user + used.system) / 1e6;
  await close();
  console.log(JSON.stringify(result));
}

function runLoad(client: 'undici' | 'raw', url: string, path: string, seconds: number, bytes: number): Promise<LoadResult> {
  const { command, args } = pinned([process.execPath, SELF, '--load', client, url, path, String(seconds), '10', String(bytes)], CLIENT_CPU);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolve(JSON.parse(out) as LoadResult);
    });
  });
}

/** Goal 3: the reference server's page against the floor, in alternating rounds. */
export async function throughput(options: { seconds?: number; rounds?: number; client?: 'undici' | 'raw' } = {}): Promise<ThroughputFigures> {
  // Many short rounds, alternating: other load on the machine falls on both sides alike.
  const seconds = options.seconds ?? 2;
  const rounds = options.rounds ?? 5;
  const client = options.client ?? 'undici';
  const children: ChildProcess[] = [];
  try {
    const reference = await startServer(130, { cpu: SERVER_CPU });
    children.push(reference.child);
    const probe = await rawClient(reference.url);
    const page = await probe.get(PAGE_PATH);
    const body = Buffer.from(page.body);
    probe.close();
    if (page.status !== 200) throw new Error(`${PAGE_PATH}: ${page.status}`);
    const records = (JSON.parse(body.toString()) as { data: unknown[] }).data.length;
    if (records !== 100) throw new Error(`${PAGE_PATH} holds ${records} records, not 100`);

    const { command, args } = pinned([process.execPath, SELF, '--floor'], SERVER_CPU);
    const floor = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(floor);
    floor.stdin!.end(body);
    const floorUrl = await listeningUrl(floor);

    const sides = [
      { url: reference.url, pid: reference.child.pid!, requests: 0, seconds: 0, serverCpu: 0, clientCpu: 0 },
      { url: floorUrl, pid: floor.pid!, requests: 0, seconds: 0, serverCpu: 0, clientCpu: 0 },
    ];
    // A short round each first, so that both have their code compiled before they count.
    for (const s of sides) await runLoad(client, s.url, PAGE_PATH, 1, body.length);
    const [, machine] = await measuringLoad(async () => {
      for (let round = 0; round < rounds; round++) {
        for (const s of sides) {
          const before = cpuSeconds(s.pid);
          const r = await runLoad(client, s.url, PAGE_PATH, seconds, body.length);
          if (r.failures) throw new Error(`${r.failures} answer(s) from ${s.url} were not the page`);
          s.serverCpu += cpuSeconds(s.pid) - before;
          s.requests += r.requests;
          s.seconds += r.seconds;
          s.clientCpu += r.cpuSeconds;
        }
      }
    });
    const [ref, flo] = sides as [(typeof sides)[0], (typeof sides)[0]];
    const referenceRps = ref.requests / ref.seconds;
    const floorRps = flo.requests / flo.seconds;
    return {
      referenceRps,
      floorRps,
      ratio: referenceRps / floorRps,
      met: referenceRps >= 0.6 * floorRps,
      pageBytes: body.length,
      referenceUsPerRequest: (ref.serverCpu * 1e6) / ref.requests,
      floorUsPerRequest: (flo.serverCpu * 1e6) / flo.requests,
      referenceServerCpu: ref.serverCpu / ref.seconds,
      floorServerCpu: flo.serverCpu / flo.seconds,
      clientCpu: Math.max(ref.clientCpu / ref.seconds, flo.clientCpu / flo.seconds),
      client,
      pinned: pinned(['x'], SERVER_CPU).command === 'taskset',
      machine,
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}

// --- Goal 4 --------------------------------------------------------------------------------

const ID_KEY = '{"id":"';

/**
 * What the traversal reads from a page without parsing it: the number of records, and the id
 * of the last. Every record object of a list starts with `{"id":"`, and nothing else in a page
 * can hold those characters (a quote inside a string is escaped as \"), so counting them
 * counts the records; the last one's id runs to the next quote (ids hold no quote or
 * backslash). Searched in a latin1 string, which is far cheaper than Buffer.indexOf per call.
 */
function scanPage(body: Buffer): { count: number; lastId: string } {
  const text = body.toString('latin1');
  let count = 0;
  let last = -1;
  for (let at = text.indexOf(ID_KEY); at >= 0; at = text.indexOf(ID_KEY, at + ID_KEY.length)) {
    count++;
    last = at;
  }
  if (last < 0) return { count, lastId: '' };
  const from = last + ID_KEY.length;
  return { count, lastId: text.slice(from, text.indexOf('"', from)) };
}

/** One traversal by id, 100 a page: what it read, its time, and the CPU each side used. */
async function traverse(client: RawClient, serverPid: number): Promise<TraversalRun> {
  const base = '/v2/accounts?sort=id&page[limit]=100';
  const cpuBefore = cpuSeconds(serverPid);
  const clientBefore = process.cpuUsage();
  let scanMs = 0;
  let read = 0;
  let pages = 0;
  const [seconds, machine] = await measuringLoad(async () => {
    const start = performance.now();
    let last = '';
    for (;;) {
      const page = await client.get(last ? `${base}&filter=gt(id,${last})` : base);
      if (page.status !== 200) throw new Error(`page ${pages + 1}: ${page.status}`);
      const t = performance.now();
      const { count, lastId } = scanPage(page.body);
      scanMs += performance.now() - t;
      if (pages % 1000 === 0) {
        // The check of the scan: the same page, parsed.
        const data = (JSON.parse(page.body.toString()) as { data: Array<{ id: string }> }).data;
        if (data.length !== count || (data.at(-1)?.id ?? '') !== lastId)
          throw new Error(`page ${pages + 1}: the scan read ${count} records up to '${lastId}', the JSON ${data.length} up to '${data.at(-1)?.id}'`);
      }
      if (count === 0) break;
      pages++;
      read += count;
      last = lastId;
    }
    return (performance.now() - start) / 1000;
  });
  const serverS = cpuSeconds(serverPid) - cpuBefore;
  const clientCpu = process.cpuUsage(clientBefore);
  // pages + 1 requests: the last, empty page ends the traversal.
  return {
    read,
    pages,
    seconds,
    serverUsPerPage: (serverS * 1e6) / (pages + 1),
    clientUsPerPage: (clientCpu.user + clientCpu.system) / (pages + 1),
    clientScanMs: scanMs,
    machine,
  };
}

interface TraversalRun {
  read: number;
  pages: number;
  seconds: number;
  serverUsPerPage: number;
  clientUsPerPage: number;
  clientScanMs: number;
  machine: MachineLoad;
}

/**
 * Goal 4: keyset traversals of a million records by id, 100 a page, over one connection,
 * `runs` times on one server (built once): the figures are the median run's, since other
 * load on the machine slows some runs down.
 */
export async function traversal(records = 1_000_000, runs = 3): Promise<TraversalFigures> {
  const { url, child } = await startServer(records);
  const client = await rawClient(url);
  try {
    const built = performance.now();
    const first = await client.get('/v2/accounts?sort=id&page[limit]=1');
    const buildS = (performance.now() - built) / 1000;
    const total = (JSON.parse(first.body.toString()) as { meta: { results: { total: number } } }).meta.results.total;
    const done: TraversalRun[] = [];
    for (let i = 0; i < runs; i++) {
      const run = await traverse(client, child.pid!);
      if (run.read !== total) throw new Error(`the traversal read ${run.read} of ${total} records`);
      done.push(run);
    }
    const all = done.map((r) => r.seconds);
    const median = [...done].sort((a, b) => a.seconds - b.seconds)[Math.floor(done.length / 2)]!;
    const rss = peakRssMb(child.pid!);
    return {
      records: median.read,
      pages: median.pages,
      seconds: median.seconds,
      runs: all,
      serverUsPerPage: median.serverUsPerPage,
      clientUsPerPage: median.clientUsPerPage,
      clientScanMs: median.clientScanMs,
      buildS,
      peakRssMb: rss,
      met: median.seconds < 2 && rss < 1024,
      machine: median.machine,
    };
  } finally {
    client.close();
    child.kill('SIGTERM');
  }
}

export async function serverFigures(
  options: { goals?: ReadonlyArray<3 | 4>; seconds?: number; rounds?: number; client?: 'undici' | 'raw' } = {},
): Promise<ServerFigures> {
  const goals = options.goals ?? [3, 4];
  const out: ServerFigures = {};
  if (goals.includes(3)) out.throughput = await throughput(options);
  if (goals.includes(4)) out.traversal = await traversal();
  return out;
}

export function formatServerFigures(f: ServerFigures): string[] {
  const lines: string[] = [];
  const met = (ok: boolean): string => (ok ? 'met    ' : 'not met');
  const machine = (m: MachineLoad): string => `machine ${(100 * m.busy).toFixed(0)}% busy in all, ${(100 * m.stolen).toFixed(0)}% stolen by the host`;
  if (f.throughput) {
    const t = f.throughput;
    lines.push(
      `reference server  ${t.referenceRps.toFixed(0).padStart(6)} req/s  (server ${t.referenceServerCpu.toFixed(2)} cores, ${t.referenceUsPerRequest.toFixed(0)} µs CPU a request)`,
    );
    lines.push(
      `node:http floor   ${t.floorRps.toFixed(0).padStart(6)} req/s  (server ${t.floorServerCpu.toFixed(2)} cores, ${t.floorUsPerRequest.toFixed(0)} µs CPU a request)`,
    );
    lines.push(
      `  ${t.pageBytes} bytes a page; ${t.client} client up to ${t.clientCpu.toFixed(2)} cores${t.pinned ? '; server on core 0, client on core 1' : '; not pinned (no taskset)'}; ${machine(t.machine)}`,
    );
    lines.push(`${met(t.met)}  goal 3: a 100-record page at >= 60% of the node:http floor (${(100 * t.ratio).toFixed(0)}%)`);
  }
  if (f.traversal) {
    const t = f.traversal;
    lines.push(
      `traversal of ${t.records} records in ${t.pages} pages: ${t.seconds.toFixed(2)} s, the median of ${t.runs.map((x) => x.toFixed(2)).join(', ')} s (list built in ${t.buildS.toFixed(1)} s first)`,
    );
    lines.push(
      `  a page: ${((t.seconds * 1e6) / (t.pages + 1)).toFixed(0)} µs, server CPU ${t.serverUsPerPage.toFixed(0)} µs, client CPU ${t.clientUsPerPage.toFixed(0)} µs (reading the pages ${t.clientScanMs.toFixed(0)} ms in all); ${machine(t.machine)}`,
    );
    lines.push(
      `${met(t.met)}  goal 4: 1M-record keyset traversal under 2 s (${t.seconds.toFixed(2)} s) and under 1 GB resident (${t.peakRssMb.toFixed(0)} MB)`,
    );
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  if (args[0] === '--floor') await floorProcess();
  else if (args[0] === '--load') await loadProcess(args[1] === 'raw' ? 'raw' : 'undici', args[2]!, args[3]!, Number(args[4]), Number(args[5]), Number(args[6]));
  else {
    const opt = (name: string): number | undefined => {
      const i = args.indexOf(name);
      return i >= 0 ? Number(args[i + 1]) : undefined;
    };
    const goal = opt('--goal');
    const figures = await serverFigures({
      goals: goal === 3 || goal === 4 ? [goal] : [3, 4],
      seconds: opt('--seconds'),
      rounds: opt('--rounds'),
      client: args.includes('--raw-load') ? 'raw' : 'undici',
    });
    for (const line of formatServerFigures(figures)) console.log(line);
  }
}
