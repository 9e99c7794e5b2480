// report.html's picture of how hard the run pushed the target over its time: requests in flight
// (the limit and the most actually in flight), latency (p50 and p95), and the 429s and back-offs,
// each stretch of the run's timeline (lib/transport/load.ts) one column. An inline SVG, no script.
import type { LoadBucket, LoadReport } from '../lib/transport/index.js';

const WIDTH = 800;
/** Each panel's height, and the room left of it for its scale. */
const PANEL = 110;
const LEFT = 48;
const GAP = 26;
const MARKS = 24;

const SOLID = (colour: string): string => `stroke="${colour}" stroke-width="2"`;
const DASHED = (colour: string): string => `stroke="${colour}" stroke-dasharray="4 3" stroke-width="1.5"`;

/** A polyline of `values` over the panel whose top is `top`, `max` at its top. */
function line(values: ReadonlyArray<number | undefined>, max: number, top: number, step: number, attrs: string): string {
  const points = values.flatMap((v, i) => (v === undefined ? [] : [`${(LEFT + (i + 0.5) * step).toFixed(1)},${(top + PANEL - (PANEL * v) / max).toFixed(1)}`]));
  return points.length ? `<polyline fill="none" ${attrs} points="${points.join(' ')}"/>` : '';
}

/** A panel's frame, its name and its top value. */
function frame(top: number, name: string, max: string): string {
  return (
    `<rect x="${LEFT}" y="${top}" width="${WIDTH - LEFT}" height="${PANEL}" fill="#fff" stroke="#dde1e7"/>` +
    `<text x="${LEFT + 4}" y="${top - 6}" font-size="12">${name}</text>` +
    `<text x="${LEFT - 4}" y="${top + 10}" font-size="10" text-anchor="end">${max}</text>` +
    `<text x="${LEFT - 4}" y="${top + PANEL}" font-size="10" text-anchor="end">0</text>`
  );
}

export function loadChart(l: LoadReport): string {
  const t = l.timeline;
  if (t.length === 0) return '';
  const step = (WIDTH - LEFT) / t.length;
  const flightMax = Math.max(1, l.ceiling, ...t.map((b) => b.inFlight));
  const latencyMax = Math.max(1, ...t.map((b) => b.p95 ?? 0));
  const top2 = GAP + PANEL + GAP;
  const marksTop = top2 + PANEL + 8;
  const height = marksTop + MARKS + 18;
  const marks = t
    .map((b, i) => {
      const x = LEFT + i * step;
      const w = Math.max(1, step - 1).toFixed(1);
      return (
        (b.rateLimited
          ? `<rect x="${x.toFixed(1)}" y="${marksTop}" width="${w}" height="${MARKS / 2 - 1}" fill="#dc2626"><title>${b.rateLimited} × 429</title></rect>`
          : '') +
        (b.backoffs
          ? `<rect x="${x.toFixed(1)}" y="${marksTop + MARKS / 2}" width="${w}" height="${MARKS / 2 - 1}" fill="#d97706"><title>${b.backoffs} back-off(s)</title></rect>`
          : '')
      );
    })
    .join('');
  const seconds = (t.length * l.bucketMs) / 1000;
  const series: Array<[(b: LoadBucket) => number | undefined, number, number, string]> = [
    [(b) => b.limit, flightMax, GAP, DASHED('#2563eb')],
    [(b) => b.inFlight, flightMax, GAP, SOLID('#14532d')],
    [(b) => b.p50, latencyMax, top2, SOLID('#7c3aed')],
    [(b) => b.p95, latencyMax, top2, DASHED('#7c3aed')],
  ];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" id="load-chart" role="img" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" font-family="system-ui,sans-serif">` +
    `<title>Requests in flight, latency, 429s and back-offs over the run's ${seconds.toFixed(0)} s, ${l.bucketMs / 1000} s a column</title>` +
    frame(GAP, 'in flight: the lowest limit (dashed) and the most actually in flight', String(flightMax)) +
    frame(top2, 'latency, ms: p50 (solid) and p95 (dashed)', String(latencyMax)) +
    series.map(([of, max, top, stroke]) => line(t.map(of), max, top, step, stroke)).join('') +
    `<text x="${LEFT - 4}" y="${marksTop + 8}" font-size="10" text-anchor="end">429</text>` +
    `<text x="${LEFT - 4}" y="${marksTop + MARKS}" font-size="10" text-anchor="end">back-off</text>` +
    marks +
    `<text x="${LEFT}" y="${height - 4}" font-size="10">0 s</text><text x="${WIDTH}" y="${height - 4}" font-size="10" text-anchor="end">${seconds.toFixed(0)} s</text>` +
    `</svg>`
  );
}
