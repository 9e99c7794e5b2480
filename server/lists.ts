// The list operations of the reference server: every path of spec/list-operations.yaml, the
// parent lists their placeholders come from, and the two lists of things the suite creates.
// Data is generated from the seed, per concrete path, on first use.
import type { ServerResponse } from 'node:http';
import type { Faker } from '@faker-js/faker';
// The English entry loads English alone (the main entry loads about 70 locales at start-up); its
// class and merged definitions make the same fakers as `new Faker({ locale: [en, base] })`.
import { faker as english } from '@faker-js/faker/locale/en';
import { CONFORMING, type Behaviour } from './behaviour.js';
import { giveBack } from './bytes.js';
import { Collection, parseFilter, slugOf, SORT_FIELDS, timeIndex, type FilterTerm, type ListRecord, type OrderField, type Query, type SortField } from './collection.js';
import { HttpError, sendJsonText, type RequestUrl } from './http.js';
import { endpointsOf, loadCatalogSpec, placeholders, type ParentSource } from '../lib/catalog.js';
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

/** How a store's list data is shaped by the behaviour it serves. */
export interface DataShape {
  /** Whole seconds (every style shows them exactly), or distinct below the millisecond. */
  precision: 'seconds' | 'micros';
  ids: Behaviour['listIds'];
}

export const PLAIN_DATA: DataShape = { precision: 'seconds', ids: 'uuid' };

export function dataShapeOf(b: Behaviour): DataShape {
  return { precision: b.timestampStyle === 'micros-z' ? 'micros' : 'seconds', ids: b.listIds };
}

const MS = 1000;
const S = 1_000_000;
const DAY_US = 24 * 3600 * S;

/** A record while it is being generated, before a collection holds it. */
type Draft = { -readonly [K in keyof ListRecord]: ListRecord[K] };

/** A share of the records in tie groups of 2 to 6 (4 on average): p·4 / (1 + 3p) ≈ 15%. */
const TIE_START = 0.15 / (4 - 0.45);

/**
 * Ties on `field` at random places: walking the records in that order, a group of 2 to 6
 * neighbours now and then takes one value (created: the group's earliest, updated: its
 * latest, so created ≤ updated holds). Random places, so that no page size of the suite (100,
 * 25, 7) lines up with them: the suite puts its own page boundaries inside ties.
 */
function tieUp(records: readonly Draft[], field: 'created' | 'updated', random: () => number): void {
  // Ties in generation order (a stable sort).
  const sorted = timeIndex(records, field, (a, b) => a[field] - b[field]);
  for (let i = 0; i < sorted.length; ) {
    if (random() >= TIE_START) {
      i++;
      continue;
    }
    const n = Math.min(sorted.length - i, 2 + Math.floor(random() * 5));
    const v = field === 'created' ? sorted[i]![field] : sorted[i + n - 1]![field];
    for (let k = i; k < i + n; k++) sorted[k]![field] = v;
    i += n;
  }
}

/**
 * Seeded records: timestamps over the past year (epoch microseconds: whole seconds, or with
 * `micros` any microsecond, some records only a few microseconds apart within one
 * millisecond), ~15% of records in groups tied on created_at and on updated_at. Ids rise with
 * the order of generation (numeric ones with random gaps, so that they have 1 to 5 digits and
 * string order is not number order). @faker-js/faker, seeded, gives the names; a small seeded
 * generator the rest, so a million records take about a second.
 */
export function generateRecords(seed: number, label: string, count: number, now: number, recent = false, shape: DataShape = PLAIN_DATA): ListRecord[] {
  const f = new (english.constructor as typeof Faker)({ locale: english.rawDefinitions });
  f.seed(hash32(`${seed}:${label}`));
  // Names come from a pool: faker's product names cost about 20 us each, and a list of 10,000
  // records needs no more variety than 64 of them give.
  const random = seededRandom(f.number.int({ min: 1, max: 2 ** 31 }));
  const names = Array.from({ length: 64 }, () => f.commerce.productName());
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const type = label.split('/').filter(Boolean).at(-1) ?? 'record';
  const micros = shape.precision === 'micros';
  let serial = 0;
  const idOf = (seq: number): string => {
    if (shape.ids === 'uuid') return uuid(seq, random);
    if (shape.ids === 'prefixed') return `rec_${String(seq).padStart(8, '0')}${Math.floor(random() * 16 ** 6).toString(16).padStart(6, '0')}`;
    serial += int(1, 9);
    return String(serial);
  };
  const out: Draft[] = [];
  // Newest a day old (older than the suite's time buffer), or, `recent`, within 30 seconds.
  const newest = (recent ? now - 1000 : now) * MS - (recent ? 0 : DAY_US);
  const span = recent ? 30 * S : 365 * DAY_US;
  while (out.length < count) {
    const prev = out.at(-1);
    let created: number;
    if (!micros) created = Math.floor((newest - int(0, span)) / S) * S;
    else if (prev && random() < 0.1) {
      // Within the millisecond of the previous record: apart only below the millisecond.
      const ms = prev.created - (prev.created % MS);
      created = ms + ((prev.created - ms + int(1, MS - 1)) % MS);
    } else created = newest - int(0, span);
    // Updated up to 30 days later (20 s when recent), never past the newest: no pile-up there.
    const room = Math.max(0, Math.min(recent ? 20 * S : 30 * DAY_US, newest - created));
    const updated = random() < 0.3 ? created : created + (micros ? int(0, room) : int(0, Math.floor(room / S)) * S);
    out.push({ id: idOf(out.length), type, name: names[int(0, names.length - 1)]!, seq: out.length, created, updated });
  }
  tieUp(out, 'created', random);
  tieUp(out, 'updated', random);
  return out;
}

export interface ListOptions {
  seed: number;
  /** Records in an ordinary collection. */
  records: number;
  now: number;
  /** Catalog rules hold no record (the deliberately empty list); false fills them too. */
  emptyList: boolean;
  /** Records created in the last 30 seconds, as by a server that seeds its data at start-up. */
  recent: boolean;
  shape: DataShape;
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

  /**
   * The collection of a concrete path. `under` (the list route's: the path's placeholder values
   * and the behaviour served) lets firstParentEmpty empty a nested list under the first record
   * of a parent list; without it, or with the knob off, the data is the same as ever.
   */
  collection(t: ListTemplate, concrete: string, under?: ParentValues): Collection {
    const empty = under !== undefined && under.b.firstParentEmpty && this.firstParents(t, under).some((first) => first);
    const key = empty ? `${concrete}\n(first parent)` : concrete;
    let c = this.#collections.get(key);
    if (!c) {
      const { seed, now, recent, shape } = this.options;
      c = new Collection(generateRecords(seed, concrete, empty ? 0 : this.#sizeOf(t, concrete), now, recent, shape), { idOrder: shape.ids === 'numeric' ? 'numeric' : 'string' });
      this.#collections.set(key, c);
    }
    return c;
  }

  /**
   * For each placeholder of `t` filled from a parent list (a fixed `value`, such as release_id,
   * is no such question), whether `under.values` gives it the first record of that list: the
   * one a client reading the list without parameters meets first (the behaviour's default order).
   */
  firstParents(t: ListTemplate, under: ParentValues): boolean[] {
    const out: boolean[] = [];
    for (const name of t.params) {
      const source = this.parents[name];
      if (!source || 'value' in source) continue;
      const parentTemplate = this.templates.find((x) => x.template === source.from);
      if (!parentTemplate) continue;
      const concrete = parentTemplate.params.reduce((p, n) => p.replace(`{${n}}`, under.values[n]!), parentTemplate.template);
      const first = this.collection(parentTemplate, concrete, under).query({ offset: 0, limit: 1, sort: defaultOrder(under.b), filters: [] }).records[0];
      out.push(first !== undefined && (source.field === 'slug' ? slugOf(first) : first.id) === under.values[name]);
    }
    return out;
  }

  /**
   * Whether some placeholder of `t` takes another value than the first record of its parent
   * list (ListFaultScope.parents 'later').
   */
  laterParent(t: ListTemplate, under: ParentValues): boolean {
    return this.firstParents(t, under).some((first) => !first);
  }

  /** The concrete path of a parent list, or a 404 when a parent id does not exist. */
  checkParents(t: ListTemplate, values: Record<string, string>, b?: Behaviour): void {
    for (const name of t.params) {
      const source = this.parents[name];
      const value = values[name]!;
      if (!source) throw new HttpError(404, 'Not found');
      if ('value' in source) {
        if (value !== source.value) throw new HttpError(404, `Release '${value}' not found`);
        continue;
      }
      const parentTemplate = this.templates.find((x) => x.template === source.from)!;
      this.checkParents(parentTemplate, values, b);
      const concrete = parentTemplate.params.reduce((p, n) => p.replace(`{${n}}`, values[n]!), parentTemplate.template);
      const parent = this.collection(parentTemplate, concrete, b ? { values, b } : undefined);
      if (!parent.find(source.field === 'slug' ? 'slug' : 'id', value)) throw new HttpError(404, `Parent '${value}' not found`);
    }
  }
}

/** A concrete list path's placeholder values, and the behaviour that serves it (the list route's). */
export interface ParentValues {
  values: Record<string, string>;
  b: Behaviour;
}

// --- Query parameters ------------------------------------------------------------------

/**
 * What a list page reads of its request: a route's context (server/routes.ts) is one. Named
 * here so that the lists depend on no route: routes build on lists, not the other way.
 */
export interface PageRequest {
  res: ServerResponse;
  /** The request's URL; `query` holds its search parameters. */
  url: RequestUrl;
  query: URLSearchParams;
  b: Behaviour;
}

function intParam(ctx: PageRequest, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw.trim())) {
    if (ctx.b.crashOnBadPaging) throw new HttpError(500, 'Internal error while reading the page parameters.');
    throw new HttpError(400, `${name} must be a non-negative whole number.`);
  }
  return Number(raw);
}

function defaultOrder(b: Behaviour): Query['sort'] {
  if (b.defaultOrder === '-created_at') return { field: 'created_at', descending: true };
  return { field: b.defaultOrder, descending: false };
}

export function parseQuery(ctx: PageRequest, hardOffsetLimit: boolean): Query {
  const b = ctx.b;
  let limit = intParam(ctx, 'page[limit]') ?? b.defaultLimit ?? b.pageLength;
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
  let sort = defaultOrder(b);
  if (sortRaw !== null) {
    const descending = sortRaw.startsWith('-');
    const field = descending ? sortRaw.slice(1) : sortRaw;
    if (!(SORT_FIELDS as readonly string[]).includes(field)) throw new HttpError(400, `Cannot sort by '${sortRaw}'; sortable: ${SORT_FIELDS.join(', ')}.`);
    if (!b.ignoreSort) sort = { field: field as SortField, descending: b.invertSort ? !descending : descending };
  }
  let filterRaw = ctx.query.get('filter');
  if (filterRaw !== null && b.filterValuesOwnSpelling) ownSpellingOnly(filterRaw, b);
  // The fault: a numeric offset dropped, the clock time read as UTC.
  if (filterRaw !== null && b.filterValueOffsetIgnored) filterRaw = filterRaw.replace(/(\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[+-]\d{2}:?\d{2}(?=\)(?::|$))/g, '$1Z');
  let filters: FilterTerm[] = filterRaw === null || filterRaw === '' ? [] : parseFilter(filterRaw);
  if (b.filterValueToSecond) {
    filters = filters.map((t) => (t.field === 'created_at' || t.field === 'updated_at' ? { ...t, values: t.values.map((v) => Math.floor((v as number) / S) * S) } : t));
  }
  if (b.ignoreFilter) filters = [];
  if (b.hiddenPrecision) {
    // Half a microsecond below the value: a record shown equal to it compares as after it.
    filters = filters.map((t) => (t.field === 'created_at' || t.field === 'updated_at' ? { ...t, values: t.values.map((v) => (v as number) - 0.5) } : t));
  }
  if (b.geAsGt || b.gtAsGe) {
    filters = filters.map((t) => (b.geAsGt && t.op === 'ge' ? { ...t, op: 'gt' } : b.gtAsGe && t.op === 'gt' ? { ...t, op: 'ge' } : t));
  }
  return { offset, limit, sort, filters };
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
    if (!v || (v[1] ?? '').length > digits || !zone.test(v[2]!)) throw new HttpError(400, `Could not parse the supplied filter: '${m[1]}' is not a timestamp as this store writes them.`);
  }
}

/**
 * The behaviour one list request sees: outside the fault's scope (another path, the first
 * page, no filter, the first parent), the conforming values of the list fault knobs.
 * `laterParent`: some placeholder of the concrete path takes another value than the first
 * record of its parent list (PageSource.laterParent).
 */
export function scopedBehaviour(b: Behaviour, template: string | undefined, query: URLSearchParams, laterParent = false): Behaviour {
  const scope = b.listFaultScope;
  if (!scope) return b;
  const offset = Number(query.get('page[offset]') ?? 0) > 0;
  const filter = (query.get('filter') ?? '') !== '';
  const onPath = scope.paths === undefined || (template !== undefined && (scope.paths === 'nested' ? template.includes('{') : scope.paths.includes(template)));
  const now = scope.when === undefined || (scope.when === 'offset' ? offset : scope.when === 'filter' ? filter : scope.when === 'no-limit' ? !query.has('page[limit]') : filter && offset);
  const parents = scope.parents === undefined || laterParent;
  if (onPath && now && parents) return b;
  const out: Behaviour = { ...b };
  for (const k of scope.knobs ?? []) (out as unknown as Record<string, unknown>)[k] = CONFORMING[k];
  return out;
}

// --- Rendering -------------------------------------------------------------------------

/** Offsets of the mixed-offsets style, in minutes: whole hours, half and quarter hours, both signs. */
const OFFSETS = [120, -300, 330, 0, -600, 545, -210, 840, -60, 600];

const DAY_MS = 24 * 3600 * MS;
/** The years 1970 to 9999, where toISOString writes the year in four digits. */
const ISO_FROM = 0;
const ISO_UNTIL = Date.UTC(10000, 0, 1);
/** `YYYY-MM-DDT` by day since 1970: the records of a list share a few hundred days. */
const dayPrefixes = new Map<number, string>();

const pad2 = (x: number): string => (x < 10 ? `0${x}` : String(x));

/**
 * new Date(ms).toISOString(), with the date part looked up per day and the time of day
 * written here: a million records render two timestamps each.
 */
function isoString(ms: number): string {
  if (!(Number.isInteger(ms) && ms >= ISO_FROM && ms < ISO_UNTIL)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 100_000) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  const t = ms - day * DAY_MS;
  const millis = t % 1000;
  return `${prefix}${pad2(Math.floor(t / 3_600_000))}:${pad2(Math.floor(t / 60_000) % 60)}:${pad2(Math.floor(t / 1000) % 60)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/**
 * A timestamp (epoch microseconds) in the behaviour's style: the contract leaves the format
 * open. `salt` picks the offset of the mixed-offsets style (a record's seq), so one record
 * always shows the same string.
 */
export function renderTimestamp(us: number, b: Behaviour, salt = 0): string {
  const ms = Math.floor(us / MS);
  const s = isoString(ms);
  switch (b.timestampStyle) {
    case 'iso-ms-z':
      return s;
    case 'seconds-z':
      return `${s.slice(0, 19)}Z`;
    case 'seconds-offset':
      return `${s.slice(0, 19)}+00:00`;
    case 'micros-z':
      return `${s.slice(0, 19)}.${String(((us % S) + S) % S).padStart(6, '0')}Z`;
    case 'mixed-offsets': {
      const minutes = OFFSETS[salt % OFFSETS.length]!;
      const local = isoString(ms + minutes * 60_000).slice(0, 23);
      const a = Math.abs(minutes);
      return `${local}${minutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
    }
  }
}

/** JSON.stringify of a string; most hold nothing to escape and are only quoted. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
const quote = (s: string): string => (ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`);

/**
 * A list record's JSON, as JSON.stringify writes the object
 * { id, type, name, slug, meta: { timestamps, owner }, attributes: { ...timestamps, status } }
 * of the behaviour's layout: the timestamps at meta.timestamps (the catalog) or among the
 * attributes; owner and status only with extra fields. The knobs read here make its shape
 * (recordShape).
 */
function recordText(r: ListRecord, b: Behaviour): string {
  // Timestamps (digits, - : . T Z +) and slugs (a-z, 0-9, -) hold nothing to escape.
  const timestamps = `"created_at":"${renderTimestamp(r.created, b, r.seq)}","updated_at":"${renderTimestamp(r.updated, b, r.seq + 3)}"`;
  let out = `{"id":${quote(r.id)},"type":${quote(r.type)},"name":${quote(r.name)},"slug":"${slugOf(r)}"`;
  if (b.timestampsAt === 'meta') out += b.extraFields ? `,"meta":{"timestamps":{${timestamps}},"owner":"store"}` : `,"meta":{"timestamps":{${timestamps}}}`;
  else if (b.extraFields) out += ',"meta":{"owner":"store"}';
  if (b.timestampsAt === 'attributes') out += b.extraFields ? `,"attributes":{${timestamps},"status":"live"}` : `,"attributes":{${timestamps}}`;
  else if (b.extraFields) out += ',"attributes":{"status":"live"}';
  return `${out}}`;
}

/** Each run of records tied on the sort key, reversed (the unstable-ties fault). */
function reverseTies(records: ListRecord[], field: OrderField): ListRecord[] {
  if (field === 'id' || field === 'insertion') return records;
  const k = field === 'updated_at' ? 'updated' : 'created';
  const out: ListRecord[] = [];
  for (let i = 0; i < records.length; ) {
    let j = i + 1;
    while (j < records.length && records[j]![k] === records[i]![k]) j++;
    for (let x = j - 1; x >= i; x--) out.push(records[x]!);
    i = j;
  }
  return out;
}

export interface PageSource {
  /** The path template of spec/list-operations.yaml (absent: a list of the store's own things). */
  template?: string;
  hardOffsetLimit: boolean;
  /** catalog lists link with `self`, /v2 lists with `current` (the real platform). */
  catalogStyle: boolean;
  /**
   * Some placeholder of the concrete path takes another value than the first record of its
   * parent list (ListData.laterParent): where a fault scoped to parents 'later' shows.
   */
  laterParent?: boolean;
}

/**
 * The knobs recordText reads, as a key: a collection keeps its records' bytes per shape
 * (server/bytes.ts). A knob that changes how recordText renders a record belongs here.
 */
function recordShape(b: Behaviour): string {
  return `${b.timestampStyle} ${b.timestampsAt} ${b.extraFields}`;
}

/**
 * A page of `collection`. Its records come from the collection's stored bytes (rendered once
 * by recordText), or, given `render`, are rendered now: the store's own lists, whose records
 * carry the request's host in their links and are created and deleted through the API.
 */
export function sendPage(ctx: PageRequest, collection: Collection, source: PageSource, render?: (r: ListRecord) => unknown): void {
  const b = scopedBehaviour(ctx.b, source.template, ctx.query, source.laterParent);
  const q = parseQuery({ ...ctx, b }, source.hardOffsetLimit);
  const full = b.totalIgnoresFilter && q.filters.length ? collection.query({ ...q, filters: [], limit: 0 }).total : undefined;
  let page = collection.query(b.dropPageBoundary && q.offset > 0 ? { ...q, offset: q.offset + 1 } : q);
  if (b.crashPastEnd && q.offset >= page.total && page.total > 0) throw new HttpError(500, 'Index out of range.');
  if (b.unstableTies && q.offset > 0) {
    // Deterministic: the same request always gets the same answer, and the first page is
    // always in the other order, so tests do not depend on chance.
    const all = collection.query({ ...q, offset: 0, limit: Number.MAX_SAFE_INTEGER });
    page = { records: reverseTies(all.records, q.sort.field).slice(q.offset, q.offset + q.limit), total: all.total };
  }
  const records = page.records;
  const total = b.totalFromOffset ? Math.max(0, (full ?? page.total) - q.offset) : (full ?? page.total);
  const pages = Math.ceil((b.pageTotalIgnoresFilter && q.filters.length ? collection.query({ ...q, filters: [], limit: 0 }).total : total) / q.limit);
  const asked = Number(ctx.query.get('page[offset]') ?? 0);
  const rawOffset = b.offsetEchoPageStart ? Math.floor(asked / q.limit) * q.limit : asked;
  const formula = (b.currentRounding === 'ceil' ? Math.ceil(q.offset / q.limit) : Math.floor(q.offset / q.limit)) + (b.currentFromZero ? 0 : 1);
  let current = formula;
  let pageTotal = b.pageTotalUnit === 'records' ? total : pages;
  // spec/contract/README.md#lists.arithmetic: with zero results, current and total may be 0 or 1
  // (or current the formula).
  if (total === 0) {
    current = b.emptyCurrent === 'zero' ? 0 : b.emptyCurrent === 'one' ? 1 : formula;
    pageTotal = b.emptyPageTotal;
  }
  // The body is JSON.stringify({ [listDataKey]: records, meta, links }) as it was built from
  // objects, written out here as text around the records: a head, and a tail of what follows.
  // As JSON.stringify writes a number (null when not finite), or its String() quoted.
  const num = (x: number): string => (b.metaAsStrings ? `"${x}"` : Number.isFinite(x) ? String(x) : 'null');
  const stores = b.extraFields ? ',"stores":{"region":"eu-west"}' : '';
  const meta = `{"page":{"limit":${num(q.limit)},"offset":${num(rawOffset)},"current":${num(current)},"total":${num(pageTotal)}},"results":{"total":${num(total)}}${stores}}`;
  const metaMember = records.length > 0 || b.emptyMeta === 'present' ? `,"meta":${meta}` : b.emptyMeta === 'null' ? ',"meta":null' : '';
  const linksMember = b.links ? `,"links":${links(ctx, q.limit, rawOffset, total, source.catalogStyle, b.listLinks === 'extra' || b.extraFields)}` : '';
  const head = `{${JSON.stringify(b.listDataKey)}:[`;
  const tail = `]${metaMember}${linksMember}}`;
  if (render) return sendJsonText(ctx.res, 200, `${head}${records.map((r) => JSON.stringify(render(r))).join(',')}${tail}`);
  // The record knobs are not list fault knobs: ctx.b renders them as b would. A page that is
  // a stretch of an index is one copy from the layout in that order; any other (descending,
  // filtered by a scan, reordered by a fault) is copied record by record.
  const bytes = collection.bytes(recordShape(ctx.b), (r) => recordText(r, ctx.b), page.stretch?.field ?? q.sort.field);
  const body = page.stretch?.field === bytes.field ? bytes.layout.slice(page.stretch.from, records.length, head, tail) : bytes.layout.page(records, head, tail);
  // 'finish': the response has been handed to the socket in full; the buffer is free again.
  ctx.res.once('finish', () => giveBack(body));
  sendJsonText(ctx.res, 200, body);
}

const OFFSET_PARAM = 'page%5Boffset%5D=';

/**
 * The JSON of the list links: the request's URL with page[limit] and page[offset] set, as
 * URLSearchParams.set writes them (then the whole query is form-encoded). The query is set
 * and written once, with offset 0; the links differ only in that value, so each is the text
 * around it with its own offset put in (a URLSearchParams of its own: ctx.query stays as it is).
 */
function links(ctx: PageRequest, limit: number, offset: number, total: number, catalogStyle: boolean, extra: boolean): string {
  const href = ctx.url.href;
  const hashAt = href.indexOf('#');
  const path = href.slice(0, hashAt < 0 ? href.length : hashAt);
  const queryAt = path.indexOf('?');
  const params = new URLSearchParams(ctx.url.search);
  params.set('page[limit]', String(limit));
  params.set('page[offset]', '0');
  // Form-encoded, `&` and `#` inside names and values are escaped: `&` splits the query into
  // its parameters, and page[offset] is one of them exactly once.
  const parts = params.toString().split('&');
  const at = parts.indexOf(`${OFFSET_PARAM}0`);
  const before = `${queryAt < 0 ? path : path.slice(0, queryAt)}?${parts.slice(0, at).map((p) => `${p}&`).join('')}${OFFSET_PARAM}`;
  const behind = `${parts.slice(at + 1).map((p) => `&${p}`).join('')}${hashAt < 0 ? '' : href.slice(hashAt)}`;
  // JSON escapes character by character, and the offset is digits (or, from String(), text
  // like 1e+21, form-encoded as set() would): a link's JSON is the escaped text around it.
  // A URL has no control or non-ASCII character (they are percent-encoded); a quote (in the
  // host) or a backslash (in the fragment) is rare: only then is there anything to escape.
  const plain = !/["\\]/.test(href);
  const open = plain ? `"${before}` : JSON.stringify(before).slice(0, -1);
  const close = plain ? `${behind}"` : JSON.stringify(behind).slice(1);
  const url = (o: number): string => {
    const v = String(o);
    return `${open}${/^\d+$/.test(v) ? v : new URLSearchParams([['', v]]).toString().slice(1)}${close}`;
  };
  const last = Math.max(0, (Math.ceil(total / limit) - 1) * limit);
  const next = offset + limit < total ? url(offset + limit) : 'null';
  const prev = offset > 0 ? url(Math.max(0, offset - limit)) : 'null';
  const docs = extra ? ',"docs":"https://example.invalid/docs/pagination"' : '';
  return `{"${catalogStyle ? 'self' : 'current'}":${url(offset)},"first":${url(0)},"last":${url(last)},"next":${next},"prev":${prev}${docs}}`;
}
