// Helpers for the project's tests: reference servers on port 0, closed after; runs of the
// checks straight through runCheck (the same code the vitest glue calls).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunContext, runCheck, type Check, type CheckResult, type RunSettings } from '../lib/check.js';
import { cleanUp, type CleanupReport } from '../lib/cleanup.js';
import { startReferenceServer, type ReferenceServerOptions, type RunningServer } from '../server/index.js';
import { allChecks } from '../suites/index.js';

export const TOKEN = 'test-token-5f2c9a7e1b';
export const SEED = 20261121;

export async function withServer<T>(options: Partial<ReferenceServerOptions>, fn: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await startReferenceServer({ token: TOKEN, ...options });
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

export function settingsFor(baseUrl: string, overrides: Partial<RunSettings> = {}): { settings: RunSettings; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-test-'));
  return {
    settings: {
      baseUrl,
      token: TOKEN,
      seed: SEED,
      runId: 'test0001',
      timeoutMs: 5_000,
      maxBodyBytes: 4 * 1024 * 1024,
      concurrency: 8,
      ledgerPath: join(dir, 'ledger.jsonl'),
      ...overrides,
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs checks against a base URL; cleans up what they created. */
export async function runChecks(baseUrl: string, checks: readonly Check[] = allChecks, overrides: Partial<RunSettings> = {}): Promise<{ results: CheckResult[]; cleanup: CleanupReport }> {
  const { settings, dispose } = settingsFor(baseUrl, overrides);
  const run = new RunContext(settings);
  try {
    const results = await Promise.all(checks.map((c) => runCheck(c, run)));
    const cleanup = await cleanUp(settings);
    return { results, cleanup };
  } finally {
    await run.close();
    dispose();
  }
}

/** Runs checks against a fresh reference server built from `options`. */
export function runAgainst(options: Partial<ReferenceServerOptions>, checks: readonly Check[] = allChecks) {
  return withServer(options, (server) => runChecks(server.url, checks));
}

export function byId(results: readonly CheckResult[]): Map<string, CheckResult> {
  return new Map(results.map((r) => [r.id, r]));
}
