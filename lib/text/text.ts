// Text: what came from a target, made safe to show (a body can hold terminal escape sequences,
// ESC [ ... that recolour, move the cursor or retitle the window, bidirectional overrides that
// reorder what a reader sees, or a whole HTML page: shown as escapes, or in one line); and the
// word a user most likely meant (did you mean ...?).

/** C0 and C1 control characters (tab, newline and carriage return included) and bidi controls. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The same, but for tab and newline: what a multi-line block (an HTML <pre>) may keep. */
const UNPRINTABLE_IN_BLOCK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const visible = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The text with every control character written as a visible \uXXXX escape: one line, inert. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, visible);
}

/** The text with every control character but tab and newline written as a visible \uXXXX escape: its lines kept, inert. */
export function inert(text: string): string {
  return text.replace(UNPRINTABLE_IN_BLOCK, visible);
}

/** Whether a body (or its excerpt) is an HTML page. */
export function isHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html[\s>])/i.test(text);
}

/**
 * One printable line for a body: an HTML page by its title, other text with its whitespace
 * folded. `whole`: the text is the whole body (not an excerpt), so its length can be told.
 */
export function gist(text: string, whole = true, max = 120): string {
  const title = isHtml(text) ? (/<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim() ?? '') : undefined;
  const line = printable(
    title !== undefined ? `an HTML page${title ? ` titled "${title}"` : ''}${whole ? ` (${text.length} characters)` : ''}` : text.replace(/\s+/g, ' ').trim(),
  );
  return line.length > max ? `${line.slice(0, max)}…` : line || '(empty)';
}

/**
 * Edit distance with adjacent transpositions counted as one edit (optimal string alignment):
 * `--reprot-dir` is one edit from `--report-dir`.
 */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate a mistyped `word` most likely meant, or undefined when none is close: at most
 * one edit in a short word, two from 6 characters, three from 12; or the start of exactly one
 * candidate (`--max-body` for `--max-body-bytes`). Case is ignored.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase().replace(/^-+/, '');
  if (!w) return undefined;
  const all = [...new Set(candidates)];
  const bare = (c: string): string => c.toLowerCase().replace(/^-+/, '');
  const allowed = w.length >= 12 ? 3 : w.length >= 6 ? 2 : 1;
  let best: { c: string; d: number } | undefined;
  for (const c of all) {
    const d = distance(w, bare(c));
    if (d <= allowed && d < (best?.d ?? Infinity)) best = { c, d };
  }
  if (best) return best.c;
  if (w.length < 3) return undefined;
  const starts = all.filter((c) => bare(c).startsWith(w));
  return starts.length === 1 ? starts[0] : undefined;
}

/** ` (did you mean X?)`, or nothing when no candidate is close. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string): string => s): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` (did you mean ${quote(c)}?)`;
}

/** A system error in a word: its code (ENOENT, EACCES, ECONNREFUSED) where it has one, else its message. */
export function errorWord(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : e instanceof Error ? e.message : String(e);
}
