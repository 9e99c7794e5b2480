// A check is data: a stable id, the contract clause it enforces, its level, a title, and the
// code that runs it against a CheckContext. runCheck turns whatever the code does into one
// of the four outcomes, with evidence; it never lets a bug of ours read as the target's fault.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Faker } from '@faker-js/faker';
import {
  exchangeLine,
  toCurl,
  type Exchange,
  CheckFailure,
  CheckSkip,
  SuiteError,
  TRIES_WHEN_LOST,
  type Level,
  type Outcome,
  type SuiteErrorCode,
  Secrets,
} from '../evidence/index.js';
import {
  HttpClient,
  noTransport,
  type HttpClientOptions,
  type HttpResponse,
  type RequestSpec,
  type TransportStats,
  type Way,
  findByName,
  type LoginSettings,
} from '../transport/index.js';
import { Ledger, notProcessed, type LedgerEntry, type ResourceKind } from './ledger.js';
import { tracesTo } from './run-names.js';
import { hash32 } from './random.js';
import type { PaginationSettings, Clause } from '../contract/index.js';
import type { Observer } from './observed.js';

/** What names a check, declared once: its definition, its listing and its result all carry it. */
export interface CheckHeader {
  /** Stable forever: reports, baselines and --check refer to it. `area.subject.rule`. */
  id: string;
  /** Folder under suites/ that holds it. */
  area: string;
  /** The section of the contract the check enforces, as text (clauseText of its written Clause). */
  clause: string;
  /** Where that section is: `spec/contract/README.md#<anchor>`, relative to the package root. */
  clauseLink: string;
  /** Its rule's level (spec/contract/statements.yaml, through suites/levels.ts): never written on the check. */
  level: Level;
  title: string;
}

/**
 * A header as a check's file writes it: its clause as a reference to the contract document
 * (lib/contract/clauses.ts), without its level, which is its rule's
 * (spec/contract/statements.yaml), stated there once. The catalogue (suites/levels.ts) fills in the
 * level and the clause's text and link.
 */
export type Written<T> = Omit<T, 'level' | 'clause' | 'clauseLink'> & { clause: Clause };

/** A check as its area writes it (Written). */
export type WrittenCheck = Written<Check>;

export interface Check extends CheckHeader {
  /** For a check run once per list operation: the operation (`orders`, `hierarchies@by-release`). */
  operation?: string;
  run(ctx: CheckContext): Promise<void>;
  /**
   * How the check judges an exchange it did not send (conformance proxy, conformance judge:
   * suites/observed.ts), with the predicate its run uses; absent where one exchange, or a
   * sequence of them, cannot show its rule.
   */
  observe?: Observer;
}

export interface FailureEvidence {
  expected: string;
  actual: string;
  /** The request as a command line, token masked. */
  request?: string;
  status?: number;
  bodyExcerpt?: string;
  /** Every exchange of the check, one line each, in order. */
  exchanges: string[];
}

export interface CheckResult extends CheckHeader {
  operation?: string;
  outcome: Outcome;
  /** Why it failed, errored or was skipped. */
  reason?: string;
  durationMs: number;
  evidence?: FailureEvidence;
  /** Observations the check made on the way (INFO-worthy facts, statuses seen). */
  notes?: string[];
  /** A failure the baseline file lists: reported, but it does not fail the run. */
  baselined?: boolean;
  /** What this check's requests (and the shared work it started) took: retries, waits. */
  transport?: TransportStats;
  /**
   * A list check: the most records it saw its list hold, on the pages it read without a filter
   * (meta.results.total, or the records served where that is less or absent). Certification
   * tells an empty list from one with records by it (reporters/verdict.ts, observeEmpty).
   */
  records?: number;
  /** A skip because the list holds too few records to exercise the rule: what a declared-empty list excuses. */
  wantsRecords?: boolean;
  /**
   * An error: the suite's code for it (the same word that starts the reason). Verdicts, reports
   * and the console decide by it, never by the reason's wording.
   */
  errorCode?: SuiteErrorCode;
  /** The check found its operation's collection absent: it answered 404 (a skip, or a failure under --require-all-endpoints). */
  absent?: boolean;
  /** Judged from observed traffic (conformance proxy, judge): how many exchanges could show the rule (0: not exercised). */
  observed?: number;
}

export interface RunSettings {
  baseUrl: string;
  /** The bearer token; with `login`, the first one the run obtained. */
  token: string;
  /**
   * Client credentials (--client-id): every client of the run, the checks' worker's too, logs in
   * again with them when the token is due or refused after it worked (lib/transport/login.ts).
   * Handed to the worker in memory (vitest's provide), never written to a file.
   */
  login?: LoginSettings;
  seed: number;
  runId: string;
  timeoutMs: number;
  maxBodyBytes: number;
  concurrency: number;
  /** Requests sent a second at most (--max-rate); absent: no cap. */
  maxRate?: number;
  ledgerPath: string;
  /**
   * Requests drawn at random per list operation, and values drawn for key creation, judged
   * against a model (suites/list/explore.ts); 0 or absent: none.
   */
  explore?: number;
  /** The list operations and how to read them (absent: no pagination checks). */
  pagination?: PaginationSettings;
  /**
   * The store's settings may be changed (--change-settings): its page length, written to the
   * ledger before the first change and restored at the end (suites/list/settings.ts).
   */
  changeSettings?: boolean;
}

/**
 * @faker-js/faker is ESM only and heavy: it is loaded by the first runCheck, not on import (the
 * check catalogue, --list, imports this module). Its English entry loads English alone (the main
 * entry loads its ~70 locales); its instance is built from [en, base], so its class and merged
 * definitions make the same fakers as `new Faker({ locale: [en, base] })`, without merging the
 * locales again for every one.
 */
let fakerLib: { Faker: typeof Faker; definitions: Faker['rawDefinitions'] } | undefined;
let fakerLoading: Promise<void> | undefined;

/** Loads faker once; runCheck awaits it, so RunContext.faker stays synchronous. */
export function loadFaker(): Promise<void> {
  fakerLoading ??= import('@faker-js/faker/locale/en').then(({ faker }) => {
    fakerLib = { Faker: faker.constructor as typeof Faker, definitions: faker.rawDefinitions };
  });
  return fakerLoading;
}

/**
 * The channel (a BroadcastChannel: the checks run in a worker thread) on which the main process
 * tells the checks of a run to stop sending (Ctrl-C, SIGTERM).
 */
export function stopChannel(runId: string): string {
  return `conformance-stop-${runId}`;
}

/**
 * The channel on which the checks, once loaded, wait for the main process's word to start:
 * vitest starts its worker while the main process still checks the target (the preflight), and
 * no check sends anything before that check has passed. The worker asks (GATE.ask); the main
 * process answers with GATE.go or GATE.stop once it knows, and says it unasked when it learns it
 * after the question.
 */
export function gateChannel(runId: string): string {
  return `conformance-gate-${runId}`;
}

export const GATE = { ask: 'ask', go: 'go', stop: 'stop' } as const;

/**
 * The exchanges of the shared work under way where code runs, outermost first. Shared work
 * often reads through the context of the check that started it (a walk reads its pages with
 * that check's ctx), so what it sends, and the shared work it uses, is recorded with the work
 * too: every check that uses the work later has those exchanges as its own (a 5xx among them
 * fails it as it fails the first: runCheck).
 */
const within = new AsyncLocalStorage<ReadonlyArray<Exchange[]>>();

/** Records `xs` with every piece of shared work under way here (see within). */
function recordWithin(xs: readonly Exchange[]): void {
  for (const into of within.getStore() ?? []) addNew(into, xs);
}

/** Appends to `into` each of `xs` it does not hold yet, in order (a check that reads a walk's hundreds of pages: one pass, not one search per page). */
function addNew(into: Exchange[], xs: readonly Exchange[]): void {
  if (xs.length === 1) {
    if (!into.includes(xs[0]!)) into.push(xs[0]!);
    return;
  }
  if (xs.length === 0) return;
  const have = new Set(into);
  for (const x of xs) {
    if (have.has(x)) continue;
    have.add(x);
    into.push(x);
  }
}

/** What one run shares between its checks: one HTTP client, one ledger, one set of secrets. */
export class RunContext {
  readonly settings: RunSettings;
  readonly secrets = new Secrets();
  readonly http: HttpClient;
  readonly ledger: Ledger;
  readonly #shared = new Map<string, { value: Promise<unknown>; exchanges: Exchange[] }>();

  /** `transport`: the HTTP client's retry policy and breaker, where the defaults do not serve (tests). */
  constructor(settings: RunSettings, transport: Pick<HttpClientOptions, 'retry' | 'breakerAfter' | 'breaker'> = {}) {
    this.settings = settings;
    this.http = new HttpClient({
      baseUrl: settings.baseUrl,
      token: settings.token,
      timeoutMs: settings.timeoutMs,
      maxBodyBytes: settings.maxBodyBytes,
      concurrency: settings.concurrency,
      ...(settings.maxRate !== undefined ? { maxRate: settings.maxRate } : {}),
      secrets: this.secrets,
      ...(settings.login ? { login: settings.login } : {}),
      ...transport,
    });
    this.ledger = new Ledger(settings.ledgerPath, { mask: (s) => this.secrets.mask(s) });
  }

  /** A faker seeded from the run's seed and a key: the same data whatever runs beside it. */
  faker(key: string): Faker {
    if (!fakerLib) throw new Error('conformance: faker is not loaded yet (await loadFaker() first; runCheck does)');
    const f = new fakerLib.Faker({ locale: fakerLib.definitions });
    f.seed(hash32(`${this.settings.seed}:${key}`));
    return f;
  }

  /** A name for something the run creates: `conformance-<run id>-<label>`. */
  name(label: string): string {
    return `conformance-${this.settings.runId}-${label.replace(/[^a-z0-9]+/gi, '-')}`;
  }

  /**
   * Work that several checks inspect (one creation, one delete) is done once per run, by
   * whichever check asks first: the suite never sends a request whose answer it already
   * has, and each check can still run alone. Its requests count in `transport`: the stats
   * of the check that started it. `exchanges` are the work's requests so far, whether the work
   * ends well or not (what it was answered is evidence either way).
   */
  shared<T>(key: string, work: (s: Session) => Promise<T>, transport?: TransportStats): { value: Promise<T>; exchanges: readonly Exchange[] } {
    let w = this.#shared.get(key);
    if (!w) {
      const session = new Session(this, key, transport);
      w = { value: within.run([...(within.getStore() ?? []), session.exchanges], () => work(session)), exchanges: session.exchanges };
      this.#shared.set(key, w);
    }
    return w as { value: Promise<T>; exchanges: readonly Exchange[] };
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}

/**
 * The way of asking of a session's request that names none, by its label (a check's id, or the
 * key of work checks share): a list check's own probes (the settings checks' apart), the auth
 * matrix, and the writes of the other areas (creates, deletes and the reads that show them).
 */
function wayOf(label: string): Way {
  if (label.startsWith('list.settings.')) return 'settings';
  if (label.startsWith('list.') || label.startsWith('settings ')) return 'probes';
  if (label.startsWith('auth')) return 'auth';
  return 'writes';
}

/** Requests made on behalf of one check (or one piece of shared work), recorded as evidence. */
export class Session {
  readonly run: RunContext;
  readonly label: string;
  readonly exchanges: Exchange[] = [];
  /** What this session's requests took from the transport. */
  readonly transport: TransportStats;
  /**
   * 1, or the number of the try when the work is done again after a request perhaps applied
   * (see runCheck): a later try draws its own data and names.
   */
  readonly attempt: number;
  #serial = 0;
  #faker?: Faker;

  constructor(run: RunContext, label: string, transport = noTransport(), attempt = 1) {
    this.run = run;
    this.label = label;
    this.transport = transport;
    this.attempt = attempt;
  }

  /** The label data and names are drawn from: the label, and the try after the first. */
  get #drawLabel(): string {
    return this.attempt === 1 ? this.label : `${this.label} try ${this.attempt}`;
  }

  /** Seeded from the run's seed and this session's label (and try); made on first use (few sessions use one). */
  get faker(): Faker {
    return (this.#faker ??= this.run.faker(this.#drawLabel));
  }

  async request(spec: RequestSpec): Promise<HttpResponse> {
    const res = await this.run.http.request(spec.way ? spec : { ...spec, way: wayOf(this.label) }, this.transport);
    this.exchanges.push(res.exchange);
    recordWithin([res.exchange]);
    return res;
  }

  /** A name for something this session creates: `conformance-<run id>-<label>-<n>`. */
  name(): string {
    this.#serial++;
    return this.run.name(`${this.#drawLabel}-${this.#serial}`);
  }

  /**
   * Sends a create: a POST that makes a `kind` in `collection`, written to the ledger by name
   * before it goes out. A create whose answer was lost on the way (SuiteError.mayHaveApplied)
   * may have been applied: its intent stays open, for the cleanup to find by name, and a fresh
   * create goes out in its place, with a body from a new `draft()` (new data: a target that
   * refuses a duplicate slug cannot clash with the lost one), up to TRIES_WHEN_LOST in all. A
   * create that was not processed (429 or 503 to the end of its budget, or never sent) made
   * nothing. The caller writes the answer's outcome: `created` for a 2xx, else `settled`.
   *
   * `refusal`: the check expects this body refused. A lost create may then be the very
   * acceptance the check is there to catch, and the answer to the next one says nothing of it
   * (a target may refuse a name it now holds): it is looked for by name first. Not found, it was
   * not applied, and the next goes out. Found under a name that carries the run's id, the check
   * fails on that; found under a name that cannot carry it (the empty name), it may be anyone's:
   * the check ends in error, as it does when the collection cannot be searched.
   */
  async create(
    kind: ResourceKind,
    collection: string,
    draft: () => { name: string; spec: Omit<RequestSpec, 'method' | 'path'> },
    options: { refusal?: boolean } = {},
  ): Promise<{ res: HttpResponse; name: string; key: string }> {
    for (let tries = 1; ; tries++) {
      const { name, spec } = draft();
      const key = this.run.ledger.intend({ kind, name, collection, createdBy: this.label });
      try {
        return { res: await this.request({ method: 'POST', path: collection, ...spec }), name, key };
      } catch (err) {
        if (notProcessed(err)) this.run.ledger.settled(key);
        if (!(err instanceof SuiteError && err.mayHaveApplied)) throw err;
        if (options.refusal) await this.#lostRefusal(kind, collection, name, key, err);
        // The last lost try ends the work: the check is not run again on top of these tries.
        if (tries >= TRIES_WHEN_LOST) throw new SuiteError(err.code, `${err.message}; ${tries} tries, each lost before its answer`);
        this.transport.lostRedone = (this.transport.lostRedone ?? 0) + 1;
      }
    }
  }

  /** A lost create whose body was to be refused: was it applied? (see create) */
  async #lostRefusal(kind: ResourceKind, collection: string, name: string, key: string, lost: SuiteError): Promise<void> {
    const ids = await findByName((spec) => this.request(spec), collection, name);
    if (ids === undefined)
      throw new SuiteError(
        lost.code,
        `${lost.message}; the body was to be refused, and ${collection} could not be searched for its name to see whether it was applied`,
      );
    // Nothing of that name: not applied (proving absence needs no proof of ownership).
    if (ids.length === 0) return this.run.ledger.settled(key);
    if (!tracesTo(name, this.run.settings.runId)) {
      throw new SuiteError(
        lost.code,
        `${lost.message}; the body was to be refused, and ${ids.length} ${kind}(s) named ${JSON.stringify(name)} exist, which may be anyone's (the name cannot carry the run's id): whether it was applied cannot be told`,
      );
    }
    // Applied: in the ledger by id for the cleanup, and the failure the check exists to find.
    for (const id of ids) this.created({ kind, id, name, deletePath: `${collection}/${encodeURIComponent(id)}`, key });
    throw new CheckFailure('a body that must be refused was accepted: what it created is there, though its answer was lost on the way', {
      expected: 'a refusal: nothing created',
      actual: `${ids.length} ${kind}(s) named ${JSON.stringify(name)} in ${collection} (${lost.code} on the create)`,
      exchange: this.exchanges.at(-1),
    });
  }

  created(entry: Omit<LedgerEntry, 'createdBy'>): void {
    this.run.ledger.created({ ...entry, createdBy: this.label });
  }

  deleted(deletePath: string): void {
    this.run.ledger.deleted(deletePath);
  }
}

/** What a check sees. */
export class CheckContext extends Session {
  readonly check: Check;
  readonly notes: string[] = [];
  /** The most records this check saw its list hold, if it read the list (CheckResult.records). */
  records?: number;
  /**
   * Where the suite looked before it found the list empty (a nested list under each parent it
   * tried): said after the reason of a skip for want of records when the list showed none.
   */
  emptyWhere?: string;
  /**
   * Where the list held the most records of those the suite looked under (a nested list: the
   * parent combination chosen, and how to choose another): said after the reason of a skip for
   * want of records when the list showed some, too few.
   */
  fewWhere?: string;
  /** The operation's collection answered 404 to this check (CheckResult.absent). */
  absent?: boolean;

  constructor(run: RunContext, check: Check, transport?: TransportStats, attempt = 1) {
    super(run, check.id, transport, attempt);
    this.check = check;
  }

  /**
   * Shared work (see RunContext.shared); its exchanges join this check's evidence. A check run
   * again after a request lost on the way (runCheck) does the work afresh, shared only with the
   * checks at the same try: what the earlier work made may be what the lost request changed.
   */
  async shared<T>(key: string, work: (s: Session) => Promise<T>): Promise<T> {
    const { value, exchanges } = this.run.shared(this.attempt === 1 ? key : `${key} try ${this.attempt}`, work, this.transport);
    try {
      return await value;
    } finally {
      // Also when the work ends in a skip or a failure: a 5xx it was answered is this check's too.
      addNew(this.exchanges, exchanges);
      recordWithin(exchanges);
    }
  }

  note(text: string): void {
    this.notes.push(text);
  }

  skip(reason: string): never {
    throw new CheckSkip(reason);
  }

  /** Skips because the operation's collection answered 404 (CheckResult.absent; a declared-absent operation excuses it). */
  skipAbsent(reason: string): never {
    this.absent = true;
    throw new CheckSkip(reason);
  }

  /** The list showed `n` records (see CheckResult.records): the most seen is kept. */
  sawRecords(n: number): void {
    this.records = Math.max(this.records ?? 0, n);
  }

  /**
   * Skips for want of records: the check needs `need` of them and the list showed `found` (a
   * declared-empty list excuses this skip). The reason names both numbers and where the list was
   * read (the parent holding the most: fewWhere). `such`: the records counted are only those of a
   * kind (`which`), `of` the records the list showed.
   */
  skipForRecords(need: number, found: number, such?: { which: string; of: number }): never {
    const held = such?.of ?? found;
    this.sawRecords(held);
    const where = held === 0 ? this.emptyWhere : this.fewWhere;
    const reason = `needs ${need} record${need === 1 ? '' : 's'}${such ? ` ${such.which}` : ''}, found ${found}${such && held !== found ? ` of the ${held} the list holds` : ''}`;
    throw new CheckSkip(where ? `${reason} ${where}` : reason, { wantsRecords: true });
  }
}

/**
 * A result in error: the suite's code as a member (CheckResult.errorCode) and at the head of
 * the reason, for people. `head`: resultHead of its check, and anything else it carries.
 */
export function errorResult<H extends Pick<CheckResult, 'id' | 'area' | 'clause' | 'clauseLink' | 'level' | 'title'>>(
  head: H,
  code: SuiteErrorCode,
  message: string,
  durationMs = 0,
): H & Pick<CheckResult, 'outcome' | 'errorCode' | 'reason' | 'durationMs'> {
  return { ...head, outcome: 'error', errorCode: code, reason: `${code}: ${message}`, durationMs };
}

/** What a result says of its check, before the outcome. */
export function resultHead(
  check: Pick<Check, 'id' | 'area' | 'clause' | 'clauseLink' | 'level' | 'title' | 'operation'>,
): Pick<CheckResult, 'id' | 'area' | 'clause' | 'clauseLink' | 'level' | 'title' | 'operation'> {
  return {
    id: check.id,
    area: check.area,
    clause: check.clause,
    clauseLink: check.clauseLink,
    level: check.level,
    title: check.title,
    ...(check.operation ? { operation: check.operation } : {}),
  };
}

/** Every exchange of a check, one line each; a long traversal keeps its start and its end. */
function exchangeLines(xs: readonly Exchange[]): string[] {
  const lines = xs.map(exchangeLine);
  if (lines.length <= 30) return lines;
  return [...lines.slice(0, 5), `… ${lines.length - 25} more exchanges …`, ...lines.slice(-20)];
}

/** How results and vitest name one run of a check: the id, and the operation when there is one. */
export function resultKey(c: { id: string; operation?: string }): string {
  return c.operation ? `${c.id} ${c.operation}` : c.id;
}

/**
 * The rule that no request the suite sends is answered with a 5xx
 * (spec/contract/README.md#errors.no-5xx: any 5xx seen fails the check that provoked it), as
 * the catalogue knows it: its id and its level, stated in spec/contract/statements.yaml.
 */
export interface ServerErrorRule {
  id: string;
  level: Level;
}

const RANK: Record<Level, number> = { INFO: 0, SHOULD: 1, MUST: 2 };

/**
 * Exchanges whose answer is judged by a rule of its own, a 5xx included: the requests the list
 * exploration draws (suites/list/explore.ts), each held to the model and, when it breaks a rule,
 * reported by the check of that rule. The rule of no 5xx leaves them to it, so that one 500 to
 * an unknown sort fails list.params.invalid, not every check that shares the exploration.
 */
const judgedAlone = new WeakSet<Exchange>();

/** Marks `x` as judged by the rule of the check it is reported under (see judgedAlone). */
export function judgedByItsRule(x: Exchange): void {
  judgedAlone.add(x);
}

/**
 * A result held to `rule`: a 5xx among the check's exchanges (its own requests and the shared
 * work it used) fails it, at the rule's level, whatever the check itself concluded. An answer
 * in them is the last of its request: one the transport waited out and that then came right
 * is not there (lib/transport/http.ts). A check that passed or skipped fails, with that request as
 * evidence; one that failed keeps its own failure and evidence, at the rule's level when its
 * own is lower, the 5xx named in its reason. An error stays an error: the suite could not do
 * its work (a 429, an outage), and no verdict rests on it.
 */
function heldToNo5xx(result: CheckResult, exchanges: readonly Exchange[], rule: ServerErrorRule, mask: (s: string) => string): CheckResult {
  const x = result.outcome === 'error' ? undefined : exchanges.find((e) => e.status >= 500 && !judgedAlone.has(e));
  // A check that failed on a 5xx of its own evidence (one judged by its rule: a drawn request the
  // exploration reports under this check) fails at the rule's level too.
  if (!x && result.outcome === 'fail' && (result.evidence?.status ?? 0) >= 500 && RANK[rule.level] > RANK[result.level]) {
    return {
      ...result,
      level: rule.level,
      reason: `${result.reason ?? ''}; a server error, which fails the check that provoked it at ${rule.level} (spec/contract/README.md#${rule.id})`,
    };
  }
  if (!x) return result;
  // The service answered nothing while this request's gateway answers were waited out: an outage.
  if (x.outage) return outageResult(result, x);
  const seen = `${x.method} ${x.url} answered ${x.status}${x.attempts && x.attempts > 1 ? ` (still, after ${x.attempts} attempts)` : ''}`;
  const level = RANK[rule.level] > RANK[result.level] ? rule.level : result.level;
  if (result.outcome === 'fail') {
    if (level === result.level) return result;
    return {
      ...result,
      level,
      reason: `${result.reason ?? ''}; and ${seen}: a server error, which fails the check that provoked it at ${rule.level} (spec/contract/README.md#${rule.id})`,
    };
  }
  const before = result.outcome === 'skip' ? `; the check was otherwise skipped: ${result.reason ?? ''}` : '';
  const { wantsRecords: _, ...rest } = result;
  return {
    ...rest,
    level,
    outcome: 'fail',
    reason: mask(`${seen}: a server error fails the check that provoked it (spec/contract/README.md#${rule.id}, ${rule.level})${before}`),
    evidence: {
      expected: 'an answer that is not a 5xx: a success, or a refusal with a 4xx',
      actual: `status ${x.status}`,
      request: toCurl(x),
      status: x.status,
      bodyExcerpt: x.bodyExcerpt,
      exchanges: exchangeLines(exchanges),
    },
  };
}

/** A result that rests on an answer given during an outage (Exchange.outage): an error of the run, no verdict. */
function outageResult(result: CheckResult, x: Exchange): CheckResult {
  const { evidence: _e, wantsRecords: _w, ...rest } = result;
  return {
    ...rest,
    outcome: 'error',
    errorCode: 'TARGET_DOWN',
    reason: `TARGET_DOWN: ${x.method} ${x.url} answered ${x.status} for ${x.attempts ?? 1} attempts, and no request reached the service meanwhile: an outage, not a verdict`,
  };
}

/**
 * Runs one check to its result. `no5xx`: the rule that holds every request it sends to no
 * 5xx (heldToNo5xx), passed in by whoever knows the catalogue (suites/register.ts); without
 * it, a check's answers are judged only by the check.
 */
export async function runCheck(check: Check, run: RunContext, no5xx?: ServerErrorRule): Promise<CheckResult> {
  await loadFaker();
  const started = performance.now();
  const transport = noTransport();
  const retried: string[] = [];
  const mask = (s: string): string => run.secrets.mask(s);
  for (let attempt = 1; ; attempt++) {
    const ctx = new CheckContext(run, check, transport, attempt);
    const finish = (outcome: Outcome, reason?: string, evidence?: FailureEvidence): CheckResult => {
      const notes = [...retried, ...ctx.notes];
      return {
        ...resultHead(check),
        outcome,
        ...(reason !== undefined ? { reason: mask(reason) } : {}),
        durationMs: Math.round(performance.now() - started),
        ...(evidence ? { evidence } : {}),
        ...(notes.length ? { notes: notes.map(mask) } : {}),
        ...(transport.requests + transport.refused > 0 ? { transport: { ...transport } } : {}),
        ...(ctx.records !== undefined ? { records: ctx.records } : {}),
        ...(ctx.absent ? { absent: true } : {}),
      };
    };
    const error = (code: SuiteErrorCode, message: string): CheckResult => ({ ...finish('error', `${code}: ${message}`), errorCode: code });
    // Every verdict on the target (pass, fail, skip) is held to the rule of no 5xx.
    const judged = (result: CheckResult): CheckResult => (no5xx ? heldToNo5xx(result, ctx.exchanges, no5xx, mask) : result);
    try {
      await check.run(ctx);
      return judged(finish('pass'));
    } catch (err) {
      if (err instanceof CheckFailure) {
        // A 429 is not an answer to the question a check asked, only "ask later": a verdict
        // resting on one would blame the target for the suite's pace.
        if (err.exchange?.status === 429)
          return error('RATE_LIMITED', `${err.exchange.method} ${err.exchange.url} answered 429; no verdict rests on a rate-limited answer`);
        // Nor one given during an outage (a gateway's 502, 503 or 504 while the service answered nothing).
        if (err.exchange?.outage) return outageResult(finish('fail', err.message), err.exchange);
        const x = err.exchange ?? ctx.exchanges.at(-1);
        return judged(
          finish('fail', err.message, {
            expected: mask(err.expected),
            actual: mask(err.actual),
            ...(x ? { request: toCurl(x), status: x.status, bodyExcerpt: x.bodyExcerpt } : {}),
            exchanges: exchangeLines(ctx.exchanges),
          }),
        );
      }
      if (err instanceof CheckSkip) return judged(err.wantsRecords ? { ...finish('skip', err.message), wantsRecords: true } : finish('skip', err.message));
      if (err instanceof SuiteError) {
        if (err.mayHaveApplied && attempt < TRIES_WHEN_LOST) {
          transport.lostRedone = (transport.lostRedone ?? 0) + 1;
          // What that try created is in the ledger (by name before each create), for the cleanup.
          retried.push(
            `try ${attempt} ended on ${err.code}: ${err.message}; it may have been applied, so the check was run again from its start, with new data`,
          );
          continue;
        }
        return error(err.code, err.message);
      }
      const e = err as Error;
      return error('SUITE_BUG', e?.stack ?? String(err));
    }
  }
}
