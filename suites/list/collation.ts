// The orders records of a list are compared in: timestamps as instants, ids as the server's
// database collates them (spec/contract/README.md#list-endpoints names no collation).
import type { Rec } from './pages.js';

/** A sortable attribute of a list record. */
export type Attr = 'id' | 'created_at' | 'updated_at';

export type Comparator = (a: string | number, b: string | number) => number;

/** Timestamps as instants (numbers), ids as strings. */
export const plainOrder: Comparator = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Ids made only of digits, as numbers. */
export const numericOrder: Comparator = (a, b) =>
  typeof a === 'string' && typeof b === 'string' && /^\d+$/.test(a) && /^\d+$/.test(b) ? a.length - b.length || plainOrder(a, b) : plainOrder(a, b);

/**
 * `f` of each id, made once: a prediction holds every record's id to a filter term under each
 * collation the target may use, and a sort compares each id many times. Bounded: a list of a
 * million records starts afresh every so often rather than holding a key per id.
 */
function keyed(f: (s: string) => string): (x: string | number) => string {
  const made = new Map<string, string>();
  return (x) => {
    const s = String(x);
    let k = made.get(s);
    if (k === undefined) {
      if (made.size >= 100_000) made.clear();
      made.set(s, (k = f(s)));
    }
    return k;
  };
}

const lower = keyed((s) => s.toLowerCase());

/** Ignoring case, as case-insensitive collations do (MySQL's default, SQL Server's). */
const caseInsensitiveOrder: Comparator = (a, b) => plainOrder(lower(a), lower(b)) || plainOrder(a, b);

/** An id as a locale collation weighs it first: letters and digits alone, in one case. */
const localeKey = keyed((s) => lower(s).replace(/[^a-z0-9]/g, ''));

/** Letters and digits first, case and punctuation after, as glibc and ICU locale collations do (PostgreSQL's en_US). */
const localeOrder: Comparator = (a, b) => plainOrder(localeKey(a), localeKey(b)) || caseInsensitiveOrder(a, b);

/**
 * `order(x, v)` for one `v` and many `x`, `v`'s keys made once: a filter term holds every record
 * of a model to one value under each collation the target may use.
 */
export function against(order: Comparator, v: string | number): (x: string | number) => number {
  if (order === caseInsensitiveOrder) {
    const lv = lower(v);
    return (x) => plainOrder(lower(x), lv) || plainOrder(x, v);
  }
  if (order === localeOrder) {
    const kv = localeKey(v);
    const lv = lower(v);
    return (x) => plainOrder(localeKey(x), kv) || plainOrder(lower(x), lv) || plainOrder(x, v);
  }
  return (x) => order(x, v);
}

/**
 * An id's length and every character of it that is not a lower-case letter or a digit, in its
 * place (a UUID's dashes); undefined for an id that changes in lower case. Two ids of one shape
 * are in the same order in every collation of ours as in code units: the first place they
 * differ holds a letter or a digit in both, which no collation ignores, folds or reads as a
 * number of another length.
 */
export function idShape(id: string): string | undefined {
  if (id !== id.toLowerCase()) return undefined;
  let shape = `${id.length}`;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 122))) shape += ` ${i}:${c}`;
  }
  return shape;
}

/**
 * The order a server uses for `attr`. Timestamps compare as instants. Ids compare as the
 * server's database collates them: "sort by id" names no collation, so the records it sent
 * sorted by id are read in the first of these orders they follow: code units, numbers (for
 * ids made of digits), case-insensitive, locale (punctuation ignored). An order that fits none
 * of them (the insertion order of random ids, a descending one) is judged in code units.
 */
export function orderOf(records: readonly Rec[], attr: Attr): Comparator {
  if (attr !== 'id') return plainOrder;
  return idOrdersFollowed(records)[0] ?? plainOrder;
}

/**
 * Every id collation of ours that records sent sorted by id follow, in orderOf's order: the
 * orders the contract allows the server. Each sorts those records alike; an id no record has
 * may fall elsewhere in each, so only what all of them agree on is judged of it.
 */
export function idOrdersFollowed(records: readonly Rec[]): Comparator[] {
  const digits = records.every((r) => /^\d+$/.test(r.id));
  const candidates = digits ? [plainOrder, numericOrder] : [plainOrder, caseInsensitiveOrder, localeOrder];
  return candidates.filter((order) => records.every((r, i) => i === 0 || order(records[i - 1]!.id, r.id) <= 0));
}

const DIGITS = '0123456789';
const HEX = '0123456789abcdef';
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * `id` one step up (`step` 1) or down (-1) in its last letter or digit, with carry, the length
 * and the kind of each character kept (hex ids stay hex: a UUID column refuses anything else);
 * ids of digits alone as numbers. Undefined where there is no such id (all nines, all zeros).
 */
export function stepId(id: string, step: 1 | -1, hex: boolean): string | undefined {
  if (/^\d+$/.test(id)) {
    const n = BigInt(id) + BigInt(step);
    return n < 0n ? undefined : String(n);
  }
  const chars = [...id];
  // Hex digits in the case the id writes its letters in (a digit stepped past 9 in an upper-case UUID is A).
  const upperHex = hex && /[A-F]/.test(id) && !/[a-f]/.test(id);
  for (let i = chars.length - 1; i >= 0; i--) {
    const c = chars[i]!;
    const lower = c.toLowerCase();
    const alphabet = hex && HEX.includes(lower) ? HEX : DIGITS.includes(c) ? DIGITS : LETTERS.includes(lower) ? LETTERS : undefined;
    if (!alphabet) continue;
    const cased = (alphabet === HEX ? upperHex : c !== lower) ? alphabet.toUpperCase() : alphabet;
    const k = cased.indexOf(c) + step;
    if (k >= 0 && k < cased.length) {
      chars[i] = cased[k]!;
      return chars.join('');
    }
    chars[i] = step > 0 ? cased[0]! : cased.at(-1)!;
  }
  return undefined;
}

export function value(r: Rec, attr: Attr): string | number | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.created : r.updated;
}

/** The attribute as the server wrote it (a timestamp's text, not its instant). */
export function raw(r: Rec, attr: Attr): string | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw;
}
