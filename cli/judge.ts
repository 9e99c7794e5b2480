// `conformance judge FILE.har`: the rules of the contract held to the exchanges a HAR file
// recorded (a browser's developer tools, Playwright's recordHar, a recording proxy), with no
// request of the suite's own.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HarError, readHar } from '../lib/runner/index.js';
import { Secrets } from '../lib/evidence/index.js';
import { judgeTraffic } from '../suites/observed.js';
import { parseFlags, UsageError, type Io } from './io.js';
import { OBSERVE_HELP, OBSERVE_OPTIONS, observedReport, observeFlags, publishObserved } from './observe.js';
import { errorWord } from '../lib/text/index.js';

export const JUDGE_HELP = `Usage: conformance judge FILE.har [options]
  Judges the exchanges a HAR file recorded by the rules of the contract: every exchange on an
  operation of the contract (Delete a Custom API, Create an Application Key, the list
  operations, GET /v2/settings) is held to each rule one exchange, or the exchanges before it,
  can show. Bodies are read as the file stores them, as text or base64. Nothing is sent.
  --base-path P           a prefix of every path before the contract's (/api of
                          https://shop.example/api/v2/...): left off when paths are matched
${OBSERVE_HELP}
  A file whose requests carry no Authorization header at all (a sanitized export) is judged as
  if each had carried one: the rules about requests without a token are then not judged.`;

export async function judgeHar(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags({ args, options: { ...OBSERVE_OPTIONS, 'base-path': { type: 'string' } }, allowPositionals: true }, 'judge');
  if (values.help) {
    io.out(JUDGE_HELP);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(positionals.length ? `one HAR file at a time (got ${positionals.length})` : 'which HAR file? (conformance judge FILE.har)', 'judge');
  const flags = await observeFlags(values, io, 'judge');
  const file = resolve(io.cwd, positionals[0]!);
  const startedAt = new Date();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${positionals[0]}: ${errorWord(e)}`, 'judge');
  }
  let har;
  try {
    har = readHar(text);
  } catch (e) {
    if (e instanceof HarError) throw new UsageError(`${positionals[0]}: ${e.message}`, 'judge');
    throw e;
  }
  const basePath = values['base-path'];
  if (basePath !== undefined && !/^\/[^?#]*$/.test(basePath)) throw new UsageError(`--base-path is a path that starts with / (got '${basePath}')`, 'judge');
  if (basePath) flags.settings.basePath = basePath.replace(/\/$/, '');
  // A sanitized export strips every Authorization header: then none of its requests can be read as sent without one.
  if (har.exchanges.length && !har.exchanges.some((x) => x.requestHeaders.authorization !== undefined)) {
    flags.settings.credentialsStripped = true;
    io.out(
      'no request of the file carries an Authorization header (a sanitized export?): each is judged as if it had one, and the rules about requests without a token are not judged',
    );
  }
  const secrets = new Secrets();
  const { results, counts } = judgeTraffic(har.exchanges, flags.settings, secrets);
  if (har.skipped) io.out(`${har.skipped} entr${har.skipped === 1 ? 'y' : 'ies'} of the file without an answer (blocked, aborted) left out`);
  return publishObserved(observedReport(positionals[0]!, results, counts, flags, startedAt, []), counts, flags, secrets, io);
}
