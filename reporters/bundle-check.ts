// What `conformance verify` asks of a certification bundle, as a pure function of its files and
// of what this suite is: the signature, the digests, whether the files agree with each other,
// whether the run could certify and did, whether every MUST check the suite planned is there,
// and which suite made it. Each finding names the file and the field it is about.
import type { KeyObject } from 'node:crypto';
import { resultKey, type CheckResult } from '../lib/runner/index.js';
import { describeViolations, SCHEMA, validate } from '../lib/contract/index.js';
import {
  ATTESTATION_FILE,
  certifiedTarget,
  openAttestation,
  PREDICATE_TYPE,
  sha256,
  verifySignature,
  type KeyAlgorithm,
  type Predicate,
  type Statement,
} from './attestation.js';
import { settingsOf, summarise, type RunReport, type Summary } from './model.js';
import { certificationRefuses, certifiedExit, certify, describeProfile, exitFor, type Profile } from './verdict.js';

/**
 * `invalid`: the bundle is not a valid certificate (exit 1). `unchecked`: something could not
 * be checked (exit 2, unless something is invalid). `note`: said, and changes nothing.
 */
export type Severity = 'invalid' | 'unchecked' | 'note';

export interface Finding {
  severity: Severity;
  /** The file of the bundle the finding is about. */
  file?: string;
  /** The field of that file. */
  field?: string;
  message: string;
}

/** What this suite is, for judging a bundle by it. */
export interface SuiteFacts {
  version: string;
  contractDigest: string;
  suiteDigest: string;
  /** How many release lines (minor versions) before this one are still accepted. */
  window: number;
  /**
   * The MUST results this suite plans for the bundle's settings (attestation.ts mustPlan), the
   * lists beyond the contract's 26 there, and the operations its `empty` setting declares
   * empty; or why they cannot be worked out.
   */
  planFor(config: Record<string, unknown>): { must: string[]; extraOperations: string[]; declaredEmpty: string[] } | { problem: string };
}

export interface BundleCheck {
  findings: Finding[];
  /** What the bundle says, label and value, for the screen. */
  facts: Array<[string, string]>;
  profile?: Profile;
  report?: RunReport;
  predicate?: Predicate;
  /** 0 verified, 1 not valid, 2 could not check. */
  exit: 0 | 1 | 2;
}

export interface CheckOptions {
  key?: { key: KeyObject; hint: string; algorithm: KeyAlgorithm };
  /** SHOULD failures, a changed suite or another contract make the bundle invalid too. */
  strict: boolean;
}

/** major.minor.patch of a version as npm writes one (no leading zeros; a pre-release or build part allowed), or undefined. */
function semver(v: string): [number, number, number] | undefined {
  const m = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** The version without its build part: `0.1.0+x` is 0.1.0 (builds of one version share its plan). */
const release = (v: string): string => v.split('+')[0]!;

/**
 * Whether a bundle's suite version is accepted: this version's release line (major.minor) or
 * one of the `window` lines before it, within the same major version.
 */
export function versionWindow(made: string, current: string, window: number): Finding | undefined {
  const a = semver(made);
  const b = semver(current);
  const field = { file: 'certificate.json', field: 'suite' };
  if (!a || !b) return { severity: 'invalid', ...field, message: `suite version '${made}' is not a version this suite can place` };
  const newer = a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];
  if (newer)
    return { severity: 'unchecked', ...field, message: `made by conformance ${made}, newer than this suite (${current}): verify it with ${made} or later` };
  const lines = a[0] === b[0] ? b[1] - a[1] : Number.POSITIVE_INFINITY;
  if (lines > window)
    return {
      severity: 'invalid',
      ...field,
      message: `made by conformance ${made}, outside the window of accepted versions (${current} and the ${window} release line(s) before it): run the certification again with a current suite`,
    };
  if (made !== current)
    return {
      severity: 'note',
      ...field,
      message: `made by conformance ${made}, an earlier version within the window (${current} and the ${window} release line(s) before it)`,
    };
  return undefined;
}

const json = (files: ReadonlyMap<string, Buffer>, name: string, findings: Finding[]): Record<string, unknown> | undefined => {
  const body = files.get(name);
  if (!body) {
    findings.push({ severity: 'invalid', file: name, message: 'missing from the bundle' });
    return undefined;
  }
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // said below
  }
  findings.push({ severity: 'invalid', file: name, message: 'not a JSON object' });
  return undefined;
};

/** Two values as the same JSON. */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
/** A summary in words: `MUST 808 pass, 0 fail, 0 error, 10 skip; SHOULD ...`. */
const counted = (s: Summary): string =>
  (['MUST', 'SHOULD', 'INFO'] as const)
    .map((l) => `${l} ${(['pass', 'fail', 'error', 'skip'] as const).map((o) => `${s.byLevel?.[l]?.[o] ?? '?'} ${o}`).join(', ')}`)
    .join('; ');
/** The values that occur more than once, each once, in the order they first repeat. */
function repeated(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const v of values) (seen.has(v) ? twice : seen).add(v);
  return [...twice];
}

/** A long reason, cut for one screen (results.json has it whole). */
const clip = (s: string): string => (s.length > 160 ? `${s.slice(0, 157)}...` : s);
const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));

/** A bundle's files by name; `others`: what else its folder holds (sub-folders, links), which a bundle never does. */
export interface BundleFolder extends ReadonlyMap<string, Buffer> {
  readonly others?: readonly string[];
}

/** What the checks of one bundle have found and what it says, in the order they find them. */
interface Tally {
  findings: Finding[];
  facts: Array<[string, string]>;
  /** A finding that makes the bundle invalid, about a file and a field when there are. */
  invalid(file: string | undefined, field: string | undefined, message: string): void;
}

function tally(): Tally {
  const findings: Finding[] = [];
  return {
    findings,
    facts: [],
    invalid: (file, field, message) => {
      findings.push({ severity: 'invalid', ...(file ? { file } : {}), ...(field ? { field } : {}), message });
    },
  };
}

/** The MUST results this suite plans for a run's settings, and its lists and declarations (SuiteFacts.planFor). */
type Plan = Exclude<ReturnType<SuiteFacts['planFor']>, { problem: string }>;

/** A certificate.json as read: any JSON object (the fields it must hold are compared, one by one). */
type Certificate = Record<string, unknown>;

/**
 * The signature, and the statement it signs (undefined when the bundle is not signed or what it
 * signs is not a statement of ours). Without --key the signature is not checked, and said so.
 */
function checkSignature(files: BundleFolder, opts: CheckOptions, t: Tally): Statement | undefined {
  const attestation = files.get(ATTESTATION_FILE);
  if (!attestation) {
    t.invalid(ATTESTATION_FILE, undefined, 'missing: the bundle is not signed (a run signs it with --signing-key)');
    t.facts.push(['signature', 'none: the bundle is not signed']);
    return undefined;
  }
  let statement: Statement | undefined;
  try {
    const opened = openAttestation(attestation.toString('utf8'));
    const v = validate(SCHEMA.attestation, opened.statement);
    if (v.length) t.invalid(ATTESTATION_FILE, 'predicate', `the signed statement is not a ${PREDICATE_TYPE} statement: ${describeViolations(v)}`);
    else statement = opened.statement as Statement;
    const named = opened.hint ? `key sha256:${opened.hint}` : 'no key hint';
    if (!opts.key) {
      t.findings.push({ severity: 'unchecked', file: ATTESTATION_FILE, message: `no --key given: the signature is not checked (the bundle names ${named})` });
      t.facts.push(['signature', `not checked: no --key (the bundle names ${named})`]);
    } else {
      const ok = verifySignature(opened, opts.key.key);
      if (ok.ok) t.facts.push(['signature', `valid, ${opts.key.algorithm} key sha256:${opts.key.hint}`]);
      else {
        t.invalid(
          ATTESTATION_FILE,
          'dsseEnvelope.signatures',
          `the signature does not verify with the key given (sha256:${opts.key.hint}; the bundle names ${named}): ${ok.why}`,
        );
        t.facts.push(['signature', `INVALID for key sha256:${opts.key.hint}`]);
      }
    }
  } catch (e) {
    t.invalid(ATTESTATION_FILE, undefined, (e as Error).message);
  }
  return statement;
}

/** Each file as the statement signed it: none added, none changed, none removed. */
function checkSigned(files: BundleFolder, statement: Statement, opts: CheckOptions, t: Tally): void {
  const names = [...files.keys()].filter((n) => n !== ATTESTATION_FILE).sort();
  const signed = new Map(statement.subject.map((s) => [s.name, s.digest.sha256]));
  for (const name of repeated(statement.subject.map((s) => s.name))) t.invalid(ATTESTATION_FILE, 'subject', `names ${name} more than once`);
  let matching = 0;
  for (const name of names) {
    const want = signed.get(name);
    const got = sha256(files.get(name)!);
    if (want === undefined) t.invalid(name, undefined, 'added after signing: the attestation does not name it');
    else if (want !== got) t.invalid(name, undefined, `changed after signing (sha256 ${got}, signed ${want})`);
    else matching++;
  }
  for (const name of signed.keys()) if (!files.has(name)) t.invalid(name, undefined, 'removed after signing: the attestation names it');
  t.facts.push([
    'files',
    opts.key ? `${matching} of ${signed.size} as signed` : `${matching} of ${signed.size} as the statement lists them (its signature not checked)`,
  ]);
}

/** SHA256SUMS is there, and every line of it names a file of the bundle with that file's digest. */
function checkSums(files: BundleFolder, t: Tally): void {
  const sums = files.get('SHA256SUMS');
  if (!sums) {
    t.invalid('SHA256SUMS', undefined, 'missing from the bundle');
    return;
  }
  for (const line of sums.toString('utf8').split('\n').filter(Boolean)) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) t.invalid('SHA256SUMS', undefined, `a line that is not 'sha256  file': ${show(line.slice(0, 80))}`);
    else if (!files.has(m[2]!)) t.invalid('SHA256SUMS', m[2], 'names a file the bundle does not hold');
    else if (sha256(files.get(m[2]!)!) !== m[1]) t.invalid(m[2]!, undefined, 'does not match its line in SHA256SUMS');
  }
}

/**
 * certificate.json, and results.json as a report when it keeps to spec/results.schema.yaml;
 * config.json is read too, and must be that report's config as it is.
 */
function readBundle(files: BundleFolder, t: Tally): { certificate?: Certificate; report?: RunReport } {
  const certificate = json(files, 'certificate.json', t.findings);
  const results = json(files, 'results.json', t.findings);
  const config = json(files, 'config.json', t.findings);
  let report: RunReport | undefined;
  if (results) {
    const v = validate(SCHEMA.results, results);
    if (v.length) t.invalid('results.json', undefined, `breaks spec/results.schema.yaml: ${describeViolations(v).slice(0, 300)}`);
    else report = results as unknown as RunReport;
  }
  // config.json is results.json's config as it is: the settings are judged from one, shown in the other.
  if (report && config && !same(config, report.config))
    t.invalid('config.json', undefined, "is not results.json's config: the settings a certification is judged by are written twice, the same");
  return { ...(certificate ? { certificate } : {}), ...(report ? { report } : {}) };
}

/** Each field of `file` (field, its value, the other's) that differs from what `other` says, as invalid. */
function disagreements(t: Tally, file: string, other: string, pairs: Array<[string, unknown, unknown]>): void {
  for (const [field, mine, theirs] of pairs) if (!same(mine, theirs)) t.invalid(file, field, `says ${show(mine)}, ${other} says ${show(theirs)}`);
}

/**
 * The files agree with each other and with the signed statement, pair by pair: certificate and
 * results, certificate and statement, results and statement.
 */
function checkAgreement(certificate: Certificate | undefined, report: RunReport | undefined, predicate: Predicate | undefined, t: Tally): void {
  if (report && certificate)
    disagreements(t, 'certificate.json', 'results.json', [
      ['suite', certificate.suite, `${report.tool.name} ${report.tool.version}`],
      ['contractDigest', certificate.contractDigest, report.contractDigest],
      ['runId', certificate.runId, report.runId],
      ['seed', certificate.seed, report.seed],
      ['target', certificate.target, certifiedTarget(report.target)],
      ['product', certificate.product, report.product?.name ?? null],
      ['productVersion', certificate.productVersion, report.product?.version ?? null],
      ['startedAt', certificate.startedAt, report.startedAt],
      ['finishedAt', certificate.finishedAt, report.finishedAt],
      ['certifiable', certificate.certifiable, report.certification?.certifiable ?? false],
      ['why', certificate.why, report.certification?.why ?? ''],
      ['profile', certificate.profile, report.certification?.profile ?? null],
      ['declaredAbsent', certificate.declaredAbsent, report.certification?.declaredAbsent ?? []],
      ['declaredEmpty', certificate.declaredEmpty, report.certification?.declaredEmpty ?? []],
      ['exit', certificate.exit, report.exit],
    ]);
  if (predicate && certificate)
    disagreements(t, 'certificate.json', 'the signed attestation', [
      ['product', certificate.product, predicate.product.name],
      ['productVersion', certificate.productVersion, predicate.product.version],
      ['suite', certificate.suite, `${predicate.suite.name} ${predicate.suite.version}`],
      ['suiteDigest', certificate.suiteDigest, predicate.suite.digest],
      ['contractDigest', certificate.contractDigest, predicate.contract.digest],
      ['runId', certificate.runId, predicate.run.id],
      ['seed', certificate.seed, predicate.run.seed],
      ['certifiable', certificate.certifiable, predicate.verdict.certifiable],
      ['why', certificate.why, predicate.verdict.why],
      ['profile', certificate.profile, predicate.profile],
      ['exit', (certificate.exit as { code?: unknown } | undefined)?.code, predicate.verdict.exit],
    ]);
  if (predicate && report) {
    if (!same(predicate.counts, report.summary))
      t.invalid('results.json', 'summary', `says ${counted(report.summary)}, the signed attestation says ${counted(predicate.counts)}`);
    disagreements(t, 'results.json', 'the signed attestation', [
      ['target', certifiedTarget(report.target), predicate.target.baseUrl],
      ['target.embedded', report.target.embedded, predicate.target.embedded],
      ['startedAt', report.startedAt, predicate.run.startedAt],
      ['finishedAt', report.finishedAt, predicate.run.finishedAt],
      ['tool.version', report.tool.version, predicate.suite.version],
    ]);
  }
}

/** This suite's plan for the run's settings, or undefined (and said) when it cannot be worked out. */
function planOf(report: RunReport, suite: SuiteFacts, t: Tally): Plan | undefined {
  const planning = suite.planFor(report.config);
  if ('problem' in planning) {
    t.invalid('config.json', 'catalog', planning.problem);
    return undefined;
  }
  return planning;
}

/**
 * The results bear out the verdict: one result a check and operation, the summary their sum,
 * settings that may certify, the certification and the exit recomputed from them as recorded,
 * a certificate that certifies; and under --strict, no SHOULD failure.
 */
function checkVerdict(report: RunReport, certificate: Certificate | undefined, plan: Plan | undefined, opts: CheckOptions, t: Tally): void {
  const own = report.results as CheckResult[];
  const twice = repeated(own.map((r) => resultKey(r)));
  if (twice.length)
    t.invalid(
      'results.json',
      'results',
      `${twice.length} check(s) with more than one result for one operation: ${twice.slice(0, 3).join(', ')}${twice.length > 3 ? ', ...' : ''}`,
    );
  if (!same(summarise(own), report.summary))
    t.invalid('results.json', 'summary', `says ${counted(report.summary)}, its results add up to ${counted(summarise(own))}`);
  const refusedBy = certificationRefuses(settingsOf(report), {
    ...(report.shard ? { shard: report.shard } : {}),
    ...(report.baseline ? { baseline: report.baseline.file } : {}),
  });
  for (const why of refusedBy) t.invalid('config.json', undefined, `${why}: the run cannot certify`);
  // What the vendor declared: absent as recorded (a flag of the run), empty as its settings say.
  const declaredAbsent = report.certification?.declaredAbsent ?? [];
  const declaredEmpty = plan?.declaredEmpty ?? [];
  const derived = certify(own, report.suiteErrors, { declaredAbsent, declaredEmpty, extraOperations: plan?.extraOperations ?? [], refusedBy });
  // The certification results.json records is the one its results give, field by field.
  for (const field of ['certifiable', 'why', 'declaredAbsent', 'declaredEmpty', 'profile'] as const) {
    const recorded = (report.certification as Record<string, unknown> | undefined)?.[field];
    if (!same(recorded, derived[field]))
      t.invalid('results.json', `certification.${field}`, `says ${clip(show(recorded))}, its results and declarations give ${clip(show(derived[field]))}`);
  }
  // The exit the run would have given: its results, then whether they certify.
  const exit = certifiedExit(exitFor(own, report.suiteErrors, settingsOf(report).strict === true), derived);
  if (exit.code !== report.exit.code) t.invalid('results.json', 'exit.code', `says ${report.exit.code}, its results give ${exit.code} (${exit.reason})`);
  if (certificate && derived.certifiable !== certificate.certifiable)
    t.invalid('certificate.json', 'certifiable', `says ${show(certificate.certifiable)}, results.json's results give ${derived.certifiable} (${derived.why})`);
  if (certificate?.certifiable === false) t.invalid('certificate.json', 'certifiable', `the run did not certify: ${show(certificate.why)}`);
  if (opts.strict) {
    const should = own.filter((r) => r.outcome === 'fail' && r.level === 'SHOULD');
    if (should.length)
      t.invalid(
        'results.json',
        'results',
        `${should.length} SHOULD check(s) failed (--strict): ${should
          .slice(0, 3)
          .map((r) => resultKey(r))
          .join(', ')}${should.length > 3 ? ', ...' : ''}`,
      );
  }
}

/**
 * Every MUST result planned (the signed plan, else this suite's) is there and held at MUST; and
 * the plan signed is this suite's plan, when the suite is this version.
 */
function checkCompleteness(report: RunReport, predicate: Predicate | undefined, plan: Plan | undefined, suite: SuiteFacts, t: Tally): void {
  const own = report.results as CheckResult[];
  const planned = predicate?.mustChecks ?? plan?.must;
  if (planned) {
    const byKey = new Map(own.map((r) => [resultKey(r), r]));
    const missing = planned.filter((k) => !byKey.has(k));
    const lowered = planned.filter((k) => byKey.get(k) && byKey.get(k)!.level !== 'MUST');
    if (missing.length)
      t.invalid(
        'results.json',
        'results',
        `${missing.length} MUST result(s) planned are missing: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`,
      );
    if (lowered.length) t.invalid('results.json', 'results', `${lowered.length} MUST result(s) are held at another level: ${lowered.slice(0, 5).join(', ')}`);
    t.facts.push([
      'completeness',
      missing.length || lowered.length
        ? `${missing.length + lowered.length} of ${planned.length} planned MUST results missing or lowered`
        : `${planned.length} planned MUST results present`,
    ]);
  } else t.invalid('results.json', 'results', 'no plan to judge completeness by: the bundle is not signed, and this suite cannot work out its plan');
  if (predicate && plan && release(predicate.suite.version) === suite.version && !same([...predicate.mustChecks].sort(), [...plan.must].sort())) {
    const mine = new Set(plan.must);
    const theirs = new Set(predicate.mustChecks);
    const gone = plan.must.filter((k) => !theirs.has(k));
    const extra = predicate.mustChecks.filter((k) => !mine.has(k));
    t.invalid(
      ATTESTATION_FILE,
      'predicate.mustChecks',
      `not this suite's plan for the run's settings: ${gone.length} MUST result(s) left out (${gone.slice(0, 3).join(', ')}), ${extra.length} unknown (${extra.slice(0, 3).join(', ')})`,
    );
  }
}

/**
 * Which suite made the bundle, judged against what: its version within the window, its
 * contract this suite's, and at this version, this copy of the suite. Said first among the facts.
 */
function checkSuite(predicate: Predicate | undefined, report: RunReport | undefined, suite: SuiteFacts, opts: CheckOptions, t: Tally): void {
  const version = predicate?.suite.version ?? report?.tool.version;
  if (!version) return;
  const w = versionWindow(version, suite.version, suite.window);
  if (w) t.findings.push(w);
  const contract = predicate?.contract.digest ?? report?.contractDigest;
  if (contract && contract !== suite.contractDigest) {
    const sameVersion = release(version) === suite.version;
    t.findings.push({
      severity: sameVersion || opts.strict ? 'invalid' : 'note',
      file: 'certificate.json',
      field: 'contractDigest',
      message: `judged against contract ${contract}, not this suite's (${suite.contractDigest})${sameVersion ? ' although the version is the same: the suite that ran was not the published one' : `, as conformance ${version}`}`,
    });
  }
  if (predicate && release(version) === suite.version && predicate.suite.digest !== suite.suiteDigest) {
    t.findings.push({
      severity: opts.strict ? 'invalid' : 'note',
      file: ATTESTATION_FILE,
      field: 'predicate.suite.digest',
      message: `the suite that ran (${predicate.suite.digest}) is not this copy of conformance ${version} (${suite.suiteDigest}): changed, or built differently`,
    });
  }
  t.facts.unshift([
    'suite',
    `conformance ${version}${version === suite.version ? ' (this version)' : ''}${predicate ? `, package ${predicate.suite.digest}` : ''}`,
  ]);
}

/** The run the report records, for the screen: product, target and run first; profile and verdict last. */
function describeRun(report: RunReport, predicate: Predicate | undefined, profile: Profile | undefined, facts: Array<[string, string]>): void {
  facts.unshift(
    ['product', `${report.product?.name ?? '(not declared)'}${report.product?.version ? ` ${report.product.version}` : ''}`],
    ['target', predicate?.target.baseUrl ?? report.target.baseUrl],
    ['run', `${report.runId}, seed ${report.seed}, ${report.startedAt} to ${report.finishedAt}`],
  );
  facts.push(
    ['profile', profile ? describeProfile(profile) : '(none)'],
    ['verdict', `${report.certification?.certifiable ? 'certifiable' : 'NOT certifiable'}: ${clip(report.certification?.why ?? '(no certification)')}`],
  );
}

/**
 * The findings on a bundle, in the order of its checks: (1) the signature, (2) the files as
 * signed and as SHA256SUMS lists them, (3) the files' agreement with each other and with the
 * statement, (4) the verdict its results give and its completeness, (5) the suite that made it.
 */
export function checkBundle(files: BundleFolder, suite: SuiteFacts, opts: CheckOptions): BundleCheck {
  if (!['certificate.json', 'results.json', ATTESTATION_FILE].some((n) => files.has(n))) {
    return {
      findings: [
        {
          severity: 'unchecked',
          message: 'not a certification bundle: it holds no certificate.json, results.json or attestation.json (a bundle is the folder --certify wrote)',
        },
      ],
      facts: [],
      exit: 2,
    };
  }
  const t = tally();
  for (const name of files.others ?? []) t.invalid(name, undefined, 'not a plain file: a bundle holds plain files only (no folder, no link)');
  const statement = checkSignature(files, opts, t);
  if (statement) checkSigned(files, statement, opts, t);
  checkSums(files, t);
  const { certificate, report } = readBundle(files, t);
  const predicate = statement?.predicate;
  checkAgreement(certificate, report, predicate, t);
  if (report) {
    const plan = planOf(report, suite, t);
    checkVerdict(report, certificate, plan, opts, t);
    checkCompleteness(report, predicate, plan, suite, t);
  }
  checkSuite(predicate, report, suite, opts, t);
  const profile = predicate?.profile ?? report?.certification?.profile;
  if (report) describeRun(report, predicate, profile, t.facts);
  const { findings, facts } = t;
  const exit = findings.some((f) => f.severity === 'invalid') ? 1 : findings.some((f) => f.severity === 'unchecked') ? 2 : 0;
  return { findings, facts, ...(profile ? { profile } : {}), ...(report ? { report } : {}), ...(predicate ? { predicate } : {}), exit };
}
