// One answer made wrong in one way: a JSON member dropped, nulled, retyped or made a
// huge number, or the whole answer emptied, replaced by a login page, cut short or mislabelled.
// Pure functions of the answer and an integer `pick`, so a case replays exactly.
import type { OutgoingHttpHeaders } from 'node:http';

export interface Answer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

export const MUTATIONS = ['drop', 'null', 'retype', 'huge-1e308', 'huge-30-digits', 'empty', 'html-page', 'truncate', 'type-html', 'type-none'] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** Number literals JSON.stringify cannot write: they go in as text, in place of a marker string. */
const HUGE: Partial<Record<Mutation, string>> = { 'huge-1e308': '1e308', 'huge-30-digits': '123456789012345678901234567890' };
const MARKER = '\u0000huge\u0000';

const LOGIN_PAGE =
  '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form method="post" action="/login"><input name="username"><input name="password" type="password"><button>Sign in</button></form></body></html>';

type Key = string | number;

function parse(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return body.length ? { ok: true, value: JSON.parse(body.toString('utf8')) } : { ok: false };
  } catch {
    return { ok: false };
  }
}

/**
 * Every member's path as a shape, array indexes as -1 (`data[*].id`): a list page of 100
 * records has a dozen shapes but a thousand members, and picking among shapes reaches
 * meta.page.total as often as a record's id.
 */
function shapes(value: unknown, at: Key[] = [], out = new Map<string, Key[]>(), id = ''): Key[][] {
  if (!out.has(id)) out.set(id, at);
  if (Array.isArray(value)) for (const v of value) shapes(v, [...at, -1], out, `${id}[*]`);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) shapes(v, [...at, k], out, `${id}.${JSON.stringify(k)}`);
  return [...out.values()];
}

/** The members of one shape (each `[*]` any element), in document order. */
function instances(value: unknown, shape: readonly Key[], at: Key[] = []): Key[][] {
  if (shape.length === 0) return [at];
  const [k, ...rest] = shape;
  if (k === -1) return Array.isArray(value) ? value.flatMap((v, i) => instances(v, rest, [...at, i])) : [];
  return value && typeof value === 'object' && k! in value ? instances((value as Record<Key, unknown>)[k!], rest, [...at, k!]) : [];
}

function showPath(path: readonly Key[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k)).join('') || '(root)';
}

/** The value in another type, kept where it can be ("25" becomes 25, an object its values): wrong in type only. */
function retyped(v: unknown): unknown {
  if (typeof v === 'string') return v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return Object.fromEntries(v.map((x, i) => [i, x]));
  if (v && typeof v === 'object') return Object.values(v);
  return {}; // null
}

/** The mutations that change this answer (a member mutation needs a JSON body, `drop` a member). */
export function applicable(a: Answer): Mutation[] {
  const json = parse(a.body);
  return MUTATIONS.filter((m) => {
    if (m === 'drop') return json.ok && shapes(json.value).length > 1;
    if (m === 'truncate') return json.ok && a.body.length > 1;
    if (m === 'null' || m === 'retype' || m in HUGE) return json.ok;
    if (m === 'empty' || m === 'type-html') return a.body.length > 0;
    if (m === 'type-none') return a.headers['content-type'] !== undefined;
    return true;
  });
}

/** The answer with `m` applied, and what was done; undefined when `m` does not apply. */
export function mutate(a: Answer, m: Mutation, pick: number): { answer: Answer; what: string } | undefined {
  if (!applicable(a).includes(m)) return undefined;
  const withType = (type: string | undefined, body = a.body, status = a.status) => {
    const { 'content-type': _old, ...headers } = a.headers;
    return { status, headers: type === undefined ? headers : { ...headers, 'content-type': type }, body };
  };
  if (m === 'empty') return { answer: { ...a, body: Buffer.alloc(0) }, what: 'empty body' };
  if (m === 'html-page')
    return { answer: withType('text/html; charset=utf-8', Buffer.from(LOGIN_PAGE), 200), what: `200 text/html login page (was ${a.status})` };
  if (m === 'type-html') return { answer: withType('text/html'), what: 'Content-Type: text/html' };
  if (m === 'type-none') return { answer: withType(undefined), what: 'no Content-Type' };
  if (m === 'truncate') {
    const cut = 1 + (pick % (a.body.length - 1));
    return { answer: { ...a, body: a.body.subarray(0, cut) }, what: `body cut to ${cut} of ${a.body.length} bytes` };
  }
  const root = JSON.parse(a.body.toString('utf8')) as unknown;
  // `drop` needs a member; the others may hit the root too (a body that is null, an array, 1e308).
  const all = shapes(root).filter((s) => m !== 'drop' || s.length > 0);
  const members = instances(root, all[pick % all.length]!);
  const path = members[Math.floor(pick / all.length) % members.length]!;
  const next = (v: unknown): unknown => (m === 'null' ? null : m === 'retype' ? retyped(v) : MARKER);
  const done = (v: unknown) => ({
    answer: { ...a, body: Buffer.from(JSON.stringify(v).replace(JSON.stringify(MARKER), HUGE[m] ?? '')) },
    what: `${m} at ${showPath(path)}`,
  });
  if (path.length === 0) return done(next(root));
  const parent = path.slice(0, -1).reduce<unknown>((v, k) => (v as Record<Key, unknown>)[k], root) as Record<Key, unknown>;
  const last = path.at(-1)!;
  if (m !== 'drop') parent[last] = next(parent[last]);
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return done(root);
}
