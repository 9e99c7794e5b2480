// The readings of a list request the contract does not define, as spec/contract/query-readings.yaml
// states them (spec/contract/README.md#query-readings): read from there once, so that the drawn
// illegal requests, the fixed probe of list.params.invalid and the judged traffic all allow the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../lib/package/index.js';

/** How an illegal value is put in the query string (spec/contract/query-readings.yaml, `shape`). */
export type Shape = 'plain' | 'array' | 'repeat' | 'page-scalar' | 'page-scalar-before' | 'page-array';
export const SHAPES: readonly Shape[] = ['plain', 'array', 'repeat', 'page-scalar', 'page-scalar-before', 'page-array'];

export type ReadingKind = 'spelled' | 'zero' | 'ignored' | 'other' | 'one' | 'group-ignored';
const KINDS: readonly ReadingKind[] = ['spelled', 'zero', 'ignored', 'other', 'one', 'group-ignored'];
export type When = 'not-a-whole-number' | 'limit-zero' | 'limit-past-32-bits' | 'past-64-bits';
const WHENS: readonly When[] = ['not-a-whole-number', 'limit-zero', 'limit-past-32-bits', 'past-64-bits'];

export interface ShapeReadings {
  shape: Shape;
  request: string;
  readings: ReadonlyArray<{ reading: ReadingKind; when?: readonly When[]; parsers: readonly string[] }>;
  refused?: readonly string[];
}

let table: readonly ShapeReadings[] | undefined;

/** spec/contract/query-readings.yaml, parsed and checked once per process. */
export function queryReadings(): readonly ShapeReadings[] {
  if (table) return table;
  const doc = parseYaml(readFileSync(join(packageRoot, 'spec', 'contract', 'query-readings.yaml'), 'utf8')) as { shapes: ShapeReadings[] };
  for (const s of doc.shapes) {
    if (!SHAPES.includes(s.shape)) throw new Error(`spec/contract/query-readings.yaml: unknown shape ${s.shape}`);
    for (const r of s.readings) {
      if (!KINDS.includes(r.reading) || (r.when ?? []).some((w) => !WHENS.includes(w)))
        throw new Error(`spec/contract/query-readings.yaml: unknown reading ${r.reading} (when ${String(r.when)}) of ${s.shape}`);
    }
  }
  table = doc.shapes;
  return table;
}

export type PagingParam = 'page[limit]' | 'page[offset]';

/** Whether a `when` of the table holds for the value `text` of `param`, as sent. */
function holds(w: When, text: string, param: PagingParam): boolean {
  if (w === 'not-a-whole-number') return !/^\d+$/.test(text);
  if (!/^\d+$/.test(text)) return false;
  const n = BigInt(text);
  if (w === 'past-64-bits') return n > 2n ** 63n - 1n;
  if (param !== 'page[limit]') return false;
  return w === 'limit-zero' ? n === 0n : n > 2n ** 31n - 1n;
}

/** The kinds of reading the table allows for `text` of `param` sent in `shape`, each with the parsers that give it. */
export function readingsFor(shape: Shape, text: string, param: PagingParam): Map<ReadingKind, readonly string[]> {
  const entry = queryReadings().find((s) => s.shape === shape);
  const out = new Map<ReadingKind, readonly string[]>();
  for (const r of entry?.readings ?? []) if (!r.when || r.when.some((w) => holds(w, text, param))) out.set(r.reading, r.parsers);
  return out;
}

/** Whether `text` starts with no whole number (after the whitespace an integer cast skips): the `zero` reading. */
export const startsWithNoNumber = (text: string): boolean => !/^[ \t\n\r\v\f]*[+-]?\d/.test(text);

/** The paging parameters of a query sent in a shape the table lists, or with a value a store may ignore. */
export interface UndefinedPaging {
  /** Names of the page group other than page[limit] and page[offset] (`page`, `page[]`, `page[limit][]`), each once. */
  odd: string[];
  /** page[limit] or page[offset] sent more than once. */
  many: PagingParam[];
  /** page[limit] or page[offset] sent once, with a value a store may ignore (no whole number, 0 for page[limit], past 2^64). */
  bad: PagingParam[];
}

const PAGING: readonly PagingParam[] = ['page[limit]', 'page[offset]'];

/** What of `params` is paging the contract does not define (see UndefinedPaging). */
export function undefinedPagingParts(params: URLSearchParams): UndefinedPaging {
  const odd = [...new Set([...params.keys()].filter((k) => k === 'page' || (k.startsWith('page[') && !(PAGING as readonly string[]).includes(k))))];
  const many = PAGING.filter((p) => params.getAll(p).length > 1);
  const bad = PAGING.filter((p) => params.getAll(p).length === 1 && readingsFor('plain', params.get(p)!, p).has('ignored'));
  return { odd, many, bad };
}

/**
 * The first paging parameter of a query sent in a shape the table lists, or with a value a store
 * may ignore, as sent: such a request is judged as list.params.invalid judges its own, never as
 * the one legal request a single reading would make of it.
 */
export function undefinedPaging(params: URLSearchParams): string | undefined {
  const { odd, many, bad } = undefinedPagingParts(params);
  if (odd[0] !== undefined) return `${odd[0]}=${params.get(odd[0]) ?? ''}`;
  const name = PAGING.find((p) => many.includes(p) || bad.includes(p));
  if (name === undefined) return undefined;
  return many.includes(name) ? `${name}=${params.getAll(name).join(`&${name}=`)}` : `${name}=${params.get(name)!}`;
}
