// The query of a list request as the reference server reads it: page[limit], page[offset],
// sort and filter, with the knobs that reach inside it (docs/reference-server.md#knobs-that-reach-inside).
import type { ServerResponse } from 'node:http';
import type { Behaviour } from './behaviour.js';
import { parseFilter, SORT_FIELDS, type FilterTerm, type Query, type SortField } from './collection.js';
import { HttpError, type Reply, type RequestUrl } from './http.js';

import { defaultOrder, HARD_OFFSET_LIMIT } from './list-data.js';

// --- Query parameters ------------------------------------------------------------------

/**
 * What a list page reads of its request: a route's context (server/routes.ts) is one. Named
 * here so that the lists depend on no route: routes build on lists, not the other way.
 */
export interface PageRequest {
  res: ServerResponse;
  /** Where the answer goes (server/http.ts). */
  reply: Reply;
  /** The request's URL; `query` holds its search parameters. */
  url: RequestUrl;
  query: URLSearchParams;
  b: Behaviour;
  /** The store's page length as PUT /v2/settings set it (absent: b.pageLength): the default of page[limit]. */
  pageLength?: number;
}

function intParam(ctx: PageRequest, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new HttpError(400, `${name} must be a non-negative whole number.`);
  return Number(raw);
}

/**
 * The parameters as a lenient server reads them (the variant lenient-parameters): a paging number
 * is the integer its text starts with (parseInt: `5.5` is 5, `1e3` is 1, `+7` is 7), clamped to
 * 1 or 0, and ignored when there is none; an array (`page[limit][]`) or a repeat gives its first
 * value; a sort is read without regard to case or surrounding space, and ignored when unknown;
 * a filter this server cannot parse is ignored. Each is a reading the contract leaves open
 * (spec/contract/README.md#list-endpoints).
 */
export function lenientQuery(query: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  const first = (name: string): string | null => query.get(name) ?? query.get(`${name}[]`);
  for (const name of ['page[limit]', 'page[offset]']) {
    const n = parseInt(first(name) ?? '', 10);
    if (!Number.isNaN(n)) out.set(name, String(Math.max(name === 'page[limit]' ? 1 : 0, n)));
  }
  const sort = first('sort')?.trim().toLowerCase();
  if (sort !== undefined && /^-?(created_at|updated_at|id)$/.test(sort)) out.set('sort', sort);
  const filter = first('filter');
  if (filter !== null) {
    try {
      parseFilter(filter);
      out.set('filter', filter);
    } catch {
      // Not a filter this server reads: ignored.
    }
  }
  return out;
}

export function parseQuery(ctx: PageRequest, hardOffsetLimit: boolean): Query {
  const b = ctx.b;
  const given = intParam(ctx, 'page[limit]');
  // The store's length is never over the cap (PUT /v2/settings keeps it to 100, or a fault does not).
  let limit = given ?? ctx.pageLength ?? b.pageLength;
  if (limit < 1) throw new HttpError(400, 'page[limit] must be at least 1.');
  if (given !== undefined && limit > b.maxLimit) {
    if (b.rejectOverLimit) throw new HttpError(400, `page[limit] must not exceed ${b.maxLimit}.`);
    limit = b.maxLimit;
  }
  const rawOffset = intParam(ctx, 'page[offset]') ?? 0;
  if (((hardOffsetLimit && b.hardOffsetLimit) || b.softOffsetLimit) && offsetCounted(ctx, rawOffset, limit) > HARD_OFFSET_LIMIT) {
    throw new HttpError(b.hardOffsetStatus, `page[offset] must not exceed ${HARD_OFFSET_LIMIT} on this endpoint; use keyset-style traversal.`);
  }
  const offset =
    b.offsetUnit === 'pages' ? rawOffset * limit : b.offsetUnit === 'one-based' ? Math.max(0, rawOffset - 1) : b.offsetUnit === 'ignored' ? 0 : rawOffset;
  const sortRaw = ctx.query.get('sort');
  let sort = defaultOrder(b);
  if (sortRaw !== null) {
    const descending = sortRaw.startsWith('-');
    const field = descending ? sortRaw.slice(1) : sortRaw;
    if (!(SORT_FIELDS as readonly string[]).includes(field)) throw new HttpError(400, `Cannot sort by '${sortRaw}'; sortable: ${SORT_FIELDS.join(', ')}.`);
    sort = { field: field as SortField, descending };
  }
  const filterRaw = ctx.query.get('filter');
  if (filterRaw !== null && b.filterValuesOwnSpelling) ownSpellingOnly(filterRaw, b);
  let filters: FilterTerm[] = filterRaw === null || filterRaw === '' ? [] : parseFilter(filterRaw);
  if (b.hiddenPrecision) {
    // Half a microsecond below the value: a record shown equal to it compares as after it.
    filters = filters.map((t) => (t.field === 'created_at' || t.field === 'updated_at' ? { ...t, values: t.values.map((v) => (v as number) - 0.5) } : t));
  }
  return { offset, limit, sort, filters };
}

/** The offset the hard offset limit counts (hardOffsetIn): records (the contract), or as a fault counts them. */
function offsetCounted(ctx: PageRequest, rawOffset: number, limit: number): number {
  if (ctx.b.hardOffsetIn === 'pages') return Math.floor(rawOffset / limit);
  if (ctx.b.hardOffsetIn === 'records') return rawOffset;
  return /^\d+$/.test(new URLSearchParams(ctx.url.search).get('page[offset]') ?? '') ? rawOffset : 0;
}

/** How many fraction digits the behaviour's timestamps show, and with which zone designator. */
function spelling(b: Behaviour): { digits: number; zone: RegExp } {
  switch (b.timestampStyle) {
    case 'iso-ms-z':
      return { digits: 3, zone: /^Z$/ };
    case 'seconds-z':
      return { digits: 0, zone: /^Z$/ };
    case 'seconds-offset':
      return { digits: 0, zone: /^\+00:00$/ };
    case 'micros-z':
      return { digits: 6, zone: /^Z$/ };
    case 'mixed-offsets':
      return { digits: 3, zone: /^[+-]\d{2}:\d{2}$/ };
  }
}

/**
 * The filterValuesOwnSpelling choice: a timestamp value must be written as the server writes
 * its own (no more fraction digits, the same kind of zone designator), else 400.
 */
function ownSpellingOnly(raw: string, b: Behaviour): void {
  const { digits, zone } = spelling(b);
  for (const m of raw.matchAll(/(?:created_at|updated_at),([^)]*)\)/g)) {
    const v = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.(\d+))?(.*)$/.exec(m[1]!);
    if (!v || (v[1] ?? '').length > digits || !zone.test(v[2]!))
      throw new HttpError(400, `Could not parse the supplied filter: '${m[1]}' is not a timestamp as this store writes them.`);
  }
}
