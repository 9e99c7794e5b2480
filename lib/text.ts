// Text that came from a target, made safe to show: a body can hold terminal escape sequences
// (ESC [ ... that recolour, move the cursor or retitle the window), bidirectional overrides
// that reorder what a reader sees, or a whole HTML page. Shown as escapes, or in one line.

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
