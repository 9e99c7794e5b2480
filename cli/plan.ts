// The plan of a run: which list operations it reads (the catalog, the config's overrides,
// --operation) and, for a sharded run, which part of the checks is this shard's.
import type { Check } from '../lib/runner/index.js';
import { listPathsOf, type PaginationSettings, type CatalogSpec, type Endpoint } from '../lib/contract/index.js';
import type { Config } from '../lib/configuration/index.js';
import { didYouMean } from '../lib/text/index.js';
import { WRITTEN_LISTS, type CheckDefinition } from '../suites/index.js';
import { UsageError } from './io.js';

/**
 * Operation names as results name them (`orders`, `hierarchies@by-release`); an operation id
 * stands for all its paths (`integration-logs`: both). An unknown name is a usage error that
 * says where it came from and suggests the nearest.
 */
export function operationKeys(given: readonly string[], endpoints: readonly Endpoint[], label: string): string[] {
  const known = [...new Set(endpoints.flatMap((e) => [e.key, e.operation]))];
  const out = new Set<string>();
  for (const name of given) {
    const matching = endpoints.filter((e) => e.key === name || e.operation === name);
    if (!matching.length)
      throw new UsageError(`${label}: unknown operation '${name}'${didYouMean(name, known, (c) => `'${c}'`)} (see 'conformance --list-operations')`);
    for (const e of matching) out.add(e.key);
  }
  return [...out];
}

/** The list operations as the run will read them (catalog, with the config's overrides). */
export function paginationFor(
  config: Pick<Config, 'operations' | 'requestBudget' | 'timeBufferSeconds' | 'defaultPageLength' | 'requireAllEndpoints' | 'exploreOnly'>,
  catalog: CatalogSpec,
  all: Endpoint[],
): PaginationSettings {
  let endpoints = all;
  if (config.operations.length) {
    const keys = operationKeys(config.operations, endpoints, '--operation');
    endpoints = endpoints.filter((e) => keys.includes(e.key));
  }
  return {
    endpoints,
    parents: catalog.parents,
    lists: [...listPathsOf(catalog)],
    budget: config.requestBudget,
    timeBufferMs: config.timeBufferSeconds * 1000,
    ...(config.defaultPageLength !== undefined ? { defaultPageLength: config.defaultPageLength } : {}),
    requireAllEndpoints: config.requireAllEndpoints,
    startedAt: Date.now(),
    ...(config.exploreOnly ? { exploreOnly: true } : {}),
  };
}

/**
 * The part of a sharded run a check belongs to: an area's single checks, or one list
 * operation's checks, so work several checks share (a traversal, a created key) stays in one
 * shard. The list checks of a list the suite writes (WRITTEN_LISTS) go with the area that
 * writes it, so they see the records the run created, as in a run that is not sharded.
 */
export function shardUnit(c: Pick<Check, 'area' | 'operation'>): string {
  if (c.operation === undefined) return `area:${c.area}`;
  const writer = WRITTEN_LISTS.get(c.operation);
  return writer ? `area:${writer}` : `operation:${c.operation}`;
}

/** A shard's part of the checks: every n-th unit (shardUnit). */
export function shardChecks(checks: readonly Check[], shard: { index: number; count: number }): Check[] {
  const units = [...new Set(checks.map(shardUnit))].sort();
  const mine = new Set(units.filter((_, i) => i % shard.count === shard.index - 1));
  return checks.filter((c) => mine.has(shardUnit(c)));
}

/** The checks a run selects: --check ids (each known), then --grep on id or title. */
export function selectChecks(definitions: readonly CheckDefinition[], ids: readonly string[], grep: string | undefined): CheckDefinition[] {
  const known = new Set(definitions.map((c) => c.id));
  for (const id of ids)
    if (!known.has(id)) throw new UsageError(`unknown check id '${id}'${didYouMean(id, known, (c) => `'${c}'`)} (see 'conformance --list')`);
  let selected = ids.length ? definitions.filter((c) => ids.includes(c.id)) : [...definitions];
  if (grep !== undefined) {
    const g = grep.toLowerCase();
    selected = selected.filter((c) => c.id.toLowerCase().includes(g) || c.title.toLowerCase().includes(g));
  }
  if (selected.length === 0) throw new UsageError(`no check matches --grep '${grep}' (see 'conformance --list')`);
  return selected;
}
