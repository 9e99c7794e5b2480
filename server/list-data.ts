// The data of the reference server's lists: every path of spec/list-operations.yaml as a
// template, the parent lists their placeholders come from, and the records of each concrete
// path, generated from the seed on first use.
import type { Faker } from '@faker-js/faker';
// The English entry loads English alone (the main entry loads about 70 locales at start-up); its
// class and merged definitions make the same fakers as `new Faker({ locale: [en, base] })`.
import { faker as english } from '@faker-js/faker/locale/en';
import { scopedBehaviour, type Behaviour } from './behaviour.js';
import { Collection, slugOf, timeIndex, type ListRecord, type Query } from './collection.js';
import { HttpError } from './http.js';
import { endpointsOf, listPathsOf, loadCatalogSpec, parentSourceIn, placeholders, type ParentSource } from '../lib/contract/index.js';
import { hash32, seededRandom } from '../lib/runner/index.js';

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

export function listTemplates(): { templates: ListTemplate[]; parents: Record<string, ParentSource>; lists: Set<string> } {
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
  return { templates, parents: spec.parents, lists: listPathsOf(spec) };
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

export const MS = 1000;
export const S = 1_000_000;
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
  for (let i = 0; i < sorted.length;) {
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
 * The faker the records' names come from, made once: seeded afresh for each list, it draws what
 * a new one would, and making one costs more than a small list's records (about 5 ms).
 */
let fakerOfLists: Faker | undefined;

/**
 * Seeded records: timestamps over the past year (epoch microseconds: whole seconds, or with
 * `micros` any microsecond, some records only a few microseconds apart within one
 * millisecond), ~15% of records in groups tied on created_at and on updated_at. Ids rise with
 * the order of generation (numeric ones with random gaps, so that they have 1 to 5 digits and
 * string order is not number order). @faker-js/faker, seeded, gives the names; a small seeded
 * generator the rest, so a million records take about a second.
 */
export function generateRecords(seed: number, label: string, count: number, now: number, recent = false, shape: DataShape = PLAIN_DATA): ListRecord[] {
  const f = (fakerOfLists ??= new (english.constructor as typeof Faker)({ locale: english.rawDefinitions }));
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
    if (shape.ids === 'prefixed')
      return `rec_${String(seq).padStart(8, '0')}${Math.floor(random() * 16 ** 6)
        .toString(16)
        .padStart(6, '0')}`;
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
  /** Every list path of the catalog, for parentSourceIn. */
  readonly #lists: ReadonlySet<string>;
  /** A catalog's releases (the list parents.release_id comes from), and the placeholders of a release: its catalog and itself. */
  readonly #releases: string | undefined;
  readonly #releaseParams: ReadonlySet<string>;

  constructor(options: ListOptions) {
    this.options = options;
    const { templates, parents, lists } = listTemplates();
    this.templates = templates;
    this.parents = parents;
    this.#lists = lists;
    const release = parents[RELEASE];
    this.#releases = release && 'from' in release ? release.from : undefined;
    this.#releaseParams = new Set(this.#releases ? [RELEASE, ...placeholders(this.#releases)] : []);
  }

  /** Where placeholder `name` of `t` is filled from: the list its path names before it, as the contract's lists chain (parentSourceIn). */
  sourceOf(t: ListTemplate, name: string): ParentSource | undefined {
    return parentSourceIn(this.parents, this.#lists, t.template, name);
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
   * of a parent list, a storeShape other than 'even' size it by where its parents stand in their
   * lists and say which of a catalog's releases were published (every one in an even store);
   * without it, or with the knobs off, the data is the same as ever.
   */
  collection(t: ListTemplate, concrete: string, under?: ParentValues): Collection {
    const empty = under !== undefined && under.b.firstParentEmpty && this.firstParents(t, under).some((first) => first);
    const storeShape = under?.b.storeShape ?? 'even';
    const releases = !empty && t.template === this.#releases;
    // A by-release list is sized by its parents inside the release, the release's own lists by none.
    const shaped = releases || empty || storeShape === 'even' ? [] : this.listParams(t).filter((name) => !this.#releaseParams.has(name));
    const key = empty ? `${concrete}\n(first parent)` : releases || shaped.length ? `${concrete}\n(${storeShape})` : concrete;
    let c = this.#collections.get(key);
    if (!c) {
      const { seed, now, recent, shape } = this.options;
      const statuses = releases ? this.#releaseStatuses(t, concrete, under) : undefined;
      const places = shaped.map((name) => this.placeOf(t, name, under!));
      const size = empty ? 0 : statuses ? statuses.length : places.length ? this.#realisticSize(t, concrete, places) : this.#sizeOf(t, concrete);
      const records = generateRecords(seed, concrete, size, now, recent, shape);
      // Oldest first: the newest release is the last of them.
      if (statuses) records.sort(byAge).forEach((r, i) => ((r as Draft).status = statuses[i]));
      c = new Collection(records, { idOrder: shape.ids === 'numeric' ? 'numeric' : 'string' });
      this.#collections.set(key, c);
    }
    return c;
  }

  /**
   * The statuses of a catalog's releases, oldest first, by the store's shape and the catalog's
   * place in its list: every release published in an even store; in a realistic one the oldest
   * catalog (and the next) never published, a third of the later ones published; in a
   * few-published one three catalogs alone (PUBLISHED_AT), each with a history whose newest
   * release may not be published.
   */
  #releaseStatuses(t: ListTemplate, concrete: string, under: ParentValues | undefined): readonly string[] {
    if (!under || under.b.storeShape === 'even') return EVEN_RELEASES;
    const [catalog] = this.listParams(t);
    const few = under.b.storeShape === 'few-published';
    const place = catalog === undefined ? 0 : this.placeOf(t, catalog, under, few ? PUBLISHED_AT.at(-1)! + 1 : FAR);
    // Two draws from the catalog's path: whether it was published, and which history.
    const h = hash32(concrete);
    const never = NEVER_PUBLISHED[(h >>> 8) % NEVER_PUBLISHED.length]!;
    if (few) {
      const at = PUBLISHED_AT.indexOf(place as (typeof PUBLISHED_AT)[number]);
      return at >= 0 ? HISTORIES[at]! : place === 0 ? NEVER_PUBLISHED[1]! : never;
    }
    if (place < 2) return NEVER_PUBLISHED[place + 1]!;
    return place === 2 || h % 3 === 0 ? HISTORIES[(h >>> 8) % HISTORIES.length]! : never;
  }

  /**
   * The size of a nested list in a store shaped as real ones grow (storeShape 'realistic'), by
   * how far down their parent lists its parents stand (the sum of their places): under the first
   * parents nothing, then a single record, the full list only under later ones; a nested parent
   * list (a hierarchy's nodes) is empty under the first parent and small under the others.
   */
  #realisticSize(t: ListTemplate, concrete: string, places: readonly number[]): number {
    const k = places.reduce((a, b) => a + b, 0);
    if (k === 0) return 0;
    if (t.size === 'parent') return this.#sizeOf(t, concrete);
    return k < FAR ? 1 : this.#sizeOf(t, concrete);
  }

  /** The placeholders of `t` filled from a parent list (a fixed `value` is not). */
  listParams(t: ListTemplate): string[] {
    return t.params.filter((name) => {
      const source = this.sourceOf(t, name);
      return source !== undefined && !('value' in source) && this.templates.some((x) => x.template === source.from);
    });
  }

  /**
   * For each placeholder of `t` filled from a parent list (listParams), the place in that list
   * of the record `under.values` gives it (placeOf).
   */
  parentIndices(t: ListTemplate, under: ParentValues): number[] {
    return this.listParams(t).map((name) => this.placeOf(t, name, under));
  }

  /**
   * The place of the record `under.values` gives placeholder `name` of `t` (filled from a parent
   * list) in that list, in the order a client reading it without parameters meets them: 0 for
   * the first, and `far` for any past the first `far` (or not there): only the first few are told
   * apart, so that a request under a parent list of many records does not read them all.
   */
  placeOf(t: ListTemplate, name: string, under: ParentValues, far = FAR): number {
    const source = this.sourceOf(t, name) as Extract<ParentSource, { from: string }>;
    const parentTemplate = this.templates.find((x) => x.template === source.from)!;
    const concrete = fill(parentTemplate, under.values);
    const parent = this.collection(parentTemplate, concrete, under);
    // The order a read of the parent list without parameters is served in: a fault scoped to
    // other lists or requests (ListFaultScope) leaves it the conforming one.
    const seen = scopedBehaviour(
      under.b,
      parentTemplate.template,
      new URLSearchParams(),
      under.b.listFaultScope?.parents === 'later' && this.laterParent(parentTemplate, under),
    );
    const records = parent.query({ offset: 0, limit: far, sort: defaultOrder(seen), filters: [] }).records;
    const place = records.findIndex((r) => (source.field === 'slug' ? slugOf(r) : r.id) === under.values[name]);
    return place < 0 ? far : place;
  }

  /** For each placeholder of `t` filled from a parent list, whether `under.values` gives it the first record of that list. */
  firstParents(t: ListTemplate, under: ParentValues): boolean[] {
    return this.parentIndices(t, under).map((i) => i === 0);
  }

  /**
   * Whether some placeholder of `t` takes another value than the first record of its parent
   * list (ListFaultScope.parents 'later').
   */
  laterParent(t: ListTemplate, under: ParentValues): boolean {
    return this.firstParents(t, under).some((first) => !first);
  }

  /**
   * The placeholder values of a concrete path of `t` as its lists name them (an alias of the
   * list's `also`, latestPublished, as the id of the catalog's newest published release), or a
   * 404 with the Error shape where a value is not a record of the list the path fills it from
   * (sourceOf: a by-release path's hierarchy from that release's own hierarchies, never from
   * /catalog/hierarchies) or is a release that was not published. A parent list's placeholders
   * come before it in the path, as the contract's lists chain: they are resolved by then.
   */
  resolveParents(t: ListTemplate, values: Readonly<Record<string, string>>, b: Behaviour): Record<string, string> {
    const out = { ...values };
    for (const name of t.params) {
      const source = this.sourceOf(t, name);
      const value = out[name]!;
      if (!source) throw new HttpError(404, 'Not found');
      if ('value' in source) {
        if (value !== source.value) throw new HttpError(404, `'${value}' not found`);
        continue;
      }
      const parentTemplate = this.templates.find((x) => x.template === source.from)!;
      const concrete = fill(parentTemplate, out);
      const parent = this.collection(parentTemplate, concrete, { values: out, b });
      const alias = source.also?.includes(value) === true;
      const record = alias ? newestPublished(parent) : parent.find(source.field === 'slug' ? 'slug' : 'id', value);
      if (!record) throw new HttpError(404, alias ? `${concrete} holds no published release ('${value}')` : `Parent '${value}' not found in ${concrete}`);
      if (record.status !== undefined && record.status !== PUBLISHED)
        throw new HttpError(404, `Release '${value}' is ${record.status}: only a published release is served`);
      out[name] = source.field === 'slug' ? slugOf(record) : record.id;
    }
    return out;
  }
}

/** A concrete path of `t` with `values` put in. */
export function fill(t: ListTemplate, values: Readonly<Record<string, string>>): string {
  return t.params.reduce((p, n) => p.replace(`{${n}}`, values[n]!), t.template);
}

/** The placeholder of a catalog's release (spec/list-operations.yaml parents.release_id). */
const RELEASE = 'release_id';
/** The status of a release whose lists are served (the real platform's meta.release_status). */
const PUBLISHED = 'PUBLISHED';
/** Every release published: the even store. */
const EVEN_RELEASES = [PUBLISHED, PUBLISHED, PUBLISHED, PUBLISHED];
/** The releases of a catalog that was published, oldest first: the newest may have failed or be pending. */
const HISTORIES: ReadonlyArray<readonly string[]> = [
  [PUBLISHED, 'FAILED'],
  [PUBLISHED, PUBLISHED, 'PENDING'],
  ['FAILED', PUBLISHED, PUBLISHED],
];
/** The releases of a catalog never published: none, one that failed, one pending. */
const NEVER_PUBLISHED: ReadonlyArray<readonly string[]> = [[], ['FAILED'], ['PENDING']];
/** The places of the few-published store's published catalogs in their list: never the first. */
const PUBLISHED_AT = [1, 3, 6] as const;

/** Oldest first; among records created together, in the order of generation. */
const byAge = (a: ListRecord, b: ListRecord): number => a.created - b.created || a.seq - b.seq;

/** The newest published record of a list of releases (byAge), if any. */
function newestPublished(releases: Collection): ListRecord | undefined {
  const all = releases.query({ offset: 0, limit: Number.MAX_SAFE_INTEGER, sort: { field: 'insertion', descending: false }, filters: [] }).records;
  return all.filter((r) => r.status === PUBLISHED).reduce<ListRecord | undefined>((newest, r) => (!newest || byAge(newest, r) < 0 ? r : newest), undefined);
}

/**
 * How far down its parent list a parent must stand for the nested lists under it to hold a full
 * list in a store shaped as real ones grow (storeShape 'realistic'): the ones before hold one
 * record, or none under the first. ListData.placeOf tells places apart up to it.
 */
const FAR = 3;

/** A concrete list path's placeholder values, and the behaviour that serves it (the list route's). */
export interface ParentValues {
  values: Record<string, string>;
  b: Behaviour;
}

/** The order a list is served in when no sort is asked for. */
export function defaultOrder(b: Behaviour): Query['sort'] {
  if (b.defaultOrder === '-created_at') return { field: 'created_at', descending: true };
  return { field: b.defaultOrder, descending: false };
}
