// Secrets are masked by value, not by header name: a token echoed back in a body, or a
// client_secret quoted in an error message, is masked wherever it appears. Each area's checks
// mask what they record with what they know; the CLI's main process learns what every area
// learned (suites/register.ts, lib/vitest/vitest-run.ts) and masks the whole report with all of it
// before any renderer escapes a character: one registry for the run's outputs.
//
// A target may write a secret in any spelling its encoders produce: a JSON encoder may escape
// any character as \uXXXX, in either case (.NET writes + as \u002B, Go writes < as \u003c), or /
// as \/ (PHP), maybe under several layers of JSON; a URL or form encoder percent-escapes bytes in
// either case and writes a space as +; an HTML page writes character references, numbered or
// named (&lt; &gt; &amp; &quot; &apos;); a Basic credential or a token carries it in base64 at
// any offset. So a text is read as a reader of each encoding would read it (readings below), the
// secrets are looked for in those readings, and what they were written as in the text is masked;
// their base64 forms are looked for as written. Besides values, the value of any `client_secret`
// member is masked whatever its length.
export const MASK = '***';

/** Shorter secrets are masked only where they stand alone (not inside a longer word or number). */
const SHORT = 4;

const JSON_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** The named references HTML escapers write (PHP's htmlspecialchars, Rails' h, Django's escape). */
const HTML_NAMED = /^&(lt|gt|amp|quot|apos);/;
const HTML_NAMED_CHARS: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** The value of a hex digit's character code (isHex). */
function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 0x20) - 87;
}

/** The hex digits of `s` at [i, i + n) as a number (each isHex). */
function hexAt(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) v = v * 16 + hexValue(s.charCodeAt(k));
  return v;
}

/**
 * A text as a decoder read it, with where each stretch of it came from: `at` is where each
 * piece starts in the reading, `from`/`to` the span of the text below it came from, and `same`
 * whether the piece is that span as it is (an escape decoded is one piece for its span).
 */
interface Reading {
  text: string;
  at: number[];
  from: number[];
  to: number[];
  same: boolean[];
  /** The reading this one was read from (absent: the original text). */
  under?: Reading;
}

/** The span of the original text that a reading's characters [i, j) came from. */
function spanOf(r: Reading, i: number, j: number): [number, number] {
  const piece = (k: number): number => {
    let lo = 0;
    let hi = r.at.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (r.at[mid]! <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const a = piece(i);
  const b = piece(j - 1);
  let start = r.same[a] ? r.from[a]! + (i - r.at[a]!) : r.from[a]!;
  let end = r.same[b] ? r.from[b]! + (j - r.at[b]!) : r.to[b]!;
  if (r.under) [start, end] = spanOf(r.under, start, end);
  return [start, end];
}

/** Where a decoder may change something: the start of an escape of one of the encodings read. */
const INTRODUCER = /[\\%&]/g;
const INTRODUCER_OR_PLUS = /[\\%&+]/g;
const AMPERSAND = /&/g;

/**
 * How a decoder reads: every encoding at once, the same with + as a form's space, or HTML alone
 * (a backslash before an attribute's closing quote is no JSON escape).
 */
type Decoder = 'all' | 'form' | 'html';
const INTRODUCERS: Record<Decoder, RegExp> = { all: INTRODUCER, form: INTRODUCER_OR_PLUS, html: AMPERSAND };

/**
 * `s` read once as a JSON string, a URL and an HTML text would be (a \uXXXX escape in either
 * case, \/ and the other short escapes, %XX runs as UTF-8, character references; the 'form'
 * decoder reads + as a space too, the 'html' one reads only references); undefined when nothing
 * in `s` is an escape. Text between escapes is copied in one piece.
 */
function decode(s: string, decoder: Decoder, under?: Reading): Reading | undefined {
  const re = INTRODUCERS[decoder];
  re.lastIndex = 0;
  let text = '';
  const at: number[] = [];
  const from: number[] = [];
  const to: number[] = [];
  const same: boolean[] = [];
  let copied = 0;
  let changed = false;
  const piece = (chars: string, a: number, b: number, asIs: boolean): void => {
    if (!chars.length) return;
    at.push(text.length);
    from.push(a);
    to.push(b);
    same.push(asIs);
    text += chars;
  };
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const i = m.index;
    const c = s[i]!;
    const n = s[i + 1];
    let chars: string | undefined;
    let end = i;
    if (c === '\\' && n === 'u' && isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3)) && isHex(s.charCodeAt(i + 4)) && isHex(s.charCodeAt(i + 5))) {
      chars = String.fromCharCode(hexAt(s, i + 2, 4));
      end = i + 6;
    } else if (c === '\\' && n !== undefined && JSON_ESCAPES[n] !== undefined) {
      chars = JSON_ESCAPES[n]!;
      end = i + 2;
    } else if (c === '%' && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2))) {
      // A run of percent escapes is one UTF-8 sequence (or several): decoded together.
      const bytes: number[] = [];
      let ascii = true;
      end = i;
      while (s.charCodeAt(end) === 37 && isHex(s.charCodeAt(end + 1)) && isHex(s.charCodeAt(end + 2))) {
        const b = hexAt(s, end + 1, 2);
        bytes.push(b);
        ascii &&= b < 0x80;
        end += 3;
      }
      // ASCII (a query's brackets) is its own UTF-8; a long run goes through a buffer (no
      // call takes a million arguments).
      chars = ascii && bytes.length <= 1024 ? String.fromCharCode(...bytes) : Buffer.from(bytes).toString('utf8');
    } else if (c === '+') {
      chars = ' ';
      end = i + 1;
    } else if (c === '&' && n === '#') {
      const ref = /^&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));/.exec(s.slice(i, i + 12));
      const cp = ref ? parseInt(ref[1] ?? ref[2]!, ref[1] ? 16 : 10) : NaN;
      if (ref && cp <= 0x10ffff) {
        chars = String.fromCodePoint(cp);
        end = i + ref[0].length;
      }
    } else if (c === '&') {
      const ref = HTML_NAMED.exec(s.slice(i, i + 6));
      if (ref) {
        chars = HTML_NAMED_CHARS[ref[1]!]!;
        end = i + ref[0].length;
      }
    }
    if (chars === undefined) continue;
    piece(s.slice(copied, i), copied, i, true);
    piece(chars, i, end, false);
    copied = end;
    re.lastIndex = end;
    changed = true;
  }
  if (!changed) return undefined;
  piece(s.slice(copied), copied, s.length, true);
  return { text, at, from, to, same, ...(under ? { under } : {}) };
}

/**
 * The ways to read `text` besides as it is: decoded once, decoded twice (a JSON string inside
 * another, a URL inside JSON), as a form (+ for a space), and as HTML alone where a backslash
 * could be read as a JSON escape that is none.
 */
function readings(text: string): Reading[] {
  const out: Reading[] = [];
  const once = decode(text, 'all');
  if (once) {
    out.push(once);
    const twice = decode(once.text, 'all', once);
    if (twice) out.push(twice);
  }
  if (text.includes('+')) {
    const form = decode(text, 'form');
    if (form) out.push(form);
  }
  if (text.includes('\\') && text.includes('&')) {
    const html = decode(text, 'html');
    if (html) out.push(html);
  }
  return out;
}

/**
 * The runs of base64 (and base64url) characters a secret's bytes always produce, wherever they
 * sit in a longer encoded text (a Basic credential `id:secret`, a token that embeds it): one per
 * offset of its first byte modulo 3, without the characters its neighbours share; and its whole
 * encoding, padded.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out = new Set<string>([bytes.toString('base64'), bytes.toString('base64url')]);
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const core = b64.slice(Math.ceil((k * 8) / 6), Math.floor(((k + bytes.length) * 8) / 6));
    // Fewer characters than that would turn up by chance in any base64 text.
    if (core.length < 4) continue;
    out.add(core);
    out.add(core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * The member `client_secret` and its string value, its name maybe \u-escaped: in JSON, in JSON
 * inside a JSON string (its quotes escaped), or as client_secret=value in a form or a query.
 */
const MEMBER = (() => {
  const hex = (c: string): string => [...c.charCodeAt(0).toString(16).padStart(4, '0')].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
  const name = [...'client_secret'].map((c) => `(?:${c}|\\\\+u${hex(c)})`).join('');
  const plain = `("${name}"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)"`;
  const nested = `(\\\\+"${name}\\\\+"\\s*:\\s*\\\\+")((?:[^"\\\\]|\\\\{2,}[^\\\\]|\\\\[^"\\\\])*)\\\\+"`;
  const form = `(${name}(?:=|%3[dD]))([^&\\s"'<>]*)`;
  return new RegExp(`${plain}|${nested}|${form}`, 'g');
})();

function escapeRegExp(v: string): string {
  return v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9]/.test(c);
}

/**
 * Where any of a set of strings (at least SHORT characters each) starts in a text: a rolling hash
 * of their shortest length over the text, and each place whose hash is one of theirs read as
 * written. One pass over a text for every secret and every base64 form of one (an alternation of
 * them all in one regular expression tries each at every place).
 */
class Finder {
  /** The window hashed: the shortest string's length. */
  readonly #k: number;
  /** B^(k-1), to take the character leaving the window out of the hash. */
  readonly #out: number;
  /** The strings by the hash of their first k characters, longest first. */
  readonly #byHash = new Map<number, string[]>();
  /** Bit h & 0xffff set where some string's hash h is: most places are passed over with no lookup. */
  readonly #seen = new Uint8Array(1 << 13);

  constructor(strings: readonly string[]) {
    this.#k = Math.min(...strings.map((x) => x.length));
    let out = 1;
    for (let i = 1; i < this.#k; i++) out = Math.imul(out, HASH_BASE);
    this.#out = out;
    for (const x of [...strings].sort((a, b) => b.length - a.length)) {
      const h = hashOf(x, this.#k);
      this.#seen[(h & 0xffff) >>> 3]! |= 1 << (h & 7);
      const same = this.#byHash.get(h);
      if (same) same.push(x);
      else this.#byHash.set(h, [x]);
    }
  }

  /** Calls `found` with the span of the longest string that starts at each place of `text` before `limit`, in order. */
  each(text: string, limit: number, found: (i: number, j: number) => void): void {
    const k = this.#k;
    const last = Math.min(text.length - k, limit - 1);
    if (last < 0) return;
    const seen = this.#seen;
    const out = this.#out;
    let h = hashOf(text, k);
    for (let i = 0; ; i++) {
      if (seen[(h & 0xffff) >>> 3]! & (1 << (h & 7))) {
        for (const x of this.#byHash.get(h) ?? []) {
          if (text.startsWith(x, i)) {
            found(i, i + x.length);
            break;
          }
        }
      }
      if (i === last) return;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), out), HASH_BASE) + text.charCodeAt(i + k)) | 0;
    }
  }
}

/** Any odd multiplier: the hash is a polynomial in it, modulo 2^32. */
const HASH_BASE = 0x01000193;

function hashOf(s: string, k: number): number {
  let h = 0;
  for (let i = 0; i < k; i++) h = (Math.imul(h, HASH_BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/** The searches for a set of secrets, made once per set: each reading is scanned once, not once per secret. */
interface Search {
  /** The values of SHORT characters or more, looked for in every reading of a text. */
  values?: Finder;
  /** Those values and their base64 forms, looked for in the text as it is. */
  asWritten?: Finder;
  /** The values under SHORT characters, longest first: masked only where they stand alone. */
  short?: RegExp;
  /** The longest secret, in characters. */
  longest: number;
}

/** What Secrets.mask keeps: texts up to this long (a message's headers), this many. */
const MEMO_LENGTH = 1024;
const MEMO_TEXTS = 256;

export class Secrets {
  readonly #values = new Set<string>();
  #search: Search | undefined;
  /**
   * Short texts masked with the secrets known now, by text: a run sends the same request
   * headers thousands of times, and many answers' headers alike. Emptied when a secret comes.
   */
  readonly #masked = new Map<string, string>();

  /** Registers a value to mask, of any length (one under 4 characters is masked only where it stands alone). */
  add(value: string | undefined | null): void {
    if (typeof value !== 'string' || value.length === 0 || this.#values.has(value)) return;
    this.#values.add(value);
    this.#search = undefined;
    this.#masked.clear();
  }

  /** The values registered, as given (to hand on to the process that writes the reports). */
  values(): string[] {
    return [...this.#values];
  }

  /**
   * Registers every string found under a key named client_secret, at any depth, in a parsed
   * JSON body, whatever its length. `text` (the body as sent) lets a body that cannot hold that
   * key go unwalked: JSON spells a key either as is or with \u escapes.
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

  #searchFor(): Search | undefined {
    if (this.#search || this.#values.size === 0) return this.#search;
    const sorted = [...this.#values].sort((a, b) => b.length - a.length);
    const long = sorted.filter((v) => v.length >= SHORT);
    const short = sorted.filter((v) => v.length < SHORT);
    const forms = [...new Set([...long, ...long.flatMap(base64Forms)])];
    this.#search = {
      ...(long.length ? { values: new Finder(long), asWritten: new Finder(forms) } : {}),
      ...(short.length ? { short: new RegExp(short.map(escapeRegExp).join('|'), 'g') } : {}),
      longest: sorted[0]!.length,
    };
    return this.#search;
  }

  /** The spans of `text` to mask that start before `limit`: secrets in any spelling, and client_secret values. */
  #hits(text: string, limit: number): Array<[number, number]> {
    const hits: Array<[number, number]> = [];
    if (text.includes('secret') || text.includes('\\u')) {
      MEMBER.lastIndex = 0;
      for (let m = MEMBER.exec(text); m && m.index < limit; m = MEMBER.exec(text)) {
        const lead = (m[1] ?? m[3] ?? m[5])!.length;
        const value = (m[2] ?? m[4] ?? m[6])!;
        if (value.length) hits.push([m.index + lead, m.index + lead + value.length]);
      }
    }
    const search = this.#searchFor();
    if (!search) return hits;
    // Every match, overlapping ones too (a secret may begin inside another). A short value
    // counts only where it stands alone; a longer one found at the same place covers it.
    const shortOnes = (read: string, found: (i: number, j: number) => void): void => {
      const re = search.short;
      if (!re) return;
      re.lastIndex = 0;
      for (let m = re.exec(read); m; m = re.exec(read)) {
        const [i, j] = [m.index, m.index + m[0].length];
        if (!isWordChar(read[i - 1]) && !isWordChar(read[j])) found(i, j);
        re.lastIndex = m.index + 1;
      }
    };
    const inText = (i: number, j: number): void => {
      if (i < limit) hits.push([i, j]);
    };
    search.asWritten?.each(text, limit, inText);
    shortOnes(text, inText);
    for (const r of readings(text)) {
      const inReading = (i: number, j: number): void => {
        const span = spanOf(r, i, j);
        if (span[0] < limit) hits.push(span);
      };
      // A reading is no longer than the text below it: what starts at `limit` or later in it does there too.
      search.values?.each(r.text, limit, inReading);
      shortOnes(r.text, inReading);
    }
    return hits;
  }

  /** `text` with every span of `hits` before `limit` masked, cut at `limit`; a secret that starts before it is masked whole. */
  #apply(text: string, hits: Array<[number, number]>, limit: number): string {
    if (hits.length === 0) return text.length <= limit ? text : text.slice(0, limit);
    hits.sort((a, b) => a[0] - b[0]);
    let out = '';
    let pos = 0;
    for (const [from, to] of hits) {
      // A span overlapping one already masked widens that mask.
      if (from >= pos) out += text.slice(pos, from) + MASK;
      pos = Math.max(pos, to);
    }
    return pos < limit ? out + text.slice(pos, limit) : out;
  }

  /** Every secret in `text`, in any spelling, and every client_secret member's value, replaced by MASK. */
  mask(text: string): string {
    if (text.length > MEMO_LENGTH) return this.#apply(text, this.#hits(text, text.length), text.length);
    let masked = this.#masked.get(text);
    if (masked === undefined) {
      if (this.#masked.size >= MEMO_TEXTS) this.#masked.clear();
      masked = this.#apply(text, this.#hits(text, text.length), text.length);
      this.#masked.set(text, masked);
    }
    return masked;
  }

  /**
   * The first `max` characters of `text`, masked: a secret that starts among them is masked
   * whole, even where it runs past them, so no part of one shows. Only the head of the text is
   * read: an excerpt of a long body costs what the excerpt does, not what the body does. The
   * excerpt is a copy that holds nothing of `text`, which can be collected while it is kept.
   */
  maskedHead(text: string, max: number): string {
    // Far enough past the cut for any spelling of the longest secret (up to 12 characters for
    // each of its own, as %XX escapes of four bytes) or a client_secret member to be read whole.
    const longest = this.#searchFor()?.longest ?? 0;
    const head = text.slice(0, max + Math.max(512, 16 * longest));
    return detached(this.#apply(head, this.#hits(head, max), max));
  }

  /**
   * Several texts masked at once (the values of a message's headers): one search instead of
   * one per text. A mask that would run across two of them is not possible: each is then masked alone.
   */
  maskAll(texts: readonly string[]): string[] {
    if (texts.length < 2) return texts.map((t) => this.mask(t));
    const SEP = '\u0000\n\u0000';
    const joined = texts.join(SEP);
    const masked = this.mask(joined);
    if (masked === joined) return [...texts];
    const parts = masked.split(SEP);
    return parts.length === texts.length ? parts : texts.map((t) => this.mask(t));
  }

  /** Every string in a JSON-like value masked (a copy), and any client_secret member's value: the report, before it is rendered. */
  maskDeep<T>(value: T): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (Array.isArray(value)) return (value as unknown[]).map((v) => this.maskDeep(v)) as T;
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'client_secret' && typeof v === 'string' ? MASK : this.maskDeep(v)])) as T;
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
