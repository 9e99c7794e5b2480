// What a refused create left behind (spec/contract/README.md#state.refused-creates-nothing): the
// names a check sent in creates the target refused, looked for in the collection they were
// posted to. A refusal that stored the resource all the same is found by its exact name (each
// create the suite expects refused carries a name of its own, traced to the run), written to the
// ledger by id so the run's cleanup deletes it, and handed back to the check to fail on.
//
// One read of the list answers the names of every check that asks: a check that will look says
// so when it starts (refusalLookUp), before it sends anything, and the look-up goes out once each
// check that said so has handed its names in or finished without (a check never waits for one
// that started after the look-up closed: that one joins the next). The checks start side by side,
// so one look-up serves them all, and how many requests it takes does not depend on timing.
import { findNames } from '../transport/index.js';
import type { CheckContext, RunContext } from './check.js';
import type { ResourceKind } from './ledger.js';
import { tracesTo } from './run-names.js';

interface Batch {
  key: string;
  names: Set<string>;
  /** Checks that said they will look, and those that have handed their names in (or left). */
  expected: number;
  settled: number;
  closed: Promise<void>;
  close(): void;
}

const open = new WeakMap<RunContext, Map<string, Batch>>();
let serial = 0;

/** The look-up open for `collection` in this run (one is opened when none is). */
function openBatch(run: RunContext, collection: string): Batch {
  let batches = open.get(run);
  if (!batches) open.set(run, (batches = new Map<string, Batch>()));
  const found = batches.get(collection);
  if (found) return found;
  const m = batches;
  let resolve!: () => void;
  const batch: Batch = {
    key: `refused look-up ${collection} #${++serial}`,
    names: new Set(),
    expected: 0,
    settled: 0,
    closed: new Promise<void>((r) => (resolve = r)),
    close: () => {
      // Closed: a check that says it will look after this opens the next look-up.
      if (m.get(collection) === batch) m.delete(collection);
      resolve();
    },
  };
  m.set(collection, batch);
  return batch;
}

/** What the look-up found of a check's names. */
export interface Left {
  /** Whether the collection could be read to its end (else nothing can be told of absence). */
  searched: boolean;
  /** Each name sent that a record of the collection has, with the ids of those records. */
  found: Map<string, string[]>;
}

/** A check's place in the look-up of one collection: `find` once its refused creates are answered, `done` when it ends either way. */
export interface RefusalLookUp {
  find(names: readonly string[]): Promise<Left>;
  done(): void;
}

/**
 * Says, before any create goes out, that the check will look in `collection` (of `kind`) for the
 * names its refused creates sent. `find` hands them in and waits for the look-up every such
 * check shares; what it finds is in the ledger by id before it returns. Names that do not carry
 * the run's id are not looked for: a record of that name may be anyone's. `done` (in a finally)
 * lets the look-up go without this check's names when it ends before `find`.
 */
export function refusalLookUp(ctx: CheckContext, kind: ResourceKind, collection: string): RefusalLookUp {
  const batch = openBatch(ctx.run, collection);
  batch.expected++;
  let settled = false;
  const settle = (): void => {
    if (settled) return;
    settled = true;
    if (++batch.settled === batch.expected) batch.close();
  };
  return {
    async find(names) {
      const ours = [...new Set(names.filter((n) => n.length > 0 && tracesTo(n, ctx.run.settings.runId)))];
      for (const n of ours) batch.names.add(n);
      settle();
      if (!ours.length) return { searched: true, found: new Map() };
      await batch.closed;
      const all = await ctx.shared(batch.key, async (s) => {
        const found = await findNames((spec) => s.request(spec), collection, batch.names);
        for (const [name, ids] of found ?? []) for (const id of ids) s.created({ kind, id, name, deletePath: `${collection}/${encodeURIComponent(id)}` });
        return found;
      });
      if (!all) return { searched: false, found: new Map() };
      return { searched: true, found: new Map(ours.flatMap((n) => (all.has(n) ? [[n, all.get(n)!]] : []))) };
    },
    done: settle,
  };
}
