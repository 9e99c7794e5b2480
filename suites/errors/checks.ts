// The Error shape beyond the documented statuses (spec/contract/README.md#errors: the Content-Type,
// and errors the contract does not document, held to the same shape at SHOULD level).
import { type WrittenCheck, expectErrorBody, expectStatus, fail, isJsonContentType } from '../../lib/runner/index.js';
import { deleteCustomApi } from '../delete/custom-api.js';
import { postApplicationKey } from '../create/application-key.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { authChecks } from '../auth/matrix.js';

const area = 'errors';

/** An error answer is labelled as JSON. */
function expectJsonType(res: HttpResponse): void {
  const type = res.headers['content-type'];
  if (!isJsonContentType(type)) {
    fail('the error response is not labelled as JSON', {
      expected: 'Content-Type: application/json',
      actual: type === undefined ? 'no Content-Type header' : `Content-Type: ${type}`,
      res,
    });
  }
}

/** Statuses the contract documents for none of its operations: held to the Error shape at SHOULD. */
const UNDOCUMENTED = new Set([401, 403, 405, 406, 413, 415]);

export const errorChecks: WrittenCheck[] = [
  {
    id: 'errors.content-type.json',
    area,
    clause: { at: 'errors' },
    title: 'an error response is served as application/json (or application/*+json)',
    async run(ctx) {
      const res = await deleteCustomApi(ctx, ctx.faker.string.uuid());
      if (res.status < 400) ctx.skip(`not testable: DELETE of a random UUID answered ${res.status}, not an error`);
      expectJsonType(res);
    },
    // Every error with a body on an operation of the contract.
    observe(seen) {
      if (seen.res.status < 400 || seen.x.bodyBytes === 0) return false;
      expectJsonType(seen.res);
      return true;
    },
  },
  {
    id: 'errors.undocumented.shape',
    area,
    clause: { at: 'errors', detail: 'errors the contract does not document' },
    title: 'an undocumented error (Create an Application Key without a token) has the Error shape',
    async run(ctx) {
      // The contract does not say whether Create needs a token ("Authentication requirement
      // of Create an Application Key: not shown"); if the target refuses, the refusal is an
      // undocumented error and is held to the Error shape.
      const res = await postApplicationKey(ctx, { json: { data: { type: 'application_key', name: ctx.name() } }, auth: 'none' });
      ctx.note(`Create an Application Key without a token answered ${res.status}`);
      if (res.status >= 200 && res.status < 300) ctx.skip('not testable: the target creates Application Keys without a token');
      expectStatus(res, { range: '4xx' }, 'Create an Application Key without a token');
      expectErrorBody(res, 'the refusal');
    },
    observe(seen) {
      if (!UNDOCUMENTED.has(seen.res.status)) return false;
      expectErrorBody(seen.res, `the ${seen.res.status} answer`);
      return true;
    },
  },
  // Every operation and method without a valid token (suites/auth/matrix.ts), in this area.
  ...authChecks,
];
