// Pieces around the plain server that take time (Around.hold): a server with a capacity (the
// capacity variant, server/variants.ts), and faults that show only when requests overlap in
// time (server/faults.ts). They wait on timers, never on the CPU, as a service waits on its
// database: the suite's own process is not slowed by them.
import type { Around, Held } from './around.js';
import { HttpError } from './http.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A list request (a list of spec/list-operations.yaml, or of the store's own keys and Custom APIs). */
export const isList = (held: Held): boolean => held.asked.route === 'list' || held.asked.route?.endsWith('.list') === true;

/** Records in an ordinary list as the server seeds it (130 ± 20): what a sort or a filter scans. */
const WHOLE_LIST = 150;
/** Records in the largest list (orders hold 10,050): no scan reads past the end of a list. */
const LARGEST_LIST = 10_100;

/**
 * Records a request reads, as a store without the plain server's indexes reads them: a page
 * scans past its offset to its end, and a sort or a filter scans the whole list; anything else
 * reads one record.
 */
export function recordsScanned(held: Held): number {
  if (!isList(held)) return 1;
  const q = held.query;
  const number = (name: string, otherwise: number): number => {
    const n = Number(q.get(name) ?? otherwise);
    return Number.isSafeInteger(n) && n >= 0 ? n : otherwise;
  };
  const read = number('page[offset]', 0) + Math.min(100, number('page[limit]', 25));
  return Math.min(LARGEST_LIST, q.get('sort') || q.get('filter') ? Math.max(WHOLE_LIST, read) : read);
}

/** The capacity variant's figures: workers, how long a request may wait for one, and what a request costs. */
export interface Capacity {
  workers: number;
  deadlineMs: number;
  baseMs: number;
  perRecordMs: number;
}

/** A fixed pool of workers, handed out in the order they were asked for. */
class Pool {
  #free: number;
  readonly #queue: Array<() => void> = [];
  constructor(size: number) {
    this.#free = size;
  }
  /** Workers free now. */
  get free(): number {
    return this.#free;
  }
  /** Waits for a worker, at most `deadlineMs` (then rejects with `late`, out of the queue). */
  take(deadlineMs = Infinity, late?: () => Error): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const turn = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer =
        deadlineMs === Infinity
          ? undefined
          : setTimeout(() => {
              this.#queue.splice(this.#queue.indexOf(turn), 1);
              reject(late?.() ?? new Error('late'));
            }, deadlineMs);
      this.#queue.push(turn);
    });
  }
  give(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#free++;
  }
}

/**
 * A fixed pool of workers (a database's connections): a request holds one for a time that grows
 * with the records it scans, and one still waiting for one at the deadline answers 500 with the
 * Error shape, as a service with a query deadline does under overload (the capacity variant).
 */
export function capacity(c: Capacity): Around {
  return {
    fresh() {
      const pool = new Pool(c.workers);
      const late = (): Error => new HttpError(500, `The query waited more than ${c.deadlineMs} ms for a database connection; try again later.`);
      return {
        async hold(held) {
          await pool.take(c.deadlineMs, late);
          await sleep(c.baseMs + c.perRecordMs * recordsScanned(held));
          pool.give();
        },
      };
    },
  };
}

/**
 * A pool of `workers` (a database's connections) from which each request that `leaks` never
 * gives its worker back (the connection-leak fault). A write that finds no worker free fails at
 * once with 500 (it asks the pool without waiting); any other request waits for one without a
 * deadline: once every worker is lost, writes answer 500 and nothing else is answered at all.
 */
export function leaking(workers: number, holdMs: number, leaks: (held: Held) => boolean): Around {
  return {
    fresh() {
      const pool = new Pool(workers);
      return {
        async hold(held) {
          if (held.asked.method !== 'GET' && pool.free === 0) throw new HttpError(500, 'No database connection is free; try again later.');
          await pool.take();
          await sleep(holdMs);
          if (!leaks(held)) pool.give();
        },
      };
    },
  };
}

/** A key creation. */
export const keyCreation = (held: Held): boolean => held.asked.route === 'application-keys.create';

/**
 * The query of the last list request, kept in one place for every request (a module's variable
 * in a real service) and read back after a short wait: a list request that overlaps another in
 * time is served with the later one's parameters (the shared-query-under-load fault).
 */
export function sharedQuery(waitMs: number): Around {
  return {
    fresh() {
      let last: URLSearchParams | undefined;
      return {
        async hold(held) {
          if (!isList(held)) return;
          last = held.query;
          await sleep(waitMs);
        },
        query: (q) => last ?? q,
      };
    },
  };
}

/**
 * A lock that answers 500 instead of waiting: a list read while another read of the same list
 * is under way, or a write while another write is, fails (the lock-500 fault). Each holds the
 * lock `holdMs`.
 */
export function lock500(holdMs: number): Around {
  return {
    fresh() {
      const busy = new Set<string>();
      return {
        async hold(held) {
          const key = isList(held) ? `list ${held.path}` : held.asked.method === 'GET' ? undefined : 'write';
          if (key === undefined) return;
          if (busy.has(key)) throw new HttpError(500, 'Lock wait failed: another request holds the lock; try again.');
          busy.add(key);
          await sleep(holdMs);
          busy.delete(key);
        },
      };
    },
  };
}
