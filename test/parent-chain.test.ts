// How each placeholder chains (lib/contract/catalog.ts parentSourceIn): from the list its path
// names before it, under the path's own parents, as the contract's lists chain; a parent the
// settings file gives is used as given. --absent takes one path of an operation too.
import { describe, expect, it } from 'vitest';
import { operationKeys } from '../cli/plan.js';
import { endpointsOf, listPathsOf, loadCatalogSpec, mergeCatalog, parentSourceIn } from '../lib/contract/index.js';
import type { CheckResult } from '../lib/runner/index.js';
import { certify } from '../reporters/verdict.js';

const spec = loadCatalogSpec();
const lists = listPathsOf(spec);
const sourceOf = (key: string, name: string, parents = spec.parents): unknown => {
  const e = endpointsOf(spec).find((x) => x.key === key)!;
  return parentSourceIn(parents, lists, e.path, name);
};

describe('parentSourceIn', () => {
  it("fills a by-release path's hierarchy, node and product from that release's own lists", () => {
    const release = '/pcm/catalogs/{catalog_id}/releases/{release_id}';
    expect(sourceOf('hierarchy-nodes@by-release', 'catalog_hierarchy_id')).toMatchObject({ from: `${release}/hierarchies`, field: 'id' });
    expect(sourceOf('products-by-hierarchy@by-release', 'catalog_hierarchy_id')).toMatchObject({ from: `${release}/hierarchies` });
    expect(sourceOf('node-children@by-release', 'catalog_node_id')).toMatchObject({ from: `${release}/nodes` });
    expect(sourceOf('product-children@by-release', 'catalog_product_id')).toMatchObject({ from: `${release}/products` });
  });

  it("takes a release from its catalog's releases, published first, beside latestPublished", () => {
    expect(sourceOf('hierarchies@by-release', 'release_id')).toEqual({
      from: '/pcm/catalogs/{catalog_id}/releases',
      field: 'id',
      also: ['latestPublished'],
      first: { field: 'meta.release_status', equals: 'PUBLISHED' },
    });
  });

  it('keeps the latest-release paths on the /catalog lists, and the lists a path does not name on parents.from', () => {
    expect(sourceOf('hierarchy-nodes@latest', 'catalog_hierarchy_id')).toMatchObject({ from: '/catalog/hierarchies' });
    expect(sourceOf('node-products', 'node_id')).toMatchObject({ from: '/pcm/hierarchies/{hierarchy_id}/nodes' });
    expect(sourceOf('entries', 'flowSlug')).toMatchObject({ from: '/v2/flows', field: 'slug' });
  });

  it('uses a parent the settings file gives as given, on every path', () => {
    const merged = mergeCatalog(spec, { parents: { catalog_hierarchy_id: { from: '/catalog/hierarchies', field: 'id' }, release_id: { value: 'r1' } } });
    expect(sourceOf('hierarchy-nodes@by-release', 'catalog_hierarchy_id', merged.parents)).toMatchObject({ from: '/catalog/hierarchies', configured: true });
    expect(sourceOf('hierarchy-nodes@by-release', 'release_id', merged.parents)).toEqual({ value: 'r1', configured: true });
  });
});

describe('--absent names one path as well as an operation', () => {
  const all = endpointsOf(spec);
  const skipped = (operation: string): CheckResult =>
    ({
      id: 'list.endpoint.present',
      title: '',
      level: 'MUST',
      clause: '',
      clauseLink: '',
      area: 'pagination',
      operation,
      outcome: 'skip',
      reason: 'absent: GET … answered 404',
      absent: true,
      durationMs: 0,
    }) as CheckResult;

  it('an operation takes every path of it, a path that one alone', () => {
    expect(operationKeys(['hierarchy-nodes'], all, '--absent')).toEqual(['hierarchy-nodes@latest', 'hierarchy-nodes@by-release']);
    expect(operationKeys(['hierarchy-nodes@by-release'], all, '--absent')).toEqual(['hierarchy-nodes@by-release']);
    expect(() => operationKeys(['hierarchy-nodes@by-relase'], all, '--absent')).toThrow(/unknown operation 'hierarchy-nodes@by-relase'/);
  });

  it("certification excuses the absent path declared, not the operation's other path", () => {
    const scope = { declaredAbsent: ['hierarchy-nodes@by-release'], extraOperations: [] };
    expect(certify([skipped('hierarchy-nodes@by-release')], [], scope)).toMatchObject({
      certifiable: true,
      profile: { name: 'partial', absent: ['hierarchy-nodes@by-release'] },
    });
    const both = certify([skipped('hierarchy-nodes@by-release'), skipped('hierarchy-nodes@latest')], [], scope);
    expect(both.certifiable).toBe(false);
    expect(both.why).toMatch(/1 MUST check\(s\) skipped .*\[hierarchy-nodes@latest\]/);
  });
});
