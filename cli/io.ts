import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from '../lib/text/index.js';

/** What the CLI touches of the outside world, so tests can drive it in-process. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  isTTY: boolean;
  /** A status line rewritten in place (terminals only); undefined clears it. */
  progress?(text: string | undefined): void;
  /**
   * Without a live status line (no terminal, or CI): a line at least this often while checks
   * run (default 10 s). Tests shorten it.
   */
  heartbeatMs?: number;
}

/** A mistake in the command line: one line and the help hint, exit 2. */
export class UsageError extends Error {
  readonly code = 'USAGE';
  /** The subcommand whose --help to point at (`serve`), none for the main command. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/**
 * CI=true (or 1, or any value but false/0) means nobody watches a terminal, even when one is
 * attached (a CI runner with a pseudo-terminal): no status line rewritten in place, no colours.
 */
export function isCi(env: Io['env']): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** Someone watches a terminal: a live status line and colours are welcome. */
export function interactive(io: Io): boolean {
  return io.isTTY && !isCi(io.env);
}

/**
 * Colours in the console: FORCE_COLOR asks for them anywhere (0 or false: nowhere);
 * NO_COLOR or --no-color (`noColor`) refuses them; else only where someone watches a terminal
 * (interactive). The same rule for the run and for merge.
 */
export function useColor(io: Io, noColor = false): boolean {
  const force = io.env.FORCE_COLOR;
  if (noColor || (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '')) return false;
  if (force === '0' || force === 'false') return false;
  if (force !== undefined) return true;
  return interactive(io);
}

/** The live status line, only where someone watches it (see interactive). */
export function liveProgress(io: Io): Io['progress'] {
  return interactive(io) ? io.progress : undefined;
}

/**
 * parseArgs, strict, with an unknown option turned into a usage error that suggests the
 * nearest known one: `unknown option '--reprot-dir' (did you mean --report-dir?)`.
 * `command` names the subcommand for the help hint.
 */
export function parseFlags<T extends ParseArgsConfig>(config: T, command?: string): ReturnType<typeof parseArgs<T>> {
  // A negative number after a flag that takes a value is that value (`--explore -1`), for the
  // flag's own check to refuse in its words: parseArgs would take it for a flag ("ambiguous").
  const takesValue = (a: string): boolean => a.startsWith('--') && !a.includes('=') && config.options?.[a.slice(2)]?.type === 'string';
  const args = config.args?.flatMap((a, i, all) =>
    /^-\d/.test(a) && i > 0 && takesValue(all[i - 1]!) ? [] : takesValue(a) && /^-\d/.test(all[i + 1] ?? '') ? [`${a}=${all[i + 1]}`] : [a],
  );
  try {
    return parseArgs<T>({ strict: true, ...config, ...(args ? { args } : {}) });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /'([^']+)'/.exec((e as Error).message)?.[1] ?? '';
      const known = Object.entries(config.options ?? {}).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
      const near = flag.startsWith('--')
        ? closest(
            flag,
            known.filter((k) => k.startsWith('--')),
          )
        : undefined;
      // The reference server's faults and variants are flags of the commands that start one.
      const elsewhere =
        !near && command === undefined && (flag === '--fault' || flag === '--variant')
          ? ` (${flag} is a flag of \`conformance serve\` and \`conformance selftest\`, which start the reference server)`
          : '';
      throw new UsageError(`unknown option '${flag}'${near ? ` (did you mean ${near}?)` : elsewhere}`, command);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      // Node's wording, in ours: "--seed needs a value", "unexpected argument 'x'".
      const message = (e as Error).message.split('\n')[0]!;
      const missing = /^Option '(?:-\w, )?(--?[-\w]+)(?: <value>)?' argument missing/.exec(message);
      throw new UsageError(missing ? `${missing[1]} needs a value` : message.split('. ')[0]!.replace(/^\w/, (c) => c.toLowerCase()), command);
    }
    // Any other refusal of parseArgs is a mistake in the command line too, said in Node's words.
    if (code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((e as Error).message.split('\n')[0]!, command);
    throw e;
  }
}

/**
 * Writes to a stream a reader may close (`conformance ... | head`, a terminal that went away):
 * once it fails (EPIPE), writing stops and the run goes on to clean up and exit with its
 * verdict. An error event nobody listens to would crash the process mid-run.
 */
function writer(stream: NodeJS.WriteStream): (text: string) => void {
  let open = true;
  stream.on('error', () => {
    open = false;
  });
  return (text) => {
    if (!open) return;
    try {
      stream.write(text);
    } catch {
      open = false;
    }
  };
}

export function processIo(): Io {
  const out = writer(process.stdout);
  const err = writer(process.stderr);
  return {
    out: (l) => out(`${l}\n`),
    err: (l) => err(`${l}\n`),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stdout.isTTY),
    // Only on a terminal, and not under CI: the cursor tricks of a line rewritten in place.
    progress:
      process.stderr.isTTY && !isCi(process.env)
        ? (t) => err(t === undefined ? '\r\u001b[K' : `\r\u001b[K${t.slice(0, (process.stderr.columns || 80) - 1)}`)
        : undefined,
  };
}
