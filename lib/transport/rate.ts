// A fixed cap on requests a second (--max-rate), for a staging service shared with others: sends
// are spaced evenly, 1/rate apart, with no burst. Nothing here reads a clock (see Limiter).

export class RateCap {
  readonly perSecond: number;
  readonly #gap: number;
  /** When the next send may go (the caller's clock, ms). */
  #next = -Infinity;

  constructor(perSecond: number) {
    this.perSecond = perSecond;
    this.#gap = 1000 / perSecond;
  }

  /** How long a send asked for at `now` waits (ms); its turn is taken, so the next one waits after it. */
  turn(now: number): number {
    const at = Math.max(now, this.#next);
    this.#next = at + this.#gap;
    return at - now;
  }
}
