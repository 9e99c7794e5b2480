// Benchmark of the reference server's lists at 10k, 100k and 1M records (an earlier round of goals):
// per-page latency of offset and keyset pages (limit 100), a full keyset traversal, and the
// server's peak resident memory. The server runs in its own process so its memory is its own;
// figures are reported as ratios to the 10k run, measured in the same run (machines are noisy).
//
//   npm run bench                 all sizes
//   npm run bench -- 10000 100000 some sizes
import { Pool } from 'undici';
import { seededRandom } from '../lib/runner/index.js';
import { peakRssMb, startServer, TOKEN } from './support.js';

const PAGES = 1500;

interface Figures {
  records: number;
  buildMs: number;
  offsetMedianMs: number;
  offsetRps: number;
  keysetMedianMs: number;
  keysetRps: number;
  traversalS: number;
  traversed: number;
  peakRssMb: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function measure(records: number): Promise<Figures> {
  const { url, child } = await startServer(records);
  const pool = new Pool(url, { connections: 1 });
  const get = async (path: string): Promise<{ data: Array<{ id: string }>; meta: { results: { total: number } } }> => {
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await res.body.json()) as { data: Array<{ id: string }>; meta: { results: { total: number } } };
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
    return body;
  };
  try {
    const built = performance.now();
    const total = (await get('/v2/accounts?page[limit]=1')).meta.results.total;
    const buildMs = performance.now() - built;
    const rnd = seededRandom(7); // the same pages every run
    const time = async (paths: string[]): Promise<number[]> => {
      const out: number[] = [];
      for (const p of paths) {
        const t = performance.now();
        await get(p);
        out.push(performance.now() - t);
      }
      return out;
    };
    const offsets = Array.from({ length: PAGES }, () => `/v2/accounts?page[limit]=100&page[offset]=${Math.floor(rnd() * (total - 100))}`);
    // Ids rise with generation order from 00000000-: a random 8-digit prefix is a random point.
    const keysets = Array.from(
      { length: PAGES },
      () =>
        `/v2/accounts?sort=id&page[limit]=100&filter=gt(id,${Math.floor(rnd() * total)
          .toString(16)
          .padStart(8, '0')})`,
    );
    const offsetTimes = await time(offsets);
    const keysetTimes = await time(keysets);
    const walkStart = performance.now();
    let last = '';
    let traversed = 0;
    for (;;) {
      const page = await get(`/v2/accounts?sort=id&page[limit]=100${last ? `&filter=gt(id,${last})` : ''}`);
      if (page.data.length === 0) break;
      traversed += page.data.length;
      last = page.data.at(-1)!.id;
    }
    const traversalS = (performance.now() - walkStart) / 1000;
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    return {
      records: total,
      buildMs,
      offsetMedianMs: median(offsetTimes),
      offsetRps: (1000 * offsetTimes.length) / sum(offsetTimes),
      keysetMedianMs: median(keysetTimes),
      keysetRps: (1000 * keysetTimes.length) / sum(keysetTimes),
      traversalS,
      traversed,
      peakRssMb: peakRssMb(child.pid!),
    };
  } finally {
    await pool.close();
    child.kill('SIGTERM');
  }
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const runs: Figures[] = [];
for (const n of sizes.length ? sizes : [10_000, 100_000, 1_000_000]) runs.push(await measure(n));

const base = runs[0]!;
const f = (x: number, d = 2): string => x.toFixed(d);
console.log('records    build ms  offset p50 ms  offset req/s  keyset p50 ms  keyset req/s  traversal s  peak RSS MB  offset/base  keyset/base');
for (const r of runs) {
  console.log(
    [
      String(r.records).padEnd(9),
      f(r.buildMs, 0).padStart(9),
      f(r.offsetMedianMs, 3).padStart(14),
      f(r.offsetRps, 0).padStart(13),
      f(r.keysetMedianMs, 3).padStart(14),
      f(r.keysetRps, 0).padStart(13),
      f(r.traversalS).padStart(12),
      f(r.peakRssMb, 0).padStart(12),
      f(r.offsetMedianMs / base.offsetMedianMs).padStart(12),
      f(r.keysetMedianMs / base.keysetMedianMs).padStart(12),
    ].join(' '),
  );
  if (r.traversed !== r.records) console.log(`  traversal read ${r.traversed} of ${r.records} records: BROKEN`);
}
const big = runs.at(-1)!;
const goals = [
  [
    `per-page latency at ${big.records} within 2x of ${base.records} (offset ${f(big.offsetMedianMs / base.offsetMedianMs)}x, keyset ${f(big.keysetMedianMs / base.keysetMedianMs)}x)`,
    big.offsetMedianMs <= 2 * base.offsetMedianMs && big.keysetMedianMs <= 2 * base.keysetMedianMs,
  ],
  [`full keyset traversal of ${big.records} records under 15 s (${f(big.traversalS)} s)`, big.traversalS < 15],
  [`under 1 GB resident at ${big.records} records (${f(big.peakRssMb, 0)} MB)`, big.peakRssMb < 1024],
] as const;
for (const [text, ok] of goals) console.log(`${ok ? 'met ' : 'MISSED'}  ${text}`);
