// `conformance serve`: the reference server alone, until interrupted.
import { randomBytes } from 'node:crypto';
import { didYouMean } from '../lib/text/index.js';
import { parseFlags, UsageError, type Io } from './io.js';

const SERVE_HELP = `Usage: conformance serve [--port N] [--host H] [--token TOKEN] [--seed N] [--records N]
                         [--no-empty-list] [--fault NAME]... [--variant NAME]... [--list-faults]
  Runs the bundled reference server alone, until interrupted (Ctrl-C). Clients may log in as the
  official SDK does: POST /oauth/access_token with the client_id and client_secret of a key made
  through POST /v2/application-keys (client_credentials), or a client_id alone (implicit: read only).
  --port N          port (default 0: a free one)
  --host H          address (default 127.0.0.1)
  --token TOKEN     token to accept, not empty (default: env CONFORMANCE_TOKEN, else
                    generated and shown)
  --seed N          seed for the server's data
  --records N       records in each ordinary list (default 130; orders hold at least 10,050)
  --no-empty-list   fill catalog rules too (by default the one deliberately empty list)
  --fault NAME      switch on a fault (a mutant that breaks one rule); repeatable
  --variant NAME    switch on a legitimate variant; repeatable
  --list-faults     list the faults and variants and exit`;

export async function serve(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(
    {
      args,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
        seed: { type: 'string' },
        records: { type: 'string' },
        'no-empty-list': { type: 'boolean' },
        fault: { type: 'string', multiple: true },
        variant: { type: 'string', multiple: true },
        'list-faults': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    'serve',
  );
  if (values.help) {
    io.out(SERVE_HELP);
    return 0;
  }
  // Loaded here, not above: --help needs none of it.
  const { FAULTS, startReferenceServer, VARIANTS } = await import('../server/index.js');
  if (values['list-faults']) {
    io.out('Faults (each breaks one rule; the checks that must catch it):');
    const w = Math.max(...[...FAULTS, ...VARIANTS].map((x) => x.name.length)) + 2;
    for (const f of FAULTS) io.out(`  ${f.name.padEnd(w)}${f.breaks}  [${f.caughtBy.join(', ')}]`);
    io.out('\nLegitimate variants (every MUST check passes against them):');
    for (const v of VARIANTS) io.out(`  ${v.name.padEnd(w)}${v.choice}\n  ${''.padEnd(w)}allowed by ${v.allowedBy}`);
    return 0;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a whole number from 0 to 65535 (got '${values.port}')`, 'serve');
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw new UsageError(`--seed must be a whole number (got '${values.seed}')`, 'serve');
  if (values.records !== undefined && (!/^\d+$/.test(values.records) || Number(values.records) > 5_000_000))
    throw new UsageError(`--records must be a whole number up to 5000000 (got '${values.records}')`, 'serve');
  const faults = values.fault ?? [];
  const variants = values.variant ?? [];
  refuseUnknownNames({ fault: faults, variant: variants }, { fault: FAULTS, variant: VARIANTS }, 'serve');
  // `--token "$CONFORMANCE_TOKEN"` with the variable unset gives an empty token: a server that
  // would refuse every request. An empty variable counts as unset, as for a run
  // (lib/configuration/config.ts).
  if (values.token !== undefined && values.token.trim() === '')
    throw new UsageError('--token must not be empty (leave --token out to have a token generated and shown)', 'serve');
  const given = values.token ?? (io.env.CONFORMANCE_TOKEN?.trim() ? io.env.CONFORMANCE_TOKEN : undefined);
  const token = given ?? randomBytes(18).toString('base64url');
  const server = await (async () => {
    try {
      return await startReferenceServer({
        token,
        faults,
        variants,
        port,
        host: values.host ?? '127.0.0.1',
        ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
        ...(values.records !== undefined ? { records: Number(values.records) } : {}),
        ...(values['no-empty-list'] ? { emptyList: false } : {}),
      });
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'EADDRINUSE') throw new UsageError(`port ${port} is already in use (--port 0 picks a free one)`);
      if (code === 'EACCES') throw new UsageError(`no permission to listen on port ${port}`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UsageError(`cannot listen on host '${values.host}'`);
      throw e;
    }
  })();
  io.out(`conformance reference server listening on ${server.url}`);
  // A token the user chose is theirs and is not echoed; one generated here must be shown to be usable.
  io.out(given ? `  token: (the one given)` : `  token: ${token}  (generated for this server; pass --token to choose one)`);
  io.out(`  oauth: POST ${server.url}/oauth/access_token (client_credentials, or implicit, with a key from POST /v2/application-keys)`);
  if (faults.length) io.out(`  faults: ${faults.join(', ')}`);
  if (variants.length) io.out(`  variants: ${variants.join(', ')}`);
  io.out('  Ctrl-C to stop');
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

/**
 * Every fault and variant named is one the reference server has; else a usage error of `command`
 * that says the nearest name (for serve, selftest: the commands that start the server).
 */
export function refuseUnknownNames(
  named: Record<'fault' | 'variant', readonly string[]>,
  known: Record<'fault' | 'variant', ReadonlyArray<{ name: string }>>,
  command: string,
): void {
  for (const kind of ['fault', 'variant'] as const) {
    const names = known[kind].map((x) => x.name);
    for (const n of named[kind])
      if (!names.includes(n))
        throw new UsageError(`unknown ${kind} '${n}'${didYouMean(n, names, (c) => `'${c}'`)} (see 'conformance serve --list-faults')`, command);
  }
}
