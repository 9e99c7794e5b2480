// Cleanup deletes what the ledger holds and nothing else, and lists what it could not delete.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { cleanUp } from '../lib/cleanup.js';
import { Ledger } from '../lib/ledger.js';
import { settingsFor } from './support.js';

it('deletes only ledger entries still outstanding, and reports the ones it could not delete', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.statusCode = req.url?.endsWith('/stuck') ? 500 : req.url?.endsWith('/gone') ? 404 : 204;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { settings, dispose } = settingsFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const ledger = new Ledger(settings.ledgerPath);
    const entry = (id: string) => ({ kind: 'application-key' as const, id, name: `conformance-x-${id}`, deletePath: `/v2/application-keys/${id}`, createdBy: 'test' });
    ledger.created(entry('ok'));
    ledger.created(entry('stuck'));
    ledger.created(entry('gone'));
    ledger.created(entry('already-deleted'));
    ledger.deleted('/v2/application-keys/already-deleted');
    ledger.created({ ...entry(''), deletePath: '' });
    const report = await cleanUp(settings);
    expect(seen.sort()).toEqual(['DELETE /v2/application-keys/gone', 'DELETE /v2/application-keys/ok', 'DELETE /v2/application-keys/stuck']);
    expect(report.deleted).toBe(2);
    expect(report.leftovers.map((l) => l.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/answered 500/), expect.stringMatching(/no id/)]));
    expect(report.leftovers).toHaveLength(2);
    // A second cleanup finds only the leftovers.
    seen.length = 0;
    await cleanUp(settings);
    expect(seen).toEqual(['DELETE /v2/application-keys/stuck']);
  } finally {
    dispose();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
