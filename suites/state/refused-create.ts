// A refused create leaves nothing (spec/contract/README.md#state.refused-creates-nothing): the
// Custom API the delete checks create, sent with a body the platform refuses, looked for by its
// name afterwards. In the area of Custom APIs (delete-custom-api), whose list it reads. The
// refused creates of Application Keys are looked for by their own checks
// (suites/create/rejections.ts).
import { type CheckContext, type RefusalLookUp, type WrittenCheck, fail, refusalLookUp } from '../../lib/runner/index.js';
import { createInvalidCustomApi, CUSTOM_APIS } from '../delete/custom-api.js';

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

export const refusedCreateChecks: WrittenCheck[] = [
  {
    id: 'state.refused-create.custom-api',
    area: 'delete-custom-api',
    clause: { at: ['states', 'custom-api'], detail: 'a create refused with a 4xx' },
    title: 'a Custom API create refused with a 4xx (an invalid api_type) creates nothing: no Custom API of the name sent exists afterwards',
    async run(ctx) {
      const lookUp = refusalLookUp(ctx, 'custom-api', CUSTOM_APIS);
      try {
        await refusedCustomApi(ctx, lookUp);
      } finally {
        lookUp.done();
      }
    },
  },
];
