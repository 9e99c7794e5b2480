// A refused create leaves nothing (spec/contract/README.md#state.refused-creates-nothing): the
// Custom API the delete checks create, sent with a body the platform refuses, looked for by its
// name afterwards. In the area of Custom APIs (delete-custom-api), whose list it reads. The
// refused creates of Application Keys are looked for by their own checks
// (suites/create/rejections.ts).
import { type CheckContext, type RefusalLookUp, type WrittenCheck, expectErrorBody, fail, refusalLookUp } from '../../lib/runner/index.js';
import type { CustomApiCreateBody } from '../../fixtures/custom-api.js';
import { createInvalidCustomApi, createRefusedCustomApi, CUSTOM_APIS } from '../delete/custom-api.js';

const ok = (status: number): boolean => status >= 200 && status < 300;

/** The invalid create sent, and its name looked for once it was refused. */
async function refusedCustomApi(ctx: CheckContext, lookUp: RefusalLookUp): Promise<void> {
  const { res, name } = await createInvalidCustomApi(ctx);
  if (ok(res.status)) ctx.skip(`not testable: the target took a Custom API with an invalid api_type (${res.status}); it is in the ledger, for the cleanup`);
  if (res.status < 400 || res.status >= 500) ctx.skip(`not testable: the create answered ${res.status}, not a refusal with a 4xx`);
  const left = await lookUp.find([name]);
  if (!left.searched) ctx.skip(`not testable: ${CUSTOM_APIS} could not be read to its end to look for the name sent`);
  const ids = left.found.get(name);
  if (ids)
    fail(`the Custom API create was refused with ${res.status}, yet a Custom API of the name it sent exists afterwards`, {
      expected: `a refusal that creates nothing: no Custom API named ${JSON.stringify(name)} in ${CUSTOM_APIS}`,
      actual: `${ids.length} Custom API(s) of that name (in the ledger: the run's cleanup deletes them)`,
      res,
    });
  ctx.note(`refused with ${res.status}; no Custom API of the name sent in ${CUSTOM_APIS}`);
}

/** The valid body's data with `members` renamed (each to the spelling given), in their places. */
function renamed(data: CustomApiCreateBody['data'], members: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [members[k] ?? k, v]));
}

/**
 * Custom API bodies whose required members are present only in another letter case: JSON member
 * names are case-sensitive (RFC 8259), so each lacks them (spec/contract/README.md#custom-api:
 * the platform's body, type and name among its members). One body each, as a binder that folds
 * case (Go's encoding/json by default) would take it.
 */
const MEMBER_CASE_BODIES: ReadonlyArray<{ what: string; reshape: (body: CustomApiCreateBody) => unknown }> = [
  { what: 'type and name only as "TYPE" and "NAME"', reshape: (b) => ({ data: renamed(b.data, { type: 'TYPE', name: 'NAME' }) }) },
  { what: 'name only as "Name"', reshape: (b) => ({ data: renamed(b.data, { name: 'Name' }) }) },
  { what: 'data only as "DATA"', reshape: (b) => ({ DATA: b.data }) },
];

/** The bodies of MEMBER_CASE_BODIES sent at once, each refused, and their names looked for afterwards. */
async function memberCaseRefused(ctx: CheckContext, lookUp: RefusalLookUp): Promise<void> {
  const sent = await Promise.all(MEMBER_CASE_BODIES.map(async ({ what, reshape }) => ({ what, ...(await createRefusedCustomApi(ctx, reshape)) })));
  // Looked for before any verdict: what a refusal stored goes to the ledger whatever the check concludes.
  const left = await lookUp.find(sent.filter(({ res }) => res.status >= 400 && res.status < 500).map((x) => x.name));
  for (const { what, res } of sent) {
    const how = `a Custom API create with ${what}`;
    if (ok(res.status) || res.status >= 500)
      fail(`${how} was not refused, though the member is missing (JSON member names are case-sensitive)`, {
        expected: 'a refusal with a 4xx (the platform: 400) and the Error shape; nothing created',
        actual: `status ${res.status}${ok(res.status) ? " (the Custom API is in the ledger: the run's cleanup deletes it)" : ''}`,
        res,
      });
    if (res.status === 400 || res.status === 422) expectErrorBody(res, `${how} was refused`);
  }
  const stored = sent.find(({ name }) => left.found.has(name));
  if (stored)
    fail(`a Custom API create with ${stored.what} was refused with ${stored.res.status}, yet a Custom API of the name it sent exists afterwards`, {
      expected: `a refusal that creates nothing: no Custom API named ${JSON.stringify(stored.name)} in ${CUSTOM_APIS}`,
      actual: `${left.found.get(stored.name)!.length} Custom API(s) of that name (in the ledger: the run's cleanup deletes them)`,
      res: stored.res,
    });
  if (!left.searched) ctx.note(`not looked for after the refusals: ${CUSTOM_APIS} could not be read to its end`);
  ctx.note(`refused: ${sent.map(({ what, res }) => `${what} → ${res.status}`).join('; ')}`);
}

/** `work` with a look-up of Custom APIs by name, opened before it sends anything (lib/runner/refused.ts). */
async function lookingUp(ctx: CheckContext, work: (ctx: CheckContext, lookUp: RefusalLookUp) => Promise<void>): Promise<void> {
  const lookUp = refusalLookUp(ctx, 'custom-api', CUSTOM_APIS);
  try {
    await work(ctx, lookUp);
  } finally {
    lookUp.done();
  }
}

export const refusedCreateChecks: WrittenCheck[] = [
  {
    id: 'state.refused-create.custom-api',
    area: 'delete-custom-api',
    clause: { at: ['states', 'custom-api'], detail: 'a create refused with a 4xx' },
    title: 'a Custom API create refused with a 4xx (an invalid api_type) creates nothing: no Custom API of the name sent exists afterwards',
    run: (ctx) => lookingUp(ctx, refusedCustomApi),
  },
  {
    id: 'state.refused-create.custom-api-member-case',
    area: 'delete-custom-api',
    clause: { at: ['states', 'custom-api'], detail: "the platform's body; JSON member names are case-sensitive" },
    title:
      'a Custom API create whose data, type or name is present only in another letter case (DATA, TYPE, Name) lacks it: refused with a 4xx, and nothing of the name sent exists afterwards',
    run: (ctx) => lookingUp(ctx, memberCaseRefused),
  },
];
