// The catalog of list operations (spec/list-operations.yaml), with the user's overrides from
// conformance.config.yaml merged in, expanded to one Endpoint per (operation, path).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../package/index.js';

export interface RecordLocations {
  id: string;
  created_at: string;
  updated_at: string;
}

/**
 * Where a placeholder's values come from: the records of a list (`from`, `field` in its
 * records; `also` values every target accepts beside them, `first` the records tried first),
 * or one fixed `value`. `configured`: the user's settings file gave it, and it is used as
 * given on every path (parentSourceIn does not chain it).
 */
export type ParentSource =
  { from: string; field: string; also?: string[]; first?: { field: string; equals: string }; configured?: boolean } | { value: string; configured?: boolean };

export interface OperationSpec {
  id: string;
  name: string;
  paths: Record<string, string>;
  hardOffsetLimit?: boolean;
  record?: Partial<RecordLocations>;
  /** Not one of the contract's 26 (a list the real platform paginates too). */
  extra?: boolean;
}

export interface CatalogSpec {
  defaults: { record: RecordLocations };
  parents: Record<string, ParentSource>;
  operations: OperationSpec[];
}

export interface Endpoint {
  /** `operation` or `operation@variant`: how results name it. */
  key: string;
  operation: string;
  name: string;
  variant: string;
  path: string;
  hardOffsetLimit: boolean;
  record: RecordLocations;
  /** The placeholders of `path`, in order. */
  placeholders: string[];
  extra: boolean;
  /** How many paths the operation has (this one among them): they share its exploration. */
  paths: number;
  /** This path's place among them (0 for the first, in the catalog's order). */
  pathIndex: number;
}

/** How a run reads the list operations: what the list checks (suites/list/) are handed. */
export interface PaginationSettings {
  endpoints: Endpoint[];
  parents: Record<string, ParentSource>;
  /**
   * Every list path of the catalog, those of operations the run leaves out included: the lists a
   * path may name before a placeholder (parentSourceIn). Absent: the endpoints' and the parents'.
   */
  lists?: string[];
  /** Most requests the suite sends to one operation. */
  budget: number;
  /** Records newer than startedAt minus this are left out of comparisons (eventual consistency). */
  timeBufferMs: number;
  /** The expected default page length; absent: GET /v2/settings page_length, else 25. */
  defaultPageLength?: number;
  requireAllEndpoints: boolean;
  /** When the run started (epoch ms). */
  startedAt: number;
  /**
   * The list checks judge only the exploration's drawn requests, their own fixed probes off
   * (--explore-only): how far the model and the exploration reach on their own.
   */
  exploreOnly?: boolean;
}

export interface CatalogOverrides {
  operations?: Record<string, Partial<OperationSpec> & { paths?: Record<string, string> }>;
  parents?: Record<string, ParentSource>;
}

let catalogSpec: CatalogSpec | undefined;

/** spec/list-operations.yaml, parsed once per process (a run and its reference server both read it); a copy each call. */
export function loadCatalogSpec(): CatalogSpec {
  catalogSpec ??= parseYaml(readFileSync(join(packageRoot, 'spec', 'list-operations.yaml'), 'utf8')) as CatalogSpec;
  return structuredClone(catalogSpec);
}

export function placeholders(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]!);
}

/** Applies overrides: a known operation id is changed field by field; an unknown one is added. */
export function mergeCatalog(spec: CatalogSpec, overrides: CatalogOverrides = {}): CatalogSpec {
  const operations = spec.operations.map((o) => ({ ...o, paths: { ...o.paths } }));
  for (const [id, o] of Object.entries(overrides.operations ?? {})) {
    const existing = operations.find((x) => x.id === id);
    if (existing) {
      Object.assign(existing, { ...o, id, paths: { ...existing.paths, ...o.paths }, record: { ...existing.record, ...o.record } });
    } else {
      if (!o.paths || Object.keys(o.paths).length === 0) throw new Error(`operation '${id}' needs paths`);
      operations.push({
        id,
        name: o.name ?? id,
        paths: o.paths,
        ...(o.hardOffsetLimit ? { hardOffsetLimit: true } : {}),
        ...(o.record ? { record: o.record } : {}),
        extra: true,
      });
    }
  }
  const configured = Object.fromEntries(Object.entries(overrides.parents ?? {}).map(([name, source]) => [name, { ...source, configured: true }]));
  return { ...spec, parents: { ...spec.parents, ...configured }, operations };
}

/**
 * Where placeholder `name` of `path` is filled from, as the contract's lists chain: from the
 * list the path itself names before it (the path up to `/{name}`) when that is one of `lists`
 * (the catalog's list paths, parent lists included), under the same parents as the path;
 * else from `parents[name]`. So a by-release path's hierarchy comes from that release's
 * hierarchies, and the latest release's from /catalog/hierarchies. A source the user
 * configured is used as given.
 */
export function parentSourceIn(parents: Record<string, ParentSource>, lists: ReadonlySet<string>, path: string, name: string): ParentSource | undefined {
  const source = parents[name];
  if (!source || source.configured || !('from' in source)) return source;
  const at = path.indexOf(`/{${name}}`);
  const before = at > 0 ? path.slice(0, at) : undefined;
  return before !== undefined && before !== source.from && lists.has(before) ? { ...source, from: before } : source;
}

/** Every list path of a catalog: its operations' paths and the parent lists. */
export function listPathsOf(spec: Pick<CatalogSpec, 'operations' | 'parents'>): Set<string> {
  const out = new Set<string>();
  for (const o of spec.operations) for (const p of Object.values(o.paths)) out.add(p);
  for (const p of Object.values(spec.parents)) if ('from' in p) out.add(p.from);
  return out;
}

export function endpointsOf(spec: CatalogSpec): Endpoint[] {
  const out: Endpoint[] = [];
  for (const o of spec.operations) {
    const variants = Object.entries(o.paths);
    for (const [pathIndex, [variant, path]] of variants.entries()) {
      out.push({
        key: variants.length === 1 && variant === 'default' ? o.id : `${o.id}@${variant}`,
        operation: o.id,
        name: o.name,
        variant,
        path,
        hardOffsetLimit: o.hardOffsetLimit ?? false,
        record: { ...spec.defaults.record, ...o.record },
        placeholders: placeholders(path),
        extra: o.extra ?? false,
        paths: variants.length,
        pathIndex,
      });
    }
  }
  return out;
}

/** The names a settings file may use of the catalog: its operation ids, and the placeholders of its paths. */
export function catalogNames(spec: CatalogSpec = loadCatalogSpec()): { knownOperations: string[]; knownPlaceholders: string[] } {
  return { knownOperations: spec.operations.map((o) => o.id), knownPlaceholders: [...new Set([...listPathsOf(spec)].flatMap(placeholders))] };
}
