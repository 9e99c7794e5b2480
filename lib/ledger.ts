// Everything the suite creates on a target is written here the moment it exists, and its
// deletion the moment it is gone. The file is append-only JSON lines, so the CLI's main
// process can clean up after the checks even when a worker died half-way.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LedgerEntry {
  kind: 'custom-api' | 'application-key';
  id: string;
  name: string;
  /** The request that deletes it, relative to the base URL. */
  deletePath: string;
  createdBy: string;
}

type Line = ({ op: 'created' } & LedgerEntry) | { op: 'deleted'; deletePath: string };

export class Ledger {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
  }

  #append(line: Line): void {
    // Synchronous on purpose: the line must be on disk before the next request goes out.
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
  }

  created(entry: LedgerEntry): void {
    this.#append({ op: 'created', ...entry });
  }

  deleted(deletePath: string): void {
    this.#append({ op: 'deleted', deletePath });
  }

  /** What was created and not (yet) seen deleted, oldest first. */
  outstanding(): LedgerEntry[] {
    if (!existsSync(this.path)) return [];
    const open = new Map<string, LedgerEntry>();
    for (const raw of readFileSync(this.path, 'utf8').split('\n')) {
      if (!raw.trim()) continue;
      const line = JSON.parse(raw) as Line;
      if (line.op === 'created') {
        const { op: _op, ...entry } = line;
        open.set(entry.deletePath, entry);
      } else open.delete(line.deletePath);
    }
    return [...open.values()];
  }
}
