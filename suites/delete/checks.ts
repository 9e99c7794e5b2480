// Delete a Custom API (spec/contract/README.md#delete-custom-api and #authentication).
import {
  type WrittenCheck,
  type CheckContext,
  type Session,
  expectEmptyBody,
  expectErrorBody,
  expectRejected,
  expectStatus,
  fail,
  type Seen,
} from '../../lib/runner/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { refusedCreateChecks } from '../state/refused-create.js';
import { createCustomApi, deleteCustomApi, deletedKey, malformedIds, READS_SETTLE_MS, stillFound, unknownIds, UUID, wrongToken } from './custom-api.js';

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

const ok = (res: HttpResponse): boolean => res.status >= 200 && res.status < 300;

/** A delete that must be refused was not. */
function expectRefused(attempt: HttpResponse, how: string): void {
  if (ok(attempt)) fail(`DELETE ${how} succeeded`, { expected: 'a refusal (no 2xx)', actual: `status ${attempt.status}`, res: attempt });
}

/** A refused delete must leave the resource in place. */
function expectSurvived(attempt: HttpResponse, followUp: HttpResponse, how: string): void {
  expectRefused(attempt, how);
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
function deleteAll(
  s: Session,
  ids: Array<{ id: string; what: string; lenient?: boolean }>,
): Promise<Array<{ what: string; res: HttpResponse; lenient?: boolean }>> {
  return Promise.all(ids.map(async ({ id, what, lenient }) => ({ what: `${what} (${JSON.stringify(id)})`, res: await deleteCustomApi(s, id), lenient })));
}

function deleteMalformed(ctx: CheckContext): Promise<Array<{ what: string; res: HttpResponse; lenient?: boolean }>> {
  return ctx.shared('delete-malformed', (s) => deleteAll(s, malformedIds(s.faker)));
}

function deleteWithoutToken(ctx: CheckContext) {
  return deletedWith(ctx, 'delete-without-token', 'none');
}

/** The answer to a DELETE of a Custom API that exists: 204 with an empty body. */
function expectDeleted(res: HttpResponse, what: string): void {
  expectStatus(res, 204, what);
  expectEmptyBody(res, 'the 204 answer');
}

/** The answer to a DELETE of an id already deleted: 404 with the Error shape, never a success. */
function expectGone(res: HttpResponse, what: string): void {
  if (ok(res)) fail(`${what} succeeded: the first one was not applied`, { expected: 'status 404', actual: `status ${res.status}`, res });
  expectRejected(res, what, 404);
}

/** What an observed id is: a UUID, one with spaces around it (lenient, as in a run), or not UUID-shaped. */
function idKind(id: string | undefined): 'uuid' | 'lenient' | 'malformed' | undefined {
  if (id === undefined) return undefined;
  return UUID.test(id) ? 'uuid' : UUID.test(id.trim()) ? 'lenient' : 'malformed';
}

/** The answer to a DELETE without a token: 401 with the Error shape. */
function expectUnauthenticated(res: HttpResponse): void {
  expectStatus(res, 401, 'DELETE without an Authorization header');
  expectErrorBody(res, 'the 401 answer');
}

/** The request may have carried a token (it did, or the record of the traffic strips them). */
const authenticated = (seen: Seen): boolean => seen.credentials !== 'absent';
/** The request surely carried no token. */
const unauthenticated = (seen: Seen): boolean => seen.credentials === 'absent';

export const deleteChecks: WrittenCheck[] = [
  {
    id: 'delete.existing.204',
    area,
    clause: { at: 'delete-custom-api', detail: 'Success' },
    title: 'DELETE of an existing Custom API answers 204 with an empty body',
    async run(ctx) {
      const { first } = await deletedOnce(ctx);
      expectDeleted(first, 'DELETE of a Custom API the suite created');
    },
    // A DELETE that succeeded: the success answer is 204 with an empty body.
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || !ok(seen.res)) return false;
      expectDeleted(seen.res, 'DELETE of a Custom API');
      return true;
    },
  },
  {
    id: 'delete.repeat.404',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 404' },
    title:
      'after a DELETE answered with a success, a read of the id finds nothing and a second DELETE answers 404 with the Error shape (the first was applied)',
    async run(ctx) {
      const { id, first } = await deletedOnce(ctx);
      if (first.status < 200 || first.status >= 300) ctx.skip(`not testable: the first DELETE answered ${first.status}`);
      // Gone means not found: a read of it after the DELETE's 2xx, then a second DELETE.
      const found = await stillFound(ctx, id);
      if (found)
        fail('a GET still finds the Custom API after its DELETE was answered with a success: it was not deleted', {
          expected: 'status 404 (the Custom API is gone)',
          actual: `status ${found.status}, asked again for ${READS_SETTLE_MS / 1000} s`,
          res: found,
        });
      expectGone(await deleteCustomApi(ctx, id), 'the second DELETE');
    },
    // Any access to an id after a DELETE of it succeeded: another DELETE is judged as the
    // second one of a run, and a GET of it must not find it. Only accesses sent once the
    // DELETE's answer had come and the reads had READS_SETTLE_MS to settle, as a run waits: one
    // sent sooner may have been served first, or by a read that lags. Not the list: lists may lag
    // a write longer (spec/contract/README.md#keyset-traversal), and one read soon after is no proof.
    observe(seen, before) {
      const after = (gone: Seen | undefined): gone is Seen =>
        gone !== undefined && seen.x.startedAt > gone.x.startedAt + gone.x.durationMs + READS_SETTLE_MS && authenticated(seen);
      if (seen.id === undefined || (seen.operation !== 'delete-custom-api' && seen.operation !== 'get-custom-api')) return false;
      if (!after(before.deleted.get(deletedKey(seen.id)))) return false;
      if (seen.operation === 'delete-custom-api') expectGone(seen.res, 'a DELETE of an id already deleted');
      else if (ok(seen.res))
        fail('a GET finds a Custom API after its DELETE was answered 2xx: the delete was not applied', {
          expected: 'status 404',
          actual: `status ${seen.res.status}`,
          res: seen.res,
        });
      return true;
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
    // A DELETE of a well-formed UUID (in either case) answered 404: the Error shape. Answered as
    // invalid (400, 422): a well-formed UUID never fails validation, whether it exists or not.
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || idKind(seen.id) !== 'uuid' || !authenticated(seen)) return false;
      if (seen.res.status === 400 || seen.res.status === 422)
        fail(`DELETE of ${JSON.stringify(seen.id)}: a well-formed UUID refused as invalid (${seen.res.status})`, {
          expected: 'status 204 (it existed) or 404 (it did not)',
          actual: `status ${seen.res.status}`,
          res: seen.res,
        });
      if (seen.res.status !== 404) return false;
      expectRejected(seen.res, `DELETE of ${JSON.stringify(seen.id)}`, 404);
      return true;
    },
  },
  {
    id: 'delete.malformed-id.rejected',
    area,
    clause: { at: 'delete-custom-api', detail: 'Failure 400' },
    title:
      'DELETE with an id that is not UUID-shaped (a word; a UUID with a prefix, a suffix or a lookalike letter) is rejected as invalid (400) with the Error shape',
    async run(ctx) {
      // 422 is accepted here as well: it is the other validation status a correct server
      // uses (spec/contract/README.md#create-application-key allows it for validation failures
      // of Create); the exact 400 is held at SHOULD by delete.malformed-id.400. A 404 means the
      // id was never validated.
      for (const { what, res, lenient } of await deleteMalformed(ctx))
        if (!lenient) expectRejected(res, `DELETE with an id that is not UUID-shaped: ${what}`, [400, 422]);
    },
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || idKind(seen.id) !== 'malformed' || !authenticated(seen)) return false;
      expectRejected(seen.res, `DELETE with an id that is not UUID-shaped (${JSON.stringify(seen.id)})`, [400, 422]);
      return true;
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
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || idKind(seen.id) === 'uuid' || idKind(seen.id) === undefined || !authenticated(seen)) return false;
      expectStatus(seen.res, 400, `DELETE with an id that is not UUID-shaped (${JSON.stringify(seen.id)})`);
      return true;
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
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || !unauthenticated(seen)) return false;
      expectRefused(seen.res, 'without an Authorization header');
      return true;
    },
  },
  {
    id: 'delete.unauthenticated.401',
    area,
    clause: { at: ['authentication', 'errors'] },
    title: 'DELETE without the Authorization header answers 401 with the Error shape',
    async run(ctx) {
      const { attempt } = await deleteWithoutToken(ctx);
      expectUnauthenticated(attempt);
    },
    observe(seen) {
      if (seen.operation !== 'delete-custom-api' || !unauthenticated(seen)) return false;
      expectUnauthenticated(seen.res);
      return true;
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
  // A refused create leaves nothing (suites/state/refused-create.ts), in this area.
  ...refusedCreateChecks,
];
