// Everything the suite creates on a target is written here before the request goes out (by
// name: an intent) and again when the answer comes (by id: created; or settled, when the
// answer created nothing), and its deletion the moment it is gone. The file is append-only
// JSON lines, synchronous, so nothing is lost to a crash: `conformance cleanup` reads what an
// interrupted run left open, including a create whose answer never came (found by its name).
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The shape of every run id (newRunId): nothing else names a ledger folder. */
const RUN_ID = /^[0-9a-f]{8}$/;

/** A new run's id: 8 hexadecimal digits. */
export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** Whether `s` has the shape of a run id: no path, no separator, nothing but what newRunId makes. */
export function isRunId(s: string): boolean {
  return RUN_ID.test(s);
}

/**
 * Where a run's ledger lives, inside ledgersRoot() and nowhere else: kept after the run while
 * it holds anything undeleted. Anything but a run id is refused, so that no path given as a run
 * (`../../somewhere`) can name a folder the cleanup would then read or remove.
 */
export function ledgerPath(runId: string): string {
  if (!isRunId(runId)) throw new RangeError(`not a run id: ${JSON.stringify(runId)} (a run id is 8 hexadecimal digits, as the run printed it)`);
  return join(ledgersRoot(), runId, 'ledger.jsonl');
}

/** The folder every run's ledger folder sits in. */
export function ledgersRoot(): string {
  return join(tmpdir(), 'conformance');
}

export type ResourceKind = 'custom-api' | 'application-key';

export interface LedgerEntry {
  kind: ResourceKind;
  id: string;
  name: string;
  /** The request that deletes it, relative to the base URL ('' when the target gave no id). */
  deletePath: string;
  createdBy: string;
  /** The intent it answers (see intend). */
  key?: string;
}

/**
 * The request was never processed: 429 to the end of the retry budget, or never sent (the
 * breaker was open, or the login for its token failed). A create that failed so created nothing.
 */
export function notProcessed(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'RATE_LIMITED' || code === 'TARGET_DOWN' || code === 'LOGIN_FAILED';
}

/** A create sent whose answer never came: the target may or may not hold it. */
export interface OpenIntent {
  kind: ResourceKind;
  name: string;
  /** The collection it was posted to, where cleanup looks for it by name. */
  collection: string;
  createdBy: string;
  key: string;
}

/** The run a ledger belongs to: where its target is (never the token), and which process ran it. */
export interface LedgerRun {
  runId: string;
  baseUrl: string;
  startedAt: string;
  /** The process of the run, so cleanup leaves a run in progress alone (absent in older ledgers). */
  pid?: number;
  /** The host that process runs on (os.hostname()): a pid means nothing on another. */
  host?: string;
}

/** Two base URLs as compared: scheme and host as the URL parser writes them, the path without a trailing slash. */
export function sameTarget(a: string, b: string): boolean {
  const norm = (u: string): string => {
    try {
      const url = new URL(u.trim());
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      return u.trim().replace(/\/+$/, '');
    }
  };
  return norm(a) === norm(b);
}

/**
 * Whether the run that wrote `run` is still under way: its process is alive on this host. A
 * ledger without pid (an older one), from another host, or naming this very process is not.
 * A pid the system has since given to another process reads as alive too: the error is on the
 * side of touching nothing.
 */
export function runInProgress(run: LedgerRun | undefined, host: string): boolean {
  if (!run || typeof run.pid !== 'number' || !Number.isInteger(run.pid) || run.pid <= 0) return false;
  if (run.host !== host || run.pid === process.pid) return false;
  try {
    process.kill(run.pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists, under another user.
    return (e as { code?: string }).code === 'EPERM';
  }
}

/**
 * A setting of the target the run changed, with the value it had before: written before the
 * first change, so that the cleanup (and `conformance cleanup --run ID` after a crash) puts it
 * back with `PUT path` and `body`.
 */
export interface SettingChange {
  /** The resource that holds it, relative to the base URL: `/v2/settings`. */
  path: string;
  /** What it is called in reports: `page_length`. */
  name: string;
  /** The value it had before the run changed it. */
  original: number;
  /** The body of the PUT that restores it. */
  body: unknown;
  createdBy: string;
}

type Line =
  | ({ op: 'run' } & LedgerRun)
  | ({ op: 'intent' } & OpenIntent)
  | { op: 'settled'; key: string }
  | ({ op: 'created' } & LedgerEntry)
  | { op: 'deleted'; deletePath: string }
  | ({ op: 'setting' } & SettingChange)
  | { op: 'restored'; path: string; name: string };

export class Ledger {
  readonly path: string;
  readonly #mask: (s: string) => string;
  #serial = 0;
  /**
   * `mask` hides the run's secrets in what the ledger only shows (the name a target gave what it
   * created): the ledger is an output like any other. What the cleanup acts on (an id, the path
   * that deletes it, the name the suite sent) is written as it is. The run's folder is the
   * user's alone (0700, its file 0600).
   */
  constructor(path: string, options: { mask?: (s: string) => string } = {}) {
    this.path = path;
    this.#mask = options.mask ?? ((s) => s);
    mkdirSync(dirname(dirname(path)), { recursive: true });
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }

  #append(line: Line): void {
    // Synchronous on purpose: the line must be on disk before the next request goes out.
    appendFileSync(this.path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  }

  /** The ledger's first line: which run, against which target. */
  started(run: LedgerRun): void {
    this.#append({ op: 'run', ...run });
  }

  /** Before a create goes out: returns the key its answer closes the intent with. */
  intend(intent: Omit<OpenIntent, 'key'>): string {
    const key = `${process.pid}.${Date.now().toString(36)}.${++this.#serial}`;
    this.#append({ op: 'intent', ...intent, key });
    return key;
  }

  /** The answer to a create created nothing. */
  settled(key: string): void {
    this.#append({ op: 'settled', key });
  }

  created(entry: LedgerEntry): void {
    this.#append({ op: 'created', ...entry, name: this.#mask(entry.name) });
  }

  deleted(deletePath: string): void {
    this.#append({ op: 'deleted', deletePath });
  }

  /** Before the first change of a setting: its value then (see SettingChange). */
  changing(change: SettingChange): void {
    this.#append({ op: 'setting', ...change });
  }

  /** The setting holds its original value again. */
  restored(path: string, name: string): void {
    this.#append({ op: 'restored', path, name });
  }

  /** Lines that could not be read (a write cut short by a crash tears the last one): skipped. */
  torn = 0;

  #lines(): Line[] {
    if (!existsSync(this.path)) return [];
    const lines: Line[] = [];
    this.torn = 0;
    for (const raw of readFileSync(this.path, 'utf8').split('\n')) {
      if (!raw.trim()) continue;
      let line: unknown;
      try {
        line = JSON.parse(raw);
      } catch {
        line = undefined;
      }
      if (line && typeof line === 'object' && typeof (line as { op?: unknown }).op === 'string') lines.push(line as Line);
      else this.torn++;
    }
    return lines;
  }

  /** The run this ledger belongs to, when it says. */
  run(): LedgerRun | undefined {
    const first = this.#lines().find((l) => l.op === 'run');
    if (first?.op !== 'run') return undefined;
    return {
      runId: first.runId,
      baseUrl: first.baseUrl,
      startedAt: first.startedAt,
      ...(first.pid !== undefined ? { pid: first.pid } : {}),
      ...(first.host !== undefined ? { host: first.host } : {}),
    };
  }

  /**
   * What was created and not (yet) seen deleted, oldest first; creates whose answer never came;
   * and settings changed and not (yet) restored, each with the value it had first.
   */
  open(): { created: LedgerEntry[]; unanswered: OpenIntent[]; settings: SettingChange[] } {
    const created = new Map<string, LedgerEntry>();
    const intents = new Map<string, OpenIntent>();
    const settings = new Map<string, SettingChange>();
    for (const line of this.#lines()) {
      if (line.op === 'setting') {
        const { op: _op, ...change } = line;
        // The first value written is the original: a second change of the same setting keeps it.
        const key = `${change.path} ${change.name}`;
        if (!settings.has(key)) settings.set(key, change);
        continue;
      }
      if (line.op === 'restored') {
        settings.delete(`${line.path} ${line.name}`);
        continue;
      }
      if (line.op === 'intent') {
        const { op: _op, ...intent } = line;
        intents.set(intent.key, intent);
      } else if (line.op === 'settled') intents.delete(line.key);
      else if (line.op === 'created') {
        const { op: _op, ...entry } = line;
        if (entry.key) intents.delete(entry.key);
        // An entry without a delete path (no id) is kept by its intent key or name.
        created.set(entry.deletePath || `${entry.key ?? entry.name}`, entry);
      } else if (line.op === 'deleted') created.delete(line.deletePath);
    }
    return { created: [...created.values()], unanswered: [...intents.values()], settings: [...settings.values()] };
  }
}
