// Whole-collection traversals (spec/contract/README.md#keyset-traversal; #lists.keyset: keyset and offset traversals reach the same records; offset
// traversal meets every record once; results.total is what is actually readable).
import { type CheckContext, fail } from '../../lib/runner/index.js';
import type { Endpoint } from '../../lib/contract/index.js';
import { comparable, describeRecords, duplicates, inWindow, missingFrom, uniqueById } from './compare.js';
import { expectRecords, type WrittenListCheck } from './list-check.js';
import { metaInt, refusesFeature } from './pages.js';
import { refusedOwnValue, sortedWalk } from './order.js';
import { target } from './target.js';
import { value, type Attr } from './collation.js';
import { keysetWalk } from './keyset.js';
import { expectWalked, offsetWalk, type Walk } from './walks.js';
import { expectRule, ids, PHASE, type PageRule } from './answer.js';

async function defaultWalk(ctx: CheckContext, e: Endpoint): Promise<{ path: string; walk: Walk }> {
  const { path } = await target(ctx, e);
  const walk = await offsetWalk(ctx, e, path);
  expectWalked(walk, `GET ${path} by offset`);
  return { path, walk };
}

/** `id`: written out where the check is listed, so a search for it finds it. */
function keysetCheck(id: string, attr: Attr): WrittenListCheck {
  const op = attr === 'id' ? 'gt' : 'ge';
  return {
    id,
    clause: { at: 'keyset-traversal' },
    title: `keyset traversal by ${attr} (sort=${attr}, filter=${op}) reaches exactly the records offset traversal reaches${attr === 'id' ? ', without duplicates' : ', ties included'}`,
    whole: 'two whole traversals compared: no one answer shows what the other reached',
    // One record both traversals must reach.
    fewest: 1,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      // Started beside the offset walk it is compared with: it begins on that walk's first page.
      const keysetWalked = keysetWalk(ctx, e, path, attr);
      keysetWalked.catch(() => undefined);
      const { walk: byOffset } = await sortedWalk(ctx, e, attr);
      if (byOffset.broken) ctx.skip(`not testable: the offset traversal it is compared with failed (${byOffset.broken.message})`);
      if (byOffset.records.length && byOffset.records.every((r) => value(r, attr) === undefined))
        ctx.skip(`not testable: no record has a parseable ${attr} at ${attr === 'id' ? e.record.id : e.record[attr]}`);
      const keyset = await keysetWalked;
      const refused = keyset.pages.find(refusesFeature);
      if (refused && attr !== 'id' && refused !== keyset.pages[0]) await refusedOwnValue(ctx, e, path, 'ge', attr, refused);
      if (refused) ctx.skip(`unsupported: ${decodeURIComponent(refused.res.exchange.url.split('?')[1] ?? '')} answered ${refused.res.status}`);
      expectWalked(keyset, `keyset traversal of ${path} by ${attr}`);
      if (keyset.untestable) ctx.skip(keyset.untestable);
      for (const [name, w] of [
        ['offset', byOffset],
        ['keyset', keyset],
      ] as const) {
        if (!w.complete && w.records.length === 0) ctx.skip(`not testable: the ${name} traversal was ${w.stop}`);
      }
      if (attr === 'id') {
        const dup = duplicates(keyset.records);
        if (dup.length)
          fail(`keyset traversal by id with gt repeated records`, {
            expected: 'every record once',
            actual: `${dup.length} record(s) read twice: ${dup.slice(0, 5).join(', ')}`,
            res: keyset.pages.at(-1)!.res,
          });
      }
      const inside = inWindow([byOffset, keyset], attr);
      const ok = comparable(ctx, byOffset.records, attr);
      // A record changed while the walks read it (read newer than the horizon by one of them, or
      // with another value of attr) sits elsewhere in one than in the other: left out of both.
      const before = new Map<string, ReturnType<typeof value>>();
      for (const r of byOffset.records) before.set(r.id, value(r, attr));
      const moved = new Set<string>();
      for (const w of [byOffset, keyset]) {
        for (const r of w.records) if (!ok(r) || (before.has(r.id) && before.get(r.id) !== value(r, attr))) moved.add(r.id);
      }
      const pick = (w: Walk) => uniqueById(w.records.filter((r) => ok(r) && inside(r) && !moved.has(r.id)));
      const fromOffset = pick(byOffset);
      const fromKeyset = pick(keyset);
      expectRecords(ctx, this, fromOffset.size, { which: `created before the run (offset traversal ${byOffset.stop})`, of: uniqueById(byOffset.records).size });
      const lost = missingFrom(fromOffset, fromKeyset);
      const extra = missingFrom(fromKeyset, fromOffset);
      if (lost.length || extra.length) {
        fail(`keyset traversal by ${attr} does not reach the records offset traversal reaches`, {
          expected: `the ${fromOffset.size} records offset traversal (sort=${attr}) reached${byOffset.complete && keyset.complete ? '' : ', in the part both read in full'}`,
          actual: [
            lost.length ? `keyset lost ${describeRecords(lost)}` : '',
            extra.length ? `keyset had ${describeRecords(extra)} that offset traversal did not` : '',
          ]
            .filter(Boolean)
            .join('; '),
          res: keyset.pages.at(-1)!.res,
        });
      }
      if (!byOffset.complete || !keyset.complete) {
        const total = byOffset.pages[0] ? metaInt(byOffset.pages[0], 'results.total') : undefined;
        ctx.note(
          `compared a window: the ${fromOffset.size} records both traversals read of ${total ?? 'an unknown number'} (offset traversal ${byOffset.stop}; keyset traversal ${keyset.stop})`,
        );
      }
    },
  };
}

/** No record twice on a page; a result that fits on one page from offset 0 holds every record the model knows it selects. */
const once: PageRule = (a) => {
  if (a.kind !== 'page') return undefined;
  const twice = a.twice();
  const out = twice.length ? [a.finding('a page holds a record twice', 'every record once', `twice: ${ids(twice)}`, PHASE.repeat)] : [];
  out.push(...a.incompleteFor('list.offset.traversal'));
  return a.n > 1 || out.length ? out : undefined;
};

export const traversalChecks: WrittenListCheck[] = [
  {
    id: 'list.offset.traversal',
    clause: { at: 'pagination-information' },
    title: 'paging by offset meets every record once: no duplicates, and the same records as paging sorted by id',
    page: once,
    async run(ctx, e) {
      const { path } = await target(ctx, e);
      // The listing sorted by id is read beside the default one, not after it.
      const [walk, byId] = await Promise.all([offsetWalk(ctx, e, path), offsetWalk(ctx, e, path, 'id')]);
      expectWalked(walk, `GET ${path} by offset`);
      for (const page of walk.pages) if (page.ok) await expectRule(ctx, e, path, page, once);
      // Across the pages: no record met twice.
      const ok = comparable(ctx, walk.records);
      const dup = duplicates(walk.records.filter(ok));
      if (dup.length)
        fail('offset traversal met records twice', {
          expected: 'every record once',
          actual: `${dup.length} record(s) twice: ${dup.slice(0, 5).join(', ')}`,
          res: walk.pages.at(-1)!.res,
        });
      if (!walk.complete || !byId.complete || byId.broken || byId.pages[0]?.res.status !== 200) {
        ctx.note(`gaps not compared: default order ${walk.stop}; sorted by id ${byId.stop}`);
        return;
      }
      const a = uniqueById(walk.records.filter(ok));
      const b = uniqueById(byId.records.filter(ok));
      const gaps = missingFrom(b, a);
      if (gaps.length)
        fail('offset traversal skipped records', {
          expected: `the ${b.size} records that paging sorted by id meets`,
          actual: `never met ${describeRecords(gaps)}`,
          res: walk.pages.at(-1)!.res,
        });
    },
  },
  {
    id: 'list.total.unfiltered',
    clause: { at: 'pagination-information' },
    title: 'without a filter, meta.results.total is the number of records (counted by reading them all)',
    page: (a) => a.totalFor('list.total.unfiltered'),
    needsModel: true,
    async run(ctx, e) {
      const { path, walk: byOffset } = await defaultWalk(ctx, e);
      // Stopped at an offset limit the contract allows: the records are counted by keyset
      // traversal by id, which the contract offers for reading past it.
      let byKeyset: Walk | undefined;
      if (byOffset.limited) {
        // Skips where sort=id is refused.
        await sortedWalk(ctx, e, 'id');
        byKeyset = await keysetWalk(ctx, e, path, 'id');
      }
      const walk = byKeyset && byKeyset.complete && !byKeyset.broken ? byKeyset : byOffset;
      if (!walk.complete) ctx.skip(`not testable: the listing was ${byOffset.stop}${byKeyset ? `, and keyset traversal by id ${byKeyset.stop}` : ''}`);
      const read = uniqueById(walk.records).size;
      const how = walk === byOffset ? 'by offset' : 'by keyset traversal by id, offset traversal having stopped at an offset limit';
      // On a live target the count may move while it is read: either end's total passes (the
      // first page of either traversal is unfiltered).
      const said = [byOffset.pages[0]!, walk.pages[0]!, byOffset.pages.at(-1)!].map((p) => metaInt(p, 'results.total'));
      if (!said.includes(read)) {
        fail('meta.results.total is not the number of records', {
          expected: `meta.results.total ${read} (records read ${how})`,
          actual: `meta.results.total ${[...new Set(said)].map(String).join(' then ')}`,
          res: byOffset.pages[0]!.res,
        });
      }
      if (walk !== byOffset) ctx.note(`counted ${how}`);
    },
  },
  keysetCheck('list.keyset.id', 'id'),
  keysetCheck('list.keyset.created-at', 'created_at'),
  keysetCheck('list.keyset.updated-at', 'updated_at'),
];
