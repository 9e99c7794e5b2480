// Create an Application Key: the success answer (contract, "Endpoints / Create an Application
// Key" and "Resources / ApplicationKey"; spec/contract/README.md#create-application-key).
import type { WrittenCheck, CheckContext } from '../../lib/check.js';
import { expectSchema, expectStatus, fail } from '../../lib/expect.js';
import type { HttpResponse } from '../../lib/http.js';
import { SCHEMA } from '../../lib/schema.js';
import { CheckSkip } from '../../lib/outcome.js';
import { keyData, postApplicationKey, validKey, validKeyBody } from './application-key.js';
import type { Exploration, Group } from './explore.js';

const area = 'create-application-key';

function isSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/**
 * The exploration of a check when the run explores (--explore; explore.ts, loaded only then),
 * made by `make` with the share of --explore that key creation takes. Called only when the run
 * explores: without exploration a check sends its fixed probes without a tick of delay, in the
 * order it always did.
 */
async function exploring<T>(ctx: CheckContext, make: (x: typeof import('./explore.js'), share: { names: number; rateLimits: number; groups: number }) => Exploration<T>): Promise<Exploration<T> | undefined> {
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
  // The real platform refuses a limit over the store's allowance with 409
  // (spec/contract/README.md#create-application-key).
  if (res.status === 409) return `not testable: the target refused reserved_rate_limit ${limit} with 409`;
  expectStatus(res, { range: '2xx' }, `Create an Application Key with reserved_rate_limit ${limit}`);
  // The member is optional in the answer (contract, response table):
  // spec/contract/README.md#create.rate-limit holds only a present one to the value sent.
  const data = keyData(res);
  if (!data) return `not testable: the ${res.status} answer has no data object (see create.response.schema)`;
  if (!('reserved_rate_limit' in data)) {
    ctx.note('data.reserved_rate_limit is absent from the answer (the member is optional)');
    return undefined;
  }
  if (data.reserved_rate_limit !== limit) {
    fail('data.reserved_rate_limit is not the value sent', { expected: String(limit), actual: data.reserved_rate_limit, res });
  }
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
  },
  {
    id: 'create.valid.201',
    area,
    clause: { at: 'create-application-key', detail: 'Success ("Created")' },
    title: 'a valid body gets 201 Created',
    async run(ctx) {
      expectStatus((await createdKey(ctx)).res, 201, 'Create an Application Key with a valid body');
    },
  },
  {
    id: 'create.response.schema',
    area,
    clause: { at: 'application-key', detail: 'response' },
    title: 'the answer has data.name as sent, data.type application_key, and every present field of its documented type',
    async run(ctx) {
      const { name, res } = await createdKey(ctx);
      expectSchema(res, SCHEMA.applicationKeyCreateResponse, 'the create answer');
      const echoed = keyData(res)!.name;
      if (echoed !== name) fail('data.name is not the name sent', { expected: JSON.stringify(name), actual: JSON.stringify(echoed), res });
    },
  },
  {
    id: 'create.response.last-used-null',
    area,
    clause: { at: 'application-key', detail: 'meta.timestamps.last_used_at' },
    title: 'data.meta.timestamps.last_used_at is null for a key never used',
    async run(ctx) {
      const { res } = await createdKey(ctx);
      const timestamps: unknown = keyData(res)?.meta?.timestamps;
      // Not an object is create.response.schema's failure; here, only a present value is judged.
      if (typeof timestamps !== 'object' || timestamps === null || !('last_used_at' in timestamps)) {
        ctx.note('data.meta.timestamps.last_used_at is absent (the field is optional)');
        return;
      }
      if (timestamps.last_used_at !== null) {
        fail('last_used_at is set on a key that was never used', { expected: 'null', actual: JSON.stringify(timestamps.last_used_at), res });
      }
    },
  },
  {
    id: 'create.response.top-level-parts',
    area,
    clause: { at: 'application-key', detail: 'response: data, meta, links' },
    title: 'the answer has the top-level meta and links parts',
    async run(ctx) {
      const { res } = await createdKey(ctx);
      const body = res.json() as Record<string, unknown>;
      const missing = ['meta', 'links'].filter((k) => !body || typeof body[k] !== 'object' || body[k] === null);
      if (missing.length) fail(`the answer lacks ${missing.join(' and ')}`, { expected: 'top-level data, meta and links', actual: `top-level keys: ${Object.keys(body ?? {}).join(', ')}`, res });
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
        const da = keyData(a.res);
        const db = keyData(b.res);
        if (!da || !db) {
          if (!exploration) return ctx.skip('not testable: a create answer has no data object (see create.response.schema)');
          untestable = 'not testable: a create answer has no data object (see create.response.schema)';
        } else {
          for (const field of ['id', 'client_id', 'client_secret'] as const) {
            if (da[field] !== undefined && da[field] === db[field]) {
              // The value is not quoted: a client_secret must never reach a report.
              fail(`both keys have the same ${field}`, { expected: `two different values of data.${field}`, actual: `the same value twice`, res: b.res });
            }
          }
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
  },
];
