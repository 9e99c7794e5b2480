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

  /**
   * Registers every string found under a key named client_secret, at any depth, in a parsed
   * JSON body. `text` (the body as sent) lets a body that cannot hold that key go unwalked: JSON
   * spells a key either as is or with \u escapes.
   */
  addFromBody(value: unknown, text?: string): void {
    if (text !== undefined && !text.includes('client_secret') && !text.includes('\\u')) return;
    if (Array.isArray(value)) {
      for (const v of value) this.addFromBody(v);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'client_secret' && typeof v === 'string') this.add(v);
        else this.addFromBody(v);
      }
    }
  }

  /**
   * The first `max` characters of `text`, masked: a secret that starts among them is masked
   * whole, even where it runs past them, so no part of one shows. Only the head of the text is
   * read: an excerpt of a long body costs what the excerpt does, not what the body does. The
   * excerpt is a copy that holds nothing of `text`, which can be collected while it is kept.
   */
  maskedHead(text: string, max: number): string {
    this.#sorted ??= [...this.#spelled].sort((a, b) => b.length - a.length);
    const head = text.slice(0, max + (this.#sorted[0]?.length ?? 0));
    const hits: Array<[number, number]> = [];
    for (const s of this.#sorted) for (let i = head.indexOf(s); i >= 0 && i < max; i = head.indexOf(s, i + 1)) hits.push([i, i + s.length]);
    if (hits.length === 0) return detached(head.slice(0, max));
    hits.sort((a, b) => a[0] - b[0]);
    let out = '';
    let pos = 0;
    for (const [from, to] of hits) {
      // A secret overlapping one already masked widens that mask.
      if (from >= pos) out += head.slice(pos, from) + MASK;
      pos = Math.max(pos, to);
    }
    return detached(pos < max ? out + head.slice(pos, max) : out);
  }

  mask(text: string): string {
    // Longest first, so a secret that contains another is masked whole.
    this.#sorted ??= [...this.#spelled].sort((a, b) => b.length - a.length);
    let out = text;
    // Every request masks its URL and headers: a search that finds nothing allocates nothing.
    for (const s of this.#sorted) if (out.includes(s)) out = out.split(s).join(MASK);
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

/**
 * A string with its own characters. V8 keeps a slice of a long string as a view into it: an
 * excerpt of 600 characters kept with a page's evidence would hold the page's whole body (tens
 * of kilobytes, thousands of pages in a run) for as long as the evidence lives. UTF-16 both ways
 * copies every code unit as it is, lone surrogates included.
 */
function detached(s: string): string {
  return Buffer.from(s, 'utf16le').toString('utf16le');
}
