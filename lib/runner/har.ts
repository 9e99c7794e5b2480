// HAR files (HTTP Archive 1.2, as browsers' developer tools, Playwright's recordHar and
// recording proxies export them) read into observed exchanges (lib/runner/observed.ts). A body is
// read whether the file stores it as text or as base64 (`content.encoding`); an entry the file
// holds no answer for (status 0: blocked, aborted) is left out and counted.
import type { Observed } from './observed.js';

interface HarHeader {
  name?: unknown;
  value?: unknown;
}

/** Why a file is not a HAR file one can judge: said in one line, the command exits 2. */
export class HarError extends Error {
  readonly code = 'HAR';
}

export interface HarRead {
  exchanges: Observed[];
  /** Entries left out: no answer recorded, or a shape that is not HAR's. */
  skipped: number;
}

function headers(list: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(list)) return out;
  for (const h of list as HarHeader[]) {
    if (typeof h?.name !== 'string' || typeof h.value !== 'string') continue;
    const k = h.name.toLowerCase();
    // HTTP/2 pseudo-headers (:authority, :path) are not headers of the request.
    if (k.startsWith(':')) continue;
    out[k] = k in out ? `${out[k]}, ${h.value}` : h.value;
  }
  return out;
}

/** A body as text: base64 decoded where the file says so. */
function bodyText(text: unknown, encoding: unknown): { text: string; bytes: number } {
  if (typeof text !== 'string') return { text: '', bytes: 0 };
  if (typeof encoding === 'string' && encoding.toLowerCase() === 'base64') {
    const raw = Buffer.from(text, 'base64');
    return { text: raw.toString('utf8'), bytes: raw.length };
  }
  return { text, bytes: Buffer.byteLength(text) };
}

/** The exchanges of a HAR file's text, in the order they were sent. */
export function readHar(source: string): HarRead {
  let doc: unknown;
  try {
    // A byte order mark, as some editors and Windows tools write one, is no part of the JSON.
    doc = JSON.parse(source.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new HarError(`not JSON (${(e as Error).message})`);
  }
  const entries = (doc as { log?: { entries?: unknown } } | null)?.log?.entries;
  if (!Array.isArray(entries)) throw new HarError('no log.entries array: not a HAR file');
  const exchanges: Observed[] = [];
  let skipped = 0;
  for (const entry of entries as Array<Record<string, unknown> | null>) {
    const req = entry?.request as Record<string, unknown> | undefined;
    const res = entry?.response as Record<string, unknown> | undefined;
    const status = res?.status;
    if (!req || !res || typeof req.method !== 'string' || typeof req.url !== 'string' || typeof status !== 'number' || status < 100) {
      skipped++;
      continue;
    }
    const post = req.postData as { text?: unknown; encoding?: unknown } | undefined;
    const content = res.content as { text?: unknown; encoding?: unknown; size?: unknown } | undefined;
    const body = bodyText(content?.text, content?.encoding);
    // No text: an empty body where the file says its size is 0 (or the status has none), else one not recorded.
    const unread = typeof content?.text !== 'string' && content?.size !== 0 && status !== 204 && status !== 304;
    const started = Date.parse(typeof entry!.startedDateTime === 'string' ? entry!.startedDateTime : '');
    const time = typeof entry!.time === 'number' && entry!.time >= 0 ? entry!.time : 0;
    exchanges.push({
      method: req.method.toUpperCase(),
      url: req.url,
      requestHeaders: headers(req.headers),
      ...(post && typeof post.text === 'string' ? { requestBody: bodyText(post.text, post.encoding).text } : {}),
      status,
      responseHeaders: headers(res.headers),
      responseBody: body.text,
      bodyBytes: body.bytes,
      ...(unread ? { unread: true } : {}),
      startedAt: Number.isNaN(started) ? 0 : started,
      durationMs: time,
    });
  }
  // Entries are in the order the file lists them, which is usually the order sent; sort stably by start.
  const order = exchanges.map((x, i) => ({ x, i }));
  order.sort((a, b) => a.x.startedAt - b.x.startedAt || a.i - b.i);
  return { exchanges: order.map((o) => o.x), skipped };
}
