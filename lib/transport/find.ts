// Finding what the suite created by its exact name, when the answer that would have given its id
// never came: the cleanup, for a create the run never heard back from, and a check, for a create
// lost on the way whose body was to be refused (was it applied after all?).
import type { HttpResponse, RequestSpec } from './http.js';

/** Pages of a collection read, at most, to find a name where filters are refused. */
const SCAN_PAGES = 10;

/**
 * The ids of the records of `collection` named exactly `name`: a filter eq on name first, else a
 * bounded scan; undefined when the collection could not be read. `send` sends a GET (a client's
 * or a check's session, which then keeps the exchanges as evidence).
 */
export async function findByName(send: (spec: RequestSpec) => Promise<HttpResponse>, collection: string, name: string): Promise<string[] | undefined> {
  /** A list page's records, or undefined for an answer that is not one. */
  const records = (res: HttpResponse): unknown[] | undefined => {
    const data = res.status === 200 && res.isJson ? (res.json() as { data?: unknown } | null)?.data : undefined;
    return Array.isArray(data) ? data : undefined;
  };
  const named = (rs: unknown[]): string[] =>
    rs.flatMap((r) => {
      const { id, name: n } = (r ?? {}) as { id?: unknown; name?: unknown };
      return n === name && typeof id === 'string' ? [id] : [];
    });
  // A filter that finds it settles it; one that finds nothing may not have understood the
  // value (quoting rules differ), so a bounded scan has the last word.
  const hits = records(await send({ method: 'GET', path: collection, query: { filter: `eq(name,${name})`, 'page[limit]': 100 } }));
  if (hits && named(hits).length) return named(hits);
  const found: string[] = [];
  for (let page = 0; page < SCAN_PAGES; page++) {
    const rs = records(await send({ method: 'GET', path: collection, query: { 'page[limit]': 100, ...(page ? { 'page[offset]': page * 100 } : {}) } }));
    if (rs === undefined) return undefined;
    found.push(...named(rs));
    if (rs.length < 100) return found;
  }
  return undefined;
}

/**
 * The ids of the records of `collection` named exactly each of `names`, in one read of the list
 * (a first page of 100, then the rest of at most SCAN_PAGES at once): several names, one look-up.
 * No filter: a filter that finds nothing may not have understood the value, and absence is what
 * is asked. Undefined when the collection could not be read, or holds more than SCAN_PAGES pages.
 */
export async function findNames(
  send: (spec: RequestSpec) => Promise<HttpResponse>,
  collection: string,
  names: ReadonlySet<string>,
): Promise<Map<string, string[]> | undefined> {
  const read = async (page: number): Promise<{ data?: unknown; meta?: { results?: { total?: unknown } } } | undefined> => {
    const res = await send({ method: 'GET', path: collection, query: { 'page[limit]': 100, ...(page ? { 'page[offset]': page * 100 } : {}) } });
    const body = res.status === 200 && res.isJson ? (res.json() as { data?: unknown } | null) : undefined;
    return body && Array.isArray(body.data) ? body : undefined;
  };
  const found = new Map<string, string[]>();
  const take = (data: unknown): void => {
    for (const r of data as unknown[]) {
      const { id, name } = (r ?? {}) as { id?: unknown; name?: unknown };
      if (typeof name === 'string' && typeof id === 'string' && names.has(name)) found.set(name, [...(found.get(name) ?? []), id]);
    }
  };
  const first = await read(0);
  if (!first) return undefined;
  take(first.data);
  const length = (first.data as unknown[]).length;
  if (length < 100) return found;
  const total = first.meta?.results?.total;
  const pages = typeof total === 'number' && Number.isInteger(total) ? Math.ceil(total / 100) : SCAN_PAGES;
  if (pages > SCAN_PAGES) return undefined;
  const rest = await Promise.all(Array.from({ length: pages - 1 }, (_, i) => read(i + 1)));
  if (rest.some((p) => p === undefined)) return undefined;
  for (const p of rest) take(p!.data);
  // Without a total, a last page read full says there may be more.
  if (pages === SCAN_PAGES && (rest.at(-1)!.data as unknown[]).length >= 100 && typeof total !== 'number') return undefined;
  return found;
}
