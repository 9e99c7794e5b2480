// List records kept as the bytes of their JSON: each record is serialized once, when
// its collection is first served in a given shape, and a page is the stored bytes of its
// records spliced between a head and a tail, not objects built and serialized per request.

/**
 * Pages are written into buffers lent from a pool and given back once the response has been
 * written (giveBack): a fresh buffer per response costs more than filling it, since its
 * memory is cold, while a reused one stays in the cache. Larger pages get a buffer of their own.
 */
const POOLED_BYTES = 64 * 1024;
const POOL_MAX = 64;
const pool: ArrayBuffer[] = [];
const lent = new WeakSet<ArrayBuffer>();

function take(size: number): Buffer {
  if (size > POOLED_BYTES) return Buffer.allocUnsafeSlow(size);
  let memory = pool.pop();
  if (!memory) {
    memory = new ArrayBuffer(POOLED_BYTES);
    lent.add(memory);
  }
  return Buffer.from(memory, 0, size);
}

/** Gives a page's buffer back to the pool: call once nothing reads the page any more. */
export function giveBack(page: Buffer): void {
  const memory = page.buffer as ArrayBuffer; // (a pooled page's is; lent tells)
  if (lent.has(memory) && pool.length < POOL_MAX) pool.push(memory);
}

const COMMA = 0x2c;

/** Layouts of up to this many records keep a view of each record copied alone (see #view). */
const VIEWS_UP_TO = 65_536;

/** What a layout reads of a record: its place in insertion order (a collection's ListRecord). */
export interface Placed {
  readonly seq: number;
}

/**
 * The JSON of every record of a collection in one shape, laid out in one order of the
 * collection (one of its indexes): each record followed by a comma, in one buffer. A page
 * that is a stretch of that index is one copy (slice); any other list of records is copied
 * in runs of records that lie one after the other (page).
 *
 * A collection's records do not change once it holds them (server/collection.ts): a change
 * means a new collection, and new bytes with it.
 */
export class RecordBytes<R extends Placed = Placed> {
  readonly #arena: Buffer;
  /** Where the record at each place of the layout starts; the last entry is the end. */
  readonly #at: Float64Array;
  /** The place of each record in the layout, by its seq (its place in insertion order). */
  readonly #place: Float64Array;
  /**
   * Views of single records by place, made when a record is first copied alone: a typed-array
   * copy from a ready view is several times cheaper than Buffer.copy with offsets. Not kept
   * for big layouts, where a million views would weigh 100 MB: a view is made per copy there.
   */
  readonly #views: Uint8Array[] | undefined;

  /**
   * Every record of a collection, in the order to lay them out; their JSON rendered by
   * `source`, or copied from another layout of the same shape.
   */
  constructor(records: readonly R[], source: ((r: R) => string) | RecordBytes<R>) {
    const n = records.length;
    this.#at = new Float64Array(n + 1);
    this.#place = new Float64Array(n).fill(-1);
    this.#views = n <= VIEWS_UP_TO ? new Array<Uint8Array>(n) : undefined;
    const render = source instanceof RecordBytes ? undefined : source;
    // Sized from another layout, or from the first records and grown if the rest are longer:
    // no second copy of a million.
    let arena: Buffer;
    if (source instanceof RecordBytes) arena = Buffer.allocUnsafeSlow(source.#arena.length);
    else {
      const sample = records.slice(0, 64).reduce((sum, r) => sum + Buffer.byteLength(source(r)) + 1, 0);
      arena = Buffer.allocUnsafeSlow(Math.ceil((sample / Math.max(1, Math.min(n, 64))) * n * 1.05) + 1024);
    }
    let at = 0;
    for (let i = 0; i < n; i++) {
      const r = records[i]!;
      if (!(this.#place[r.seq] === -1)) throw new Error(`a collection of ${n} records holds seq ${r.seq} twice or out of range`);
      this.#place[r.seq] = i;
      this.#at[i] = at;
      if (render) {
        const text = render(r);
        // At most 3 bytes of UTF-8 per UTF-16 unit.
        if (arena.length - at < text.length * 3 + 1) {
          const bigger = Buffer.allocUnsafeSlow(Math.ceil((arena.length + text.length * 3 + 1) * 1.5));
          arena.copy(bigger, 0, 0, at);
          arena = bigger;
        }
        at += arena.write(text, at);
      } else {
        const bytes = (source as RecordBytes<R>).#record(r.seq);
        arena.set(bytes, at);
        at += bytes.length;
      }
      arena[at++] = COMMA;
    }
    this.#at[n] = at;
    this.#arena = arena;
  }

  /** The records at places [from, from + count) of the layout: one copy. */
  slice(from: number, count: number, head: string, tail: string): Buffer {
    // Through the comma after the last record, which is left out.
    const run = count > 0 ? this.#arena.subarray(this.#at[from], this.#at[from + count]! - 1) : undefined;
    const size = Buffer.byteLength(head) + (run?.length ?? 0) + Buffer.byteLength(tail);
    const out = take(size);
    let p = out.write(head, 0);
    if (run) {
      out.set(run, p);
      p += run.length;
    }
    p += out.write(tail, p);
    return out;
  }

  /** Any records of the collection, in their order: runs that lie one after the other are one copy each. */
  page(records: readonly Placed[], head: string, tail: string): Buffer {
    const place = this.#place;
    const at = this.#at;
    let size = Buffer.byteLength(head) + Buffer.byteLength(tail);
    for (let i = 0; i < records.length; i++) {
      const k = place[records[i]!.seq]!;
      size += at[k + 1]! - at[k]!; // the record and a comma: one too many in all
    }
    if (records.length > 0) size--;
    const out = take(size);
    let p = out.write(head, 0);
    for (let i = 0; i < records.length;) {
      const first = place[records[i]!.seq]!;
      let last = first;
      for (i++; i < records.length && place[records[i]!.seq] === last + 1; i++) last++;
      const run = first === last ? this.#view(first) : this.#arena.subarray(at[first], at[last + 1]! - 1);
      out.set(run, p);
      p += run.length;
      if (i < records.length) out[p++] = COMMA;
    }
    p += out.write(tail, p);
    if (p !== size) throw new Error(`a page of ${size} bytes was filled with ${p}`);
    return out;
  }

  /** The JSON of the record at place `k`, without its comma. */
  #view(k: number): Uint8Array {
    const views = this.#views;
    if (!views) return this.#arena.subarray(this.#at[k], this.#at[k + 1]! - 1);
    return (views[k] ??= new Uint8Array(this.#arena.buffer, this.#arena.byteOffset + this.#at[k]!, this.#at[k + 1]! - 1 - this.#at[k]!));
  }

  #record(seq: number): Uint8Array {
    return this.#view(this.#place[seq]!);
  }
}
