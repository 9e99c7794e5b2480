// States and transitions (spec/contract/README.md#states): short sequences of creates, reads,
// lists and deletes of Application Keys and Custom APIs, drawn from the run's seed, each answer
// held to a model (suites/state/model.ts, sent by suites/state/sequence.ts). The sequences are
// sent once per run, by whichever check asks first; each check holds them to its own rule, and
// shrinks a sequence that breaks it to the shortest it finds.
import type { CheckContext, WrittenCheck } from '../../lib/runner/index.js';
import type { Rule } from './model.js';
import type { Ran, Sequences } from './sequence.js';

export const AREA = 'state';

/** The sequences of the run, sent once (shared), with what each gave. */
function sequences(ctx: CheckContext): Promise<{ q: Sequences; outcomes: Ran[] }> {
  return ctx.shared('state-sequences', async (s) => {
    const { DEFAULT_SETTLE_MS, Sequences } = await import('./sequence.js');
    const q = new Sequences(s.run.settings.seed, s.run.settings.pagination?.timeBufferMs ?? DEFAULT_SETTLE_MS);
    return { q, outcomes: await q.send(s) };
  });
}

/** Holds the run's sequences to `rule`: the shortest sequence that breaks it fails the check, with its steps. */
async function holdTo(ctx: CheckContext, rule: Rule, untested: string): Promise<void> {
  const { q, outcomes } = await sequences(ctx);
  const found = await q.smallest(ctx, rule);
  if (found) q.report(rule, found);
  if (!outcomes.some((o) => o.exercised.has(rule))) ctx.skip(`not testable: ${untested} (${q.summary(outcomes)})`);
  ctx.note(q.summary(outcomes));
}

export const stateChecks: WrittenCheck[] = [
  {
    id: 'state.sequence.created',
    area: AREA,
    clause: { at: 'states', detail: 'create, then read and list' },
    title:
      'in a sequence of creates, reads, lists and deletes, a created Application Key or Custom API is served by its read and appears in its list within the time buffer',
    run: (ctx) => holdTo(ctx, 'created', 'no sequence read or listed a record it had created'),
  },
  {
    id: 'state.sequence.deleted',
    area: AREA,
    clause: { at: ['states', 'delete-custom-api'], detail: 'delete, then read and list' },
    title: 'in a sequence of creates, reads, lists and deletes, a deleted Custom API reads 404 and is gone from its list after the time buffer',
    run: (ctx) => holdTo(ctx, 'deleted', 'no sequence read or listed a Custom API it had deleted'),
  },
  {
    id: 'state.sequence.distinct',
    area: AREA,
    clause: { at: ['states', 'application-key'], detail: 'unique id, client_id, client_secret' },
    title: 'in a sequence of creates, reads, lists and deletes, the records created have distinct ids, and keys distinct client_id and client_secret',
    run: (ctx) => holdTo(ctx, 'distinct', 'no sequence created two records of a kind'),
  },
  {
    id: 'state.sequence.total',
    area: AREA,
    clause: { at: ['states', 'pagination-information'], detail: 'results total' },
    title:
      "in a sequence of creates, reads, lists and deletes, a list's meta.results.total moves by exactly what the sequence did (its own records counted by their run-tagged names)",
    run: (ctx) => holdTo(ctx, 'total', 'no sequence read a whole list with meta.results.total'),
  },
];
