// What the benchmarks share: the reference server in a process of its own (so its memory is
// its own), and a process's peak resident memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../lib/package.js';

export const TOKEN = 'bench-token-0123456789';

export async function startServer(records: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(packageRoot, 'dist/cli/bin.js'), 'serve', '--port', '0', '--records', String(records), '--token', TOKEN, '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url, child };
}

export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

