// The reference server's in-memory records: what the API creates, the generated lists, and
// the tokens POST /oauth/access_token handed out (server/oauth.ts).
import { ListData, PLAIN_DATA, type DataShape } from './lists.js';
import { seededRandom } from '../lib/runner/index.js';

export interface Timestamps {
  created_at: string;
  updated_at: string;
}

export interface CustomApi {
  id: string;
  type: 'custom_api';
  name: string;
  slug: string;
  api_type: string;
  description: string;
  created: Date;
  /** Deleted for DELETE alone (the soft-delete fault): reads and the list still find it. */
  hiddenFromDelete?: boolean;
}

export interface ApplicationKey {
  id: string;
  type: string;
  name: string;
  client_id: string;
  client_secret: string;
  reserved_rate_limit?: number;
  created: Date;
  last_used_at: string | null;
  /** Picks the offset of the mixed-offsets timestamp style. */
  serial: number;
}

/** The grants POST /oauth/access_token takes (the official SDK sends one or the other). */
export type Grant = 'client_credentials' | 'implicit';

/** A token handed out for an Application Key: good until `expiresAt` while the key exists. */
export interface IssuedToken {
  keyId: string;
  clientId: string;
  grant: Grant;
  /** Epoch milliseconds, by the server's clock. */
  expiresAt: number;
}

export interface StoreOptions {
  seed?: number;
  /** Records in an ordinary list collection (default 130: more than a full page of 100). */
  records?: number;
  /** Keep the deliberately empty list (catalog rules) empty; default true. */
  emptyList?: boolean;
  /** List records created in the last 30 seconds (a store seeded at start-up). */
  recentRecords?: boolean;
  /** Timestamp precision and id format of the list data (the behaviour's, server/lists.ts). */
  shape?: DataShape;
  /**
   * The most records of each kind the API may create and the store hold at once: Application
   * Keys, Custom APIs, tokens from POST /oauth/access_token (default 10,000, DEFAULT_MAX_RECORDS).
   * Past it, a create is refused with 409 and the Error shape (server/routes.ts, roomFor).
   */
  maxRecords?: number;
}

/**
 * 10,000 of each kind: some 10 MB of keys (a key with a 255-character name, about 1 KB),
 * while a run of the suite makes a few hundred at most and deletes them.
 */
export const DEFAULT_MAX_RECORDS = 10_000;

export class Store {
  readonly #random: () => number;
  readonly lists: ListData;

  /** The most records of each kind (StoreOptions.maxRecords). */
  readonly maxRecords: number;

  constructor(options: StoreOptions = {}) {
    const maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1) throw new TypeError(`maxRecords must be a whole number, at least 1 (got ${String(maxRecords)})`);
    this.maxRecords = maxRecords;
    const seed = options.seed ?? Date.now() % 2 ** 31;
    this.#random = seededRandom(seed);
    this.lists = new ListData({
      seed,
      records: options.records ?? 130,
      now: Date.now(),
      emptyList: options.emptyList ?? true,
      recent: options.recentRecords ?? false,
      shape: options.shape ?? PLAIN_DATA,
    });
  }

  /** A version 4 UUID from the store's seeded generator. */
  uuid(): string {
    const b = Array.from({ length: 16 }, () => Math.floor(this.#random() * 256));
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = b.map((x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  readonly customApis = new Map<string, CustomApi>();
  readonly applicationKeys = new Map<string, ApplicationKey>();
  /** Custom APIs deleted while the deleted-stays-listed fault is on: their list still shows them. */
  readonly listedAfterDelete = new Map<string, CustomApi>();
  /** Tokens handed out, by the SHA-256 of the token (hex): the store keeps no token itself. */
  readonly issuedTokens = new Map<string, IssuedToken>();
  /** Counter behind numeric ids (a fault's id format). */
  serial = 0;
  /** The page length PUT /v2/settings set, for every list read without page[limit] (absent: the behaviour's pageLength). */
  pageLength?: number;
}
