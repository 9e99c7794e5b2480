// Where the bundled run's CPU goes: the CLI run with node's --cpu-prof (one profile for the main
// thread, where the CLI, vitest's main side and the bundled server run, and one for vitest's
// worker, where the checks run), each sample's time given to a category by the frames under it.
//
//   npm run bench:profile                       # runs `--seed 1` against the bundled server
//   npm run bench:profile -- --dir DIR          # reads the .cpuprofile files already in DIR
//   npm run bench:profile -- --top 40 -- ARGS   # also the 40 costliest functions; ARGS go to the CLI
//   npm run bench:profile -- --compare A1,A2 B1,B2   # two sides' profiles, each the mean of its folders
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../lib/package/index.js';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * A frame's own category, or undefined where its time belongs to whoever called it (node's
 * internals, V8's builtins and regular expressions). The first rule that matches wins.
 */
const RULES: [string, (f: Frame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['V8, unattributed', (f) => f.functionName === '(program)' || f.functionName === '(root)'],
  ['module loading', (f) => /^(compileSourceTextModule|wrapSafe|compileForInternalLoader|compileFunction)$/.test(f.functionName)],
  // JSON.parse is a builtin: its time is its caller's own. responseOf parses every answer and
  // does little else of its own.
  [
    'JSON parsing (JSON.parse, responseOf)',
    (f) => (f.url === '' && f.functionName === 'parse') || (f.functionName === 'responseOf' && f.url.endsWith('/dist/lib/transport/http.js')),
  ],
  ['JSON writing', (f) => f.url === '' && f.functionName === 'stringify'],
  ['bundled server', (f) => /\/dist\/server\/|@faker-js/.test(f.url)],
  ['collation (suites/list/collation.ts)', (f) => f.url.endsWith('/dist/suites/list/collation.js')],
  ['model (suites/list/model.ts)', (f) => f.url.endsWith('/dist/suites/list/model.js')],
  ['exploration (explore, pairwise, fast-check)', (f) => /\/dist\/suites\/list\/(explore|pairwise|illegal|spellings)\.js$|fast-check/.test(f.url)],
  ['other list checks (suites/list/*)', (f) => f.url.includes('/dist/suites/list/')],
  ['other checks (suites/*)', (f) => f.url.includes('/dist/suites/')],
  ['masking secrets (lib/evidence/secrets.ts)', (f) => f.url.endsWith('/dist/lib/evidence/secrets.js')],
  ['evidence (lib/evidence/*)', (f) => f.url.includes('/dist/lib/evidence/')],
  ['ajv validation (lib/contract, ajv)', (f) => /\/dist\/lib\/contract\/|\/node_modules\/ajv/.test(f.url)],
  ['transport (lib/transport/*)', (f) => f.url.includes('/dist/lib/transport/')],
  ['runner (lib/runner/*)', (f) => f.url.includes('/dist/lib/runner/')],
  ['undici', (f) => f.url.includes('/node_modules/undici/')],
  ['vitest, vite, tinypool', (f) => /\/node_modules\/(vitest|@vitest|vite|tinypool|tinyspy|chai|@rolldown|rolldown|tinyrainbow|pathe)\//.test(f.url)],
  ['CLI, reporters, other of ours', (f) => /\/dist\//.test(f.url) && !f.url.includes('/node_modules/')],
  ['other packages', (f) => f.url.includes('/node_modules/')],
];
const NODE_INTERNALS = 'node internals (http, net, streams, timers)';

/** CPU microseconds by category for one profile. */
export function categorize(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = memo.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    const own = RULES.find(([, test]) => test(frame))?.[0];
    const up = parent.get(id);
    const found = own ?? (up !== undefined && byId.get(up)!.callFrame.functionName !== '(root)' ? categoryOf(up) : NODE_INTERNALS);
    memo.set(id, found);
    return found;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const c = categoryOf(id);
    totals.set(c, (totals.get(c) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

/** The functions with the most time of their own (frames without a category of their own counted as themselves). */
function topFunctions(profile: Profile, n: number): [string, number][] {
  const byId = new Map(profile.nodes.map((p) => [p.id, p]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/').slice(0, 80)}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return [...totals]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n);
}

/** CPU microseconds by category of every thread of the profiles in `dir`, summed. */
function categorizeDir(dir: string): Map<string, number> {
  const total = new Map<string, number>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    for (const [c, us] of categorize(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile)) total.set(c, (total.get(c) ?? 0) + us);
  }
  return total;
}

/** Two sides side by side, each category's CPU seconds the mean over that side's folders. */
function compare(before: string[], after: string[]): void {
  const side = (dirs: string[]): Map<string, number> => {
    const sum = new Map<string, number>();
    for (const d of dirs) for (const [c, us] of categorizeDir(d)) sum.set(c, (sum.get(c) ?? 0) + us / dirs.length);
    sum.delete('idle');
    return sum;
  };
  const [a, b] = [side(before), side(after)];
  const s = (us: number): string => (us / 1e6).toFixed(2);
  const busy = (m: Map<string, number>): number => [...m.values()].reduce((x, y) => x + y, 0);
  console.log('| category | before CPU-s | share | after CPU-s | share | after / before |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const c of [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (a.get(y) ?? 0) - (a.get(x) ?? 0))) {
    const [x, y] = [a.get(c) ?? 0, b.get(c) ?? 0];
    const share = (v: number, m: Map<string, number>): string => `${((100 * v) / busy(m)).toFixed(1)}%`;
    console.log(`| ${c} | ${s(x)} | ${share(x, a)} | ${s(y)} | ${share(y, b)} | ${x > 0 ? (y / x).toFixed(2) : '-'} |`);
  }
  console.log(`| **busy** | ${s(busy(a))} | 100% | ${s(busy(b))} | 100% | ${(busy(b) / busy(a)).toFixed(2)} |`);
}

function main(argv: string[]): void {
  const compareAt = argv.indexOf('--compare');
  if (compareAt >= 0) return compare(argv[compareAt + 1]!.split(','), argv[compareAt + 2]!.split(','));
  const dirAt = argv.indexOf('--dir');
  const topAt = argv.indexOf('--top');
  const rest = argv.indexOf('--');
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 0;
  let dir = dirAt >= 0 ? argv[dirAt + 1]! : '';
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'conformance-profile-'));
    const cliArgs = rest >= 0 ? argv.slice(rest + 1) : ['--seed', '1'];
    const run = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(packageRoot, 'dist/cli/bin.js'), ...cliArgs], { stdio: 'ignore' });
    console.log(`conformance ${cliArgs.join(' ')}: exit ${run.status}; profiles in ${dir}`);
  }
  // node names a process's profiles by pid, then thread id: the main thread's first.
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  const profiles = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile);
  const columns = profiles.map(categorize);
  const names = [...new Set(columns.flatMap((c) => [...c.keys()]))].filter((c) => c !== 'idle');
  const busy = columns.map((c) => [...c].reduce((s, [k, v]) => (k === 'idle' ? s : s + v), 0));
  const all = busy.reduce((a, b) => a + b, 0);
  const sum = (c: string): number => columns.reduce((s, col) => s + (col.get(c) ?? 0), 0);
  const s = (us: number): string => (us / 1e6).toFixed(2);
  const heads = files.map((_, i) => (i === 0 ? 'main thread' : `worker ${i}`));
  console.log(`| category | ${heads.join(' | ')} | CPU-s | share |`);
  console.log(`|---|${heads.map(() => '---:|').join('')}---:|---:|`);
  for (const c of names.sort((a, b) => sum(b) - sum(a))) {
    console.log(`| ${c} | ${columns.map((col) => s(col.get(c) ?? 0)).join(' | ')} | ${s(sum(c))} | ${((100 * sum(c)) / all).toFixed(1)}% |`);
  }
  console.log(`| **busy** | ${busy.map(s).join(' | ')} | ${s(all)} | 100% |`);
  if (top > 0) {
    profiles.forEach((p, i) => {
      console.log(`\n${heads[i]}: the ${top} functions with the most time of their own`);
      for (const [k, us] of topFunctions(p, top)) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
    });
  }
}

main(process.argv.slice(2));
