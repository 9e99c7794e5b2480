// Benchmark of the suite's own memory: a run holds what its comparisons need (ids,
// timestamps, counts), not the body of every page it read, so its peak memory is set by the
// request budget, not by the target's size. The suite runs through the CLI against reference
// servers of growing size (each in a process of its own, warmed first); the figure is the CLI
// process's peak resident memory, as a ratio to the smallest target's, measured in one run.
//
//   npm run bench:memory                  10,000 and 300,000 records per list
//   npm run bench:memory -- 10000 1000000 other sizes
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../lib/package/index.js';
import { peakRssMb, startServer, TOKEN } from './support.js';

const OPERATIONS = ['accounts', 'customers'];

/** The CLI against `url`; its peak RSS read from /proc while it runs (VmHWM only grows). */
function runSuite(url: string): Promise<{ code: number | null; peakMb: number; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(packageRoot, 'dist/cli/bin.js'), '--base-url', url, '--operation', OPERATIONS.join(','), '--timeout', '60000'], {
    env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN },
    stdio: 'ignore',
  });
  let peakMb = 0;
  const poll = setInterval(() => {
    try {
      // NaN: the process has just exited (a zombie's status has no VmHWM).
      const now = peakRssMb(child.pid!);
      if (!Number.isNaN(now)) peakMb = Math.max(peakMb, now);
    } catch {
      // The process is gone.
    }
  }, 20);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, peakMb, seconds: (performance.now() - started) / 1000 });
    }),
  );
}

export interface MemoryRow {
  records: number;
  code: number | null;
  peakMb: number;
  seconds: number;
}

/** The CLI's peak RSS against reference servers of each size (lists of `records` records). */
export async function suiteMemory(sizes: number[]): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const records of sizes) {
    const { url, child } = await startServer(records);
    try {
      // The server builds a list on first use: warm them so the run measures the suite, not that.
      for (const op of OPERATIONS) await fetch(`${url}/v2/${op}?page[limit]=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      rows.push({ records, ...(await runSuite(url)) });
    } finally {
      child.kill();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const rows = await suiteMemory(sizes.length ? sizes : [10_000, 300_000]);
  const base = rows[0]!.peakMb;
  console.log(`the suite's peak memory against lists of growing size (${OPERATIONS.join(', ')}; default request budget 1000 per operation)`);
  console.log('records per list   exit   peak RSS        wall');
  for (const r of rows)
    console.log(
      `${String(r.records).padStart(16)}   ${String(r.code).padStart(4)}   ${r.peakMb.toFixed(0).padStart(4)} MB (${(r.peakMb / base).toFixed(2)}x)   ${r.seconds.toFixed(1)} s`,
    );
  const worst = Math.max(...rows.map((r) => r.peakMb / base));
  console.log(`goal: memory set by the budget, not the target (largest / smallest < 1.5x): ${worst < 1.5 ? 'met' : 'not met'} (${worst.toFixed(2)}x)`);
}
