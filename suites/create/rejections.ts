// Create an Application Key: bodies that break the request schema
// (spec/contract/README.md#application-key, the request table; #create.invalid-bodies: refused with 400
// or 422 and the Error shape, never 2xx, never 5xx), tried as families of shapes in the manner of
// negative testing: each required member absent, each member null or of another JSON type, the
// constant `type` spelled nearly right, and bodies that are not JSON. Shapes spec/contract leaves
// open (null for an optional member, a lenient Content-Type, extra members;
// spec/contract/README.md#create.open-bodies) may also be accepted: create.request.open-shapes says
// which, and holds them to no 5xx.
import {
  type WrittenCheck,
  type CheckContext,
  expectErrorBody,
  expectRejected,
  fail,
  isJsonContentType,
  refusalLookUp,
  type RefusalLookUp,
  type StatusRule,
  type Seen,
} from '../../lib/runner/index.js';
import type { Clause } from '../../lib/contract/index.js';
import { codePoints } from '../../fixtures/names.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { APPLICATION_KEYS, keyBody, NAME_MAX, nameIn, postApplicationKey, sentCompressed, VALIDATION } from './application-key.js';

const area = 'create-application-key';
const CLAUSE: Clause = { at: 'application-key', detail: 'request' };

export type Body = { json: unknown; contentType?: string } | { body: string; contentType?: string };

/** One shape of a family: what is sent, and how a failure names it. */
export interface Shape {
  send: Body;
  what: string;
}

/**
 * Sends every shape of a family at once; the answers come back in the family's order.
 * `refusal`: every shape must be refused (see Session.create).
 */
async function sendAll(ctx: CheckContext, shapes: readonly Shape[], refusal: boolean): Promise<Array<{ shape: Shape; res: HttpResponse }>> {
  return Promise.all(shapes.map(async (shape) => ({ shape, res: await postApplicationKey(ctx, shape.send, { refusal }) })));
}

/**
 * A check that every shape of a family is refused with `statuses` and the Error shape.
 * `shapes` builds the family (and names each shape) from the check's context.
 */
export function rejectionCheck(
  id: string,
  clause: Clause,
  title: string,
  shapes: (ctx: CheckContext) => Shape[],
  statuses: StatusRule = VALIDATION,
): WrittenCheck {
  return {
    id,
    area,
    clause,
    title,
    async run(ctx: CheckContext) {
      const lookUp = refusalLookUp(ctx, 'application-key', APPLICATION_KEYS);
      try {
        const sent = await sendAll(ctx, shapes(ctx), true);
        // Looked for before any verdict: what a refusal stored is in the ledger whatever the check concludes.
        const left = await leftBehind(ctx, lookUp, sent);
        for (const { shape, res } of sent) expectRejected(res, `Create an Application Key (${shape.what})`, statuses);
        if (sent.length > 1) ctx.note(`${sent.length} shapes refused: ${sent.map((x) => `${x.shape.what} → ${x.res.status}`).join('; ')}`);
        expectNothingLeft(ctx, left);
      } finally {
        lookUp.done();
      }
    },
    observe: observeBroken(id, statuses),
  };
}

/**
 * An observed create whose body breaks the rule of check `id` (and no rule before it): refused
 * as the run's own shapes must be. Only requests with a token: without one, a refusal says
 * nothing of the body.
 */
function observeBroken(id: string, statuses: StatusRule): (seen: Seen) => boolean {
  return (seen) => {
    if (seen.operation !== 'create-application-key' || seen.credentials === 'absent') return false;
    // Sent under another Content-Type, or compressed: a refusal of the media (415) is as right
    // as one of the body (spec/contract/README.md#create.open-bodies), so the body is not judged.
    const type = seen.x.requestHeaders['content-type'];
    if (sentCompressed(seen) || (type !== undefined && !isJsonContentType(type))) return false;
    const broken = brokenRule(seen);
    if (broken?.check !== id) return false;
    expectRejected(seen.res, `Create an Application Key (${broken.what})`, statuses);
    return true;
  };
}

/** The refused shapes, each with the records of its name found after the refusals (spec/contract/README.md#state.refused-creates-nothing). */
async function leftBehind(
  ctx: CheckContext,
  lookUp: RefusalLookUp,
  sent: ReadonlyArray<{ shape: Shape; res: HttpResponse }>,
): Promise<{ searched: boolean; found: Array<{ what: string; name: string; ids: string[]; res: HttpResponse }> }> {
  const refused = sent.filter(({ res }) => res.status >= 400 && res.status < 500).map((x) => ({ ...x, name: nameIn(x.shape.send, ctx.run.settings.runId) }));
  const left = await lookUp.find(refused.map((x) => x.name));
  const found = refused.flatMap(({ shape, res, name }) => (left.found.has(name) ? [{ what: shape.what, name, ids: left.found.get(name)!, res }] : []));
  return { searched: left.searched, found };
}

/** A refused create left a key of the name it sent: the refusal was not one. */
function expectNothingLeft(ctx: CheckContext, left: Awaited<ReturnType<typeof leftBehind>>): void {
  if (!left.searched) ctx.note(`not looked for after the refusals: ${APPLICATION_KEYS} could not be read to its end`);
  const first = left.found[0];
  if (!first) return;
  fail(`Create an Application Key (${first.what}) was refused with ${first.res.status}, yet a key of the name it sent exists afterwards`, {
    expected: `a refusal that creates nothing: no key named ${JSON.stringify(first.name)} in ${APPLICATION_KEYS}`,
    actual: `${left.found.map((f) => `${f.ids.length} key(s) for ${f.what}`).join('; ')} (in the ledger: the run's cleanup deletes them)`,
    res: first.res,
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first rule of spec/contract/README.md#create.invalid-bodies (and of name lengths,
 * #create.name-length) an observed create body breaks, in the order of the families: the check
 * that judges it, and what the body is. Undefined for a valid body, or one the contract leaves
 * open (the JSON sent under another Content-Type).
 */
export function brokenRule(seen: Pick<Seen, 'x' | 'sent'>): { check: string; what: string } | undefined {
  const type = seen.x.requestHeaders['content-type'];
  if (seen.sent === undefined)
    return type !== undefined && isJsonContentType(type) ? { check: 'create.reject.not-json', what: 'a body that is not JSON' } : undefined;
  const body = seen.sent;
  if (!isObject(body) || !('data' in body)) return missing(body, 'data', 'create.reject.missing-data');
  const data = body.data;
  if (!isObject(data)) return { check: 'create.reject.data-not-object', what: `data ${describe(data)}` };
  if (!('name' in data)) return missing(data, 'name', 'create.reject.missing-name');
  if (typeof data.name !== 'string') return { check: 'create.reject.name-not-string', what: `name ${describe(data.name)}` };
  if (!('type' in data)) return missing(data, 'type', 'create.reject.missing-type');
  if (data.type !== TYPE) return { check: 'create.reject.wrong-type', what: `type ${describe(data.type)}` };
  const limit = data.reserved_rate_limit;
  if (typeof limit === 'string') return { check: 'create.reject.rate-limit-string', what: `reserved_rate_limit ${JSON.stringify(limit)}` };
  if (limit !== undefined && limit !== null && !Number.isInteger(limit))
    return { check: 'create.reject.rate-limit-fraction', what: `reserved_rate_limit ${describe(limit)}` };
  const length = codePoints(data.name);
  if (length === 0) return { check: 'create.name.empty.rejected', what: 'an empty name' };
  if (length > NAME_MAX) return { check: 'create.name.256-chars.rejected', what: `a name of ${length} characters` };
  return undefined;
}

/** A required member absent: judged by create.reject.member-case when it is there in another case, else by `check`. */
function missing(v: unknown, member: string, check: string): { check: string; what: string } {
  const other = isObject(v) ? Object.keys(v).find((k) => k.toLowerCase() === member) : undefined;
  return other !== undefined
    ? { check: MEMBER_CASE, what: `${member} only as ${JSON.stringify(other)}` }
    : { check, what: member === 'data' ? 'no data' : `data without ${member}` };
}

const TYPE = 'application_key';

/**
 * Spellings of `application_key` a careless comparison accepts: another case, surrounding
 * whitespace, another separator, a plural, a lookalike letter (Cyrillic а, U+0430), and the
 * constant of another resource.
 */
const TYPE_NEAR_MISSES = [
  'custom_api',
  'Application_Key',
  'APPLICATION_KEY',
  ` ${TYPE}`,
  `${TYPE} `,
  'application-key',
  'applicationkey',
  'application_keys',
  'аpplication_key',
];

/** Every JSON type but the one a member must have (`keep` names it). */
function otherTypes(keep: 'string' | 'integer' | 'object', sample: string): unknown[] {
  const all: Record<string, unknown> = { string: sample, integer: 12345, boolean: true, null: null, array: [sample], object: { value: sample } };
  return Object.entries(all)
    .filter(([k]) => k !== keep)
    .map(([, v]) => v);
}

function family(id: string, title: string, make: (name: () => string) => Array<[string, Body]>, statuses?: StatusRule): WrittenCheck {
  // Every body carries a run-prefixed name of its own, so anything a faulty target creates is
  // ours to find, by that exact name, and tells which shape made it.
  return rejectionCheck(id, CLAUSE, title, (ctx) => make(() => ctx.name()).map(([what, send]) => ({ what, send })), statuses);
}

const json = (value: unknown): Body => ({ json: value });
const describe = (v: unknown): string => (v === undefined ? 'absent' : JSON.stringify(v));

export const rejectionChecks: WrittenCheck[] = [
  family('create.reject.missing-data', 'a body without data is rejected (the members at the top level, an empty object, an array, null)', (name) => [
    ['the members at the top level, no data', json({ type: TYPE, name: name() })],
    ['an empty object', json({})],
    ['a JSON array', json([{ type: TYPE, name: name() }])],
    ['JSON null', json(null)],
  ]),
  family('create.reject.data-not-object', 'data that is not an object (string, number, boolean, null, array) is rejected', (name) =>
    [name(), 12345, true, null, [{ type: TYPE, name: name() }]].map((v) => [`data ${describe(v)}`, json({ data: v })]),
  ),
  family('create.reject.missing-name', 'data without name is rejected', () => [['data without name', json({ data: { type: TYPE } })]]),
  family('create.reject.name-not-string', 'a name that is not a string (number, boolean, null, array, object) is rejected', (name) =>
    // Every JSON type but a string, those that can hold a name holding one of their own.
    [12345, true, null, [name()], { value: name() }].map((v) => [`name ${describe(v)}`, json(keyBody(v))]),
  ),
  family('create.reject.missing-type', 'data without type is rejected', (name) => [['data without type', json({ data: { name: name() } })]]),
  family(
    'create.reject.wrong-type',
    'a type other than exactly application_key (another case, whitespace, a lookalike, another JSON type) is rejected',
    (name) => [
      ...TYPE_NEAR_MISSES.map((t): [string, Body] => [`type ${JSON.stringify(t)}`, json({ data: { type: t, name: name() } })]),
      ...otherTypes('string', TYPE).map((t): [string, Body] => [`type ${describe(t)}`, json({ data: { type: t, name: name() } })]),
    ],
  ),
  // A 409 is the real platform's refusal of a rate limit over the store's allowance
  // (spec/contract/README.md#create.invalid-bodies): a refusal all the same, so it passes here.
  family(
    'create.reject.rate-limit-string',
    'a reserved_rate_limit given as a string ("10", "ten", "") is rejected',
    (name) => ['10', 'ten', ''].map((v) => [`reserved_rate_limit ${JSON.stringify(v)}`, json(keyBody(name(), { reserved_rate_limit: v }))]),
    [400, 409, 422],
  ),
  family(
    'create.reject.rate-limit-fraction',
    'a reserved_rate_limit that is not an integer (1.5, a boolean, an array, an object) is rejected',
    (name) => [1.5, true, [10], { value: 10 }].map((v) => [`reserved_rate_limit ${describe(v)}`, json(keyBody(name(), { reserved_rate_limit: v }))]),
    [400, 409, 422],
  ),
  family('create.reject.not-json', 'a body that is not JSON (cut short, empty, JavaScript rather than JSON, a trailing comma) is rejected', (name) => [
    ['JSON cut short', { body: `{"data": {"type": "${TYPE}", "name": "${name()}"`, contentType: 'application/json' }],
    ['an empty body sent as JSON', { body: '', contentType: 'application/json' }],
    ['unquoted member names', { body: `{data: {type: "${TYPE}", name: "${name()}"}}`, contentType: 'application/json' }],
    ['a trailing comma', { body: `{"data": {"type": "${TYPE}", "name": "${name()}",}}`, contentType: 'application/json' }],
  ]),
];

const MEMBER_CASE = 'create.reject.member-case';

/**
 * A required member (data, name, type) present only in another letter case (`NAME`, `Type`,
 * `DATA`) is missing: JSON member names are case-sensitive (RFC 8259), so the body breaks the
 * request table as one without the member does (spec/contract/README.md#create.invalid-bodies),
 * whatever a binder that folds case (Go's encoding/json by default) makes of it. The fixed bodies
 * (MEMBER_CASE_EDGES) go out on every run; exploring, fast-check draws more spellings, with the
 * contract's spelling sent beside another now and then (then the body is open, and which copy a
 * target takes is not judged), and shrinks a disagreement to the smallest.
 */
export const memberCaseCheck: WrittenCheck = {
  id: MEMBER_CASE,
  area,
  clause: CLAUSE,
  title: 'a body whose data, name or type is present only in another letter case (DATA, NAME, Type) lacks it, and is rejected',
  async run(ctx) {
    const lookUp = refusalLookUp(ctx, 'application-key', APPLICATION_KEYS);
    try {
      const { memberCaseExploration, memberCaseRuns } = await import('./explore.js');
      const sent: Array<{ shape: Shape; res: HttpResponse }> = [];
      const x = memberCaseExploration(ctx, memberCaseRuns(ctx.run.settings.explore), (shape, res) => sent.push({ shape, res }));
      await x.send();
      // Looked for before any verdict, as rejectionCheck does: what a refusal stored is in the ledger whatever comes next.
      const left = await leftBehind(ctx, lookUp, sent);
      await x.judge(ctx);
      expectNothingLeft(ctx, left);
    } finally {
      lookUp.done();
    }
  },
  observe: observeBroken(MEMBER_CASE, VALIDATION),
};

/**
 * Shapes spec/contract leaves open (spec/contract/README.md#create.open-bodies): a target may
 * accept or refuse them. Whatever it chooses, a 5xx is never right, and a refusal is an error
 * response with the Error shape.
 */
function openShapes(name: string): Shape[] {
  const body = keyBody(name);
  const text = JSON.stringify(body);
  return [
    { what: 'reserved_rate_limit null (an optional member)', send: json(keyBody(`${name}-null-limit`, { reserved_rate_limit: null })) },
    { what: 'an undocumented extra member in data', send: json(keyBody(`${name}-extra`, { description: 'conformance' })) },
    { what: 'an undocumented top-level member beside data', send: json({ ...keyBody(`${name}-top`), meta: {} }) },
    { what: 'JSON sent as text/plain', send: { body: text.replace(name, `${name}-text`), contentType: 'text/plain' } },
    { what: 'JSON sent without a Content-Type', send: { body: text.replace(name, `${name}-none`) } },
    { what: 'JSON sent as application/vnd.api+json', send: { body: text.replace(name, `${name}-vnd`), contentType: 'application/vnd.api+json' } },
    {
      what: 'JSON sent as application/json; charset=utf-8',
      send: { body: text.replace(name, `${name}-utf8`), contentType: 'application/json; charset=utf-8' },
    },
  ];
}

export const openShapeCheck: WrittenCheck = {
  id: 'create.request.open-shapes',
  area,
  clause: CLAUSE,
  // Whatever an observed create sent, with a token: a 2xx or a refusal, never a 5xx.
  observe(seen) {
    if (seen.operation !== 'create-application-key' || seen.credentials === 'absent') return false;
    if (seen.res.status >= 500)
      fail(`Create an Application Key: a server error`, {
        expected: 'a 2xx (accepted) or a 4xx with the Error shape (refused)',
        actual: `status ${seen.res.status}`,
        res: seen.res,
      });
    return true;
  },
  title:
    'shapes the contract leaves open (null optional member, extra members, another Content-Type) get a 2xx or a 4xx (400, 409 and 422 with the Error shape), never a 5xx',
  async run(ctx) {
    const sent = await sendAll(ctx, openShapes(ctx.name()), false);
    for (const { shape, res } of sent) {
      const what = `Create an Application Key (${shape.what})`;
      if (res.status >= 500)
        fail(`${what}: a server error`, { expected: 'a 2xx (accepted) or a 4xx with the Error shape (refused)', actual: `status ${res.status}`, res });
      // A refusal the contract documents carries the Error shape (MUST). An undocumented one (415
      // for the media type, 401, 413) is held to it only at SHOULD
      // (spec/contract/README.md#errors.undocumented), by errors.undocumented.shape.
      if ([...VALIDATION, 409].includes(res.status)) expectErrorBody(res, what);
    }
    ctx.note(
      `open shapes: ${sent.map(({ shape, res }) => `${shape.what} → ${res.status >= 200 && res.status < 300 ? 'accepted' : res.status >= 400 ? 'refused' : 'answered'} (${res.status})`).join('; ')}`,
    );
    // Exploring: bodies of extreme shapes drawn besides (nested deep, wide, names twice, a BOM, bytes after the JSON).
    if (ctx.run.settings.explore) {
      const { bodyExploration, explorationShare } = await import('./explore.js');
      const x = bodyExploration(ctx, explorationShare(ctx.run.settings.explore)!.bodies);
      await x.send();
      await x.judge(ctx);
    }
  },
};
