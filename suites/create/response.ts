// Create an Application Key: the success answer (spec/contract/README.md#create-application-key
// and #application-key).
import { type WrittenCheck, type CheckContext, expectSchema, expectStatus, fail, isJsonContentType, type Seen } from '../../lib/runner/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { SCHEMA } from '../../lib/contract/index.js';
import { CheckSkip } from '../../lib/evidence/index.js';
import { keyData, NAME_MAX, postApplicationKey, sentCompressed, validKey, validKeyBody } from './application-key.js';
import type { Exploration, Group } from './explore.js';
import { codePoints } from '../../fixtures/names.js';

const area = 'create-application-key';

function isSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/**
 * A create body like a run's valid one: `{ data: { type, name } }` and nothing else, the name 1 to
 * NAME_MAX printable characters with no space at either end (no control or format character).
 */
function canonicalBody(sent: unknown): boolean {
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent) || Object.keys(sent).join() !== 'data') return false;
  const data = (sent as { data: unknown }).data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const d = data as Record<string, unknown>;
  if (Object.keys(d).sort().join() !== 'name,type' || d.type !== 'application_key' || typeof d.name !== 'string') return false;
  const n = codePoints(d.name);
  return n >= 1 && n <= NAME_MAX && d.name.trim() === d.name && !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(d.name);
}

/** An observed create that succeeded (a 2xx to POST /v2/application-keys). */
function createdSeen(seen: Seen): boolean {
  return seen.operation === 'create-application-key' && isSuccess(seen.res);
}

/** The data member an observed create sent, if it sent an object there. */
function sentData(seen: Seen): Record<string, unknown> | undefined {
  const data = (seen.sent as { data?: unknown } | undefined)?.data;
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
}

/** The answer to a valid create: the schema, and the name sent echoed. */
function expectCreated(res: HttpResponse, name: string): void {
  expectSchema(res, SCHEMA.applicationKeyCreateResponse, 'the create answer');
  const echoed = keyData(res)!.name;
  if (echoed !== name) fail('data.name is not the name sent', { expected: JSON.stringify(name), actual: JSON.stringify(echoed), res });
}

/** last_used_at of a new key: null where present; returns a note when it is absent. */
function expectNeverUsed(res: HttpResponse): string | undefined {
  const timestamps: unknown = keyData(res)?.meta?.timestamps;
  // Not an object is create.response.schema's failure; here, only a present value is judged.
  if (typeof timestamps !== 'object' || timestamps === null || !('last_used_at' in timestamps))
    return 'data.meta.timestamps.last_used_at is absent (the field is optional)';
  if (timestamps.last_used_at !== null)
    fail('last_used_at is set on a key that was never used', { expected: 'null', actual: JSON.stringify(timestamps.last_used_at), res });
  return undefined;
}

/** The create answer's top-level meta and links parts. */
function expectTopLevelParts(res: HttpResponse): void {
  const body = res.json() as Record<string, unknown>;
  const missing = ['meta', 'links'].filter((k) => !body || typeof body[k] !== 'object' || body[k] === null);
  if (missing.length)
    fail(`the answer lacks ${missing.join(' and ')}`, {
      expected: 'top-level data, meta and links',
      actual: `top-level keys: ${Object.keys(body ?? {}).join(', ')}`,
      res,
    });
}

/** Two created keys differ in id, client_id and client_secret (the value is never quoted: a secret must not reach a report). */
function expectDistinct(a: HttpResponse, b: HttpResponse): boolean {
  const da = keyData(a);
  const db = keyData(b);
  if (!da || !db) return false;
  for (const field of ['id', 'client_id', 'client_secret'] as const) {
    if (da[field] !== undefined && da[field] === db[field])
      fail(`both keys have the same ${field}`, { expected: `two different values of data.${field}`, actual: `the same value twice`, res: b });
  }
  return true;
}

/**
 * A reserved_rate_limit sent, echoed: a present member is the integer sent. Returns why the answer
 * cannot show it (a 409, no data object), 'absent' when the member is left out, or undefined.
 */
function expectLimitEcho(res: HttpResponse, limit: number): string | undefined {
  // The real platform refuses a limit over the store's allowance with 409
  // (spec/contract/README.md#create-application-key).
  if (res.status === 409) return `not testable: the target refused reserved_rate_limit ${limit} with 409`;
  expectStatus(res, { range: '2xx' }, `Create an Application Key with reserved_rate_limit ${limit}`);
  // The member is optional in the answer (contract, response table):
  // spec/contract/README.md#create.rate-limit holds only a present one to the value sent.
  const data = keyData(res);
  if (!data) return `not testable: the ${res.status} answer has no data object (see create.response.schema)`;
  if (!('reserved_rate_limit' in data)) return 'absent';
  if (data.reserved_rate_limit !== limit)
    fail('data.reserved_rate_limit is not the value sent', { expected: String(limit), actual: data.reserved_rate_limit, res });
  return undefined;
}

/**
 * The exploration of a check when the run explores (--explore; explore.ts, loaded only then),
 * made by `make` with the share of --explore that key creation takes. Called only when the run
 * explores: without exploration a check sends its fixed probes without a tick of delay, in the
 * order it always did.
 */
async function exploring<T>(
  ctx: CheckContext,
  make: (x: typeof import('./explore.js'), share: { names: number; rateLimits: number; groups: number }) => Exploration<T>,
): Promise<Exploration<T> | undefined> {
  if (!ctx.run.settings.explore) return undefined;
  const x = await import('./explore.js');
  return make(x, x.explorationShare(ctx.run.settings.explore)!);
}

/** Both settled (nothing the check sent is left in flight), in order. */
async function together<A, B>(a: Promise<A>, b: Promise<B> | undefined): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B | undefined>]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  return [ra, rb];
}

/**
 * create.rate-limit.echo's fixed probe: fails on a wrong answer, notes an absent member, and
 * returns why it cannot judge (a 409, no data object), if it cannot.
 */
function judgeFixedLimit(ctx: CheckContext, res: HttpResponse, limit: number): string | undefined {
  const why = expectLimitEcho(res, limit);
  if (why !== 'absent') return why;
  ctx.note('data.reserved_rate_limit is absent from the answer (the member is optional)');
  return undefined;
}

/** The valid key of `slot`; checks that inspect its body skip when the create itself failed. */
async function createdKey(ctx: CheckContext, slot: 'a' | 'b' = 'a'): Promise<{ name: string; res: HttpResponse }> {
  const made = await validKey(ctx, slot);
  if (!isSuccess(made.res)) ctx.skip(`not testable: the valid create answered ${made.res.status} (see create.valid.2xx)`);
  return made;
}

export const responseChecks: WrittenCheck[] = [
  {
    id: 'create.valid.2xx',
    area,
    clause: { at: 'create-application-key', detail: 'Success' },
    title: 'a valid body gets a 2xx',
    async run(ctx) {
      expectStatus((await validKey(ctx, 'a')).res, { range: '2xx' }, 'Create an Application Key with a valid body');
    },
    // A body as plainly valid as a run's own (canonicalBody), sent as JSON with a token: never
    // refused as invalid, never a 5xx. 401, 403, 409 and 429 say nothing of the body. Bodies the
    // contract leaves open (extra members, a null or edge rate limit, unusual characters in the
    // name) may be refused, as a run allows (create.request.open-shapes, the drawn values).
    observe(seen) {
      if (seen.operation !== 'create-application-key' || seen.credentials === 'absent' || !canonicalBody(seen.sent)) return false;
      // A body sent compressed may be refused by a target that reads none (415): nothing is said of its validity.
      if (!isJsonContentType(seen.x.requestHeaders['content-type']) || sentCompressed(seen) || [401, 403, 409, 429].includes(seen.res.status)) return false;
      expectStatus(seen.res, { range: '2xx' }, 'Create an Application Key with a valid body');
      return true;
    },
  },
  {
    id: 'create.valid.201',
    area,
    clause: { at: 'create-application-key', detail: 'Success ("Created")' },
    title: 'a valid body gets 201 Created',
    async run(ctx) {
      expectStatus((await createdKey(ctx)).res, 201, 'Create an Application Key with a valid body');
    },
    observe(seen) {
      if (!createdSeen(seen)) return false;
      expectStatus(seen.res, 201, 'Create an Application Key');
      return true;
    },
  },
  {
    id: 'create.response.schema',
    area,
    clause: { at: 'application-key', detail: 'response' },
    title: 'the answer has data.name as sent, data.type application_key, and every present field of its documented type',
    async run(ctx) {
      const { name, res } = await createdKey(ctx);
      expectCreated(res, name);
    },
    observe(seen) {
      const name = sentData(seen)?.name;
      if (!createdSeen(seen) || typeof name !== 'string') return false;
      expectCreated(seen.res, name);
      return true;
    },
  },
  {
    id: 'create.response.last-used-null',
    area,
    clause: { at: 'application-key', detail: 'meta.timestamps.last_used_at' },
    title: 'data.meta.timestamps.last_used_at is null for a key never used',
    async run(ctx) {
      const note = expectNeverUsed((await createdKey(ctx)).res);
      if (note) ctx.note(note);
    },
    observe(seen) {
      if (!createdSeen(seen)) return false;
      return expectNeverUsed(seen.res) === undefined;
    },
  },
  {
    id: 'create.response.top-level-parts',
    area,
    clause: { at: 'application-key', detail: 'response: data, meta, links' },
    title: 'the answer has the top-level meta and links parts',
    async run(ctx) {
      expectTopLevelParts((await createdKey(ctx)).res);
    },
    observe(seen) {
      if (!createdSeen(seen)) return false;
      expectTopLevelParts(seen.res);
      return true;
    },
  },
  {
    id: 'create.keys.distinct',
    area,
    clause: { at: 'application-key', detail: 'id, client_id, client_secret are unique' },
    title: 'two keys created in one run have different id, client_id and client_secret',
    async run(ctx) {
      // With --explore, groups of keys created with one drawn name and one reserved_rate_limit
      // too: keys named alike must still differ.
      const exploration = ctx.run.settings.explore ? await exploring<Group>(ctx, (x, share) => x.groupExploration(ctx, share.groups)) : undefined;
      const [pair, drawn] = await together(Promise.all([createdKey(ctx, 'a'), createdKey(ctx, 'b')]), exploration?.send());
      let untestable: string | undefined;
      if (pair.status === 'rejected') {
        if (!(exploration && pair.reason instanceof CheckSkip)) throw pair.reason;
        untestable = pair.reason.message;
      } else {
        const [a, b] = pair.value;
        if (!expectDistinct(a.res, b.res)) {
          if (!exploration) return ctx.skip('not testable: a create answer has no data object (see create.response.schema)');
          untestable = 'not testable: a create answer has no data object (see create.response.schema)';
        }
      }
      if (!exploration) return;
      if (drawn.status === 'rejected') throw drawn.reason;
      await exploration.judge(ctx);
      // The two valid keys could not be compared: the check stands on the drawn groups alone.
      if (untestable !== undefined) {
        if (!exploration.judgedAny()) ctx.skip(`${untestable}; no drawn group made two keys either`);
        ctx.note(`the two valid keys: ${untestable}`);
      }
    },
    // Each key created, against every key created before it in the traffic.
    // A retry that carries the Idempotency-Key of an earlier create is answered with that create's
    // key: one key, not two.
    observe(seen, before) {
      if (!createdSeen(seen)) return false;
      const retryOf = (earlier: Seen): boolean => {
        const key = seen.x.requestHeaders['idempotency-key'];
        return key !== undefined && key === earlier.x.requestHeaders['idempotency-key'];
      };
      let compared = false;
      for (const earlier of before.created) if (!retryOf(earlier)) compared = expectDistinct(earlier.res, seen.res) || compared;
      return compared;
    },
  },
  {
    id: 'create.rate-limit.echo',
    area,
    clause: { at: 'application-key', detail: 'reserved_rate_limit' },
    title: 'a reserved_rate_limit sent comes back as the same integer when the answer has one',
    async run(ctx) {
      const limit = ctx.faker.number.int({ min: 1, max: 5 });
      const fixedBody = validKeyBody(ctx.name(), { reserved_rate_limit: limit });
      // With --explore, edge integers (0, 1, around 2^31 and 2^32, 2^53-1, negatives) and
      // integers drawn across the safe range too: each refused (400, 409 or 422 with the Error
      // shape) or accepted, and then echoed when the answer carries the member.
      const exploration = ctx.run.settings.explore ? await exploring<number>(ctx, (x, share) => x.rateLimitExploration(ctx, share.rateLimits)) : undefined;
      const [fixed, drawn] = await together(postApplicationKey(ctx, { json: fixedBody }), exploration?.send());
      if (fixed.status === 'rejected') throw fixed.reason;
      // Without exploration, what the fixed probe says ends the check; with it, a skip waits
      // for the drawn values' verdict.
      const untestable = judgeFixedLimit(ctx, fixed.value, limit);
      if (!exploration) {
        if (untestable !== undefined) ctx.skip(untestable);
        return;
      }
      if (drawn.status === 'rejected') throw drawn.reason;
      await exploration.judge(ctx);
      if (untestable !== undefined) {
        // The fixed probe told nothing: the check stands on the values that were echoed.
        if (!exploration.judgedAny()) ctx.skip(`${untestable}; no other value sent was echoed either`);
        ctx.note(`the fixed probe: ${untestable}`);
      }
    },
    observe(seen) {
      const limit = sentData(seen)?.reserved_rate_limit;
      if (!createdSeen(seen) || typeof limit !== 'number' || !Number.isInteger(limit)) return false;
      return expectLimitEcho(seen.res, limit) === undefined;
    },
  },
];
