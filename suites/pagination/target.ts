// Where a list operation lives on the target: its placeholders filled from parent lists (or
// from configuration), and whether it is there at all (a 404 on the collection: absent).
import type { CheckContext } from '../../lib/check.js';
import type { Endpoint } from '../../lib/catalog.js';
import { dig, pagination, readPage, readParentPage, type ListPage } from './pages.js';

export type Resolution = { ok: true; path: string } | { ok: false; reason: string };

async function resolveParam(ctx: CheckContext, e: Endpoint, name: string, depth = 0): Promise<{ ok: true; value: string } | { ok: false; reason: string }> {
  const source = pagination(ctx).parents[name];
  if (!source) return { ok: false, reason: `no parent id for {${name}}: set parents.${name} in conformance.config.yaml` };
  if ('value' in source) return { ok: true, value: source.value };
  if (depth > 5) return { ok: false, reason: `parents nest too deep at {${name}}` };
  let from = source.from;
  for (const inner of [...from.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]!)) {
    const r = await resolveParam(ctx, e, inner, depth + 1);
    if (!r.ok) return r;
    from = from.replace(`{${inner}}`, encodeURIComponent(r.value));
  }
  const page = await readParentPage(ctx, e, from);
  if (page.res.status === 404) return { ok: false, reason: `no parent id for {${name}}: GET ${from} answered 404; set parents.${name} in conformance.config.yaml` };
  const first = page.ok ? page.first : undefined;
  const value = dig(first, source.field);
  if (typeof value !== 'string' && typeof value !== 'number') {
    return { ok: false, reason: `no parent id for {${name}}: GET ${from} gave no record with ${source.field} (status ${page.res.status}); set parents.${name} in conformance.config.yaml` };
  }
  return { ok: true, value: String(value) };
}

export function resolvePath(ctx: CheckContext, e: Endpoint): Promise<Resolution> {
  return ctx.shared(`resolve ${e.key}`, async () => {
    let path = e.path;
    for (const name of e.placeholders) {
      const r = await resolveParam(ctx, e, name);
      if (!r.ok) return r;
      path = path.replace(`{${name}}`, encodeURIComponent(r.value));
    }
    return { ok: true, path } as Resolution;
  });
}

export interface Target {
  path: string;
  /** The collection read with no parameters: the probe, and the default page. */
  probe: ListPage;
}

/** The operation's concrete path and its probe page; skips when it cannot be had. */
export async function target(ctx: CheckContext, e: Endpoint): Promise<Target> {
  const r = await resolvePath(ctx, e);
  if (!r.ok) ctx.skip(r.reason);
  const probe = await readPage(ctx, e, r.path);
  if (probe.res.status === 404) ctx.skip(`absent: GET ${r.path} answered 404`);
  if (!probe.ok) ctx.skip(`not testable: GET ${r.path} answered ${probe.res.status} without a list (see list.endpoint.present)`);
  return { path: r.path, probe };
}

/** The expected default page length: configured, else the store's page_length, else 25. */
export function defaultPageLength(ctx: CheckContext): Promise<{ value: number; source: string }> {
  const configured = pagination(ctx).defaultPageLength;
  if (configured !== undefined) return Promise.resolve({ value: configured, source: 'configured' });
  return ctx.shared('settings page_length', async (s) => {
    const res = await s.request({ method: 'GET', path: '/v2/settings' });
    const v = res.status === 200 && res.isJson ? dig(res.json(), 'data.page_length') : undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return { value: v, source: 'GET /v2/settings page_length' };
    return { value: 25, source: 'the contract (25)' };
  });
}
