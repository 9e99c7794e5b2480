// The whole suite against a target far away (goal 1 of bench/goals.ts): the reference server in a
// process of its own, behind a proxy that adds a round trip of 0, 50 and 100 ms, and the CLI run
// against the proxy with its default settings. For each latency: the requests sent, the
// critical path in round trips (the longest chain of requests each waiting for the one before),
// the round trips the count alone takes at the most in flight (requests / most in flight: no
// ordering makes the critical path shorter), the most requests in flight, the wall time and the
// run's exit code.
//
//   npm run bench:remote                 0, 50 and 100 ms
//   npm run bench:remote -- 100 --by-path   one latency; requests per path as well
//   npm run bench:remote -- 100 -- --concurrency 16   flags after a second -- go to the CLI
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../lib/package/index.js';
import { startLatencyProxy, type ProxyFigures } from './latency-proxy.js';
import { startServer, TOKEN } from './support.js';

export interface RemoteRow extends Omit<ProxyFigures, 'byPath'> {
  latencyMs: number;
  code: number | null;
  seconds: number;
  byPath: Map<string, number>;
}

function runCli(url: string, extra: string[]): Promise<{ code: number | null; seconds: number; out: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(packageRoot, 'dist/cli/bin.js'), '--base-url', url, '--no-color', ...extra], {
    env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN, TMPDIR: process.env.TMPDIR ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, seconds: (performance.now() - started) / 1000, out })));
}

/** The suite against the reference server behind each latency; the server is started once. */
export async function remoteRuns(latencies: number[], extra: string[] = []): Promise<RemoteRow[]> {
  const { url, child } = await startServer(130);
  const rows: RemoteRow[] = [];
  try {
    // Build every list once, so the first run does not pay for it.
    await runCli(url, ['--seed', '1']);
    for (const latencyMs of latencies) {
      const proxy = await startLatencyProxy(url, latencyMs);
      try {
        const { code, seconds, out } = await runCli(proxy.url, ['--seed', '1', ...extra]);
        if (code !== 0) process.stderr.write(`run at ${latencyMs} ms exited ${code}:\n${out.split('\n').slice(-25).join('\n')}\n`);
        rows.push({ latencyMs, code, seconds, ...proxy.figures() });
      } finally {
        await proxy.close();
      }
    }
  } finally {
    child.kill();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const all = process.argv.slice(2);
  const cut = all.indexOf('--');
  const args = cut >= 0 ? all.slice(0, cut) : all;
  const byPath = args.includes('--by-path');
  const latencies = args.filter((a) => /^\d+$/.test(a)).map(Number);
  const rows = await remoteRuns(latencies.length ? latencies : [0, 50, 100], cut >= 0 ? all.slice(cut + 1) : []);
  console.log('latency   exit   requests   critical path   count bound   most in flight   first to last request   none in flight   wall');
  for (const r of rows) {
    const bound = r.maxInFlight ? Math.ceil(r.requests / r.maxInFlight) : 0;
    console.log(
      `${String(r.latencyMs).padStart(4)} ms   ${String(r.code).padStart(4)}   ${String(r.requests).padStart(8)}   ${String(r.criticalPath).padStart(9)} RTs   ${String(bound).padStart(7)} RTs   ${String(r.maxInFlight).padStart(14)}   ${r.spanS.toFixed(1).padStart(19)} s   ${r.idleS.toFixed(1).padStart(12)} s   ${r.seconds.toFixed(1).padStart(5)} s`,
    );
  }
  if (byPath) {
    for (const r of rows) {
      console.log(`\nrequests per path at ${r.latencyMs} ms:`);
      for (const [p, n] of [...r.byPath].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(6)}  ${p}`);
    }
  }
}
