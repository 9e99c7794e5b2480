// The sandbox's login: POST /oauth/access_token, so that a client that logs in the way the real
// platform asks (its official JavaScript SDK, @elasticpath/js-sdk, for one) works against the
// bundled server unchanged. The contract does not show how a token is obtained
// (spec/contract/README.md#authentication). The SDK sends grant_type, client_id and
// client_secret, form-encoded, and reads access_token, expires, expires_in, identifier and
// token_type at the top level of the answer; it reads `expires` as epoch seconds to decide when
// to log in again.
//
// Grants: client_credentials (the client_id and client_secret of an Application Key created
// through POST /v2/application-keys) gives a token that does everything the server's own
// bearer token does; implicit (a client_id alone, as a browser holds it) gives one that may
// only read (GET): it cannot create or delete anything, keys included. A token lasts
// `lifetimeSeconds`, and only while its key exists: deleting a key logs its clients out.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TOKEN_PATH } from '../lib/configuration/index.js';
import { CONFORMING } from './behaviour.js';
import { errorAnswer, HttpError, json, readBody } from './http.js';
import { roomFor, type Route } from './routes.js';
import type { ApplicationKey, Grant, IssuedToken, Store } from './store.js';

export { TOKEN_PATH };
export const GRANTS: readonly Grant[] = ['client_credentials', 'implicit'];
/** The real platform's token lifetime, in seconds (a variant's Options.tokenLifetimeSeconds may make it shorter). */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 3600;

/** What a token lets its bearer do: everything, or read (GET) only. */
export type Access = 'full' | 'read';

export interface TokenOptions {
  lifetimeSeconds: number;
  /** The clock tokens expire by, in epoch milliseconds. */
  now: () => number;
}

/** The platform's answer, at the top level (no `data` wrapper). */
export interface TokenAnswer {
  client_id: string;
  access_token: string;
  token_type: 'Bearer';
  /** Seconds from now. */
  expires_in: number;
  /** When, in epoch seconds. */
  expires: number;
  /** The grant the token came from. */
  identifier: Grant;
}

/** Past this many tokens, a new one first clears out those that no longer work. */
const SWEEP_FROM = 10_000;

/** Tokens are looked up by their SHA-256; secrets are compared by theirs, in constant time. */
const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function works(store: Store, t: IssuedToken, now: number): boolean {
  return now < t.expiresAt && store.applicationKeys.get(t.keyId)?.client_id === t.clientId;
}

/** What an issued token allows now; undefined for a token this server never handed out, an expired one, or one whose key is gone. */
export function issuedAccess(store: Store, token: string, now: number): Access | undefined {
  if (store.issuedTokens.size === 0) return undefined;
  const key = digest(token).toString('hex');
  const t = store.issuedTokens.get(key);
  if (!t) return undefined;
  if (!works(store, t, now)) {
    store.issuedTokens.delete(key);
    return undefined;
  }
  return t.grant === 'client_credentials' ? 'full' : 'read';
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** The form parameters of the request, each at most once (RFC 6749, 3.2). */
async function readForm(req: IncomingMessage): Promise<Map<string, string>> {
  const raw = await readBody(req);
  const type = req.headers['content-type'];
  if (!type || !FORM_TYPE.test(type))
    throw new HttpError(
      415,
      'Send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded), as grant_type=client_credentials&client_id=...&client_secret=...',
    );
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (params.has(name)) throw new HttpError(400, `The parameter '${name.slice(0, 40)}' is given more than once.`);
    params.set(name, value);
  }
  return params;
}

/** Checks the client and hands out a token, or refuses with the status and a detail that never repeats a secret. */
export function issueToken(store: Store, params: ReadonlyMap<string, string>, options: TokenOptions): TokenAnswer {
  const grant = params.get('grant_type');
  if (!grant) throw new HttpError(400, "The parameter 'grant_type' is required: client_credentials or implicit.");
  if (!(GRANTS as readonly string[]).includes(grant))
    throw new HttpError(400, `The grant_type '${grant.slice(0, 40)}' is not supported: use client_credentials or implicit.`);
  const clientId = params.get('client_id');
  if (!clientId) throw new HttpError(400, "The parameter 'client_id' is required.");
  const secret = params.get('client_secret');
  if (grant === 'client_credentials' && !secret) throw new HttpError(400, "The parameter 'client_secret' is required with grant_type client_credentials.");
  // One answer for an unknown client and a wrong secret: a caller learns nothing about which.
  const refused = (): never => {
    throw new HttpError(401, 'The client credentials are not valid.');
  };
  let key: ApplicationKey | undefined;
  for (const k of store.applicationKeys.values()) {
    if (k.client_id === clientId) {
      key = k;
      break;
    }
  }
  if (!key) refused();
  if (grant === 'client_credentials' && !timingSafeEqual(digest(secret!), digest(key!.client_secret))) refused();

  const now = options.now();
  if (store.issuedTokens.size >= Math.min(SWEEP_FROM, store.maxRecords)) {
    for (const [k, t] of store.issuedTokens) if (!works(store, t, now)) store.issuedTokens.delete(k);
  }
  // Tokens that still work are kept to the store's cap, as keys are (server/routes.ts, roomFor).
  roomFor(store, store.issuedTokens, 'tokens that still work', 'wait for one to expire, or delete the Application Key it was issued for');
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + options.lifetimeSeconds * 1000;
  store.issuedTokens.set(digest(token).toString('hex'), { keyId: key!.id, clientId, grant: grant as Grant, expiresAt });
  return {
    client_id: clientId,
    access_token: token,
    token_type: 'Bearer',
    expires_in: options.lifetimeSeconds,
    expires: Math.floor(expiresAt / 1000),
    identifier: grant as Grant,
  };
}

/** POST /oauth/access_token, reachable without a token. */
export function tokenRoute(options: TokenOptions): Route {
  return {
    name: 'token',
    method: 'POST',
    pattern: /^\/oauth\/access_token$/,
    open: () => true,
    outsideContract: true,
    async handle(ctx) {
      let answer: TokenAnswer;
      try {
        answer = issueToken(ctx.store, await readForm(ctx.req), options);
      } catch (e) {
        // Outside the contract: whatever fault the data API is running with, a refused login
        // keeps the conforming Error shape, so that a client can still log in to a mutant.
        if (e instanceof HttpError) return ctx.reply(errorAnswer(e, CONFORMING));
        throw e;
      }
      // RFC 6749, 5.1: a token answer is not to be cached.
      ctx.reply(json(200, answer, { 'cache-control': 'no-store', pragma: 'no-cache' }));
    },
  };
}
