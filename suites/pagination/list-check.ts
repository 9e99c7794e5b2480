// A pagination check is written once and run once per list operation (one result per check
// and operation). `appliesTo` narrows it (the hard offset limit is for orders and files).
import type { Check, CheckContext, CheckHeader } from '../../lib/check.js';
import type { Endpoint } from '../../lib/catalog.js';

/** A check of the pagination area: its area is AREA, so the header names it no more. */
export interface ListCheck extends Omit<CheckHeader, 'area'> {
  appliesTo?: (e: Endpoint) => boolean;
  run(ctx: CheckContext, e: Endpoint): Promise<void>;
}

export const AREA = 'pagination';

export const CLAUSE = {
  lists: 'Endpoints / List endpoints (shared conventions)',
  info: 'Resources / Pagination information in list responses',
  limits: 'Limits',
  keyset: 'Endpoints / Keyset-style traversal',
} as const;

export function expandListChecks(checks: readonly ListCheck[], endpoints: readonly Endpoint[]): Check[] {
  const out: Check[] = [];
  for (const c of checks) {
    for (const e of endpoints) {
      if (c.appliesTo && !c.appliesTo(e)) continue;
      // The two lists beyond the contract's 26 paginate on the real platform (READING.md, EP),
      // which is a fact, not a requirement: what would be a MUST there is held at SHOULD.
      const level = e.extra && c.level === 'MUST' ? 'SHOULD' : c.level;
      out.push({ id: c.id, area: AREA, clause: c.clause, level, title: c.title, operation: e.key, run: (ctx) => c.run(ctx, e) });
    }
  }
  return out;
}
