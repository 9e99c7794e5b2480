// The command line a person expects: a mistyped flag gets the flag meant,
// every setting has a flag, and every error names where the wrong value came from: the flag,
// the environment variable, or the settings file and the key path in it. Usage errors end
// before any check or server starts, so most of these drive main() in-process.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPORT_FORMATS } from '../reporters/formats.js';
import { main } from '../cli/main.js';
import type { Io } from '../cli/io.js';
import { SETTING_KEYS } from '../lib/configuration/index.js';
import { cli } from './support.js';

interface Said {
  code: number;
  out: string[];
  err: string[];
}

async function run(args: string[], opts: { env?: Record<string, string>; files?: Record<string, string> } = {}): Promise<Said> {
  const cwd = mkdtempSync(join(tmpdir(), 'conformance-flags-'));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(cwd, name), text);
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), env: opts.env ?? {}, cwd, isTTY: false };
  return { code: await main(args, io), out, err };
}

/** A usage error as the CLI prints it: exit 2, one line, then the help hint for the command. */
function expectUsageError(r: Said, message: string | RegExp, help = 'conformance --help'): void {
  expect(r.code).toBe(2);
  expect(r.out).toEqual([]);
  expect(r.err).toHaveLength(2);
  if (typeof message === 'string') expect(r.err[0]).toBe(`conformance: ${message}`);
  else expect(r.err[0]).toMatch(message);
  expect(r.err[1]).toBe(`Run '${help}' for usage.`);
}

describe('an unknown flag gets the flag meant', () => {
  it.each([
    [['--reprot-dir', 'out'], "unknown option '--reprot-dir' (did you mean --report-dir?)", 'conformance --help'],
    [['--timout', '5000'], "unknown option '--timout' (did you mean --timeout?)", 'conformance --help'],
    [['--max-body', '4096'], "unknown option '--max-body' (did you mean --max-body-bytes?)", 'conformance --help'],
    [['--emtpy', 'orders'], "unknown option '--emtpy' (did you mean --empty?)", 'conformance --help'],
    [
      ['--fault', 'x'],
      "unknown option '--fault' (--fault is a flag of `conformance serve` and `conformance selftest`, which start the reference server)",
      'conformance --help',
    ],
    [['serve', '--prot', '8080'], "unknown option '--prot' (did you mean --port?)", 'conformance serve --help'],
    [['serve', '--no-empty-lists'], "unknown option '--no-empty-lists' (did you mean --no-empty-list?)", 'conformance serve --help'],
    [['selftest', '--qiuck'], "unknown option '--qiuck' (did you mean --quick?)", 'conformance selftest --help'],
    [['cleanup', '--rnu', 'abc'], "unknown option '--rnu' (did you mean --run?)", 'conformance cleanup --help'],
  ])('%j', async (args, message, help) => {
    expectUsageError(await run(args), message, help);
  });

  it('and nothing when no flag is close', async () => {
    expectUsageError(await run(['--bogus']), "unknown option '--bogus'");
  });

  it("a mistyped command gets the command meant, before its flags are read as the main command's", async () => {
    expectUsageError(await run(['serv']), "unknown command 'serv' (did you mean 'conformance serve'?)");
    expectUsageError(await run(['sevre', '--port', '5203']), "unknown command 'sevre' (did you mean 'conformance serve'?)");
  });

  it('an unknown reporter is refused with the one meant, from the flag or the environment', async () => {
    const known = REPORT_FORMATS.map((f) => f.name).join(', ');
    expectUsageError(await run(['--reporter', 'json,ctfr']), `--reporter: unknown reporter 'ctfr' (did you mean 'ctrf'?) (known: ${known})`);
    expectUsageError(await run(['merge', 'a', '--reporter', 'xml']), `--reporter: unknown reporter 'xml' (known: ${known})`, 'conformance merge --help');
  });

  it('a mistyped check id gets the id meant', async () => {
    expectUsageError(await run(['--check', 'list.limt.max']), "unknown check id 'list.limt.max' (did you mean 'list.limit.max'?) (see 'conformance --list')");
  });

  it('a flag without its value says so', async () => {
    expectUsageError(await run(['--seed']), '--seed needs a value');
  });

  it("a negative number is read as the value it is, and refused in the flag's own words", async () => {
    expectUsageError(await run(['--explore', '-1']), "--explore: must be a whole number from 0 to 10000 (got '-1')");
    expectUsageError(await run(['--concurrency', '-5', '--seed', '1']), "--concurrency: must be a whole number from 1 to 256 (got '-5')");
  });

  it('an unknown operation in --empty or --absent gets the operation meant', async () => {
    expectUsageError(
      await run(['--certify', 'out', '--empty', 'catalog-rule']),
      "--empty: unknown operation 'catalog-rule' (did you mean 'catalog-rules'?) (see 'conformance --list-operations')",
    );
    expectUsageError(
      await run(['--certify', 'out', '--absent', 'ordres']),
      "--absent: unknown operation 'ordres' (did you mean 'orders'?) (see 'conformance --list-operations')",
    );
  });

  it('--absent goes with --certify', async () => {
    expectUsageError(await run(['--absent', 'jobs']), '--product, --product-version and --absent go with --certify DIR');
  });
});

describe('every setting has a flag', () => {
  it.each(SETTING_KEYS.map((k) => [k.key, k.env]))('%s (%s): a flag, and in --help', async (key) => {
    const help = await run(['--help']);
    expect(help.out.join('\n')).toContain(`--${key}`);
    // Known to the parser: `--KEY=1` is taken (a boolean flag refuses the value, by its name).
    const r = await run([`--${key}=1`, '--help']);
    expect(r.err.join('\n')).not.toMatch(/unknown option/);
  });

  it('--max-body-bytes is one, in --help, and its error names it', async () => {
    const help = await run(['--help']);
    expect(help.out.join('\n')).toMatch(/--max-body-bytes N +largest response body read/);
    expect(help.out.join('\n')).toMatch(/--empty OP\[,OP\]/);
    expectUsageError(await run(['--max-body-bytes', '10']), "--max-body-bytes: must be a whole number from 1024 to 536870912 (got '10')");
  });
});

describe('an error names where the value came from', () => {
  it.each([
    [{ env: { CONFORMANCE_TIMEOUT_MS: 'abc' } }, "CONFORMANCE_TIMEOUT_MS: must be a whole number from 100 to 600000 (got 'abc')"],
    [{ env: { CONFORMANCE_MAX_BODY_BYTES: '1k' } }, "CONFORMANCE_MAX_BODY_BYTES: must be a whole number from 1024 to 536870912 (got '1k')"],
    [{ env: { CONFORMANCE_CONCURRENCY: '0' } }, "CONFORMANCE_CONCURRENCY: must be a whole number from 1 to 256 (got '0')"],
    [{ files: { 'conformance.config.yaml': 'timeout: abc\n' } }, "conformance.config.yaml: timeout: must be a whole number from 100 to 600000 (got 'abc')"],
    [
      { files: { 'conformance.config.yaml': 'base-url: https://x.example\ntoken: t\nrequest-budget: 5\n' } },
      "conformance.config.yaml: request-budget: must be a whole number from 20 to 1000000 (got '5')",
    ],
    [{ files: { 'conformance.config.yaml': 'concurency: 4\n' } }, "conformance.config.yaml: unknown key 'concurency' (did you mean 'concurrency'?)"],
  ])('%j', async (given, message) => {
    expectUsageError(await run([], given), message);
  });

  it('the flag wins, and is the one named', async () => {
    expectUsageError(
      await run(['--timeout', 'soon'], { env: { CONFORMANCE_TIMEOUT_MS: '5000' } }),
      "--timeout: must be a whole number from 100 to 600000 (got 'soon')",
    );
  });

  it('the declared-empty operations of the file are checked against the catalog, naming the file', async () => {
    expectUsageError(
      await run(['--certify', 'out'], { files: { 'conformance.config.yaml': 'empty: [catalog-rule]\n' } }),
      /^conformance: .*conformance\.config\.yaml: empty: unknown operation 'catalog-rule' \(did you mean 'catalog-rules'\?\)/,
    );
  });
});

describe('the settings file through the built CLI', () => {
  it('an added operation without paths is a clear one-line error, not a stack trace (exit 2)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'conformance-flags-'));
    writeFileSync(join(cwd, 'conformance.config.yaml'), 'operations:\n  widgets:\n    name: Get all Widgets\n');
    const r = await cli(['--check', 'list.endpoint.present'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      "conformance: conformance.config.yaml: operations.widgets: must have required property 'paths' (an operation the catalog does not have is added to it, and needs its paths; see 'conformance --list-operations')",
      "Run 'conformance --help' for usage.",
    ]);
  });
});

describe('every error the suite raises on purpose has a stable code', () => {
  it('usage, configuration, HAR, key and the reference server refusals: each its own', async () => {
    const [{ UsageError, parseFlags }, { ConfigError }, { HarError }, { KeyError }, { HttpError }] = await Promise.all([
      import('../cli/io.js'),
      import('../lib/configuration/index.js'),
      import('../lib/runner/index.js'),
      import('../reporters/attestation.js'),
      import('../server/http.js'),
    ]);
    expect([new UsageError('x').code, new ConfigError('x').code, new HarError('x').code, new KeyError('x').code, new HttpError(400, 'x').code]).toEqual([
      'USAGE',
      'CONFIG',
      'HAR',
      'KEY',
      'HTTP_REFUSAL',
    ]);
    // parseArgs' own refusals come out as usage errors: main needs no Node error code to know them.
    for (const args of [['--nope'], ['--seed'], ['extra']]) {
      let thrown: unknown;
      try {
        parseFlags({ args, options: { seed: { type: 'string' } } }, 'serve');
      } catch (e) {
        thrown = e;
      }
      expect(thrown, args.join(' ')).toBeInstanceOf(UsageError);
    }
  });
});
