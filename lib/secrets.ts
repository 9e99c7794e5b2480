// Secrets are masked by value, not by header name: a token echoed back in a body, or a
// client_secret quoted in an error message, is masked wherever it appears.
export const MASK = '***';

export class Secrets {
  readonly #values = new Set<string>();

  add(value: string | undefined | null): void {
    // Very short values would mask ordinary text ("a", "1"); a real token or secret is longer.
    if (typeof value === 'string' && value.length >= 4) this.#values.add(value);
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
    let out = text;
    // Longest first, so a secret that contains another is masked whole.
    for (const s of [...this.#values].sort((a, b) => b.length - a.length)) {
      out = out.split(s).join(MASK);
    }
    return out;
  }
}
