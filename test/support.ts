// Helpers for the project's tests: reference servers on port 0, closed after; runs of the
// checks straight through runCheck (the same code the vitest glue calls).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RunContext, runCheck, type Check, type CheckResult, type RunSettings, cleanUp, type CleanupReport } from '../lib/runner/index.js';
import { type PaginationSettings, endpointsOf, loadCatalogSpec, type Endpoint } from '../lib/contract/index.js';
import { startReferenceServer, type ReferenceServerOptions, type RunningServer } from '../server/index.js';
import { listChecks, staticChecks } from '../suites/index.js';
import { expandListChecks } from '../suites/list/expand.js';
import { NO_5XX } from '../suites/levels.js';
import { plainOrder } from '../suites/list/collation.js';
import type { ListModel } from '../suites/list/model.js';
import type { Rec } from '../suites/list/pages.js';
import type { HttpClient } from '../lib/transport/index.js';
import { sha256, signStatement, type SigningKey, type Statement } from '../reporters/attestation.js';

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

/** An Application Key made on `url` with the reference server's token: client credentials to log in with. */
export async function applicationKey(url: string): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${url}/v2/application-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'application_key', name: 'credentials-test' } }),
  });
  const { data } = (await res.json()) as { data: { client_id: string; client_secret: string } };
  return { id: data.client_id, secret: data.client_secret };
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
export async function runChecks(
  baseUrl: string,
  checks: readonly Check[] = staticChecks,
  overrides: Partial<RunSettings> = {},
): Promise<{ results: CheckResult[]; cleanup: CleanupReport }> {
  const { settings, dispose } = settingsFor(baseUrl, overrides);
  const run = new RunContext(settings);
  try {
    const results = await Promise.all(checks.map((c) => runCheck(c, run, NO_5XX)));
    const cleanup = await cleanUp(settings);
    return { results, cleanup };
  } finally {
    await run.close();
    dispose();
  }
}

/** Runs checks against a fresh reference server built from `options`. */
export function runAgainst(options: Partial<ReferenceServerOptions>, checks: readonly Check[] = staticChecks, overrides: Partial<RunSettings> = {}) {
  return withServer(options, (server) => runChecks(server.url, checks, overrides));
}

/** The operations of the catalog, or those named. */
export function endpoints(keys?: readonly string[]): Endpoint[] {
  const all = endpointsOf(loadCatalogSpec());
  return keys ? all.filter((e) => keys.includes(e.key)) : all;
}

export function paginationSettings(eps: Endpoint[], over: Partial<PaginationSettings> = {}): PaginationSettings {
  return { endpoints: eps, parents: loadCatalogSpec().parents, budget: 1000, timeBufferMs: 60_000, requireAllEndpoints: false, startedAt: Date.now(), ...over };
}

/** Runs the list checks on some operations of a reference server built from `options` (`settings`: the run's, such as explore). */
export function runListChecks(
  options: Partial<ReferenceServerOptions>,
  eps: Endpoint[],
  over: Partial<PaginationSettings> = {},
  settings: Partial<RunSettings> = {},
) {
  const pagination = paginationSettings(eps, over);
  return runAgainst({ seed: 3, ...options }, expandListChecks(listChecks, eps), { ...settings, pagination });
}

export function byId(results: readonly CheckResult[]): Map<string, CheckResult> {
  return new Map(results.map((r) => [r.id, r]));
}

/** The built command line, as a user runs it. */
export const BIN = resolve(import.meta.dirname, '../dist/cli/bin.js');

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The CLI started with the token in its environment, for a test that signals it mid-run: the
 * child, its stdout and stderr as they come, and its exit code once closed.
 */
export function started(args: string[]): { child: ChildProcess; out: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', CONFORMANCE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return { child, out: () => out, closed: new Promise((r) => child.on('close', r)) };
}

/** Runs the CLI in a fresh working directory with only PATH and `env` in its environment. */
export function cli(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Ran> {
  const started = performance.now();
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), 'conformance-cwd-')), env: { PATH: process.env.PATH ?? '', ...opts.env }, timeout: 90_000 },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr, ms: performance.now() - started });
      },
    );
  });
}

/** `server` listening on a free loopback port: its URL, and a close that ends its connections. */
export async function listening(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A bundle's files (attestation.json left out) sealed again after an edit, as a key holder
 * could: SHA256SUMS and the statement's subjects rewritten over them, `after` given the
 * statement last, and the statement signed with `key`. Returns the new attestation.json.
 */
export function reseal(files: Map<string, string>, statement: Statement, key: SigningKey, after?: (s: Statement) => void): string {
  const sums = [...files].filter(([n]) => n !== 'SHA256SUMS').map(([n, c]) => `${sha256(c)}  ${n}`);
  files.set('SHA256SUMS', `${sums.join('\n')}\n`);
  statement.subject = [...files].map(([name, c]) => ({ name, digest: { sha256: sha256(c) } }));
  after?.(statement);
  return signStatement(statement, key);
}

/**
 * A list model over `records`, as the model's tests build one: the whole list read, every
 * attribute sortable, ids in plain string order; `over` changes any field.
 */
export function listModelOf(records: readonly Rec[], over: Partial<ListModel> = {}): ListModel {
  return {
    path: '/v2/things',
    records: new Map(records.map((r) => [r.id, r])),
    total: records.length,
    complete: true,
    known: { created_at: undefined, updated_at: undefined, id: undefined },
    sortable: { created_at: true, updated_at: true, id: true },
    idOrder: plainOrder,
    defaultLength: 25,
    hardOffsetLimit: false,
    fresh: new Set(),
    digits: 3,
    notes: [],
    pages: [],
    ...over,
  };
}

/**
 * Fast GETs of `path` in batches as large as the bound (so that it is used, and grows) until it
 * is `to`, two batches at least (the baselines). Up to 100 batches: the bound follows measured
 * latency, and on a busy machine a slow moment may lower it again before it climbs.
 */
export async function warm(http: HttpClient, to: number, path = '/v2/warm'): Promise<void> {
  for (let i = 0; i < 100 && (i < 2 || http.concurrency < to); i++)
    await Promise.all(Array.from({ length: http.concurrency }, () => http.request({ method: 'GET', path })));
}
