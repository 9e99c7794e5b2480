// The same request in other spellings: how client libraries write a list query where the suite
// writes literal brackets (URLSearchParams and most HTTP clients send `page%5Blimit%5D=5`),
// percent-encoded filter punctuation in either case of hex, `+` or `%20` for a space, the
// parameters in another order. Every mainstream parser reads them as the literal request
// (spec/contract/README.md#query-readings: PHP, Rack, Go's net/url, Django and qs all
// percent-decode names and values and read `+` as a space), so each answer is held to the
// literal spelling's rules (explore.ts: the spellings way of asking).
import fc from 'fast-check';
import { paramsOf, type ListQuery } from './model.js';

/** A character left as it is, or percent-encoded in upper-case hex (`%5B`) or lower (`%5b`). */
export type Hex = 'raw' | 'upper' | 'lower';

export interface Spelling {
  /** The brackets of page[limit] and page[offset]. */
  brackets: Hex;
  /** The filter's punctuation: `(`, `)`, `,` and `:`. */
  punctuation: Hex;
  /** A timestamp's T written as a space (RFC 3339 allows it), and how the space is sent. */
  space?: '+' | '%20';
  /** The parameters rotated by this many places. */
  order: number;
}

/**
 * Spellings as fast-check draws and shrinks them: each part toward the literal (brackets and
 * punctuation as they are, no space, the suite's order), so a shrunk request keeps only the
 * part of its spelling the answer depends on.
 */
export const spellingArbitrary: fc.Arbitrary<Spelling> = fc.record(
  {
    brackets: fc.constantFrom<Hex>('raw', 'upper', 'lower'),
    punctuation: fc.constantFrom<Hex>('raw', 'upper', 'lower'),
    space: fc.constantFrom<'+' | '%20'>('+', '%20'),
    order: fc.nat({ max: 3 }),
  },
  { requiredKeys: ['brackets', 'punctuation', 'order'] },
);

/** The literal request a spelling stands for: with `space`, each timestamp value's T a space (the same instant). */
export function spelledQuery(q: ListQuery, s: Spelling): ListQuery {
  if (!s.space) return q;
  return { ...q, filters: q.filters.map((t) => (t.attr === 'id' ? t : { ...t, value: t.value.replace(/^(\d{4}-\d{2}-\d{2})T/, '$1 ') })) };
}

const percent = (c: string, hex: Exclude<Hex, 'raw'>): string => {
  const code = `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  return hex === 'upper' ? code.toUpperCase() : code;
};

/** A name or value as sent: brackets and punctuation as the spelling says, a space as `+` or `%20`, anything else as encodeURIComponent writes it. */
function written(text: string, s: Spelling): string {
  let out = '';
  for (const c of text) {
    const hex = c === '[' || c === ']' ? s.brackets : '(),:'.includes(c) ? s.punctuation : undefined;
    if (hex !== undefined) out += hex === 'raw' ? c : percent(c, hex);
    else if (c === ' ') out += s.space ?? '%20';
    else out += encodeURIComponent(c);
  }
  return out;
}

/** The query string of `q` (the literal request, spelledQuery's) in spelling `s`, exactly as sent. */
export function spell(q: ListQuery, s: Spelling): string {
  const pairs = Object.entries(paramsOf(q)).map(([k, v]) => `${written(k, s)}=${written(String(v), s)}`);
  const k = pairs.length ? s.order % pairs.length : 0;
  return [...pairs.slice(k), ...pairs.slice(0, k)].join('&');
}
