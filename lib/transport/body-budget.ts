// One memory budget for the response bodies being read at once in the process
// (lib/transport/http.ts).

/**
 * The bytes of response bodies held at once by every client of the process. Fixed, not a
 * multiple of maxBodyBytes: the oldest body being read may always go past it (so any body up
 * to maxBodyBytes is read, and no reader waits on another that waits on it), so the memory the
 * bodies take is at most this plus one body at the cap (and a chunk, 64 KiB, per reader),
 * whatever --max-body-bytes is; a multiple of the cap would let a raised cap (up to 512 MiB)
 * bring back what the budget is for. At the default 16 MiB cap, 16 bodies at the cap are read
 * side by side; real pages are far smaller, and never wait.
 */
export const BODY_BUDGET_BYTES = 256 * 1024 * 1024;

/** One response body being read, as the body budget sees it. */
interface BodyHold {
  bytes: number;
  /** Set while the reader is paused: lets it read on. */
  wake?: () => void;
}

/**
 * One budget for the bytes of every response body being read at once (one per process by
 * default: each area of a run has a client of its own, in one worker). A reader takes its
 * bytes chunk by chunk; when they pass the budget it pauses (the socket is no longer read, so
 * the target waits) until others finish and give theirs back. The oldest reader holding bytes
 * never pauses: some reader always goes on, so readers never wait on each other in a circle,
 * and a body larger than the whole budget is still read when it is the oldest.
 */
export class BodyBudget {
  static readonly shared = new BodyBudget(BODY_BUDGET_BYTES);
  readonly limit: number;
  #used = 0;
  /** The readers holding bytes, in the order they took their first (a Set keeps that order). */
  readonly #holders = new Set<BodyHold>();
  /** The readers paused, in the order they paused. */
  readonly #paused = new Set<BodyHold>();
  /** The most bytes held at once, and how many times a reader paused (for tests and measures). */
  peak = 0;
  pauses = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Bytes held now. */
  get used(): number {
    return this.#used;
  }

  /** A reader's account, empty. */
  open(): BodyHold {
    return { bytes: 0 };
  }

  /**
   * Counts `n` bytes more (a chunk already read) for `hold`. False when the reader must pause:
   * `wake` is called when it may read on.
   */
  take(hold: BodyHold, n: number, wake: () => void): boolean {
    hold.bytes += n;
    this.#used += n;
    this.#holders.add(hold);
    this.peak = Math.max(this.peak, this.#used);
    if (this.#used <= this.limit || this.#oldest() === hold) return true;
    hold.wake = wake;
    this.#paused.add(hold);
    this.pauses++;
    return false;
  }

  /** The reader is done (its body read, refused or failed): its bytes go back, and waiting readers may go on. */
  release(hold: BodyHold): void {
    this.#used -= hold.bytes;
    hold.bytes = 0;
    hold.wake = undefined;
    this.#holders.delete(hold);
    this.#paused.delete(hold);
    const oldest = this.#oldest();
    for (const h of [...this.#paused]) {
      if (this.#used > this.limit && h !== oldest) continue;
      this.#paused.delete(h);
      const wake = h.wake!;
      h.wake = undefined;
      wake();
    }
  }

  #oldest(): BodyHold | undefined {
    for (const h of this.#holders) return h;
    return undefined;
  }
}
