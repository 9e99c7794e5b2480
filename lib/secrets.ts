// Secrets are masked by value, not by header name: a token echoed back in a body, or a
// client_secret quoted in an error message, is masked wherever it appears. Each area's checks
// mask what they record with what they know; the CLI's main process learns what every area
// learned (suites/register.ts, lib/vitest-run.ts) and masks the whole report with all of it
// before any renderer escapes a character: one registry for the run's outputs.
export const MASK = '***';

/**
 * The ways a value can be spelled in what a target sends: as is, inside a JSON string (a `"`
 * or `\` escaped), with the characters some serialisers also escape (Go writes < > & as
 * \u003c, \u003e, \u0026), and percent-encoded in a URL.
 */
function spellings(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const unicode = json.replace(/[<>&'\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([value, json, unicode, encodeURIComponent(value)])];
}

export class Secrets {
  readonly #values = new Set<string>();
  readonly #spelled = new Set<string>();
  #sorted: string[] | undefined;

  add(value: string | undefined | null): void {
    // Very short values would mask ordinary text ("a", "1"); a real token or secret is longer.
    if (typeof value !== 'string' || value.length < 4 || this.#values.has(value)) return;
    this.#values.add(value);
    for (const s of spellings(value)) this.#spelled.add(s);
    this.#sorted = undefined;
  }

  /** The values registered, as given (to hand on to the process that writes the reports). */
  values(): string[] {
    return [...this.#values];
  }

  /** Registers every string found under a key named client_secret, at any depth. */
  addFromBody(value: unknown): void {
    if (Array.isArray(value)) {
      for (const v of value) this.addFromBody(v);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'client_secret' && typeof v === 'string') this.add(v);
        else this.addFromBody(v);
      }
    }
  }

  mask(text: string): string {
    // Longest first, so a secret that contains another is masked whole.
    this.#sorted ??= [...this.#spelled].sort((a, b) => b.length - a.length);
    let out = text;
    for (const s of this.#sorted) out = out.split(s).join(MASK);
    return out;
  }

  /** Every string in a JSON-like value masked (a copy): the report, before it is rendered. */
  maskDeep<T>(value: T): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.maskDeep(v)) as T;
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.maskDeep(v)])) as T;
    return value;
  }
}
