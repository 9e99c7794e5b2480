// The space of legitimate servers: every choice the contract leaves open (as spec/contract
// reads it), one dimension per choice, each option a small override of CONFORMING. Every
// variant's choice lies in it; test/legal-space.test.ts draws combinations and holds the suite,
// run through the CLI, to exit 0 on each. Plain data, so the shipped code needs no fast-check.
import type { Behaviour } from '../server/behaviour.js';
import { lenientQuery } from '../server/list-query.js';
import { goQuery, phpQuery, qsQuery, rackQuery } from '../server/query-parsers.js';
import { capacity } from '../server/load.js';
import { CAPACITY } from '../server/variants.js';

export type Dimension =
  | { name: string; options: ReadonlyArray<Partial<Behaviour>> }
  /** A whole number in [min, max], made into an override. */
  | { name: string; range: readonly [number, number]; make: (n: number) => Partial<Behaviour> };

export const LEGAL_SPACE: readonly Dimension[] = [
  // Errors and authentication
  { name: 'validation status', options: [{}, { validationStatus: 422, malformedIdStatus: 422 }] },
  { name: 'wrong-token status', options: [{}, { wrongTokenStatus: 403 }] },
  { name: 'create needs a token', options: [{}, { createWithoutAuth: true }] },
  // How long a token from POST /oauth/access_token lives is not shown (a client logs in again as the answer says).
  { name: 'token lifetime', options: [{}, { tokenLifetimeSeconds: 3 }] },
  // Create an Application Key
  { name: 'created status', options: [{}, { createStatus: 200 }] },
  { name: 'top-level parts', options: [{}, { topLevelMetaLinks: false }] },
  { name: 'rate limit allowance', options: [{}, { maxRateLimit: 0 }] },
  { name: 'rate limit echo', options: [{}, { echoRateLimit: false }] },
  { name: 'null rate limit', options: [{}, { nullRateLimit: 'accept' }] },
  { name: 'content type', options: [{}, { lenientContentType: true }] },
  { name: 'name length unit', options: [{}, { nameLengthUnit: 'utf16' }] },
  { name: 'custom API rules', options: [{}, { customApiPlatformRules: true }] },
  // Everywhere
  {
    name: 'timestamp style',
    options: (['iso-ms-z', 'seconds-z', 'seconds-offset', 'micros-z', 'mixed-offsets'] as const).map((timestampStyle) => ({ timestampStyle })),
  },
  { name: 'extra fields', options: [{}, { extraFields: true }] },
  { name: 'links', options: [{}, { links: false }, { listLinks: 'extra' }] },
  // Lists
  { name: 'page length', range: [10, 100], make: (pageLength) => ({ pageLength }) },
  { name: 'page[limit] over 100', options: [{}, { rejectOverLimit: true }] },
  { name: 'hard offset limit status', options: [{}, { hardOffsetStatus: 422 }] },
  { name: 'soft offset limit', options: [{}, { softOffsetLimit: true }] },
  { name: 'empty page current', options: [{}, { emptyCurrent: 'zero' }, { emptyCurrent: 'formula' }] },
  { name: 'empty page total', options: [{}, { emptyPageTotal: 1 }] },
  { name: 'default order', options: (['created_at', '-created_at', 'id', 'updated_at', 'insertion'] as const).map((defaultOrder) => ({ defaultOrder })) },
  { name: 'list ids', options: (['uuid', 'numeric', 'numeric-as-string', 'prefixed'] as const).map((listIds) => ({ listIds })) },
  { name: 'timestamps at', options: [{}, { timestampsAt: 'attributes' }] },
  { name: 'current between multiples', options: [{}, { currentRounding: 'ceil' }] },
  { name: 'filter value spellings', options: [{}, { filterValuesOwnSpelling: true }] },
  { name: 'first parent', options: [{}, { firstParentEmpty: true }] },
  { name: 'store shape', options: [{}, { storeShape: 'realistic' }, { storeShape: 'few-published' }] },
  {
    name: 'values the contract does not define',
    options: [{}, { readQuery: lenientQuery }, { readQuery: phpQuery }, { readQuery: rackQuery }, { readQuery: qsQuery }, { readQuery: goQuery }],
  },
  // The store's settings (after 'page length': a store without the endpoint keeps the contract's 25)
  { name: 'settings endpoint', options: [{}, { settingsEndpoint: false, pageLength: 25 }] },
  { name: 'store page length over 100', options: [{}, { pageLengthOverMax: 422 }, { pageLengthOverMax: 'clamp' }] },
  // A new record listed a moment after its creation, well within the time buffer (eventual consistency)
  { name: 'list visibility', options: [{}, { listedAfterMs: 1000 }] },
  // A pool of workers and a query deadline (the capacity variant): passes only a run whose in-flight bound follows the target's latency.
  { name: 'capacity', options: [{}, { around: [capacity(CAPACITY)] }] },
];

/** Whether an override is one option of the space (a range's make checked at its ends and inside). */
export function inLegalSpace(b: Partial<Behaviour>): boolean {
  const same = (x: Partial<Behaviour>): boolean => JSON.stringify(Object.entries(x).sort()) === JSON.stringify(Object.entries(b).sort());
  return LEGAL_SPACE.some((d) => {
    if ('options' in d) return d.options.some(same);
    const keys = Object.keys(d.make(d.range[0]));
    if (Object.keys(b).length !== keys.length || !keys.every((k) => k in b)) return false;
    const n = Object.values(b)[0];
    return typeof n === 'number' && n >= d.range[0] && n <= d.range[1] && same(d.make(n));
  });
}

/** The list operations a combination needs beyond the sample: orders, where its hard-limit status shows. */
export function operationsFor(b: Partial<Behaviour>): string[] {
  return b.hardOffsetStatus !== undefined ? ['orders'] : [];
}
