// Traversals of a whole collection: by offset (page[offset] in steps of 100) and keyset-style
// (contract, "Keyset-style traversal"). Each is bounded by a share of the operation's request
// budget, stops at once on a page that does not advance, and says how far it got.
import type { CheckContext } from '../../lib/check.js';
import type { Endpoint } from '../../lib/catalog.js';
import { fail } from '../../lib/expect.js';
import { CheckSkip } from '../../lib/outcome.js';
import { BudgetSpent, pagination, readPage, type ListPage, type Params, type Rec } from './pages.js';

export const PAGE = 100;
export const HARD_OFFSET_LIMIT = 10_000;
export type Attr = 'id' | 'created_at' | 'updated_at';

export interface Walk {
  /** Records in the order read, duplicates included. */
  records: Rec[];
  pages: ListPage[];
  /** The traversal reached its end (an empty or short page). */
  complete: boolean;
  /** Why it stopped. */
  stop: string;
  /** The traversal failed: a page that was not a list, or a page that did not advance. */
  broken?: { message: string; page: ListPage };
  /** The traversal could not go on for a reason that is not the target's fault (a skip). */
  untestable?: string;
}

function cap(ctx: CheckContext): number {
  // Seven traversals share an operation's budget; keep room for the single requests.
  return Math.max(2, Math.floor(pagination(ctx).budget / 8));
}

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
  const key = (x: string | number): string => String(x).toLowerCase().replace(/[^a-z0-9]/g, '');
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

function raw(r: Rec, attr: Attr): string | undefined {
  return attr === 'id' ? r.id : attr === 'created_at' ? r.createdRaw : r.updatedRaw;
}

/**
 * Offset traversal, `sort` or the default order, optionally filtered. The second page starts
 * inside the first run of records tied on the sorted timestamp (created_at when the order is
 * not by a timestamp) that the first page shows, so a page boundary splits a tie on a list of
 * any size and wherever its ties sit: where a target orders tied records differently from one
 * request to the next, or a filter loses the offset, records repeat or go missing there.
 */
export function offsetWalk(ctx: CheckContext, e: Endpoint, path: string, sort?: string, filter?: string): Promise<Walk> {
  return ctx.shared(`walk offset ${path} sort=${sort ?? ''} filter=${filter ?? ''}`, async () => {
    const walk: Walk = { records: [], pages: [], complete: false, stop: '' };
    const seen = new Set<string>();
    const base: Params = { ...(sort ? { sort } : {}), ...(filter ? { filter } : {}) };
    const tieAttr: Attr = sort === 'updated_at' ? 'updated_at' : 'created_at';
    for (let offset = 0; ; ) {
      if (e.hardOffsetLimit && offset > HARD_OFFSET_LIMIT) {
        walk.stop = `stopped at the hard offset limit (${HARD_OFFSET_LIMIT}) after ${walk.records.length} records`;
        return walk;
      }
      if (walk.pages.length >= cap(ctx)) {
        walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${walk.records.length} records)`;
        return walk;
      }
      let page: ListPage;
      try {
        page = await readPage(ctx, e, path, { ...base, 'page[limit]': PAGE, ...(offset ? { 'page[offset]': offset } : {}) });
      } catch (err) {
        if (!(err instanceof BudgetSpent)) throw err;
        walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${walk.records.length} records)`;
        return walk;
      }
      walk.pages.push(page);
      if (!page.ok && offset > HARD_OFFSET_LIMIT && page.res.status >= 400 && page.res.status < 500) {
        // Past the soft offset limit the contract does not say what happens: a refusal there
        // ends the walk, unfinished, and is no failure.
        walk.stop = `stopped past the soft offset limit: offset ${offset} answered ${page.res.status} after ${walk.records.length} records`;
        return walk;
      }
      if (!page.ok) {
        walk.broken = { message: `page at offset ${offset} answered ${page.res.status} without a list`, page };
        walk.stop = walk.broken.message;
        return walk;
      }
      if (page.records.length > 0 && page.records.every((r) => seen.has(r.id))) {
        walk.broken = { message: `the page at offset ${offset} does not advance: all ${page.records.length} of its records were on earlier pages (${page.records.slice(0, 3).map((r) => r.id).join(', ')}…)`, page };
        walk.stop = walk.broken.message;
        return walk;
      }
      // On a list with the hard offset limit, offsets stay multiples of 100 so that the last
      // page the limit allows (offset 10,000) is still read; keyset walks split ties there.
      const split = offset === 0 && !e.hardOffsetLimit ? firstPageAcrossTie(page.records, tieAttr) : PAGE;
      const taken = split < page.records.length ? page.records.slice(0, split) : page.records;
      for (const r of taken) seen.add(r.id);
      walk.records.push(...taken);
      if (taken.length === page.records.length && page.records.length < PAGE) {
        walk.complete = true;
        walk.stop = `reached the end after ${walk.pages.length} pages (${walk.records.length} records)`;
        return walk;
      }
      offset += taken.length;
    }
  });
}

/**
 * The length of a keyset walk's first page that ends inside the first run of records tied on
 * `attr` in `sorted` (records sorted by it): a tie then straddles a page boundary however
 * small the list, which is where a target that reads ge as gt loses records.
 */
export function firstPageAcrossTie(sorted: readonly Rec[], attr: Attr): number {
  const i = sorted.findIndex((r, k) => k + 1 < sorted.length && value(r, attr) !== undefined && value(r, attr) === value(sorted[k + 1]!, attr));
  return i >= 0 && i + 1 <= PAGE ? i + 1 : PAGE;
}

/**
 * Keyset traversal by `attr`: the first page with sort=attr, then filter=gt(id,last) for ids
 * and filter=ge(attr,last) for timestamps (the boundary records come again and are dropped);
 * when a whole page shares one timestamp, page[offset] within that value (the contract's rule).
 */
export function keysetWalk(ctx: CheckContext, e: Endpoint, path: string, attr: Attr, firstPage = PAGE): Promise<Walk> {
  return ctx.shared(`walk keyset ${path} ${attr} first=${firstPage}`, async () => {
    const walk: Walk = { records: [], pages: [], complete: false, stop: '' };
    const seen = new Set<string>();
    let params: Params = { sort: attr, 'page[limit]': firstPage };
    for (;;) {
      if (walk.pages.length >= cap(ctx)) {
        walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${seen.size} records)`;
        return walk;
      }
      let page: ListPage;
      try {
        page = await readPage(ctx, e, path, params);
      } catch (err) {
        if (!(err instanceof BudgetSpent)) throw err;
        walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${seen.size} records)`;
        return walk;
      }
      walk.pages.push(page);
      if (!page.ok) {
        walk.broken = { message: `a keyset page answered ${page.res.status} without a list`, page };
        walk.stop = walk.broken.message;
        return walk;
      }
      if (page.records.length === 0) {
        walk.complete = true;
        walk.stop = `reached an empty page after ${walk.pages.length} pages (${seen.size} records)`;
        return walk;
      }
      const fresh = page.records.filter((r) => !seen.has(r.id));
      walk.records.push(...page.records);
      for (const r of fresh) seen.add(r.id);
      const last = page.records.at(-1)!;
      const lastRaw = raw(last, attr);
      if (lastRaw === undefined || value(last, attr) === undefined) {
        // Where the catalog says the value lives, this record has none (or no date): the
        // target may keep it elsewhere (a catalog override says where). Not testable, as the
        // sort and filter checks say in the same situation.
        walk.untestable = `not testable: record ${last.id} has no parseable ${attr} at ${attr === 'id' ? e.record.id : e.record[attr]} to continue the keyset traversal from (set operations.${e.operation}.record in conformance.config.yaml)`;
        walk.stop = walk.untestable;
        return walk;
      }
      if (fresh.length === 0) {
        const withinValue = typeof params['page[offset]'] === 'number';
        const allTied = page.records.every((r) => value(r, attr) === value(last, attr));
        if (attr === 'id' || withinValue || !allTied) {
          walk.broken = { message: `the keyset page does not advance: all ${page.records.length} record(s) were read before: ${page.records.slice(0, 5).map((r) => r.id).join(', ')}`, page };
          walk.stop = walk.broken.message;
          return walk;
        }
      }
      if (attr === 'id') {
        params = { sort: attr, filter: `gt(id,${lastRaw})`, 'page[limit]': PAGE };
      } else {
        // A page that is one tie group: go on by offset within that value.
        const allTied = value(page.records[0]!, attr) === value(last, attr);
        const tiedSeen = new Set(walk.records.filter((r) => value(r, attr) === value(last, attr)).map((r) => r.id)).size;
        params = { sort: attr, filter: `ge(${attr},${lastRaw})`, 'page[limit]': PAGE, ...(allTied ? { 'page[offset]': tiedSeen } : {}) };
      }
    }
  });
}

/**
 * Fails the check when a walk broke, with the page that broke it as evidence; skips it when the
 * walk read no page at all (the budget was spent before it started).
 */
export function expectWalked(walk: Walk, what: string): void {
  if (walk.pages.length === 0) throw new CheckSkip(`not testable: ${what} read no page (${walk.stop})`);
  if (walk.broken) {
    fail(`${what}: ${walk.broken.message}`, { expected: 'every page a list that moves past the records already read', actual: walk.broken.message, res: walk.broken.page.res });
  }
}
