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
    progress: process.stderr.isTTY ? (t) => err(t === undefined ? '\r\u001b[K' : `\r\u001b[K${t.slice(0, (process.stderr.columns || 80) - 1)}`) : undefined,
  };
}
