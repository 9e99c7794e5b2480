// The list operations of the reference server: every path of spec/list-operations.yaml, the
// parent lists their placeholders come from, and the two lists of things the suite creates.
// Data is generated from the seed, per concrete path, on first use.
import { Faker, base, en } from '@faker-js/faker';
import type { Behaviour } from './behaviour.js';
import { Collection, parseFilter, slugOf, SORT_FIELDS, type FilterTerm, type ListRecord, type Query, type SortField } from './collection.js';
import { HttpError, sendJson } from './http.js';
import { endpointsOf, loadCatalogSpec, placeholders, type ParentSource } from '../lib/catalog.js';
import type { RouteContext } from './routes.js';
import { hash32, seededRandom } from '../lib/random.js';

export const HARD_OFFSET_LIMIT = 10_000;

export interface ListTemplate {
  /** e.g. /catalog/hierarchies/{catalog_hierarchy_id}/nodes */
  template: string;
  pattern: RegExp;
  params: string[];
  /** Collection size: number of records, or 'parent' for small parent lists. */
  size: 'default' | 'orders' | 'empty' | 'parent';
  hardOffsetLimit: boolean;
  /** catalog lists link with `self`, /v2 lists with `current` (the real platform). */
  catalogStyle: boolean;
}

function compile(template: string): { pattern: RegExp; params: string[] } {
  const params = placeholders(template);
  const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[A-Za-z_]+\\?\}|\{[A-Za-z_]+\}/g, '([^/]+)');
  return { pattern: new RegExp(`^${source}$`), params };
}

export function listTemplates(): { templates: ListTemplate[]; parents: Record<string, ParentSource> } {
  const spec = loadCatalogSpec();
  const templates: ListTemplate[] = [];
  const seen = new Set<string>();
  const add = (template: string, size: ListTemplate['size'], hardOffsetLimit: boolean): void => {
    if (seen.has(template)) return;
    seen.add(template);
    templates.push({ template, ...compile(template), size, hardOffsetLimit, catalogStyle: !template.startsWith('/v2/') });
  };
  for (const e of endpointsOf(spec)) {
    if (e.extra) continue; // application keys and Custom APIs are served from the store
    add(e.path, e.operation === 'orders' ? 'orders' : e.operation === 'catalog-rules' ? 'empty' : 'default', e.hardOffsetLimit);
  }
  for (const p of Object.values(spec.parents)) if ('from' in p) add(p.from, 'parent', false);
  // A literal path must win over a pattern that also matches it (/pcm/catalogs/rules).
  templates.sort((a, b) => a.params.length - b.params.length);
  return { templates, parents: spec.parents };
}

const YEAR = 365 * 24 * 3600 * 1000;

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const ID = Buffer.alloc(36);

/**
 * A version 4 UUID whose first eight digits are `seq`, the rest random: ids rise with the
 * order of generation, which is random with respect to the timestamps, so the id index needs
 * no sort. Written into a buffer and decoded once, it is one flat string.
 */
function uuid(seq: number, random: () => number): string {
  let p = 0;
  for (let shift = 28; shift >= 0; shift -= 4) ID[p++] = HEX[(seq >>> shift) & 15]!;
  for (let i = 8; i < 32; i++) {
    if (i === 8 || i === 12 || i === 16 || i === 20) ID[p++] = 0x2d;
    let d = Math.floor(random() * 16);
    if (i === 12) d = 4;
    else if (i === 16) d = 8 + (d & 3);
    ID[p++] = HEX[d]!;
  }
  return ID.toString('latin1');
}

/**
 * Seeded records: timestamps over the past year in whole seconds, ~15% of them in groups tied
 * on created_at. @faker-js/faker, seeded, gives the names; a small seeded generator the rest,
 * so a million records take about a second.
 */
export function generateRecords(seed: number, label: string, count: number, now: number, recent = false): ListRecord[] {
  const f = new Faker({ locale: [en, base] });
  f.seed(hash32(`${seed}:${label}`));
  const names = Array.from({ length: 256 }, () => f.commerce.productName());
  const random = seededRandom(f.number.int({ min: 1, max: 2 ** 31 }));
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const type = label.split('/').filter(Boolean).at(-1) ?? 'record';
  const out: ListRecord[] = [];
  // Newest a day old (older than the suite's time buffer), or, `recent`, within 30 seconds.
  const newest = recent ? now - 1000 : now - 24 * 3600 * 1000;
  const span = recent ? 30_000 : YEAR;
  while (out.length < count) {
    // Whole seconds: a variant that renders timestamps without milliseconds stays exact.
    const created = Math.floor((newest - int(0, span)) / 1000) * 1000;
    const tie = random() < 0.15 ? int(2, 6) : 1;
    for (let i = 0; i < tie && out.length < count; i++) {
      const updated = random() < 0.3 ? created : Math.min(newest, created + int(0, recent ? 20 : 30 * 24 * 3600) * 1000);
      out.push({ id: uuid(out.length, random), type, name: names[int(0, names.length - 1)]!, seq: out.length, created, updated });
    }
  }
  // Ties on updated_at too: some records share one.
  for (let i = 0; i + 1 < out.length; i += 17) out[i + 1]!.updated = Math.max(out[i + 1]!.created, out[i]!.updated);
  // A tie across every page boundary of 100 in both timestamp orders: where a keyset walk
  // that uses gt instead of ge, or an unstable tie order, loses or repeats a record.
  const byCreated = [...out].sort((a, b) => a.created - b.created);
  for (let i = PAGE_BOUNDARY; i < byCreated.length; i += PAGE_BOUNDARY) {
    const before = byCreated[i - 1]!;
    before.created = byCreated[i]!.created;
    before.updated = Math.max(before.updated, before.created);
  }
  const byUpdated = [...out].sort((a, b) => a.updated - b.updated);
  for (let i = PAGE_BOUNDARY; i < byUpdated.length; i += PAGE_BOUNDARY) byUpdated[i - 1]!.updated = byUpdated[i]!.updated;
  return out;
}

const PAGE_BOUNDARY = 100;

export interface ListOptions {
  seed: number;
  /** Records in an ordinary collection. */
  records: number;
  now: number;
  /** Catalog rules hold no record (the deliberately empty list); false fills them too. */
  emptyList: boolean;
  /** Records created in the last 30 seconds, as by a server that seeds its data at start-up. */
  recent: boolean;
}

export class ListData {
  readonly #collections = new Map<string, Collection>();
  readonly options: ListOptions;
  readonly templates: ListTemplate[];
  readonly parents: Record<string, ParentSource>;

  constructor(options: ListOptions) {
    this.options = options;
    const { templates, parents } = listTemplates();
    this.templates = templates;
    this.parents = parents;
  }

  #sizeOf(t: ListTemplate, concrete: string): number {
    const { records } = this.options;
    if (t.size === 'empty' && this.options.emptyList) return 0;
    if (t.size === 'orders') return Math.max(HARD_OFFSET_LIMIT + 50, records);
    if (t.size === 'parent') return 4;
    // 110 to 150 records at the default: more than one full page of 100.
    return Math.max(0, records - 20 + (hash32(concrete) % 41));
  }

  collection(t: ListTemplate, concrete: string): Collection {
    let c = this.#collections.get(concrete);
    if (!c) {
      c = new Collection(generateRecords(this.options.seed, concrete, this.#sizeOf(t, concrete), this.options.now, this.options.recent));
      this.#collections.set(concrete, c);
    }
    return c;
  }

  /** The concrete path of a parent list, or a 404 when a parent id does not exist. */
  checkParents(t: ListTemplate, values: Record<string, string>): void {
    for (const name of t.params) {
      const source = this.parents[name];
      const value = values[name]!;
      if (!source) throw new HttpError(404, 'Not found');
      if ('value' in source) {
        if (value !== source.value) throw new HttpError(404, `Release '${value}' not found`);
        continue;
      }
      const parentTemplate = this.templates.find((x) => x.template === source.from)!;
      this.checkParents(parentTemplate, values);
      const concrete = parentTemplate.params.reduce((p, n) => p.replace(`{${n}}`, values[n]!), parentTemplate.template);
      const parent = this.collection(parentTemplate, concrete);
      if (!parent.find(source.field === 'slug' ? 'slug' : 'id', value)) throw new HttpError(404, `Parent '${value}' not found`);
    }
  }
}

// --- Query parameters ------------------------------------------------------------------

function intParam(ctx: RouteContext, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw.trim())) {
    if (ctx.b.crashOnBadPaging) throw new HttpError(500, 'Internal error while reading the page parameters.');
    throw new HttpError(400, `${name} must be a non-negative whole number.`);
  }
  return Number(raw);
}

export function parseQuery(ctx: RouteContext, hardOffsetLimit: boolean): Query {
  const b = ctx.b;
  let limit = intParam(ctx, 'page[limit]') ?? b.defaultLimit ?? ctx.store.pageLength;
  if (limit < 1) {
    if (b.crashOnBadPaging) throw new HttpError(500, 'Division by zero.');
    throw new HttpError(400, 'page[limit] must be at least 1.');
  }
  if (limit > b.maxLimit) {
    if (b.rejectOverLimit) throw new HttpError(400, `page[limit] must not exceed ${b.maxLimit}.`);
    limit = b.maxLimit;
  }
  const rawOffset = intParam(ctx, 'page[offset]') ?? 0;
  if (((hardOffsetLimit && b.hardOffsetLimit) || b.softOffsetLimit) && rawOffset > HARD_OFFSET_LIMIT) {
    throw new HttpError(b.hardOffsetStatus, `page[offset] must not exceed ${HARD_OFFSET_LIMIT} on this endpoint; use keyset-style traversal.`);
  }
  const offset = b.offsetUnit === 'pages' ? rawOffset * limit : b.offsetUnit === 'one-based' ? Math.max(0, rawOffset - 1) : b.offsetUnit === 'ignored' ? 0 : rawOffset;
  const sortRaw = ctx.query.get('sort');
  let sort: Query['sort'] = { field: 'created_at', descending: false };
  if (sortRaw !== null) {
    const descending = sortRaw.startsWith('-');
    const field = descending ? sortRaw.slice(1) : sortRaw;
    if (!(SORT_FIELDS as readonly string[]).includes(field)) throw new HttpError(400, `Cannot sort by '${sortRaw}'; sortable: ${SORT_FIELDS.join(', ')}.`);
    if (!b.ignoreSort) sort = { field: field as SortField, descending: b.invertSort ? !descending : descending };
  }
  const filterRaw = ctx.query.get('filter');
  let filters: FilterTerm[] = filterRaw === null || filterRaw === '' ? [] : parseFilter(filterRaw);
  if (b.ignoreFilter) filters = [];
  if (b.hiddenPrecision) {
    filters = filters.map((t) => (t.field === 'created_at' || t.field === 'updated_at' ? { ...t, values: t.values.map((v) => (v as number) - 0.5) } : t));
  }
  if (b.geAsGt || b.gtAsGe) {
    filters = filters.map((t) => (b.geAsGt && t.op === 'ge' ? { ...t, op: 'gt' } : b.gtAsGe && t.op === 'gt' ? { ...t, op: 'ge' } : t));
  }
  return { offset, limit, sort, filters };
}

// --- Rendering -------------------------------------------------------------------------

/** A timestamp in the behaviour's style (the contract leaves the format open). */
export function renderTimestamp(ms: number, b: Behaviour): string {
  const s = new Date(ms).toISOString();
  if (b.timestampStyle === 'seconds-z') return `${s.slice(0, 19)}Z`;
  return b.timestampStyle === 'iso-ms-z' ? s : `${s.slice(0, 19)}+00:00`;
}

export function recordJson(r: ListRecord, b: Behaviour): unknown {
  return {
    id: r.id,
    type: r.type,
    name: r.name,
    slug: slugOf(r),
    meta: { timestamps: { created_at: renderTimestamp(r.created, b), updated_at: renderTimestamp(r.updated, b) }, ...(b.extraFields ? { owner: 'store' } : {}) },
    ...(b.extraFields ? { attributes: { status: 'live' } } : {}),
  };
}

/**
 * The unstable-ties fault: each run of records tied on the sort key comes in id order on even
 * pages and in reverse on odd ones, so the order moves between requests (deterministically:
 * the same request always gets the same answer, and tests do not depend on chance).
 */
function unstableTies(records: ListRecord[], field: SortField, reverse: boolean): ListRecord[] {
  if (field === 'id' || !reverse) return records;
  const k = field === 'updated_at' ? 'updated' : 'created';
  const out: ListRecord[] = [];
  for (let i = 0; i < records.length; ) {
    let j = i + 1;
    while (j < records.length && records[j]![k] === records[i]![k]) j++;
    out.push(...records.slice(i, j).reverse());
    i = j;
  }
  return out;
}

export function sendPage(ctx: RouteContext, collection: Collection, hardOffsetLimit: boolean, catalogStyle: boolean, render: (r: ListRecord) => unknown): void {
  const b = ctx.b;
  const q = parseQuery(ctx, hardOffsetLimit);
  const full = b.totalIgnoresFilter && q.filters.length ? collection.query({ ...q, filters: [], limit: 0 }).total : undefined;
  let page = collection.query(b.dropPageBoundary && q.offset > 0 ? { ...q, offset: q.offset + 1 } : q);
  if (b.crashPastEnd && q.offset >= page.total && page.total > 0) throw new HttpError(500, 'Index out of range.');
  if (b.unstableTies) {
    const all = collection.query({ ...q, offset: 0, limit: Number.MAX_SAFE_INTEGER });
    const odd = Math.floor(q.offset / q.limit) % 2 === 1;
    page = { records: unstableTies(all.records, q.sort.field, odd).slice(q.offset, q.offset + q.limit), total: all.total };
  }
  const records = page.records;
  const total = full ?? page.total;
  const pages = Math.ceil(total / q.limit);
  const rawOffset = Number(ctx.query.get('page[offset]') ?? 0);
  let current = Math.floor(q.offset / q.limit) + (b.currentFromZero ? 0 : 1);
  let pageTotal = b.pageTotalUnit === 'records' ? total : pages;
  // READING.md: with zero results, current and total are 0 or 1.
  if (total === 0) {
    current = b.currentFromZero ? 0 : 1;
    if (b.emptyPageNumbers === 'one-one') pageTotal = 1;
  }
  const n = (x: number): number | string => (b.metaAsStrings ? String(x) : x);
  const meta = { page: { limit: n(q.limit), offset: n(rawOffset), current: n(current), total: n(pageTotal) }, results: { total: n(total) } };
  const body: Record<string, unknown> = { [b.listDataKey]: records.map(render) };
  if (records.length > 0 || b.emptyMeta === 'present') body.meta = meta;
  else if (b.emptyMeta === 'null') body.meta = null;
  if (b.links) body.links = links(ctx, q.limit, rawOffset, total, catalogStyle, b.listLinks === 'extra' || b.extraFields);
  if (b.extraFields && body.meta) (body.meta as Record<string, unknown>).stores = { region: 'eu-west' };
  sendJson(ctx.res, 200, body);
}

function links(ctx: RouteContext, limit: number, offset: number, total: number, catalogStyle: boolean, extra: boolean): Record<string, string | null> {
  const url = (o: number): string => {
    const u = new URL(ctx.req.url ?? '/', ctx.baseUrl);
    u.searchParams.set('page[limit]', String(limit));
    u.searchParams.set('page[offset]', String(o));
    return u.toString();
  };
  const last = Math.max(0, (Math.ceil(total / limit) - 1) * limit);
  return {
    [catalogStyle ? 'self' : 'current']: url(offset),
    first: url(0),
    last: url(last),
    next: offset + limit < total ? url(offset + limit) : null,
    prev: offset > 0 ? url(Math.max(0, offset - limit)) : null,
    ...(extra ? { docs: 'https://example.invalid/docs/pagination' } : {}),
  };
}
