/** What the CLI touches of the outside world, so tests can drive it in-process. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  isTTY: boolean;
  /** A status line rewritten in place (terminals only); undefined clears it. */
  progress?(text: string | undefined): void;
}

/** A mistake in the command line: one line and the help hint, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function processIo(): Io {
  return {
    out: (l) => process.stdout.write(`${l}\n`),
    err: (l) => process.stderr.write(`${l}\n`),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stdout.isTTY),
    progress: process.stderr.isTTY ? (t) => process.stderr.write(t === undefined ? '\r\u001b[K' : `\r\u001b[K${t.slice(0, (process.stderr.columns || 80) - 1)}`) : undefined,
  };
}
