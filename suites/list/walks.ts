// Traversals of a whole collection by offset (page[offset] in steps of 100); the keyset-style
// ones are in keyset.ts, the orders records are compared in in collation.ts. Each traversal is
// bounded by a share of the operation's request budget, stops at once on a page that does not
// advance, and says how far it got.
import { type CheckContext, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { CheckSkip } from '../../lib/evidence/index.js';
import { value, type Attr } from './collation.js';
import { BudgetSpent, metaInt, pagination, readPage, readPagesAtOnce, type ListPage, type Params, type Rec } from './pages.js';

export const PAGE = 100;
export const HARD_OFFSET_LIMIT = 10_000;

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
  /**
   * It stopped at an offset limit the contract allows (the hard limit, or a refusal past record
   * 10,000): the rest of the list is for keyset traversal to read (keyset.ts reads to the end then).
   */
  limited?: boolean;
}

/** The most pages one traversal reads. */
export function cap(ctx: CheckContext): number {
  // Seven traversals share an operation's budget; keep room for the single requests.
  return Math.max(2, Math.floor(pagination(ctx).budget / 8));
}

/**
 * Offset traversal, `sort` or the default order, optionally filtered. The second page starts
 * inside the first run of records tied on the sorted timestamp (created_at when the order is
 * not by a timestamp) that the first page shows, so a page boundary splits a tie on a list of
 * any size and wherever its ties sit: where a target orders tied records differently from one
 * request to the next, or a filter loses the offset, records repeat or go missing there.
 *
 * The first page's meta.results.total says where every later page starts, so those pages are
 * asked for at once (the HTTP client bounds how many are in flight) and read in order, as a
 * client paging one at a time would: the walk takes two round trips, not one per page. Past
 * the total it goes on a page at a time until the end shows, so a total that is too small
 * costs time, never records.
 */
export function offsetWalk(ctx: CheckContext, e: Endpoint, path: string, sort?: string, filter?: string): Promise<Walk> {
  const key = walkKey(path, sort, filter);
  return ctx.shared(key, async () => {
    const progress = progressOf(ctx, key);
    try {
      return await walkOffsets(ctx, e, path, progress, sort, filter);
    } finally {
      progress.end();
    }
  });
}

function walkKey(path: string, sort: string | undefined, filter: string | undefined): string {
  return `walk offset ${path} sort=${sort ?? ''} filter=${filter ?? ''}`;
}

/** An offset walk under way: the records it has taken so far, in order, until it ends. */
export interface WalkProgress {
  readonly records: readonly Rec[];
  readonly ended: boolean;
  /** Resolves when the walk takes its next page's records, or ends. */
  next(): Promise<void>;
}

class Progress implements WalkProgress {
  readonly records: Rec[] = [];
  ended = false;
  #waiting: Array<() => void> = [];
  next(): Promise<void> {
    return this.ended ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }
  moved(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }
  end(): void {
    this.ended = true;
    this.moved();
  }
}

const progressBy = new WeakMap<object, Map<string, Progress>>();

/** The progress of the walk `key` of this run (and try: CheckContext.shared). */
function progressOf(ctx: CheckContext, key: string): Progress {
  let m = progressBy.get(ctx.run);
  if (!m) progressBy.set(ctx.run, (m = new Map<string, Progress>()));
  const k = `${key} ${ctx.attempt}`;
  let p = m.get(k);
  if (!p) m.set(k, (p = new Progress()));
  return p;
}

/**
 * How far offsetWalk(ctx, e, path, sort) has read, for work that can start on its first records
 * before it ends (keyset segments at cursors): only signals, so what that work sends is its own.
 */
export function walkProgress(ctx: CheckContext, path: string, sort?: string): WalkProgress {
  return progressOf(ctx, walkKey(path, sort, undefined));
}

async function walkOffsets(ctx: CheckContext, e: Endpoint, path: string, progress: Progress, sort?: string, filter?: string): Promise<Walk> {
  const walk: Walk = { records: progress.records, pages: [], complete: false, stop: '' };
  const seen = new Set<string>();
  const tieAttr: Attr = sort === 'updated_at' ? 'updated_at' : 'created_at';
  const limit = cap(ctx);
  const at = (offset: number): Params => walkPage(sort, filter, offset);
  const read = (offset: number): Promise<ListPage> => readPage(ctx, e, path, at(offset), 'walks');
  const cutShort = (): Walk => {
    walk.stop = `cut short by the request budget after ${walk.pages.length} pages (${walk.records.length} records)`;
    return walk;
  };
  /** Takes the page at `offset` into the walk; the next offset, or undefined when the walk ended. */
  const take = (page: ListPage, offset: number): number | undefined => {
    walk.pages.push(page);
    // On a list with the hard limit, a page that would reach past record 10,000 may be refused
    // too (a store that bounds offset + limit, as search engines do): the limit is stated in
    // records, and what a target answers at its edge is not.
    const atLimit = offset > HARD_OFFSET_LIMIT || (e.hardOffsetLimit && offset + PAGE > HARD_OFFSET_LIMIT);
    if (!page.ok && atLimit && page.res.status >= 400 && page.res.status < 500) {
      // Past record 10,000 the contract does not say what happens: a refusal there ends the
      // walk, unfinished, and is no failure.
      walk.stop = `stopped at an offset limit: offset ${offset} answered ${page.res.status} after ${walk.records.length} records (a refusal past record ${HARD_OFFSET_LIMIT} is allowed)`;
      walk.limited = true;
      return undefined;
    }
    if (!page.ok) {
      walk.broken = { message: `page at offset ${offset} answered ${page.res.status} without a list`, page };
      walk.stop = walk.broken.message;
      return undefined;
    }
    if (page.records.length > 0 && page.records.every((r) => seen.has(r.id))) {
      walk.broken = {
        message: `the page at offset ${offset} does not advance: all ${page.records.length} of its records were on earlier pages (${page.records
          .slice(0, 3)
          .map((r) => r.id)
          .join(', ')}…)`,
        page,
      };
      walk.stop = walk.broken.message;
      return undefined;
    }
    // On a list with the hard offset limit, offsets stay multiples of 100 so that the last
    // page the limit allows (offset 10,000) is still read; keyset walks split ties there.
    const split = offset === 0 && !e.hardOffsetLimit ? firstPageAcrossTie(page.records, tieAttr) : PAGE;
    const taken = split < page.records.length ? page.records.slice(0, split) : page.records;
    for (const r of taken) seen.add(r.id);
    walk.records.push(...taken);
    progress.moved();
    if (taken.length === page.records.length && page.records.length < PAGE) {
      walk.complete = true;
      walk.stop = `reached the end after ${walk.pages.length} pages (${walk.records.length} records)`;
      return undefined;
    }
    return offset + taken.length;
  };
  const pastHardLimit = (offset: number): boolean => e.hardOffsetLimit && offset > HARD_OFFSET_LIMIT;

  let first: ListPage;
  try {
    first = await read(0);
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    return cutShort();
  }
  let offset = take(first, 0);
  if (offset === undefined) return walk;

  // The pages the total announces, and the one that shows the end when the last is full.
  const total = metaInt(first, 'results.total');
  const planned: number[] = [];
  if (total !== undefined) {
    // Offsets up to the total: the page at the total itself only when the one before is full.
    for (let o = offset; o <= total && planned.length + walk.pages.length < limit && !pastHardLimit(o); o += PAGE) planned.push(o);
  }
  // Read in order below; one the walk never reaches rejects into the void.
  const ahead = readPagesAtOnce(ctx, e, path, planned.map(at), 'walks');

  for (let i = 0; ; i++) {
    if (pastHardLimit(offset)) {
      walk.stop = `stopped at the hard offset limit (${HARD_OFFSET_LIMIT}) after ${walk.records.length} records`;
      walk.limited = true;
      return walk;
    }
    if (walk.pages.length >= limit) return cutShort();
    let page: ListPage;
    try {
      // A page asked for ahead serves only if the walk arrived at its offset.
      page = i < ahead.length && planned[i] === offset ? await ahead[i]! : await read(offset);
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      return cutShort();
    }
    const next = take(page, offset);
    if (next === undefined) return walk;
    offset = next;
  }
}

/** The query of an offset walk's page at `offset`: its first page is the one memo of walkHead and offsetWalk. */
function walkPage(sort: string | undefined, filter: string | undefined, offset: number): Params {
  return { ...(sort ? { sort } : {}), ...(filter ? { filter } : {}), 'page[limit]': PAGE, ...(offset ? { 'page[offset]': offset } : {}) };
}

/**
 * The first page of offsetWalk(ctx, e, path, sort), the same request (pages are read once per
 * run), for work that can start on it before the walk ends; undefined when the budget is spent.
 */
export async function walkHead(ctx: CheckContext, e: Endpoint, path: string, sort?: string): Promise<ListPage | undefined> {
  try {
    return await readPage(ctx, e, path, walkPage(sort, undefined, 0), 'walks');
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    return undefined;
  }
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
 * Fails the check when a walk broke, with the page that broke it as evidence; skips it when the
 * walk read no page at all (the budget was spent before it started).
 */
export function expectWalked(walk: Walk, what: string): void {
  if (walk.pages.length === 0) throw new CheckSkip(`not testable: ${what} read no page (${walk.stop})`);
  if (walk.broken) {
    fail(`${what}: ${walk.broken.message}`, {
      expected: 'every page a list that moves past the records already read',
      actual: walk.broken.message,
      res: walk.broken.page.res,
    });
  }
}
