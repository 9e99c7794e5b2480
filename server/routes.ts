// The reference server's operations: the contract's two (Delete a Custom API, Create an
// Application Key), what the suite needs around them (create a Custom API, delete a key,
// the store settings), and small lists of both.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Asked } from './around.js';
import type { Behaviour } from './behaviour.js';
import { empty, HttpError, json, readJson } from './http.js';
import type { ApplicationKey, CustomApi, Store } from './store.js';
import { Collection, type ListRecord } from './collection.js';
import { fill, renderTimestamp, sendPage, type ListTemplate, type PageRequest } from './lists.js';

/** A request as a route sees it: what a list page reads (its URL against `baseUrl`), and more. */
export interface RouteContext extends PageRequest {
  req: IncomingMessage;
  params: string[];
  store: Store;
  baseUrl: string;
  /**
   * Whether the request carried a token that lets it in: the server's own, or one from
   * POST /oauth/access_token (routes that need none still know).
   */
  authenticated: boolean;
  /** The request as the transformations around the server see it (server/around.ts). */
  asked: Asked;
}

export interface Route {
  /** What the transformations around the server know it by (Asked.route). */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  pattern: RegExp;
  /** Routes that may be reached without a token under the current behaviour. */
  open?: (b: Behaviour) => boolean;
  /** Outside the contract (the token endpoint): no transformation rewrites the answers it gives. */
  outsideContract?: boolean;
  handle(ctx: RouteContext): Promise<void> | void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The uuid-case-sensitive fault: only lower-case hex passes. */
const UUID_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The uuid-partial-match fault: the pattern without its anchors, so `x<uuid>x` passes. */
const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const SLUG = /^[a-z0-9_-]{1,63}$/;
const API_TYPE = /^[a-z0-9_]{1,59}_ext$/;

function timestamp(d: Date, b: Behaviour, salt = 0): string {
  return renderTimestamp(d.getTime() * 1000, b, salt);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The `data` object of a create body, or a refusal saying what is wrong. */
function dataOf(body: unknown, b: Behaviour): Record<string, unknown> {
  if (!isObject(body)) throw new HttpError(b.validationStatus, 'The request body must be a JSON object.');
  if (!('data' in body)) throw new HttpError(b.validationStatus, "The field 'data' is required.");
  if (!isObject(body.data)) throw new HttpError(b.validationStatus, "The field 'data' must be an object.");
  return body.data;
}

/**
 * A Custom API's or Application Key's id: UUID-shaped (spec/contract/README.md#resources), else 400
 * (or the fault's status).
 */
function checkId(raw: string, b: Behaviour): string {
  const pattern = b.uuidPartialMatch ? UUID_ANYWHERE : b.uuidCaseSensitive ? UUID_LOWER : UUID;
  if (!pattern.test(raw)) throw new HttpError(b.malformedIdStatus, `'${raw.slice(0, 80)}' is not a valid id: a UUID is expected.`);
  return raw.toLowerCase();
}

/**
 * A create past the store's cap (Store.maxRecords, per kind) is refused with 409 and the Error
 * shape: a 4xx, as the request is the client's to change (delete some, then create), not a
 * failure of the server; 409, as the contract already answers a create that the platform
 * cannot grant with it (a reserved rate limit over the maximum) and lists it among a create's
 * refusals (400, 409, 422); not 429 or 503, which a client takes as "send it again later"
 * (the suite's own client does) while nothing will change until it deletes.
 */
export function roomFor(store: Store, records: ReadonlyMap<string, unknown>, what: string, remedy = 'delete one to create another'): void {
  if (records.size >= store.maxRecords) throw new HttpError(409, `This server holds at most ${store.maxRecords} ${what}; ${remedy}.`);
}

/** The longest description a Custom API keeps: with the cap on records, what the store can hold is bounded. */
export const MAX_DESCRIPTION = 1_000;

function newId(store: Store, b: Behaviour): string {
  return b.idFormat === 'uuid' ? store.uuid() : String(store.serial);
}

// --- The store's settings ---------------------------------------------------------------

/** The largest store page length (spec/contract/README.md#lists.default-max): a page holds at most 100 records. */
const MAX_PAGE_LENGTH = 100;

/** The store's settings as GET and PUT /v2/settings answer them: the page length lists use now. */
function settingsJson(ctx: RouteContext): unknown {
  return { data: { type: 'settings', page_length: ctx.store.pageLength ?? ctx.b.pageLength } };
}

/** The settings endpoint, or 404 where the behaviour has none (the no-settings-endpoint variant). */
function settingsServed(b: Behaviour): void {
  if (!b.settingsEndpoint) throw new HttpError(404, 'Not found');
}

/**
 * The page length a PUT /v2/settings body sets: a whole number from 1 to 100; over 100 refused
 * with the behaviour's status, or clamped (the choices), or, as a fault, kept as sent.
 */
function pageLengthOf(body: unknown, b: Behaviour): number {
  const d = dataOf(body, b);
  if (d.type !== 'settings') throw new HttpError(b.validationStatus, "The field 'type' must be 'settings'.");
  const n = d.page_length;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
    throw new HttpError(b.validationStatus, `The field 'page_length' must be a whole number from 1 to ${MAX_PAGE_LENGTH}.`);
  if (n <= MAX_PAGE_LENGTH) return n;
  if (b.pageLengthOverMax === 'clamp') return MAX_PAGE_LENGTH;
  // Knob that reaches inside (docs/reference-server.md#knobs-that-reach-inside): the store keeps it.
  if (b.pageLengthOverMax === 'accept') return n;
  throw new HttpError(b.pageLengthOverMax, `The field 'page_length' must not exceed ${MAX_PAGE_LENGTH}.`);
}

// --- Custom APIs -----------------------------------------------------------------------

const CUSTOM_APIS = '/v2/settings/extensions/custom-apis';

function customApiJson(c: CustomApi, ctx: RouteContext): unknown {
  const t = timestamp(c.created, ctx.b, c.id.charCodeAt(0));
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    slug: c.slug,
    api_type: c.api_type,
    description: c.description,
    ...(ctx.b.links ? { links: { self: `${ctx.baseUrl}${CUSTOM_APIS}/${c.id}` } } : {}),
    meta: { timestamps: { created_at: t, updated_at: t } },
    ...(ctx.b.extraFields ? { relationships: {} } : {}),
  };
}

function createCustomApi(ctx: RouteContext, body: unknown): CustomApi {
  const { b, store } = ctx;
  const d = dataOf(body, b);
  const bad = (detail: string): never => {
    throw new HttpError(b.validationStatus, detail);
  };
  if (d.type !== 'custom_api') bad("The field 'type' must be 'custom_api'.");
  if (typeof d.name !== 'string' || d.name.length === 0 || [...d.name].length > 255) bad("The field 'name' must be a string of 1 to 255 characters.");
  // The reference takes slug and api_type when given; the custom-api-platform variant needs
  // them exactly as the real platform does (spec/contract/README.md#custom-api).
  if (b.customApiPlatformRules || d.slug !== undefined) {
    if (typeof d.slug !== 'string' || !SLUG.test(d.slug)) bad("The field 'slug' must match ^[a-z0-9_-]{1,63}$.");
  }
  if (b.customApiPlatformRules || d.api_type !== undefined) {
    if (typeof d.api_type !== 'string' || !API_TYPE.test(d.api_type)) bad("The field 'api_type' must match ^[a-z0-9_]{1,59}_ext$.");
  }
  if (d.description !== undefined && typeof d.description !== 'string') bad("The field 'description' must be a string.");
  if (
    typeof d.description === 'string' &&
    d.description.length > MAX_DESCRIPTION &&
    (d.description.length > 2 * MAX_DESCRIPTION || [...d.description].length > MAX_DESCRIPTION)
  )
    bad(`The field 'description' must be at most ${MAX_DESCRIPTION} characters long.`);
  if (b.customApiPlatformRules) {
    for (const c of store.customApis.values()) {
      if (c.slug === d.slug) throw new HttpError(409, `A Custom API with slug '${String(d.slug)}' already exists.`);
    }
  }
  roomFor(store, store.customApis, 'Custom APIs');
  const c: CustomApi = {
    id: store.uuid(),
    type: 'custom_api',
    name: d.name as string,
    slug: (d.slug as string | undefined) ?? '',
    api_type: (d.api_type as string | undefined) ?? '',
    description: (d.description as string | undefined) ?? '',
    created: new Date(),
  };
  store.customApis.set(c.id, c);
  return c;
}

// --- Application Keys ------------------------------------------------------------------

const APPLICATION_KEYS = '/v2/application-keys';
const SHARED_SECRET = 'reference-repeated-secret-0000000000';

function nameLength(name: string, b: Behaviour): number {
  if (b.nameLengthUnit === 'bytes') return Buffer.byteLength(name);
  if (b.nameLengthUnit === 'utf16') return name.length;
  return [...name].length;
}

function keyJson(k: ApplicationKey, ctx: RouteContext): Record<string, unknown> {
  const t = timestamp(k.created, ctx.b, k.serial);
  const limit =
    k.reserved_rate_limit === undefined || !ctx.b.echoRateLimit ? undefined : ctx.b.rateLimitEchoWrong ? k.reserved_rate_limit + 1 : k.reserved_rate_limit;
  return {
    id: k.id,
    type: k.type,
    name: k.name,
    client_id: k.client_id,
    client_secret: k.client_secret,
    ...(limit !== undefined ? { reserved_rate_limit: limit } : {}),
    meta: { timestamps: { created_at: t, updated_at: t, last_used_at: k.last_used_at } },
    ...(ctx.b.links ? { links: { self: `${ctx.baseUrl}${APPLICATION_KEYS}/${k.id}` } } : {}),
    ...(ctx.b.extraFields ? { description: '', scopes: ['*'] } : {}),
  };
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function validKey(body: unknown, b: Behaviour): { name: string; type: string; reserved_rate_limit?: number } {
  const d = dataOf(body, b);
  const bad = (detail: string): never => {
    throw new HttpError(b.validationStatus, detail);
  };
  const name = d.name;
  if (name === undefined || name === null) bad("The field 'name' is required.");
  if (typeof name !== 'string') bad("The field 'name' must be a string.");
  const n = nameLength(name as string, b);
  if (n < b.nameMin || n > b.nameMax) bad(`The field 'name' must be between ${b.nameMin} and ${b.nameMax} characters long.`);
  const type = d.type;
  if (type === undefined) bad("The field 'type' is required.");
  if (type !== 'application_key' && b.checkTypeValue) bad("The field 'type' must be 'application_key'.");
  let limit = d.reserved_rate_limit;
  if (limit === null) {
    // An optional member given as null: spec/contract/README.md#create.open-bodies leaves it open
    // (refused, or taken as absent).
    if (b.nullRateLimit === 'crash') throw new HttpError(500, 'Cannot read the reserved rate limit.');
    if (b.nullRateLimit === 'accept') limit = undefined;
  }
  if (limit === undefined && b.requireRateLimit) bad("The field 'reserved_rate_limit' is required.");
  if (limit !== undefined) {
    const ok = typeof limit === 'number' && Number.isFinite(limit) && (b.acceptFractionalRateLimit || Number.isInteger(limit));
    if (!ok) bad("The field 'reserved_rate_limit' must be an integer.");
    if ((limit as number) < 0) bad("The field 'reserved_rate_limit' must not be negative.");
    if ((limit as number) > b.maxRateLimit) throw new HttpError(409, 'The requested reserved rate limit will exceed the maximum.');
  }
  // Faults that change the name after it passed validation: what the client stored differs from what it sent.
  let stored = name as string;
  if (b.nameTrimmed) stored = stored.trim();
  if (b.nameHtmlEscaped) stored = stored.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
  // The name-normalized-nfc fault: precomposed on the way in, so a decomposed name (e + U+0301) comes back changed.
  if (b.nameNormalizedNfc) stored = stored.normalize('NFC');
  // The rate-limit-int32 fault: kept in a 32-bit signed integer, so 2^31 comes back as -2^31 and 2^32 as 0.
  const kept = limit === undefined ? undefined : b.rateLimitInt32 ? (limit as number) | 0 : (limit as number);
  return { name: stored, type: String(type), ...(kept !== undefined ? { reserved_rate_limit: kept } : {}) };
}

// --- Lists ------------------------------------------------------------------------------

/** A list of the spec's catalog (server/lists.ts), as a route. */
export function listRoute(t: ListTemplate): Route {
  return {
    name: 'list',
    method: 'GET',
    pattern: t.pattern,
    handle(ctx) {
      const lists = ctx.store.lists;
      // An alias (latestPublished) served as the release it names: the same collection.
      const values = lists.resolveParents(t, Object.fromEntries(t.params.map((n, i) => [n, ctx.params[i]!])), ctx.b);
      const concrete = fill(t, values);
      // Which parents the path is under: firstParentEmpty empties the lists under a first one,
      // and a fault scoped to parents 'later' shows only under another.
      const under = { values, b: ctx.b };
      const laterParent = ctx.b.listFaultScope?.parents === 'later' && lists.laterParent(t, under);
      sendPage(ctx, lists.collection(t, concrete, under), {
        template: t.template,
        hardOffsetLimit: t.hardOffsetLimit,
        catalogStyle: t.catalogStyle,
        laterParent,
      });
    },
  };
}

/** A list of things the suite creates, paged like every other list. */
function storeList<T extends { id: string; name: string; created: Date }>(ctx: RouteContext, items: Iterable<T>, render: (t: T) => unknown): void {
  const byId = new Map<string, T>();
  const records: ListRecord[] = [];
  // The listed-after variant: a record shows in its list only once it is that old.
  const listedBefore = Date.now() - ctx.b.listedAfterMs;
  for (const item of items) {
    if (ctx.b.listedAfterMs > 0 && item.created.getTime() > listedBefore) continue;
    byId.set(item.id, item);
    // Sorted and filtered at the precision its timestamps show: a store that compares finer than
    // it shows returns, under gt, a record shown equal to the value (the gt-hidden-precision fault).
    const ms = item.created.getTime();
    const t = (ctx.b.timestampStyle === 'seconds-z' || ctx.b.timestampStyle === 'seconds-offset' ? ms - (ms % 1000) : ms) * 1000;
    records.push({ id: item.id, type: 'item', name: item.name, seq: records.length, created: t, updated: t });
  }
  sendPage(ctx, new Collection(records), { hardOffsetLimit: false, catalogStyle: false }, (r) => render(byId.get(r.id)!));
}

export const ROUTES: Route[] = [
  {
    name: 'settings',
    method: 'GET',
    pattern: /^\/v2\/settings$/,
    handle(ctx) {
      settingsServed(ctx.b);
      ctx.reply(json(200, settingsJson(ctx)));
    },
  },
  {
    name: 'settings.update',
    method: 'PUT',
    pattern: /^\/v2\/settings$/,
    async handle(ctx) {
      settingsServed(ctx.b);
      ctx.store.pageLength = pageLengthOf(await readJson(ctx.req, ctx.b, ctx.asked), ctx.b);
      ctx.reply(json(200, settingsJson(ctx)));
    },
  },
  {
    name: 'custom-apis.list',
    method: 'GET',
    pattern: /^\/v2\/settings\/extensions\/custom-apis$/,
    handle(ctx) {
      // The deleted-custom-api-listed fault: the list still shows what was deleted.
      const listed = [...ctx.store.customApis.values(), ...ctx.store.listedAfterDelete.values()];
      storeList(ctx, listed, (c) => customApiJson(c, ctx));
    },
  },
  {
    name: 'custom-apis.create',
    method: 'POST',
    pattern: /^\/v2\/settings\/extensions\/custom-apis$/,
    async handle(ctx) {
      const c = createCustomApi(ctx, await readJson(ctx.req, ctx.b, ctx.asked));
      ctx.reply(json(201, { data: customApiJson(c, ctx) }));
    },
  },
  {
    name: 'custom-apis.read',
    method: 'GET',
    pattern: /^\/v2\/settings\/extensions\/custom-apis\/([^/]+)$/,
    handle(ctx) {
      const c = ctx.store.customApis.get(checkId(ctx.params[0]!, ctx.b));
      if (!c) throw new HttpError(404, 'Not found');
      ctx.reply(json(200, { data: customApiJson(c, ctx) }));
    },
  },
  {
    name: 'custom-apis.delete',
    method: 'DELETE',
    pattern: /^\/v2\/settings\/extensions\/custom-apis\/([^/]+)$/,
    handle(ctx) {
      const { b, store } = ctx;
      const id = checkId(ctx.params[0]!, b);
      const found = store.customApis.get(id);
      if (!found || found.hiddenFromDelete) throw new HttpError(404, 'Not found');
      // Knobs that reach inside (docs/reference-server.md#knobs-that-reach-inside): what the
      // store does with the delete.
      if (b.deleteHidesOnly) found.hiddenFromDelete = true;
      else if (b.deleteApplies) store.customApis.delete(id);
      if (b.deleteApplies && b.deletedStaysListed) store.listedAfterDelete.set(id, found);
      ctx.reply(empty(204));
    },
  },
  {
    name: 'application-keys.list',
    method: 'GET',
    pattern: /^\/v2\/application-keys$/,
    handle(ctx) {
      // The created-key-unlisted fault: only keys used once are listed.
      const keys = [...ctx.store.applicationKeys.values()].filter((k) => !ctx.b.keysListedOnceUsed || k.last_used_at !== null);
      storeList(ctx, keys, (k) => {
        // A list never shows secrets (the real platform shows them only on creation).
        const { client_secret: _secret, ...rest } = keyJson(k, ctx);
        return rest;
      });
    },
  },
  {
    name: 'application-keys.create',
    method: 'POST',
    pattern: /^\/v2\/application-keys$/,
    open: (b) => b.createWithoutAuth,
    async handle(ctx) {
      const { b, store } = ctx;
      const v = validKey(await readJson(ctx.req, b, ctx.asked), b);
      roomFor(store, store.applicationKeys, 'Application Keys');
      store.serial++;
      const k: ApplicationKey = {
        id: newId(store, b),
        type: b.echoType === 'application_key' ? v.type : b.echoType,
        name: v.name,
        // The client-id-from-name fault: a hash of the name, so two keys named alike share it.
        client_id: b.clientIdFromName ? createHash('sha256').update(v.name).digest('hex').slice(0, 32) : randomBytes(16).toString('hex'),
        client_secret: b.repeatSecrets ? SHARED_SECRET : randomBytes(24).toString('base64url'),
        ...(v.reserved_rate_limit !== undefined ? { reserved_rate_limit: v.reserved_rate_limit } : {}),
        created: new Date(),
        last_used_at: b.lastUsedAtSet ? new Date().toISOString() : null,
        serial: store.serial,
      };
      store.applicationKeys.set(k.id, k);
      const data = keyJson(k, ctx);
      const body = b.topLevelMetaLinks
        ? {
            data,
            meta: { ...(b.extraFields ? { request_id: store.uuid() } : {}) },
            ...(b.links
              ? { links: { self: `${ctx.baseUrl}${APPLICATION_KEYS}/${k.id}`, ...(b.extraFields ? { related: `${ctx.baseUrl}${APPLICATION_KEYS}` } : {}) } }
              : {}),
          }
        : { data };
      ctx.reply(json(b.createStatus, body));
    },
  },
  {
    name: 'application-keys.read',
    method: 'GET',
    pattern: /^\/v2\/application-keys\/([^/]+)$/,
    handle(ctx) {
      const k = ctx.store.applicationKeys.get(ctx.b.idFormat === 'uuid' ? checkId(ctx.params[0]!, ctx.b) : ctx.params[0]!);
      if (!k) throw new HttpError(404, 'Not found');
      const { client_secret: _secret, ...rest } = keyJson(k, ctx);
      ctx.reply(json(200, { data: rest }));
    },
  },
  {
    name: 'application-keys.delete',
    method: 'DELETE',
    pattern: /^\/v2\/application-keys\/([^/]+)$/,
    handle(ctx) {
      const id = ctx.b.idFormat === 'uuid' ? checkId(ctx.params[0]!, ctx.b) : ctx.params[0]!;
      if (!ctx.store.applicationKeys.delete(id)) throw new HttpError(404, 'Not found');
      ctx.reply(empty(204));
    },
  },
];
