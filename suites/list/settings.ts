// The store's default page length, changed and restored (spec/contract/README.md#limits: "The
// default page length can be changed globally for a project through a settings endpoint, or
// overridden per call with page[limit]"; its path and payload are not shown, and the suite
// reads them as the real platform's, GET and PUT /v2/settings).
//
// Changing it changes the store for everyone, so only with --change-settings (on against the
// bundled server, off against a target): without it these checks send nothing and skip with a
// reason naming the flag. With it, one piece of shared work does every change, in order, and
// each check judges its part of what came back:
//   1. GET /v2/settings: the original page_length (404: no settings endpoint, the checks skip);
//   2. the original written to the ledger, BEFORE the first PUT, so that the run's cleanup (also
//      after Ctrl-C) and `conformance cleanup --run ID` (after a crash) can put it back;
//   3. PUT a length drawn from the seed, below what the chosen lists hold; each list read at
//      once without page[limit] (list.settings.default-follows) and with its own page[limit]
//      (list.settings.limit-overrides);
//   4. PUT a length over 100: refused (4xx, the Error shape), or clamped: GET /v2/settings then
//      shows at most 100 and no page holds more (list.settings.over-100);
//   5. PUT the original back (and the ledger says so); the run's cleanup tries again if not.
// After the first PUT and after the restore, GET /v2/settings once (list.settings.read-back): the
// read of the setting written shows what was written, as the lists do.
// The checks run once every other check is done (suites/register.ts): no other check reads a
// list while the store's length is changed. The lists are every list operation the run read
// holding a record, nested ones too; the drawn length stays below what the LISTS holding the
// most hold, so that it shows.
import type { CheckContext, Session, WrittenCheck, SettingChange } from '../../lib/runner/index.js';
import { expectErrorBody, fail, hash32, restoreSetting, seededRandom } from '../../lib/runner/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { dig, listPageOf, metaInt, pagination, readParentPage, type ListPage } from './pages.js';
import { resolvePath } from './target.js';
import { AREA } from './list-check.js';

/** The settings resource (the real platform's). */
export const SETTINGS_PATH = '/v2/settings';
/** The flag these checks need, as a skip names it. */
const FLAG = '--change-settings';
/** The lists holding the most records that the drawn length stays below, at most. */
const LISTS = 3;
/** The largest page (spec/contract/README.md#limits). */
const MAX_PAGE = 100;
/** The lists the run itself writes to (suites/index.ts WRITTEN_LISTS): their totals say little. */
const WRITTEN = new Set(['application-keys', 'custom-apis']);

/** The body that sets the store's page length. */
function settingsBody(n: number): unknown {
  return { data: { type: 'settings', page_length: n } };
}

/** One list read under the changed length: without page[limit], and with its own. */
interface ListRead {
  e: Endpoint;
  path: string;
  /** What it held before the change (meta.results.total of the run's probe). */
  total: number;
  /** The page[limit] it was read with. */
  limit: number;
  plain: ListPage;
  limited: ListPage;
}

/** What the shared work saw: a reason the checks cannot run, or each step's answers. */
type Exercise =
  | { skip: string }
  | {
      original: number;
      length: number;
      lists: ListRead[];
      /** GET /v2/settings once the length was set, and once the original was put back (absent: the restore was not taken). */
      shown: { changed: HttpResponse; restored?: HttpResponse };
      over: { value: number; put: HttpResponse; settings?: HttpResponse; page?: ListPage; path?: string; total?: number };
    };

/** A list the run read, with how many records it held. */
interface Held {
  e: Endpoint;
  path: string;
  total: number;
}

/** What a list holds, from its probe (read once per run: the list checks read it first). */
async function held(ctx: CheckContext, e: Endpoint): Promise<Held | undefined> {
  const r = await resolvePath(ctx, e);
  if (!r.ok || r.emptyUnder !== undefined || r.absentUnder !== undefined) return undefined;
  const probe = await readParentPage(ctx, e, r.path);
  if (!probe.ok) return undefined;
  return { e, path: r.path, total: Math.max(metaInt(probe, 'results.total') ?? 0, probe.records.length) };
}

/**
 * The lists read under the changed length: every list operation the run read holding a record,
 * top-level and nested alike (a store may apply its length to some lists only); and of them, the
 * few that hold the most (at least 2 each, top-level first), which the drawn length stays below.
 */
async function listsWithRecords(ctx: CheckContext): Promise<{ all: Held[]; most: Held[] }> {
  const endpoints = pagination(ctx).endpoints.filter((e) => !WRITTEN.has(e.operation));
  const all = (await Promise.all(endpoints.map((e) => held(ctx, e).catch(() => undefined)))).filter((h): h is Held => h !== undefined && h.total >= 1);
  const most = (top: boolean): Held[] =>
    all
      .filter((h) => h.total >= 2 && (h.e.placeholders.length === 0) === top)
      .sort((a, b) => b.total - a.total)
      .slice(0, LISTS);
  const top = most(true);
  return { all, most: top.length ? top : most(false) };
}

/** A whole number in [lo, hi] from `random`, other than `not` where the range allows. */
function draw(random: () => number, lo: number, hi: number, not?: number): number {
  const n = lo + Math.floor(random() * (hi - lo + 1));
  if (n !== not || lo === hi) return n;
  return n === hi ? n - 1 : n + 1;
}

/** data.page_length of a 200 JSON answer of GET /v2/settings (undefined when there is none). */
function pageLengthIn(res: HttpResponse): unknown {
  return res.status === 200 && res.isJson ? dig(res.json(), 'data.page_length') : undefined;
}

/** Why the store's settings cannot be read (a skip), or the original page_length. */
async function readOriginal(s: Session): Promise<{ skip: string } | { original: number }> {
  const res = await s.request({ method: 'GET', path: SETTINGS_PATH });
  if (res.status === 404)
    return {
      skip: `not testable: GET ${SETTINGS_PATH} answered 404: the target has no settings endpoint, as the contract allows (its path and payload are not shown)`,
    };
  const v = pageLengthIn(res);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    return { skip: `not testable: GET ${SETTINGS_PATH} answered ${res.status} without a whole page_length at data.page_length` };
  return { original: v };
}

/**
 * Every change, in order (see the head of this file), and the original put back in the end,
 * whatever happened: a target left changed is the one thing this work must not do.
 */
async function exercise(ctx: CheckContext, s: Session): Promise<Exercise> {
  const [first, { all: lists, most }] = await Promise.all([readOriginal(s), listsWithRecords(ctx)]);
  if ('skip' in first) return first;
  if (!most.length) return { skip: 'not testable: no list the run read holds 2 records or more, so no changed length can show' };
  const random = seededRandom(hash32(`${s.run.settings.seed} store page length`));
  // Below what the lists holding the most hold, so that they show the length (the others show
  // min(length, their records), and meta.page.limit the length); never the original.
  const length = draw(random, 1, Math.min(MAX_PAGE, ...most.map((l) => l.total - 1)), first.original);
  const change: SettingChange = {
    path: SETTINGS_PATH,
    name: 'page_length',
    original: first.original,
    body: settingsBody(first.original),
    createdBy: ctx.check.id,
  };
  // In the ledger before the first PUT goes out: a crash from here on leaves the original on disk.
  s.run.ledger.changing(change);
  // Filled in by the restore below, before this work's answer is read.
  const shown: Partial<Extract<Exercise, { original: number }>['shown']> = {};
  try {
    const put = await s.request({ method: 'PUT', path: SETTINGS_PATH, json: settingsBody(length) });
    if (put.status === 404 || put.status === 405)
      return { skip: `not testable: PUT ${SETTINGS_PATH} answered ${put.status}: the target's settings cannot be changed there, as the contract allows` };
    if (put.status < 200 || put.status >= 300)
      return { skip: `not testable: PUT ${SETTINGS_PATH} with page_length ${length} (a whole number from 1 to 100) answered ${put.status}` };
    const [reads, changed] = await Promise.all([
      Promise.all(lists.map((l) => readBoth(s, l, draw(random, 1, Math.min(MAX_PAGE, l.total), length)))),
      s.request({ method: 'GET', path: SETTINGS_PATH }),
    ]);
    shown.changed = changed;
    const over = await overMax(s, most[0]!, draw(random, MAX_PAGE + 1, 2 * MAX_PAGE));
    return { original: first.original, length, lists: reads, shown: shown as Extract<Exercise, { original: number }>['shown'], over };
  } finally {
    const restored = await restoreSetting((spec) => s.request(spec), s.run.ledger, change);
    if (!restored.ok) ctx.note(`${restored.said}; the run's cleanup tries again`);
    else if (shown.changed) shown.restored = await s.request({ method: 'GET', path: SETTINGS_PATH });
  }
}

/** One list read at once without page[limit] and with `limit`. */
async function readBoth(s: Session, l: Held, limit: number): Promise<ListRead> {
  const [plain, limited] = await Promise.all([
    s.request({ method: 'GET', path: l.path }),
    s.request({ method: 'GET', path: l.path, query: { 'page[limit]': limit } }),
  ]);
  return { ...l, limit, plain: listPageOf(plain, l.e), limited: listPageOf(limited, l.e) };
}

/** A length over 100 sent; where it was taken, what the settings and a page without page[limit] show. */
async function overMax(s: Session, l: Held, value: number): Promise<Extract<Exercise, { original: number }>['over']> {
  const put = await s.request({ method: 'PUT', path: SETTINGS_PATH, json: settingsBody(value) });
  if (put.status < 200 || put.status >= 300) return { value, put };
  const [settings, page] = await Promise.all([s.request({ method: 'GET', path: SETTINGS_PATH }), s.request({ method: 'GET', path: l.path })]);
  return { value, put, settings, page: listPageOf(page, l.e), path: l.path, total: l.total };
}

/** The shared work, once per run; a skip when the flag is off or the target cannot show the rules. */
async function exercised(ctx: CheckContext): Promise<Extract<Exercise, { original: number }>> {
  if (!ctx.run.settings.changeSettings)
    ctx.skip(
      `not run: ${FLAG} is off (the default against a --base-url target): this check changes the store's default page length (PUT ${SETTINGS_PATH}) and restores it; run with ${FLAG} (or CONFORMANCE_CHANGE_SETTINGS=true) to exercise it`,
    );
  const x = await ctx.shared('list.settings.exercise', (s) => exercise(ctx, s));
  if ('skip' in x) ctx.skip(x.skip);
  return x;
}

/** A page read under the changed length holds `want` records and says `limit` in meta.page.limit. */
function expectPage(page: ListPage, what: string, limit: number, why: string): void {
  if (!page.ok) fail(`${what} did not answer with a list`, { expected: '200 with a list', actual: `status ${page.res.status}`, res: page.res });
  const total = metaInt(page, 'results.total') ?? page.records.length;
  const said = metaInt(page, 'page.limit');
  if (said !== limit)
    fail(`${what}: meta.page.limit is not ${why}`, { expected: `meta.page.limit ${limit}`, actual: `meta.page.limit ${String(said)}`, res: page.res });
  const want = Math.min(limit, total);
  if (page.records.length !== want)
    fail(`${what} does not hold min(${why}, results.total) records`, {
      expected: `${want} record(s) (min(${limit}, ${total}))`,
      actual: `${page.records.length} record(s)`,
      res: page.res,
    });
}

/** Where the three checks' rules are written. */
const CLAUSE = { at: 'limits', detail: 'default page length, settable per project' } as const;

/** The page_length a GET /v2/settings shows, or why it shows none. */
function shownLength(res: HttpResponse): number | string {
  const v = pageLengthIn(res);
  return typeof v === 'number' ? v : `status ${res.status}, data.page_length ${JSON.stringify(v) ?? 'absent'}`;
}

/** GET /v2/settings, read once right after `what`, shows `want` as page_length. */
function expectShown(res: HttpResponse, want: number, what: string): void {
  const got = shownLength(res);
  if (got !== want)
    fail(`GET ${SETTINGS_PATH} right after ${what} does not show it`, {
      expected: `200 with data.page_length ${want}, as the lists read without page[limit] follow it`,
      actual: typeof got === 'number' ? `data.page_length ${got}` : got,
      res,
    });
}

export const settingsChecks: WrittenCheck[] = [
  {
    id: 'list.settings.default-follows',
    area: AREA,
    clause: CLAUSE,
    title: "after the store's default page length is changed, a list without page[limit] holds that many records and says so in meta.page.limit",
    async run(ctx) {
      const x = await exercised(ctx);
      for (const l of x.lists) expectPage(l.plain, `GET ${l.path} without page[limit], page_length set to ${x.length}`, x.length, 'the new length');
      ctx.note(
        `page_length ${x.original} set to ${x.length} (drawn from the seed), then restored; ${x.lists.map((l) => `${l.e.key} (${l.total} records)`).join(', ')}`,
      );
    },
  },
  {
    id: 'list.settings.limit-overrides',
    area: AREA,
    clause: CLAUSE,
    title: "page[limit] overrides the store's page length, whatever it is set to",
    async run(ctx) {
      const x = await exercised(ctx);
      for (const l of x.lists) expectPage(l.limited, `GET ${l.path}?page[limit]=${l.limit}, page_length set to ${x.length}`, l.limit, 'page[limit]');
    },
  },
  {
    id: 'list.settings.read-back',
    area: AREA,
    clause: { at: 'limits', detail: 'default page length, settable per project; GET /v2/settings (platform)' },
    title: 'GET /v2/settings shows the page_length a PUT set, right after it (and the original once it is put back)',
    async run(ctx) {
      const x = await exercised(ctx);
      expectShown(x.shown.changed, x.length, `PUT ${SETTINGS_PATH} set page_length ${x.length}`);
      if (!x.shown.restored) return ctx.note(`page_length ${x.length} shown after the change; the restore was not taken, so not read after it`);
      expectShown(x.shown.restored, x.original, `PUT ${SETTINGS_PATH} put page_length ${x.original} back`);
      ctx.note(`page_length ${x.length} shown after the change, ${x.original} after the restore`);
    },
  },
  {
    id: 'list.settings.over-100',
    area: AREA,
    clause: CLAUSE,
    title: 'a store page length over 100 is refused with a 4xx and the Error shape, or clamped: no page holds more than 100 records',
    async run(ctx) {
      const { over } = await exercised(ctx);
      const what = `PUT ${SETTINGS_PATH} with page_length ${over.value}`;
      if (over.put.status >= 400 && over.put.status < 500) {
        expectErrorBody(over.put, `${what} was refused`);
        return ctx.note(`${what} was refused with ${over.put.status}`);
      }
      if (over.put.status < 200 || over.put.status >= 300)
        fail(`${what} was neither refused with a 4xx nor taken`, {
          expected: 'a 4xx with the Error shape, or a 2xx (clamped)',
          actual: `status ${over.put.status}`,
          res: over.put,
        });
      const shown = over.settings && pageLengthIn(over.settings);
      if (typeof shown === 'number' && shown > MAX_PAGE)
        fail(`${what} was taken as it was: the store's page length is over 100`, {
          expected: 'GET /v2/settings page_length at most 100 (clamped), or a 4xx refusal',
          actual: `page_length ${shown}`,
          res: over.settings,
        });
      const page = over.page!;
      const said = metaInt(page, 'page.limit');
      if (page.records.length > MAX_PAGE || (said !== undefined && said > MAX_PAGE))
        fail(`GET ${over.path} without page[limit], after ${what}, serves a page over 100`, {
          expected: 'at most 100 records, meta.page.limit at most 100',
          actual: `${page.records.length} record(s), meta.page.limit ${String(said)}`,
          res: page.res,
        });
      ctx.note(`${what} was taken (${over.put.status}) and clamped: page_length shown ${String(shown)}; GET ${over.path} held ${over.total} records`);
    },
  },
];
