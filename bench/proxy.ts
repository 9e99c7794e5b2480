// What `conformance proxy` adds to an exchange: the goal is at most 1 ms on the median exchange
// at 200 exchanges a second. The reference server and the proxy in front of it each run in a
// process of their own (the CLI, as a user starts them); this process sends 200 requests a
// second for --seconds, each a list page or a create, alternating between the server directly
// and the proxy, so both are measured side by side under the same load of the machine. It
// reports the median and 95th percentile of each, their difference and ratio, and the proxy's
// verdict of the traffic (it must judge every exchange: no MUST failure on the reference server).
//
//   npm run bench:proxy                      10 s (2,000 exchanges)
//   node dist/bench/proxy.js --seconds 30    longer
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { packageRoot } from '../lib/package/index.js';
import { startServer, TOKEN } from './support.js';

const RATE = 200;
const GOAL_MS = 1;

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export interface ProxyFigures {
  exchanges: number;
  directMedianMs: number;
  proxiedMedianMs: number;
  directP95Ms: number;
  proxiedP95Ms: number;
  /** proxied minus direct, on the median. */
  addedMs: number;
  ratio: number;
  /** The proxy's exit code after the traffic (0: no MUST rule broken). */
  proxyExit: number | null;
  judged: string;
}

export async function measureProxy(seconds: number): Promise<ProxyFigures> {
  const server = await startServer(50);
  const child = spawn(process.execPath, [join(packageRoot, 'dist/cli/bin.js'), 'proxy', '--upstream', server.url, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let printed = '';
  const proxied = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      printed += d.toString();
      const m = /conformance proxy: (http:\/\/\S+)/.exec(printed);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`proxy exited with ${code}: ${printed}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const dispatcher = new Agent({ connections: 16 });
  const times: Record<'direct' | 'proxied', number[]> = { direct: [], proxied: [] };
  const paths = [
    '/v2/accounts?page[limit]=25',
    '/v2/accounts?sort=created_at&page[limit]=10&page[offset]=10',
    '/v2/customers?filter=ge(created_at,2020-01-01T00:00:00.000Z)&page[limit]=5',
  ];
  const one = async (base: string, i: number): Promise<number> => {
    const create = i % 10 === 9;
    const started = performance.now();
    const res = await request(`${base}${create ? '/v2/application-keys' : paths[i % paths.length]}`, {
      method: create ? 'POST' : 'GET',
      dispatcher,
      headers: { authorization: `Bearer ${TOKEN}`, ...(create ? { 'content-type': 'application/json' } : {}) },
      ...(create ? { body: JSON.stringify({ data: { type: 'application_key', name: `bench-${i}` } }) } : {}),
    });
    await res.body.text();
    return performance.now() - started;
  };
  const total = Math.round(seconds * RATE);
  const start = performance.now();
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Pairs: the same request to each, in an order that alternates, so neither always goes first.
    const which = (Math.floor(i / 2) + i) % 2 === 0 ? 'direct' : 'proxied';
    pending.push(one(which === 'direct' ? server.url : proxied, Math.floor(i / 2)).then((ms) => void times[which].push(ms)));
  }
  await Promise.all(pending);
  child.kill('SIGTERM');
  const proxyExit = await exited;
  server.child.kill();
  await dispatcher.close();
  const judged = /observed .*/.exec(printed)?.[0] ?? '(no summary)';
  const dm = percentile(times.direct, 50);
  const pm = percentile(times.proxied, 50);
  return {
    exchanges: total,
    directMedianMs: dm,
    proxiedMedianMs: pm,
    directP95Ms: percentile(times.direct, 95),
    proxiedP95Ms: percentile(times.proxied, 95),
    addedMs: pm - dm,
    ratio: pm / dm,
    proxyExit,
    judged,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const f = await measureProxy(arg('seconds', 10));
  const ms = (x: number): string => `${x.toFixed(2)} ms`;
  console.log(`conformance proxy, ${f.exchanges} exchanges at ${RATE}/s, half direct and half through the proxy, interleaved`);
  console.log(
    `  median: direct ${ms(f.directMedianMs)}, through the proxy ${ms(f.proxiedMedianMs)}: +${ms(f.addedMs)} (x${f.ratio.toFixed(2)}); goal: at most +${GOAL_MS} ms`,
  );
  console.log(`  p95:    direct ${ms(f.directP95Ms)}, through the proxy ${ms(f.proxiedP95Ms)}`);
  console.log(`  the proxy: ${f.judged}; exit ${f.proxyExit}`);
  console.log(f.addedMs <= GOAL_MS ? 'goal met' : 'goal NOT met');
  process.exitCode = f.addedMs <= GOAL_MS && f.proxyExit === 0 ? 0 : 1;
}
