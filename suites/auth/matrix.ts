// Every operation of the contract, and each method the suite uses on it, without a valid token
// (spec/contract/README.md#authentication): the list GET of every list operation the run reads
// (under the parents the run resolves), Create an Application Key (POST), and the Custom API's
// create (POST), read (GET) and delete (DELETE), each sent once with no Authorization header, a
// wrong bearer token, an empty `Bearer ` and another scheme (Basic). One piece of shared work
// sends every cell at once, one request each (the HTTP client bounds what is in flight). Not
// behind the other requests (background): these are writers, and the checks of the lists the
// run writes to wait for every writer (suites/register.ts). Three checks judge it at their levels.
import {
  type CheckContext,
  type Session,
  type WrittenCheck,
  expectErrorBody,
  expectStatus,
  fail,
  refusalLookUp,
  type Left,
  type RefusalLookUp,
} from '../../lib/runner/index.js';
import { CheckSkip } from '../../lib/evidence/index.js';
import type { Auth, HttpResponse, RequestSpec } from '../../lib/transport/index.js';
import { APPLICATION_KEYS, nameIn, postApplicationKey, validKeyBody } from '../create/application-key.js';
import { createCustomApi, CUSTOM_APIS, customApiPath, deleteCustomApi, wrongToken } from '../delete/custom-api.js';
import { readPage } from '../list/pages.js';
import { answered404, resolvePath } from '../list/target.js';

const area = 'errors';

/** A way of sending no valid token. */
interface Credential {
  what: string;
  send: Pick<RequestSpec, 'auth' | 'headers'>;
}

function credentials(s: Session): Credential[] {
  const none: Auth = 'none';
  return [
    { what: 'no Authorization header', send: { auth: none } },
    { what: 'a wrong bearer token', send: { auth: { bearer: wrongToken(s.faker) } } },
    { what: 'an empty bearer token (Authorization: Bearer )', send: { auth: none, headers: { authorization: 'Bearer ' } } },
    { what: 'another scheme (Authorization: Basic)', send: { auth: none, headers: { authorization: 'Basic dXNlcjpwYXNz' } } },
  ];
}

/** One request of the matrix: an operation, a method, a credential, and the answer. */
interface Cell {
  operation: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  credential: string;
  res: HttpResponse;
  /** A create: what it would have made, and the name it sent (looked for afterwards). */
  creates?: { kind: 'application-key' | 'custom-api'; name: string };
}

interface Matrix {
  cells: Cell[];
  /** List operations not sent, and why (absent, no parent, out of budget). */
  notExercised: string[];
  /** The Custom API read and deleted without a token: why there was none, or the DELETE with the token after. */
  customApi: { ok: false; reason: string } | { ok: true; after: HttpResponse };
  /** Creates refused, yet something of the name they sent exists afterwards. */
  left: Array<{ cell: Cell; ids: string[] }>;
  /** Whether both collections could be searched for the names of the refused creates. */
  searched: boolean;
}

const ok = (res: HttpResponse): boolean => res.status >= 200 && res.status < 300;
const label = (c: Cell): string => `${c.method} ${c.path} (${c.operation}) with ${c.credential}`;

/** The concrete path of every list operation of the run that is there, as the list checks resolve it. */
async function listPaths(ctx: CheckContext): Promise<{ paths: Array<{ operation: string; path: string }>; notExercised: string[] }> {
  const endpoints = ctx.run.settings.pagination?.endpoints ?? [];
  const resolved = await Promise.all(
    endpoints.map(async (e): Promise<{ operation: string; path: string } | string> => {
      try {
        const r = await resolvePath(ctx, e);
        if (!r.ok) return `${e.key}: ${r.reason}`;
        if (r.absentUnder !== undefined) return `${e.key}: absent (${answered404(r)})`;
        // The lists the run writes to are read with the token only once it is done writing
        // (suites/register.ts): not here. Another, read with the token (the read the list checks share), may be absent.
        if (!e.extra && !e.placeholders.length && (await readPage(ctx, e, r.path)).res.status === 404) return `${e.key}: absent (GET ${r.path} answered 404)`;
        return { operation: e.key, path: r.path };
      } catch (err) {
        if (err instanceof CheckSkip) return `${e.key}: ${err.message}`;
        throw err;
      }
    }),
  );
  return {
    paths: resolved.filter((r): r is { operation: string; path: string } => typeof r !== 'string'),
    notExercised: resolved.filter((r): r is string => typeof r === 'string'),
  };
}

/** The creates of the matrix: an Application Key and a Custom API, each with a valid body and a name of its own. */
function createCells(s: Session, creds: readonly Credential[]): Array<Promise<Cell>> {
  return creds.flatMap((c) => [
    (async (): Promise<Cell> => {
      const json = validKeyBody(s.name());
      const res = await postApplicationKey(s, { json, ...c.send });
      const name = nameIn({ json }, s.run.settings.runId);
      return {
        operation: 'create-application-key',
        method: 'POST',
        path: APPLICATION_KEYS,
        credential: c.what,
        res,
        creates: { kind: 'application-key', name },
      };
    })(),
    (async (): Promise<Cell> => {
      const made = await createCustomApi(s, c.send);
      return {
        operation: 'create-custom-api',
        method: 'POST',
        path: CUSTOM_APIS,
        credential: c.what,
        res: made.res,
        creates: { kind: 'custom-api', name: made.name },
      };
    })(),
  ]);
}

/** Sends every cell at once; then the Custom API deleted with the token, and the names of the refused creates looked for. */
async function sendMatrix(ctx: CheckContext, s: Session): Promise<Matrix> {
  // Said before anything is sent: the look-ups of refused creates wait for these names too.
  const lookUps = { 'application-key': refusalLookUp(ctx, 'application-key', APPLICATION_KEYS), 'custom-api': refusalLookUp(ctx, 'custom-api', CUSTOM_APIS) };
  try {
    return await sendCells(ctx, s, lookUps);
  } finally {
    lookUps['application-key'].done();
    lookUps['custom-api'].done();
  }
}

async function sendCells(ctx: CheckContext, s: Session, lookUps: Record<'application-key' | 'custom-api', RefusalLookUp>): Promise<Matrix> {
  const creds = credentials(s);
  const [{ paths, notExercised }, made] = await Promise.all([listPaths(ctx), createCustomApi(s)]);
  const send = (operation: string, method: Cell['method'], path: string, c: Credential): Promise<Cell> =>
    s.request({ method, path, ...c.send }).then((res) => ({ operation, method, path, credential: c.what, res }));
  const onCustomApi = made.ok
    ? creds.flatMap((c) => [send('get-custom-api', 'GET', customApiPath(made.id), c), send('delete-custom-api', 'DELETE', customApiPath(made.id), c)])
    : [];
  const cells = await Promise.all([...paths.flatMap((p) => creds.map((c) => send(p.operation, 'GET', p.path, c))), ...onCustomApi, ...createCells(s, creds)]);
  // Still there, for the DELETE with the token: it answers 2xx (and removes it), not 404.
  const customApi: Matrix['customApi'] = made.ok ? { ok: true, after: await deleteCustomApi(s, made.id) } : { ok: false, reason: made.reason };
  const refused = cells.filter((c) => c.creates && c.res.status >= 400 && c.res.status < 500);
  const lookUp = (kind: 'application-key' | 'custom-api'): Promise<Left> =>
    lookUps[kind].find(refused.filter((c) => c.creates!.kind === kind).map((c) => c.creates!.name));
  const [keys, apis] = await Promise.all([lookUp('application-key'), lookUp('custom-api')]);
  const left = refused.flatMap((cell) => {
    const ids = (cell.creates!.kind === 'application-key' ? keys : apis).found.get(cell.creates!.name);
    return ids ? [{ cell, ids }] : [];
  });
  return { cells, notExercised, customApi, left, searched: keys.searched && apis.searched };
}

function matrix(ctx: CheckContext): Promise<Matrix> {
  return ctx.shared('auth-matrix', (s) => sendMatrix(ctx, s));
}

/** Create an Application Key: whether it needs a token is not stated (spec/contract/README.md#auth.create). */
const openQuestion = (c: Cell): boolean => c.operation === 'create-application-key';

/** No cell served (Create an Application Key aside), nothing deleted, nothing created by a refused create: else the first that was fails. */
function expectNothingServed(m: Matrix): void {
  const served = m.cells.filter((c) => !openQuestion(c) && ok(c.res));
  const first = served[0];
  if (first)
    fail(`${label(first)} was served (${first.res.status})`, {
      expected: 'a refusal: no 2xx without a valid bearer token',
      actual: `status ${first.res.status}${served.length > 1 ? ` (and ${served.length - 1} more requests without a valid token served)` : ''}`,
      res: first.res,
    });
  if (m.customApi.ok && m.customApi.after.status === 404)
    fail('a DELETE without a valid token was refused, yet the Custom API was deleted all the same', {
      expected: 'the Custom API still exists: the DELETE with the token after the refused ones succeeds',
      actual: 'the DELETE with the token answers 404',
      res: m.customApi.after,
    });
  const left = m.left[0];
  if (left)
    fail(`${label(left.cell)} was refused with ${left.cell.res.status}, yet what it sent was created`, {
      expected: `nothing named ${JSON.stringify(left.cell.creates!.name)} in ${left.cell.path}`,
      actual: `${m.left.map((l) => `${l.ids.length} record(s) for ${label(l.cell)}`).join('; ')} (in the ledger: the run's cleanup deletes them)`,
      res: left.cell.res,
    });
}

/** What the run saw that no rule judges: the creates of keys, the operations left out. */
function matrixNotes(ctx: CheckContext, m: Matrix): void {
  const statuses = (cs: Cell[]): string => [...new Set(cs.map((c) => c.res.status))].join(', ');
  ctx.note(`${m.cells.length} requests without a valid token (${m.cells.filter((c) => c.method === 'GET').length} GET); answered ${statuses(m.cells)}`);
  const creates = m.cells.filter(openQuestion);
  ctx.note(
    `Create an Application Key without a valid token (the contract does not say whether it needs one): ${creates.map((c) => `${c.credential} → ${c.res.status}`).join('; ')}`,
  );
  if (!m.customApi.ok) ctx.note(`the Custom API's read and delete not sent: ${m.customApi.reason}`);
  if (m.notExercised.length) ctx.note(`list operations not sent: ${m.notExercised.join('; ')}`);
  if (!m.searched) ctx.note('the names of the refused creates could not be looked for: a collection could not be read to its end');
}

/** The refusals of the matrix (4xx answers); skips when there are none. */
async function refusals(ctx: CheckContext): Promise<Cell[]> {
  const cells = (await matrix(ctx)).cells.filter((c) => c.res.status >= 400 && c.res.status < 500);
  if (!cells.length) ctx.skip('not testable: no request without a valid token was refused with a 4xx');
  return cells;
}

export const authChecks: WrittenCheck[] = [
  {
    id: 'auth.matrix.refused',
    area,
    clause: { at: 'authentication', detail: 'scheme HTTP bearer' },
    title:
      'every operation and method without a valid token (none, a wrong one, an empty Bearer, another scheme) is never served (no 2xx) nor answered 5xx, and changes nothing (Create an Application Key: noted only)',
    async run(ctx) {
      const m = await matrix(ctx);
      matrixNotes(ctx, m);
      expectNothingServed(m);
    },
  },
  {
    id: 'auth.matrix.401',
    area,
    clause: { at: ['authentication', 'errors'] },
    title: 'a request refused for want of a valid token answers 401 (403 allowed, warned) with the Error shape',
    async run(ctx) {
      for (const c of await refusals(ctx)) {
        expectStatus(c.res, 401, label(c));
        expectErrorBody(c.res, `the 401 answer to ${label(c)}`);
      }
    },
  },
  {
    id: 'auth.matrix.www-authenticate',
    area,
    clause: { at: 'authentication', detail: 'RFC 6750' },
    title: 'a 401 for want of a valid token carries WWW-Authenticate: Bearer',
    async run(ctx) {
      const cells = (await refusals(ctx)).filter((c) => c.res.status === 401);
      if (!cells.length) ctx.skip('not testable: no request without a valid token was answered 401');
      for (const c of cells) {
        const header = c.res.headers['www-authenticate'];
        if (header === undefined || !/^\s*Bearer\b/i.test(header))
          fail(`the 401 answer to ${label(c)} does not name the Bearer scheme in WWW-Authenticate`, {
            expected: 'WWW-Authenticate: Bearer ... (RFC 6750)',
            actual: header === undefined ? 'no WWW-Authenticate header' : `WWW-Authenticate: ${header}`,
            res: c.res,
          });
      }
    },
  },
];
