// Deletes what the ledger says the run created and did not delete. It touches nothing
// else: an id not in the ledger is never sent a DELETE.
import { HttpClient } from './http.js';
import { Ledger, type LedgerEntry } from './ledger.js';
import { Secrets } from './secrets.js';
import type { RunSettings } from './check.js';

export interface Leftover {
  kind: LedgerEntry['kind'];
  id: string;
  name: string;
  createdBy: string;
  reason: string;
}

export interface CleanupReport {
  deleted: number;
  leftovers: Leftover[];
}

export async function cleanUp(settings: RunSettings, secrets = new Secrets()): Promise<CleanupReport> {
  const ledger = new Ledger(settings.ledgerPath);
  const outstanding = ledger.outstanding();
  const leftovers: Leftover[] = [];
  let deleted = 0;
  if (outstanding.length === 0) return { deleted, leftovers };
  const http = new HttpClient({ ...settings, secrets });
  try {
    await Promise.all(
      outstanding.map(async (entry) => {
        const left = (reason: string): void => {
          leftovers.push({ kind: entry.kind, id: entry.id, name: secrets.mask(entry.name), createdBy: entry.createdBy, reason: secrets.mask(reason) });
        };
        if (!entry.deletePath) return left('the target returned no id, so the suite cannot delete it');
        try {
          const res = await http.request({ method: 'DELETE', path: entry.deletePath });
          // 404: already gone (a check deleted it and the ledger missed the answer).
          if ((res.status >= 200 && res.status < 300) || res.status === 404) {
            ledger.deleted(entry.deletePath);
            deleted++;
          } else left(`DELETE ${entry.deletePath} answered ${res.status}`);
        } catch (e) {
          left((e as Error).message);
        }
      }),
    );
  } finally {
    await http.close();
  }
  return { deleted, leftovers };
}
