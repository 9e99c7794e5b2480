// The reference server's in-memory records.
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
}

export class Store {
  readonly customApis = new Map<string, CustomApi>();
  readonly applicationKeys = new Map<string, ApplicationKey>();
  /** Store settings (GET /v2/settings), the real platform's page_length. */
  pageLength = 25;
  /** Counter behind numeric ids (a fault's id format). */
  serial = 0;
}
