// What the benchmarks share: the reference server in a process of its own (so its memory is
// its own), a process's peak resident memory and CPU time, and pinning a process to one core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../lib/package/index.js';

export const TOKEN = 'bench-token-0123456789';

let tasksetWorks: boolean | undefined;

/**
 * The command line that runs `argv` on core `cpu` only (taskset execs the command, so the
 * child's pid is the program's own), or `argv` unchanged where taskset is missing, the
 * machine has one core, or no core is asked for.
 */
export function pinned(argv: readonly string[], cpu?: number): { command: string; args: string[] } {
  if (cpu !== undefined && cpu < availableParallelism()) {
    tasksetWorks ??= spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' }).status === 0;
    if (tasksetWorks) return { command: 'taskset', args: ['-c', String(cpu), ...argv] };
  }
  return { command: argv[0]!, args: argv.slice(1) };
}

/** Waits for a child to print `listening on http://…` and returns that address. */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

export async function startServer(records: number, options: { cpu?: number } = {}): Promise<{ url: string; child: ChildProcess }> {
  const { command, args } = pinned(
    [process.execPath, join(packageRoot, 'dist/cli/bin.js'), 'serve', '--port', '0', '--records', String(records), '--token', TOKEN, '--seed', '1'],
    options.cpu,
  );
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return { url: await listeningUrl(child), child };
}

export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * CPU time (user + system) a process has used so far, in seconds; NaN where /proc is missing.
 * `children`: instead, what its children that have ended (and been waited for) used.
 */
export function cpuSeconds(pid: number | 'self', children = false): number {
  try {
    // Fields 14 and 15 (16 and 17 for children) of /proc/PID/stat, counted after the command
    // name (which may hold spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const at = children ? 13 : 11;
    return (Number(fields[at]) + Number(fields[at + 1])) / 100; // clock ticks; USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}
