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

/** Ignoring case, as case-insensitive collations do (MySQL's default, SQL Server's). */
const caseInsensitiveOrder: Comparator = (a, b) => plainOrder(String(a).toLowerCase(), String(b).toLowerCase()) || plainOrder(a, b);

/** Letters and digits first, case and punctuation after, as glibc and ICU locale collations do (PostgreSQL's en_US). */
const localeOrder: Comparator = (a, b) => {
  const key = (x: string | number): string =>
    String(x)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '');
  return plainOrder(key(a), key(b)) || caseInsensitiveOrder(a, b);
};

/**
 * The order a server uses for `attr`. Timestamps compare as instants. Ids compare as the
 * server's database collates them: "sort by id" names no collation, so the records it sent
 * sorted by id are read in the first of these orders they follow: code units, numbers (for
 * ids made of digits), case-insensitive, locale (punctuation ignored). An order that fits none
 * of them (the insertion order of random ids, a descending one) is judged in code units.
 */
export function orderOf(records: readonly Rec[], attr: Attr): Comparator {
  if (attr !== 'id') return plainOrder;
  const digits = records.every((r) => /^\d+$/.test(r.id));
  const candidates = digits ? [plainOrder, numericOrder] : [plainOrder, caseInsensitiveOrder, localeOrder];
  const follows = (order: Comparator): boolean => records.every((r, i) => i === 0 || order(records[i - 1]!.id, r.id) <= 0);
  return candidates.find(follows) ?? plainOrder;
}

export function value(r: Rec, attr: Attr): string | number | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.created : r.updated;
}

/** The attribute as the server wrote it (a timestamp's text, not its instant). */
export function raw(r: Rec, attr: Attr): string | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw;
}
