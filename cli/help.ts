import { SETTINGS } from '../lib/configuration/index.js';
import { describeFormats } from '../reporters/formats.js';

/** `text` in lines of at most 96 characters, each after `indent`, broken after a comma. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > 96) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].map((l) => `${indent}${l}`).join('\n');
}

export const HELP = `Usage:
  conformance [options]            run the checks (no --base-url: against the bundled reference server)
  conformance serve [options]      run the bundled reference server alone
  conformance merge DIR... [--report-dir OUT] [--strict]
                                   one report from the report directories of shards
  conformance selftest [--fault NAME]... [--variant NAME]... [--quick] [--parallel N] [--seed N]
                                   prove the suite: every mutant and variant of the reference
                                   server through the CLI (exit 0 only when all are right)
  conformance cleanup [--run ID] [--base-url URL]
                                   delete what interrupted or crashed runs created, from their
                                   ledgers, each on the target its ledger records (--base-url
                                   picks runs, never redirects them; a run in progress is left
                                   alone; the token as for a run; see cleanup --help)
  conformance traceability [FILE]  write the statements-to-checks matrix (default
                                   docs/traceability.md)
  conformance proxy --upstream URL [--port N] [--until-idle S]
                                   forward traffic to URL unchanged and judge each exchange
                                   on an operation of the contract; reports on Ctrl-C, SIGTERM
                                   or --until-idle (see proxy --help)
  conformance judge FILE.har       judge the exchanges a HAR file recorded (see judge --help)
  conformance keygen [--out PREFIX] [--type ed25519|p256]
                                   write a key pair to sign certification bundles with
  conformance verify BUNDLE [--key PUB] [--strict] [--rerun [--base-url URL]]
                                   check a certification bundle: signature, digests,
                                   completeness, suite version, profile; --rerun runs its plan
                                   again and compares (see verify --help)
  conformance publish BUNDLE... --out DIR --key PUB
                                   a static page and index.json of verified certificates

Target:
  --base-url URL        the server to certify (env CONFORMANCE_BASE_URL)
  --token TOKEN         its bearer token (env CONFORMANCE_TOKEN; prefer the env variable:
                        a flag shows in process listings and shell history)
  --client-id ID        log in with client credentials instead of a token (env
                        CONFORMANCE_CLIENT_ID): POST --token-url, again before the token
                        expires and once on a 401 to a token that worked; not with --token
  --client-secret-file PATH   the file that holds the client secret (env
                        CONFORMANCE_CLIENT_SECRET_FILE); or the secret in CONFORMANCE_CLIENT_SECRET
  --client-secret       refused: a flag shows in process listings and shell history (use the
                        env variable or --client-secret-file)
  --token-url URL       where to log in (env CONFORMANCE_TOKEN_URL; default: the base URL
                        and /oauth/access_token)
  --config FILE         settings file (default: ./conformance.config.yaml when present)

Selection:
  --list                list every check (id, level, clause, title) and exit; [observed]
                        marks those that also judge traffic (conformance proxy, judge)
  --check ID            run only this check; repeat or separate with commas
  --grep TEXT           run only checks whose id or title contains TEXT
  --operation KEY       run the list checks only on this operation (repeat, or commas)
  --list-operations     list the list operations (key, path) and exit, with those the
                        settings file adds or changes (operations:) marked

Lists:
  --request-budget N    most requests to one list operation (default 1000)
  --time-buffer S       records newer than the run's start minus S seconds stay out of
                        traversal comparisons (default 60)
  --default-page-length N   the expected default page length (default: GET /v2/settings
                        page_length, else 25)
  --require-all-endpoints   an absent list operation (404) fails instead of skipping
  --allow-all-404       run the checks even when the target answers 404 to every read the
                        contract names (else the preflight stops: a wrong base URL or prefix)
  --change-settings     change the store's default page length (PUT /v2/settings) to check
                        that lists follow it, then restore it (also after Ctrl-C; after a
                        crash: conformance cleanup --run ID); default on against the bundled
                        server, off against --base-url (env CONFORMANCE_CHANGE_SETTINGS)
  --explore N           requests drawn at random per list operation (shared by its paths),
                        and values drawn for key creation, each judged against a model; a
                        disagreement is shrunk by fast-check; --seed draws them again
                        (default 20; 0: off; env CONFORMANCE_EXPLORE)
  --explore-only        the list checks judge only the drawn requests (their fixed probes
                        off, so a list check with no disagreement skips): how far the
                        exploration reaches alone; not with --certify or --explore 0
                        (env CONFORMANCE_EXPLORE_ONLY)

Run:
  --seed N              seed for generated data (default: random, printed); replays a run
  --concurrency N       requests in flight at most (default 64; env CONFORMANCE_CONCURRENCY):
                        the run starts at 8, grows while the target answers as fast as it did
                        unloaded, shrinks as its latency climbs, halves on a 429 or a
                        timeout; for a target that drops connections beyond a limit, set it
                        at or below that
  --max-rate N          requests sent a second at most, evenly spaced, for a service shared
                        with others (default: no cap; env CONFORMANCE_MAX_RATE)
  --timeout MS          per-request timeout (default 10000; env CONFORMANCE_TIMEOUT_MS)
  --max-body-bytes N    largest response body read; a larger one is an error of the suite
                        (default 16777216, 16 MiB; env CONFORMANCE_MAX_BODY_BYTES)
  --report-dir DIR      write results.json, junit.xml and report.html there (env CONFORMANCE_REPORT_DIR)
  --reporter NAME[,NAME] which report files to write there (default json,junit,html; env
                        CONFORMANCE_REPORTER, key reporter):
${describeFormats('                          ')}
  --strict              SHOULD failures fail the run too
  --replays N           run each failed result again alone N times after the run, same seed,
                        and label it: 'reproduced k of N', 'flaky: did not reproduce' (passed
                        every time) or 'failed otherwise m of N' (failed on another status); no
                        outcome changes (default 2; 0: off; env CONFORMANCE_REPLAYS)
  --no-color            no colours (also NO_COLOR=1; colours only on a terminal, and not
                        under CI=true, unless FORCE_COLOR=1; under CI progress is plain lines:
                        one per area as it finishes, and one at least every 10 s)
  --shard i/n           run the i-th of n parts (by area and list operation); merge them after

Certification and baselines:
  --certify DIR         write a certification bundle (reports, masked config, certificate,
                        SHA256SUMS); certifiable only when every MUST check ran and passed
  --signing-key FILE    sign the bundle (attestation.json) with this PEM private key,
                        Ed25519 or ECDSA P-256 (env CONFORMANCE_SIGNING_KEY: the PEM or a
                        path; an encrypted key's passphrase in CONFORMANCE_SIGNING_KEY_PASSPHRASE)
  --product NAME, --product-version V   the product under certification
  --absent OP[,OP]      operations the vendor declares absent (their skips are allowed): an
                        operation (every path of it) or one path (hierarchy-nodes@by-release);
                        one the target serves after all is not certifiable
  --empty OP[,OP]       list operations the vendor declares legitimately empty (env
                        CONFORMANCE_EMPTY, key empty): the checks an empty list cannot
                        exercise do not block certification, and the certificate lists them;
                        a declared-empty list that holds records is not certifiable
  --baseline FILE       known failures (YAML: known: [{ id, operation? }]) do not fail the run;
                        entries that pass now are reported as stale
  --write-baseline FILE record the current failures as a baseline

  -h, --help            this help
  -V, --version         the suite's version

Serve: the reference server's own options are in 'conformance serve --help'.

Precedence: flags > environment > config file > defaults. File keys (each also a flag, --KEY):
${wrap(SETTINGS.map((s) => s.key).join(', '), '  ')};
  and operations: and parents: to override or extend the list catalog (see docs/usage.md). The file is checked
  against spec/config.schema.yaml; an error names the flag, the variable, or the file and key.

Under GitHub Actions (GITHUB_ACTIONS=true): an error annotation per failed MUST check, and a
Markdown summary appended to GITHUB_STEP_SUMMARY.

Before any check, one authenticated GET shows the target is reachable, answers JSON and
accepts the token; if not, the run stops there with one line that says what to do (exit 2).

Exit codes:
  0  no MUST check failed (SHOULD failures are warnings unless --strict)
  1  a MUST check failed (or, with --strict, a SHOULD check), even if other checks could
     not run (the summary then says the results are incomplete)
  2  a usage error, or the suite could not do its work (unreachable target, refused token,
     timeout, a crash of the suite) and no MUST check failed: the results are incomplete
  130  interrupted (Ctrl-C, SIGTERM): the checks stopped and what the run created was deleted
`;
