// Delete a Custom API (contract, "Endpoints / Delete a Custom API" and "Authentication";
// spec/contract/README.md#delete-custom-api).
import type { WrittenCheck, CheckContext, Session } from '../../lib/check.js';
import { expectEmptyBody, expectErrorBody, expectRejected, expectStatus, fail } from '../../lib/expect.js';
import type { HttpResponse } from '../../lib/http.js';
import { createCustomApi, deleteCustomApi, malformedIds, unknownIds, wrongToken } from './custom-api.js';

const area = 'delete-custom-api';

/** Create a Custom API, then delete it once (shared by the 204 and the second-delete checks). */
function deletedOnce(ctx: CheckContext): Promise<{ id: string; first: HttpResponse }> {
  return ctx.shared('delete-once', async (s) => {
    const made = await createCustomApi(s);
    if (!made.ok) ctx.skip(made.reason);
    return { id: made.id, first: await deleteCustomApi(s, made.id) };
  });
}

/**
 * Create a Custom API, DELETE it with the given auth, then DELETE it with the token: a 204 on
 * the second delete proves the first one was not applied (and cleans up).
 */
function deletedWith(ctx: CheckContext, key: string, auth: 'none' | 'wrong-token'): Promise<{ attempt: HttpResponse; followUp: HttpResponse }> {
  return ctx.shared(key, async (s) => {
    const made = await createCustomApi(s);
    if (!made.ok) ctx.skip(made.reason);
    const attempt = await deleteCustomApi(s, made.id, auth === 'none' ? 'none' : { bearer: wrongToken(s.faker) });
    const followUp = await deleteCustomApi(s, made.id);
    return { attempt, followUp };
  });
}

/** A refused delete must leave the resource in place. */
function expectSurvived(attempt: HttpResponse, followUp: HttpResponse, how: string): void {
  if (attempt.status >= 200 && attempt.status < 300) {
    fail(`DELETE ${how} succeeded`, { expected: 'a refusal (no 2xx)', actual: `status ${attempt.status}`, res: attempt });
  }
  if (followUp.status === 404) {
    fail(`DELETE ${how} answered ${attempt.status} but the Custom API was deleted all the same`, {
      expected: 'the Custom API still exists: the authenticated DELETE that follows succeeds',
      actual: 'the authenticated DELETE that follows answers 404',
      res: followUp,
    });
  }
  // Any 2xx proves it was still there (the exact 204 is delete.existing.204's rule).
  expectStatus(followUp, { range: '2xx' }, `the authenticated DELETE after the DELETE ${how}`);
}

/** Every id of a family, deleted at once; the answers in the family's order. */
function deleteAll(s: Session, ids: Array<{ id: string; what: string; lenient?: boolean }>): Promise<Array<{ what: string; res: HttpResponse; lenient?: boolean }>> {
  return Promise.all(ids.map(async ({ id, what, lenient }) => ({ what: `${what} (${JSON.stringify(id)})`, res: await deleteCustomApi(s, id), lenient })));
}

function deleteMalformed(ctx: CheckContext): Promise<Array<{ what: string; res: HttpResponse; lenient?: boolean }>> {
  return ctx.shared('delete-malformed', (s) => deleteAll(s, malformedIds(s.faker)));
}

function deleteWithoutToken(ctx: CheckContext) {
  return deletedWith(ctx, 'delete-without-token', 'none');
}

export const deleteChecks: WrittenCheck[] = [
  {
    id: 'delete.existing.204',
    area,
    clause: { at: 'delete-custom-api', detail: 'Success' },
    title: 'DELETE of an existing Custom API answers 204 with an empty body',
    async run(ctx) {
      const { first } = await deletedOnce(ctx);
      expectStatus(first, 204, 'DELETE of a Custom API the suite created');
      expectEmptyBody(first, 'the 204 answer');
    },
  },
  {
    id: 'delete.repeat.404',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 404' },
    title: 'a second DELETE of the same id answers 404 with the Error shape (the first was applied)',
    async run(ctx) {
      const { id, first } = await deletedOnce(ctx);
      if (first.status < 200 || first.status >= 300) ctx.skip(`not testable: the first DELETE answered ${first.status}`);
      const second = await deleteCustomApi(ctx, id);
      if (second.status >= 200 && second.status < 300) {
        fail('the second DELETE succeeded: the first one was not applied', { expected: 'status 404', actual: `status ${second.status}`, res: second });
      }
      expectRejected(second, 'the second DELETE of the same id', 404);
    },
  },
  {
    id: 'delete.unknown-id.404',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 404' },
    title: 'DELETE of a well-formed UUID that does not exist (lower or upper case) answers 404 with the Error shape',
    async run(ctx) {
      for (const { what, res } of await deleteAll(ctx, unknownIds(ctx.faker))) expectRejected(res, `DELETE of ${what}`, 404);
    },
  },
  {
    id: 'delete.malformed-id.rejected',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 400' },
    title: 'DELETE with an id that is not UUID-shaped (a word; a UUID with a prefix, a suffix or a lookalike letter) is rejected as invalid (400) with the Error shape',
    async run(ctx) {
      // 422 is accepted here as well: it is the other validation status a correct server
      // uses (spec/contract/README.md#create-application-key allows it for validation failures
      // of Create); the exact 400 is held at SHOULD by delete.malformed-id.400. A 404 means the
      // id was never validated.
      for (const { what, res, lenient } of await deleteMalformed(ctx)) if (!lenient) expectRejected(res, `DELETE with an id that is not UUID-shaped: ${what}`, [400, 422]);
    },
  },
  {
    id: 'delete.malformed-id.400',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 400' },
    title: 'DELETE with an id that is not UUID-shaped (surrounding spaces included) answers exactly 400',
    async run(ctx) {
      for (const { what, res } of await deleteMalformed(ctx)) expectStatus(res, 400, `DELETE with an id that is not UUID-shaped: ${what}`);
    },
  },
  {
    id: 'delete.unauthenticated.refused',
    area,
    clause: { at: ['authentication', 'delete-custom-api'] },
    title: 'DELETE without the Authorization header does not succeed and the Custom API survives',
    async run(ctx) {
      const { attempt, followUp } = await deleteWithoutToken(ctx);
      expectSurvived(attempt, followUp, 'without an Authorization header');
    },
  },
  {
    id: 'delete.unauthenticated.401',
    area,
    clause: { at: ['authentication', 'errors'] },
    title: 'DELETE without the Authorization header answers 401 with the Error shape',
    async run(ctx) {
      const { attempt } = await deleteWithoutToken(ctx);
      expectStatus(attempt, 401, 'DELETE without an Authorization header');
      expectErrorBody(attempt, 'the 401 answer');
    },
  },
  {
    id: 'delete.bad-token.refused',
    area,
    clause: { at: 'authentication' },
    title: 'DELETE with a wrong bearer token is refused (401 or 403) and the Custom API survives',
    async run(ctx) {
      const { attempt, followUp } = await deletedWith(ctx, 'delete-bad-token', 'wrong-token');
      expectSurvived(attempt, followUp, 'with a wrong bearer token');
      expectStatus(attempt, [401, 403], 'DELETE with a wrong bearer token');
    },
  },
];
