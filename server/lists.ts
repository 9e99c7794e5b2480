// The pages of the reference server's lists: records rendered as the behaviour says, the
// pagination members and links, sent as one JSON text; a fault or variant that rewrites a page
// does so around it (server/around.ts). The data and the query live in
// list-data.ts and list-query.ts.
import { has, through } from './around.js';
import { scopedBehaviour, type Behaviour } from './behaviour.js';
import { giveBack } from './bytes.js';
import { Collection, slugOf, type ListRecord, type OrderField, type Page, type Query } from './collection.js';
import { json, jsonText } from './http.js';

import { MS, S } from './list-data.js';
import { parseQuery, type PageRequest } from './list-query.js';

export {
  dataShapeOf,
  fill,
  generateRecords,
  HARD_OFFSET_LIMIT,
  ListData,
  listTemplates,
  PLAIN_DATA,
  type DataShape,
  type ListOptions,
  type ListTemplate,
  type ParentValues,
} from './list-data.js';
export { parseQuery, type PageRequest } from './list-query.js';
export { scopedBehaviour } from './behaviour.js';
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
 * { id, type, name, slug, meta: { timestamps, owner, release_status }, attributes: { ...timestamps, status } }
 * of the behaviour's layout: the timestamps at meta.timestamps (the catalog) or among the
 * attributes; owner and status only with extra fields, release_status only on a release. The knobs read here make its shape
 * (recordShape).
 */
function recordText(r: ListRecord, b: Behaviour): string {
  // Timestamps (digits, - : . T Z +) and slugs (a-z, 0-9, -) hold nothing to escape.
  const timestamps = `"created_at":"${renderTimestamp(r.created, b, r.seq)}","updated_at":"${renderTimestamp(r.updated, b, r.seq + 3)}"`;
  let out = `{"id":${quote(r.id)},"type":${quote(r.type)},"name":${quote(r.name)},"slug":"${slugOf(r)}"`;
  let meta = b.timestampsAt === 'meta' ? `"timestamps":{${timestamps}}` : '';
  if (b.extraFields) meta += `${meta && ','}"owner":"store"`;
  if (r.status !== undefined) meta += `${meta && ','}"release_status":${quote(r.status)}`;
  if (meta) out += `,"meta":{${meta}}`;
  if (b.timestampsAt === 'attributes') out += b.extraFields ? `,"attributes":{${timestamps},"status":"live"}` : `,"attributes":{${timestamps}}`;
  else if (b.extraFields) out += ',"attributes":{"status":"live"}';
  return `${out}}`;
}

/** Each run of records tied on the sort key, reversed (the unstable-ties fault). */
function reverseTies(records: ListRecord[], field: OrderField): ListRecord[] {
  if (field === 'id' || field === 'insertion') return records;
  const k = field === 'updated_at' ? 'updated' : 'created';
  const out: ListRecord[] = [];
  for (let i = 0; i < records.length;) {
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
 * The records of the page `q` asks for, and how many records it selects. The knobs that reach
 * inside the data query (docs/reference-server.md#knobs-that-reach-inside) are read here alone.
 */
function readPage(collection: Collection, q: Query, b: Behaviour): Page {
  const page = collection.query(b.dropPageBoundary && q.offset > 0 ? { ...q, offset: q.offset + 1 } : q);
  if (!(b.unstableTies === true ? q.offset > 0 : b.unstableTies === 'odd-pages' && Math.floor(q.offset / q.limit) % 2 === 1)) return page;
  // Deterministic: the same request always gets the same answer, and the first page is
  // always in the other order, so tests do not depend on chance.
  const all = collection.query({ ...q, offset: 0, limit: Number.MAX_SAFE_INTEGER });
  return { records: reverseTies(all.records, q.sort.field).slice(q.offset, q.offset + q.limit), total: all.total };
}

/**
 * meta.results.total and the count meta.page.total is made of: the records the request
 * selects, unless a knob that reaches inside the count says otherwise.
 */
function counts(collection: Collection, q: Query, page: Page, b: Behaviour): { total: number; pages: number } {
  const unfiltered = (): number => collection.query({ ...q, filters: [], limit: 0 }).total;
  const selected = b.totalIgnoresFilter && q.filters.length ? unfiltered() : page.total;
  const total = b.totalFromOffset ? Math.max(0, selected - q.offset) : selected;
  return { total, pages: Math.ceil((b.pageTotalIgnoresFilter && q.filters.length ? unfiltered() : total) / q.limit) };
}

/**
 * A page of `collection`. Its records come from the collection's stored bytes (rendered once
 * by recordText), or, given `render`, are rendered now: the store's own lists, whose records
 * carry the request's host in their links and are created and deleted through the API.
 */
export function sendPage(ctx: PageRequest, collection: Collection, source: PageSource, render?: (r: ListRecord) => unknown): void {
  const b = scopedBehaviour(ctx.b, source.template, ctx.query, source.laterParent);
  // The parameters as the list reads them: through the transformations around the server
  // (server/around.ts), then as this server reads them (readQuery).
  const sent = b.around.length
    ? through(b.around, 'query', ctx.query, { pageLength: ctx.pageLength ?? ctx.b.pageLength, initialPageLength: ctx.b.pageLength, search: ctx.url.search })
    : ctx.query;
  const query = b.readQuery ? b.readQuery(sent) : sent;
  const q = parseQuery({ ...ctx, b, query }, source.hardOffsetLimit);
  const page = readPage(collection, q, b);
  const records = page.records;
  const { total, pages } = counts(collection, q, page, b);
  const offset = Number(query.get('page[offset]') ?? 0);
  // spec/contract/README.md#lists.arithmetic: with zero results, current and total may be 0 or 1
  // (or current the formula).
  const formula = (b.currentRounding === 'ceil' ? Math.ceil(q.offset / q.limit) : Math.floor(q.offset / q.limit)) + 1;
  const current = total > 0 ? formula : b.emptyCurrent === 'zero' ? 0 : b.emptyCurrent === 'one' ? 1 : formula;
  const pageTotal = total > 0 ? pages : b.emptyPageTotal;
  // The body is JSON.stringify({ data: records, meta, links }) as it was built from objects,
  // written out here as text around the records: a head, and a tail of what follows. As
  // JSON.stringify writes a number (null when not finite).
  const num = (x: number): string => (Number.isFinite(x) ? String(x) : 'null');
  const stores = b.extraFields ? ',"stores":{"region":"eu-west"}' : '';
  const meta = `{"page":{"limit":${num(q.limit)},"offset":${num(offset)},"current":${num(current)},"total":${num(pageTotal)}},"results":{"total":${num(total)}}${stores}}`;
  const linksMember = b.links ? `,"links":${links(ctx, q.limit, offset, total, source.catalogStyle, b.listLinks === 'extra' || b.extraFields)}` : '';
  const head = '{"data":[';
  const tail = `],"meta":${meta}${linksMember}}`;
  const text = (): string => `${head}${records.map((r) => (render ? JSON.stringify(render(r)) : recordText(r, ctx.b))).join(',')}${tail}`;
  if (has(b.around, 'page')) {
    // A transformation of the finished page (server/around.ts): the page as a value, then what it makes of it.
    const asked = {
      ...(source.template !== undefined ? { template: source.template } : {}),
      query: ctx.query,
      limit: q.limit,
      offset: q.offset,
      total: page.total,
    };
    return ctx.reply(json(200, through(b.around, 'page', JSON.parse(text()) as Record<string, unknown>, asked)));
  }
  if (render) return ctx.reply(jsonText(200, text()));
  // The record knobs are not list fault knobs: ctx.b renders them as b would. A page that is
  // a stretch of an index is one copy from the layout in that order; any other (descending,
  // filtered by a scan, reordered by a fault) is copied record by record.
  const bytes = collection.bytes(recordShape(ctx.b), (r) => recordText(r, ctx.b), page.stretch?.field ?? q.sort.field);
  const body = page.stretch?.field === bytes.field ? bytes.layout.slice(page.stretch.from, records.length, head, tail) : bytes.layout.page(records, head, tail);
  // 'finish': the response has been handed to the socket in full; the buffer is free again.
  ctx.res.once('finish', () => giveBack(body));
  ctx.reply(jsonText(200, body));
}

const OFFSET_PARAM = 'page%5Boffset%5D=';

/**
 * page[offset] as a link writes it: digits, or (from String(), text like 1e+21) form-encoded,
 * as URLSearchParams.set would.
 */
const offsetText = (o: number): string => {
  const v = String(o);
  return /^\d+$/.test(v) ? v : new URLSearchParams([['', v]]).toString().slice(1);
};

/**
 * The links of a parsed list page as they are for a page at `offset` (the `first` link's URL
 * with that offset put in): for a transformation that says another offset than the page's.
 */
export function relink(links: Record<string, unknown>, offset: number, limit: number, total: number): Record<string, unknown> {
  const first = String(links.first);
  const at = first.search(/[?&]page%5Boffset%5D=0(?=[&#]|$)/) + 1 + OFFSET_PARAM.length;
  const url = (o: number): string => `${first.slice(0, at)}${offsetText(o)}${first.slice(at + 1)}`;
  const self = 'self' in links ? 'self' : 'current';
  return {
    ...links,
    [self]: url(offset),
    next: offset + limit < total ? url(offset + limit) : null,
    prev: offset > 0 ? url(Math.max(0, offset - limit)) : null,
  };
}

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
  const before = `${queryAt < 0 ? path : path.slice(0, queryAt)}?${parts
    .slice(0, at)
    .map((p) => `${p}&`)
    .join('')}${OFFSET_PARAM}`;
  const behind = `${parts
    .slice(at + 1)
    .map((p) => `&${p}`)
    .join('')}${hashAt < 0 ? '' : href.slice(hashAt)}`;
  // JSON escapes character by character, and the offset is digits (or, from String(), text
  // like 1e+21, form-encoded as set() would): a link's JSON is the escaped text around it.
  // A URL has no control or non-ASCII character (they are percent-encoded); a quote (in the
  // host) or a backslash (in the fragment) is rare: only then is there anything to escape.
  const plain = !/["\\]/.test(href);
  const open = plain ? `"${before}` : JSON.stringify(before).slice(0, -1);
  const close = plain ? `${behind}"` : JSON.stringify(behind).slice(1);
  const url = (o: number): string => `${open}${offsetText(o)}${close}`;
  const last = Math.max(0, (Math.ceil(total / limit) - 1) * limit);
  const next = offset + limit < total ? url(offset + limit) : 'null';
  const prev = offset > 0 ? url(Math.max(0, offset - limit)) : 'null';
  const docs = extra ? ',"docs":"https://example.invalid/docs/pagination"' : '';
  return `{"${catalogStyle ? 'self' : 'current'}":${url(offset)},"first":${url(0)},"last":${url(last)},"next":${next},"prev":${prev}${docs}}`;
}
