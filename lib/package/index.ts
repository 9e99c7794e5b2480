// The package itself: where it lives on disk and its version. The lowest folder of lib/: the
// contract, the configuration, the transport, the runner and the vitest glue all read it, and it
// reads none of them.
export { packageRoot, packageVersion, readPackageVersion } from './package.js';
