// How many requests the run keeps in flight: a limit that follows the target's latency, as TCP
// Vegas and gradient concurrency limiters do. It starts low, grows while answers come about as
// fast as the target answered them unloaded, and shrinks as soon as they slow down, before any
// error: a service that queues requests past its own deadlines answers 500 well before it
// answers 429 or times out, and a 5xx fails the check that sent it
// (spec/contract/README.md#errors.no-5xx), so the suite's load must stay below that point.
// Latency is compared between comparable requests only (see latencyClass). Nothing here reads a
// clock: the HTTP client hands in what it measured, so tests drive it with made-up latencies.

/** Why the limit went down. */
export type BackoffCause = 'latency' | 'rate-limited' | 'timeout';

/** Where the limit starts when the ceiling is higher. */
export const START_LIMIT = 8;
/** An answer is no slower than unloaded while within this many times its class's baseline, plus ABSOLUTE_MS. */
const TOLERANCE = 2;
/** Jitter of a fast target (a 1 ms baseline, then 20 ms) and of this process's own busy moments is no climb. */
const ABSOLUTE_MS = 15;
/** A window's mean gradient below this shrinks the limit; at or above GROW_AT it may grow. */
const SHRINK_AT = 0.9;
const GROW_AT = 0.97;
/** The fewest judged answers a window holds before the limit moves. */
const MIN_WINDOW = 8;
/** The lowest gradient one answer counts for: one window at most halves the limit. */
const LOWEST_GRADIENT = 0.5;
/** Windows slow even at a limit of 1 after which the baselines are forgotten (see answered). */
const SLOW_ALONE = 4;

/**
 * The class of a request whose latencies are comparable: its method, its path with ids made a
 * template, its page length and page depth (by factors of 4), and the other query keys it has
 * (sort, filter, a cursor). A 100-record page 9,000 records deep is not a 1-record first page.
 */
export function latencyClass(method: string, path: string, query?: Record<string, string | number>): string {
  const template = path
    .split('/')
    .map((s) => (/^v\d+$/.test(s) || !/\d/.test(s) ? s : ':id'))
    .join('/');
  const q = query ?? {};
  const bucket = (v: string | number | undefined): number => (v === undefined ? -1 : Math.floor(Math.log2(Math.max(0, Number(v) || 0) + 1) / 2));
  const others = Object.keys(q)
    .filter((k) => k !== 'page[limit]' && k !== 'page[offset]')
    .sort()
    .join(',');
  return `${method} ${template} l${bucket(q['page[limit]'])} o${bucket(q['page[offset]'])} ${others}`;
}

export class Limiter {
  readonly ceiling: number;
  #limit: number;
  /** The limit's generation: answers to requests sent before it last went down say nothing of it. */
  #epoch = 0;
  /** No back-off yet: the limit doubles each window, else it grows by its square root. */
  #slowStart = true;
  /** Each class's lowest latency: what the target answers it in unloaded. */
  readonly #baseline = new Map<string, number>();
  /** The window: judged answers of the current generation, their gradients' sum, the most in flight. */
  #answers = 0;
  #gradients = 0;
  /** The same gradients without TOLERANCE: any climb at all ends the slow start, as in TCP Vegas. */
  #climbs = 0;
  #busiest = 0;
  /** The fastest answer of the run, and of the window: see answered. */
  #floor = Infinity;
  #fastest = Infinity;
  /** Answers of the window judged against their class's baseline. */
  #judged = 0;
  /** Windows in a row slow at a limit of 1. */
  #slowAlone = 0;
  readonly backoffs: Record<BackoffCause, number> = { latency: 0, 'rate-limited': 0, timeout: 0 };

  constructor(ceiling: number, start = START_LIMIT) {
    this.ceiling = ceiling;
    this.#limit = Math.max(1, Math.min(ceiling, start));
  }

  get limit(): number {
    return this.#limit;
  }

  get epoch(): number {
    return this.#epoch;
  }

  /**
   * An answer of class `cls` came `ms` after its request was sent, in generation `epoch`, with
   * `inFlight` requests in flight: the new limit if it moved, else undefined. An answer judged
   * against its own class's baseline gives a gradient: 1 while within the tolerance, lower as
   * it climbs; a window of them moves the limit by their mean. A class's first answer sets its
   * baseline and is not judged, so a slow kind of request appearing lowers nothing.
   */
  answered(cls: string, ms: number, epoch: number, inFlight: number): number | undefined {
    const base = this.#baseline.get(cls);
    if (base === undefined || ms < base) this.#baseline.set(cls, ms);
    this.#floor = Math.min(this.#floor, ms);
    if (epoch !== this.#epoch) return undefined;
    this.#answers++;
    this.#fastest = Math.min(this.#fastest, ms);
    this.#busiest = Math.max(this.#busiest, inFlight);
    if (base !== undefined) {
      const allowed = TOLERANCE * Math.min(base, ms) + ABSOLUTE_MS;
      this.#gradients += Math.max(LOWEST_GRADIENT, Math.min(1, allowed / ms));
      this.#climbs += Math.min(1, (Math.min(base, ms) + ABSOLUTE_MS) / ms);
      this.#judged++;
    }
    if (this.#answers < Math.max(MIN_WINDOW, this.#limit)) return undefined;
    // The window's fastest answer against the fastest of the run: a queue in front of the
    // target delays every request alike, whatever its class, so even the cheapest answer of a
    // full window comes late. A class first met under load has its baseline taken under load,
    // and says nothing: this does.
    const queued = Math.max(LOWEST_GRADIENT, Math.min(1, (TOLERANCE * this.#floor + ABSOLUTE_MS) / this.#fastest));
    const gradient = Math.min(queued, this.#judged ? this.#gradients / this.#judged : 1);
    const climbs = Math.min((this.#floor + ABSOLUTE_MS) / this.#fastest, this.#judged ? this.#climbs / this.#judged : 1);
    if (climbs < GROW_AT) this.#slowStart = false;
    const busy = this.#busiest >= this.#limit / 2;
    this.#resetWindow();
    if (gradient >= SHRINK_AT) this.#slowAlone = 0;
    if (gradient < SHRINK_AT) {
      if (this.#limit === 1) {
        // Slow even alone, for a while: the baselines are of another time (the target holds more records now).
        if (++this.#slowAlone >= SLOW_ALONE) {
          this.#baseline.clear();
          this.#floor = Infinity;
          this.#slowAlone = 0;
        }
        return undefined;
      }
      return this.#lower(Math.floor(this.#limit * gradient), 'latency');
    }
    // Grown only while the limit is used: a run that sends a few at a time learns nothing of more.
    if (gradient < GROW_AT || !busy || this.#limit >= this.ceiling) return undefined;
    this.#limit = Math.min(this.ceiling, this.#slowStart ? this.#limit * 2 : this.#limit + Math.max(1, Math.floor(Math.sqrt(this.#limit))));
    return this.#limit;
  }

  #resetWindow(): void {
    this.#answers = this.#judged = this.#gradients = this.#climbs = this.#busiest = 0;
    this.#fastest = Infinity;
  }

  /**
   * A 429 or a timeout of a request sent in generation `epoch` halves the limit, once per
   * generation: the new limit if it moved, else undefined.
   */
  backOff(cause: Exclude<BackoffCause, 'latency'>, epoch: number): number | undefined {
    if (epoch !== this.#epoch) return undefined;
    return this.#lower(Math.floor(this.#limit / 2), cause);
  }

  #lower(to: number, cause: BackoffCause): number | undefined {
    this.#slowStart = false;
    if (this.#limit === 1) return undefined;
    this.#limit = Math.max(1, to);
    this.#epoch++;
    this.#resetWindow();
    this.backoffs[cause]++;
    return this.#limit;
  }
}
