// Progress where nobody watches a terminal: in a pipe, a file or under CI
// (CI=true, even with a terminal attached) the run prints plain lines, one per area as it
// finishes and one at least every heartbeat while checks run, and never a cursor or colour
// sequence. On a terminal outside CI, the live status line stays (the contrast the first test
// draws). main() runs in-process, so the test can hand it a terminal and a short heartbeat.
import { createServer, request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../cli/main.js';
import { useColor, type Io } from '../cli/io.js';
import { heartbeat } from '../cli/heartbeat.js';
import { listening, TOKEN, withServer } from './support.js';

interface Captured {
  code: number;
  lines: string[];
  progress: Array<string | undefined>;
}

async function runMain(args: string[], io: Partial<Io>): Promise<Captured> {
  const lines: string[] = [];
  const progress: Array<string | undefined> = [];
  const code = await main(args, {
    // The summary comes as one block: kept as the lines a reader sees.
    out: (l) => lines.push(...l.split('\n')),
    err: (l) => lines.push(...l.split('\n')),
    env: {},
    cwd: mkdtempSync(join(tmpdir(), 'conformance-progress-')),
    isTTY: false,
    progress: (t) => progress.push(t),
    ...io,
  });
  return { code, lines, progress };
}

const ANSI = /\u001b/;
const AREA_LINE = /^[✓✗⚠] ([\w-]+): \d+ result\(s\): /;
const areasOf = (lines: readonly string[]): string[] => lines.map((l) => AREA_LINE.exec(l)?.[1]).filter((a): a is string => a !== undefined);
// Two areas: one line each when it finishes.
const CHECKS = ['--check', 'delete.existing.204,delete.unknown-id.404,errors.content-type.json', '--seed', '5'];

describe('progress without a live terminal', () => {
  it('CI=true on a terminal: no status line, no colour; one line per area', async () => {
    const tty = await runMain(CHECKS, { isTTY: true });
    expect(tty.code, tty.lines.join('\n')).toBe(0);
    // The contrast: on a terminal outside CI the status line and colours are used.
    expect(tty.progress.length).toBeGreaterThan(0);
    expect(tty.lines.some((l) => ANSI.test(l))).toBe(true);

    const ci = await runMain(CHECKS, { isTTY: true, env: { CI: 'true' } });
    expect(ci.code, ci.lines.join('\n')).toBe(0);
    expect(ci.progress).toEqual([]);
    expect(ci.lines.filter((l) => ANSI.test(l) || l.includes('\r'))).toEqual([]);
    expect(areasOf(ci.lines).sort()).toEqual(['delete-custom-api', 'errors']);
  });

  it('in a pipe: a line at least every heartbeat while the checks run, and each area once as it finishes', async () => {
    await withServer({ seed: 5 }, async (server) => {
      // A slow target: every request waits 100 ms, so the checks outlast several heartbeats.
      const proxy = await listening(
        createServer((req, res) => {
          setTimeout(() => {
            const up = request(new URL(req.url ?? '/', server.url), { method: req.method, headers: req.headers }, (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            });
            up.on('error', () => res.destroy());
            req.pipe(up);
          }, 100);
        }),
      );
      try {
        const r = await runMain(['--base-url', proxy.url, '--token', TOKEN, ...CHECKS], { heartbeatMs: 150 });
        expect(r.code, r.lines.join('\n')).toBe(0);
        expect(r.progress).toEqual([]);
        const beats = r.lines.filter((l) => /^ {2}… \d+\/3 checks done; still running: /.test(l));
        expect(beats.length, r.lines.join('\n')).toBeGreaterThan(0);
        expect(beats.at(-1)).toMatch(/still running: (delete-custom-api|errors|delete-custom-api, errors)$/);
        const summary = r.lines.findIndex((l) => l.startsWith('Summary:'));
        const areaLines = r.lines.flatMap((l, i) => (AREA_LINE.test(l) ? [i] : []));
        expect(areasOf(r.lines).sort()).toEqual(['delete-custom-api', 'errors']);
        expect(summary).toBeGreaterThan(0);
        expect(
          areaLines.every((i) => i < summary),
          r.lines.join('\n'),
        ).toBe(true);
        // The heartbeat stops with the checks.
        expect(r.lines.slice(summary).filter((l) => l.includes('checks done'))).toEqual([]);
        expect(r.lines.filter((l) => ANSI.test(l) || l.includes('\r'))).toEqual([]);
      } finally {
        await proxy.close();
      }
    });
  });

  it('selftest: plain lines as rows end in a pipe or under CI, the status line on a terminal', async () => {
    const args = ['selftest', '--fault', 'delete-not-applied', '--quick'];
    const row = '  1 done; mutant delete-not-applied: caught (exit 1)';
    for (const io of [{ isTTY: false }, { isTTY: true, env: { CI: 'true' } }]) {
      const r = await runMain(args, { ...io, heartbeatMs: 0 });
      expect(r.code, r.lines.join('\n')).toBe(0);
      expect(r.progress).toEqual([]);
      expect(r.lines).toContain(row);
    }
    const tty = await runMain(args, { isTTY: true, heartbeatMs: 0 });
    expect(tty.progress).toContain('1 done; mutant delete-not-applied: caught (exit 1)');
    expect(tty.lines).not.toContain(row);
  });
});

describe('the heartbeat', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('comes when it is due, not up to a polling period later: never more than 10 s after the last line', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const start = Date.now();
    const lines: number[] = [];
    const beat = heartbeat(10_000, () => {
      lines.push(Date.now() - start);
      beat.said();
    });
    // Quiet from the start: a beat every 10 s exactly.
    vi.advanceTimersByTime(23_000);
    expect(lines).toEqual([10_000, 20_000]);
    // A line of the run at 23 s: the next beat is 10 s after it, at 33 s; not at 30 s, nor at
    // the next tick of a poll (34 s for a poll every 2 s).
    beat.said();
    vi.advanceTimersByTime(9_999);
    expect(lines).toEqual([10_000, 20_000]);
    vi.advanceTimersByTime(1);
    expect(lines).toEqual([10_000, 20_000, 33_000]);
    vi.advanceTimersByTime(10_000);
    expect(lines).toEqual([10_000, 20_000, 33_000, 43_000]);
    beat.stop();
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(4);
  });

  it('a beat that says nothing (the checks are done) waits a whole period before the next', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    let calls = 0;
    const beat = heartbeat(1_000, () => calls++);
    vi.advanceTimersByTime(3_500);
    expect(calls).toBe(3);
    beat.stop();
  });
});

describe('colours', () => {
  const io = (env: Record<string, string>, isTTY: boolean): Io => ({ out: () => {}, err: () => {}, env, cwd: '/', isTTY });
  it('on a terminal only, not under CI; FORCE_COLOR asks for them anywhere; NO_COLOR and --no-color win', () => {
    expect([useColor(io({}, true)), useColor(io({}, false)), useColor(io({ CI: 'true' }, true))]).toEqual([true, false, false]);
    expect([
      useColor(io({ FORCE_COLOR: '1' }, false)),
      useColor(io({ FORCE_COLOR: '1', CI: 'true' }, false)),
      useColor(io({ FORCE_COLOR: '0' }, true)),
    ]).toEqual([true, true, false]);
    expect([useColor(io({ FORCE_COLOR: '1', NO_COLOR: '1' }, true)), useColor(io({ FORCE_COLOR: '1' }, true), true)]).toEqual([false, false]);
  });
});
