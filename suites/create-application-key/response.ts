// Create an Application Key: the success answer (contract, "Endpoints / Create an Application
// Key" and "Resources / ApplicationKey"; READING.md, "Create an Application Key").
import type { Check, CheckContext } from '../../lib/check.js';
import { expectSchema, expectStatus, fail } from '../../lib/expect.js';
import type { HttpResponse } from '../../lib/http.js';
import { SCHEMA } from '../../lib/schema.js';
import { keyData, postApplicationKey, validKey, validKeyBody } from './application-key.js';

const area = 'create-application-key';
const CLAUSE = 'Endpoints / Create an Application Key';

function isSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** The valid key of `slot`; checks that inspect its body skip when the create itself failed. */
async function createdKey(ctx: CheckContext, slot: 'a' | 'b' = 'a'): Promise<{ name: string; res: HttpResponse }> {
  const made = await validKey(ctx, slot);
  if (!isSuccess(made.res)) ctx.skip(`not testable: the valid create answered ${made.res.status} (see create.valid.2xx)`);
  return made;
}

export const responseChecks: Check[] = [
  {
    id: 'create.valid.2xx',
    area,
    clause: `${CLAUSE}: Success`,
    level: 'MUST',
    title: 'a valid body gets a 2xx',
    async run(ctx) {
      expectStatus((await validKey(ctx, 'a')).res, { range: '2xx' }, 'Create an Application Key with a valid body');
    },
  },
  {
    id: 'create.valid.201',
    area,
    clause: `${CLAUSE}: Success ("Created")`,
    level: 'SHOULD',
    title: 'a valid body gets 201 Created',
    async run(ctx) {
      expectStatus((await createdKey(ctx)).res, 201, 'Create an Application Key with a valid body');
    },
  },
  {
    id: 'create.response.schema',
    area,
    clause: 'Resources / ApplicationKey (response)',
    level: 'MUST',
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
    clause: 'Resources / ApplicationKey: meta.timestamps.last_used_at',
    level: 'MUST',
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
    clause: 'Resources / ApplicationKey (response: data, meta, links)',
    level: 'SHOULD',
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
    clause: 'Resources / ApplicationKey: id, client_id, client_secret are unique',
    level: 'MUST',
    title: 'two keys created in one run have different id, client_id and client_secret',
    async run(ctx) {
      const [a, b] = await Promise.all([createdKey(ctx, 'a'), createdKey(ctx, 'b')]);
      const da = keyData(a.res);
      const db = keyData(b.res);
      if (!da || !db) return ctx.skip('not testable: a create answer has no data object (see create.response.schema)');
      for (const field of ['id', 'client_id', 'client_secret'] as const) {
        if (da[field] !== undefined && da[field] === db[field]) {
          // The value is not quoted: a client_secret must never reach a report.
          fail(`both keys have the same ${field}`, { expected: `two different values of data.${field}`, actual: `the same value twice`, res: b.res });
        }
      }
    },
  },
  {
    id: 'create.rate-limit.echo',
    area,
    clause: 'Resources / ApplicationKey: reserved_rate_limit',
    level: 'MUST',
    title: 'a reserved_rate_limit sent comes back as the same integer when the answer has one',
    async run(ctx) {
      const limit = ctx.faker.number.int({ min: 1, max: 5 });
      const res = await postApplicationKey(ctx, { json: validKeyBody(ctx.name(), { reserved_rate_limit: limit }) });
      // The real platform refuses a limit over the store's allowance with 409 (READING.md).
      if (res.status === 409) ctx.skip(`not testable: the target refused reserved_rate_limit ${limit} with 409`);
      expectStatus(res, { range: '2xx' }, `Create an Application Key with reserved_rate_limit ${limit}`);
      // The member is optional in the answer (contract, response table): READING.md holds
      // only a present one to the value sent.
      const data = keyData(res);
      if (!data) return ctx.skip(`not testable: the ${res.status} answer has no data object (see create.response.schema)`);
      if (!('reserved_rate_limit' in data)) return ctx.note('data.reserved_rate_limit is absent from the answer (the member is optional)');
      if (data.reserved_rate_limit !== limit) {
        fail('data.reserved_rate_limit is not the value sent', { expected: String(limit), actual: data.reserved_rate_limit, res });
      }
    },
  },
];
