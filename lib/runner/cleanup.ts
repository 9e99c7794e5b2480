// Deletes what the ledger says the run created and did not delete. It touches nothing
// else: an id not in the ledger is never sent a DELETE, and a create whose answer never came
// (the run stopped) is looked for by its exact name only when that name carries the run's id.
import { HttpClient, type HttpResponse, findByName } from '../transport/index.js';
import { Ledger, type LedgerEntry, type OpenIntent, type SettingChange } from './ledger.js';
import { tracesTo } from './run-names.js';
import { Secrets } from '../evidence/index.js';
import type { RunSettings } from './check.js';

export interface Leftover {
  /** What was left: a resource the run created, or a setting it changed and could not restore. */
  kind: LedgerEntry['kind'] | 'setting';
  id: string;
  name: string;
  createdBy: string;
  reason: string;
}

export interface CleanupReport {
  /** Deleted by this cleanup: a DELETE answered 2xx, and a second one found nothing. */
  deleted: number;
  /** Found already gone (a first DELETE answered 404): a check deleted it, and the ledger had not heard. */
  alreadyGone?: number;
  leftovers: Leftover[];
  /** Settings the run changed, put back as they were (`page_length 25 (PUT /v2/settings)`). */
  restored?: string[];
  /** Why nothing was sent (the target stopped answering during the run); the ledger is kept. */
  postponed?: string;
  /** With postponed: how many resources and unanswered creates the ledger still holds. */
  pending?: number;
  /** The cleanup needed a new token and could not log in (client credentials): why, said once; what it left says so. */
  loginFailed?: string;
  /** The runs (the run's, its replays') whose ledgers are kept for `conformance cleanup --run ID`: something was left. */
  kept?: string[];
}

/**
 * `report` of run `runId`, with the run named in `kept` when its ledger still holds something
 * (a leftover, or a cleanup put off): the ledger stays for `conformance cleanup --run ID`, else
 * it can go.
 */
export function keepingLedger(report: CleanupReport, runId: string): CleanupReport {
  return report.leftovers.length > 0 || report.pending ? { ...report, kept: [runId] } : report;
}

/**
 * No cleanup against a target that stopped answering: every DELETE would wait out its timeout
 * and print a line. The ledger keeps everything for `conformance cleanup --run ID`.
 */
export function postponeCleanUp(ledgerPath: string, why: string): CleanupReport {
  const { created, unanswered, settings } = new Ledger(ledgerPath).open();
  return { deleted: 0, leftovers: [], postponed: why, pending: created.length + unanswered.length + settings.length };
}

/**
 * How long a run whose target stopped answering waits for it to answer again before it cleans
 * up: half a timeout, from 5 s to 30 s (the breaker itself has waited two or three before it
 * opened, and the ledger keeps what is left for `conformance cleanup`).
 */
export function outageWaitMs(timeoutMs: number): number {
  return Math.min(30_000, Math.max(5_000, timeoutMs / 2));
}

/**
 * After an outage (the breaker opened), the cleanup still runs: it first waits, up to `waitMs`,
 * for the target to answer anything again (a read every few seconds, on a client of its own),
 * then deletes as after any run. A target still silent at the deadline keeps the ledger for
 * `conformance cleanup --run ID`. `said` hears one line when the wait begins.
 */
export async function cleanUpAfterOutage(
  settings: Parameters<typeof cleanUp>[0],
  secrets: Secrets,
  why: string,
  options: { waitMs?: number; pauseMs?: number; said?: (line: string) => void } = {},
): Promise<CleanupReport> {
  const { created, unanswered, settings: changed } = new Ledger(settings.ledgerPath).open();
  if (created.length === 0 && unanswered.length === 0 && changed.length === 0) return { deleted: 0, leftovers: [] };
  const waitMs = options.waitMs ?? outageWaitMs(settings.timeoutMs);
  const pauseMs = options.pauseMs ?? 2_000;
  options.said?.(
    `  waiting up to ${Math.round(waitMs / 1000)} s for the target to answer again, to delete the ${created.length + unanswered.length} thing(s) this run created${changed.length ? ` and restore the ${changed.length} setting(s) it changed` : ''}`,
  );
  const deadline = Date.now() + waitMs;
  const probe = new HttpClient({
    baseUrl: settings.baseUrl,
    token: settings.token,
    timeoutMs: Math.min(settings.timeoutMs, 5_000),
    maxBodyBytes: settings.maxBodyBytes,
    concurrency: 1,
    secrets,
    retry: { maxRetries: 0 },
  });
  let back = false;
  try {
    while (!back && Date.now() < deadline) {
      back = await probe.request({ method: 'GET', path: '/v2/settings', way: 'cleanup' }).then(
        () => true,
        () => false,
      );
      if (!back) await new Promise((r) => setTimeout(r, Math.min(pauseMs, Math.max(0, deadline - Date.now()))));
    }
  } finally {
    await probe.close();
  }
  if (!back) return postponeCleanUp(settings.ledgerPath, `${why}, and it did not answer again within ${Math.round(waitMs / 1000)} s`);
  return cleanUp(settings, secrets);
}

/** The time budget of one of the cleanup's requests (429s and 503s waited out, timed-out GETs sent again). */
export const CLEANUP_PATIENCE_MS = 180_000;

/** Tries of one of the cleanup's DELETEs whose connection failed before the answer. */
const DELETE_ATTEMPTS = 4;

export async function cleanUp(
  settings: Pick<RunSettings, 'baseUrl' | 'token' | 'login' | 'timeoutMs' | 'maxBodyBytes' | 'concurrency' | 'ledgerPath' | 'runId'>,
  secrets = new Secrets(),
): Promise<CleanupReport> {
  const ledger = new Ledger(settings.ledgerPath);
  const { created, unanswered, settings: changed } = ledger.open();
  const leftovers: Leftover[] = [];
  let deleted = 0;
  let alreadyGone = 0;
  let loginFailed: string | undefined;
  if (created.length === 0 && unanswered.length === 0 && changed.length === 0) return { deleted, leftovers };
  // Its own client (its own breaker: a run's open breaker does not stop it), and more patient
  // than a check's: what the cleanup gives up on is left on the user's server.
  const http = new HttpClient({ ...settings, secrets, retry: { maxWaitMs: CLEANUP_PATIENCE_MS } });
  const left = (entry: Pick<LedgerEntry, 'kind' | 'name' | 'createdBy'> & { id?: string }, reason: string): void => {
    leftovers.push({ kind: entry.kind, id: entry.id ?? '', name: secrets.mask(entry.name), createdBy: entry.createdBy, reason: secrets.mask(reason) });
  };
  /**
   * A DELETE of the cleanup's, sent again when its connection failed before the answer: for the
   * cleanup that is safe (a DELETE that was applied answers 404 the next time, which it takes
   * for gone), where a check must not (its verdict rests on the first answer).
   */
  /** `lost`: an earlier try's answer was lost (that try may be what a 404 now reports). */
  const del = async (path: string): Promise<HttpResponse & { lost?: true }> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await http.request({ method: 'DELETE', path, way: 'cleanup' });
        return attempt > 1 ? Object.assign(res, { lost: true as const }) : res;
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (attempt >= DELETE_ATTEMPTS || (code !== 'CONNECTION_CLOSED' && code !== 'TIMEOUT')) throw e;
        await new Promise((r) => setTimeout(r, 250 * attempt));
      }
    }
  };
  const remove = async (entry: Pick<LedgerEntry, 'kind' | 'name' | 'createdBy' | 'deletePath' | 'id'>): Promise<void> => {
    try {
      const res = await del(entry.deletePath);
      const ok = (status: number): boolean => status >= 200 && status < 300;
      // 404: already gone (a check deleted it and the ledger missed the answer).
      if (!ok(res.status) && res.status !== 404) return left(entry, `DELETE ${entry.deletePath} answered ${res.status}`);
      // A 2xx is believed only when a second DELETE finds nothing: a target whose deletes are
      // not applied would otherwise have the report say everything is gone.
      const again = ok(res.status) ? await del(entry.deletePath) : undefined;
      if (again && ok(again.status))
        return left(
          entry,
          `DELETE ${entry.deletePath} answered ${res.status}, and a second DELETE answered ${again.status}: it is still there (the target does not apply deletes)`,
        );
      ledger.deleted(entry.deletePath);
      // A 404 to the first try: gone before this cleanup. After a try whose answer was lost: that try deleted it.
      if (res.status === 404 && !res.lost) alreadyGone++;
      else deleted++;
    } catch (e) {
      if ((e as { code?: string }).code !== 'LOGIN_FAILED') return left(entry, (e as Error).message);
      loginFailed ??= secrets.mask((e as Error).message);
      left(entry, `DELETE ${entry.deletePath}: not deleted, the cleanup could not log in`);
    }
  };
  const unansweredCreate = async (intent: OpenIntent): Promise<void> => {
    const reason = 'the target never answered its create (the run stopped, or the connection failed)';
    // Never delete by a name the run cannot prove is its own: a user may have a key named 'k'.
    // But absence needs no proof: nothing of that name there, and the create made nothing.
    // Otherwise reported once, with what bears the name, then forgotten: no later cleanup could
    // do more than report it again.
    if (!intent.name || !tracesTo(intent.name, settings.runId)) {
      ledger.settled(intent.key);
      const ids = await findByName((spec) => http.request({ ...spec, way: 'cleanup' }), intent.collection, intent.name).catch(() => undefined);
      if (ids?.length === 0) return;
      const named =
        ids === undefined
          ? `${intent.collection} could not be searched for it`
          : `${intent.collection} holds ${ids.length} named so (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}), which may be anyone's`;
      return left(intent, `${reason}, and its name does not carry the run id: ${named}; check by hand`);
    }
    try {
      const ids = await findByName((spec) => http.request({ ...spec, way: 'cleanup' }), intent.collection, intent.name);
      if (ids === undefined) return left(intent, `${reason}, and ${intent.collection} could not be searched for its name`);
      // Each one found is written to the ledger by id first (which closes the intent): one whose
      // delete fails then stays there for the next cleanup, instead of being forgotten.
      const found = ids.map((id) => ({
        kind: intent.kind,
        id,
        name: intent.name,
        createdBy: intent.createdBy,
        deletePath: `${intent.collection}/${encodeURIComponent(id)}`,
        key: intent.key,
      }));
      for (const entry of found) ledger.created(entry);
      await Promise.all(found.map(remove));
      if (found.length === 0) ledger.settled(intent.key);
    } catch (e) {
      left(intent, `${reason}: ${(e as Error).message}`);
    }
  };
  const restored: string[] = [];
  try {
    await Promise.all([
      ...created.map((entry) => (entry.deletePath ? remove(entry) : Promise.resolve(left(entry, 'the target returned no id, so the suite cannot delete it')))),
      ...unanswered.map(unansweredCreate),
      ...changed.map(async (change) => {
        const outcome = await restoreSetting((spec) => http.request({ ...spec, way: 'cleanup' }), ledger, change);
        if (outcome.ok) restored.push(outcome.said);
        else leftovers.push({ kind: 'setting', id: change.path, name: change.name, createdBy: change.createdBy, reason: secrets.mask(outcome.said) });
      }),
    ]);
  } finally {
    await http.close();
  }
  return { deleted, ...(alreadyGone ? { alreadyGone } : {}), ...(restored.length ? { restored } : {}), leftovers, ...(loginFailed ? { loginFailed } : {}) };
}

/**
 * Puts a setting the run changed back to its original value (`PUT change.path` with the body
 * the ledger holds), and writes to the ledger that it is restored once the target took it.
 * What it says: `page_length 25 (PUT /v2/settings)`, or why it is still changed.
 */
export async function restoreSetting(
  send: (spec: { method: 'PUT'; path: string; json: unknown }) => Promise<HttpResponse>,
  ledger: Ledger,
  change: SettingChange,
): Promise<{ ok: boolean; said: string }> {
  const what = `${change.name} ${change.original} (PUT ${change.path})`;
  try {
    const res = await send({ method: 'PUT', path: change.path, json: change.body });
    if (res.status >= 200 && res.status < 300) {
      ledger.restored(change.path, change.name);
      return { ok: true, said: what };
    }
    return {
      ok: false,
      said: `restoring ${what} answered ${res.status}: ${change.name} may still hold the value the run set; set it back to ${change.original} by hand`,
    };
  } catch (e) {
    return { ok: false, said: `restoring ${what} failed (${(e as Error).message}): 'conformance cleanup --run ID' tries again` };
  }
}
