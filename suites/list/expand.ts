// A pagination check is written once and run once per list operation (one result per check
// and operation). `appliesTo` narrows it (the hard offset limit is for orders and files).
// Every one of them also answers for the exploration of its operation (explore.ts): a drawn
// request whose answer breaks the check's rule fails it, with the smallest such request.
import { type Check, type CheckContext, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { CheckFailure, CheckSkip } from '../../lib/evidence/index.js';
import { pagination } from './pages.js';
import { AREA, type ListCheck } from './list-check.js';

/**
 * The check's own probes first (unless --explore-only), then what the exploration of its
 * operation found against its rule. A failure of the probes stands as it is; a skip of the
 * probes (too few records, a feature refused) gives way to a disagreement the exploration found.
 */
async function runListCheck(c: ListCheck, ctx: CheckContext, e: Endpoint): Promise<void> {
  const probes = !pagination(ctx).exploreOnly;
  // Loaded when a check first explores (fast-check is large): the check catalogue, the CLI's own
  // process and a run with --explore 0 never load it.
  const explorer = ctx.run.settings.explore ? await import('./explore.js') : undefined;
  let skipped: CheckSkip | undefined;
  if (probes) {
    try {
      await c.run(ctx, e);
    } catch (err) {
      if (!(err instanceof CheckSkip)) {
        // The probes' failure stands; the note still says what the exploration asked (shared: nothing more is sent).
        if (err instanceof CheckFailure && explorer) {
          const x = await explorer.explore(ctx, e).catch(() => undefined);
          if (x?.drawn) ctx.note(explorer.explorationNote(x));
        }
        throw err;
      }
      skipped = err;
    }
  }
  if (explorer) {
    const { explore, explorationNote, FOUND_BY } = explorer;
    const x = await explore(ctx, e);
    if (x.drawn) ctx.note(explorationNote(x));
    const f = x.found.get(c.id);
    if (f) {
      const d = f.disagreement;
      const path = x.paths > 1 ? ` on ${f.draw.path}` : '';
      // The request shown is the shrunk one: it joins the check's history of exchanges.
      if (!ctx.exchanges.includes(f.page.res.exchange)) ctx.exchanges.push(f.page.res.exchange);
      const by = `found by ${FOUND_BY[f.source]}`;
      const how = f.whileShrinking
        ? `${by}: a request sent while shrinking another rule's disagreement broke this rule too; the run's --seed ${ctx.run.settings.seed} asks it again`
        : f.source === 'walks'
          ? `${by}: a page of them broke this rule`
          : f.source === 'ties'
            ? `${by}: ${f.drawn} of ${f.of} groups of tied records walked broke this rule; the run's --seed ${ctx.run.settings.seed} walks them again`
            : `${by}: ${f.drawn} of ${f.of} such requests broke this rule; the request is ${f.source === 'covering' ? 'the first of them with every parameter taken away that the answer did not need' : 'the one fast-check shrank the first of them to'}${f.shrinkRequests ? ` in ${f.shrinkRequests} more request(s)` : ''}; the run's --seed ${ctx.run.settings.seed} asks them again`;
      const also = f.also.length ? `; also by ${f.also.map((a) => `${FOUND_BY[a.source]} (${a.drawn} of ${a.of})`).join(', also by ')}` : '';
      fail(`${d.message}${path} (${how}${also})`, {
        expected: d.expected,
        actual: d.actual,
        res: f.page.res,
      });
    }
    // With the fixed probes off, no disagreement proves nothing: the drawn requests may never
    // have reached this rule (an invalid parameter, a record count the list does not have).
    if (!probes) ctx.skip(`explore only: no drawn answer broke this rule; the fixed probes that prove it were off (${explorationNote(x)})`);
  }
  if (skipped) throw skipped;
}

export function expandListChecks(checks: readonly ListCheck[], endpoints: readonly Endpoint[]): Check[] {
  const out: Check[] = [];
  for (const c of checks) {
    for (const e of endpoints) {
      if (c.appliesTo && !c.appliesTo(e)) continue;
      // The two lists beyond the contract's 26 paginate on the real platform
      // (spec/contract/README.md#list-operations), which is a fact, not a requirement: what would
      // be a MUST there is held at SHOULD.
      const level = e.extra && c.level === 'MUST' ? 'SHOULD' : c.level;
      out.push({
        id: c.id,
        area: AREA,
        clause: c.clause,
        clauseLink: c.clauseLink,
        level,
        title: c.title,
        operation: e.key,
        run: (ctx) => runListCheck(c, ctx, e),
      });
    }
  }
  return out;
}
