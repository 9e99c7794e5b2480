// A headless Chromium for the tests that need a browser, never downloaded at run time: the
// system's where one is installed, else the one @sparticuz/chromium carries in its npm package
// (a devDependency, so `npm ci` brings it on a machine without a browser). That build is made
// for Amazon Linux and needs NSS and expat; the package carries those too (al2023.tar.br) but
// unpacks them only on Amazon Linux, so here they are unpacked beside it and put on the
// browser's library path.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

const SYSTEM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const HEADLESS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** CONFORMANCE_BUNDLED_CHROMIUM=1 takes the bundled one even where a system Chromium exists (to try it). */
export async function launchChromium(): Promise<{ browser: Browser; which: string }> {
  const system = process.env.CONFORMANCE_BUNDLED_CHROMIUM ? undefined : SYSTEM.find((p) => existsSync(p));
  if (system) return { browser: await chromium.launch({ executablePath: system, args: HEADLESS }), which: system };
  const bundled = (await import('@sparticuz/chromium')).default;
  const executablePath = await bundled.executablePath();
  const libs = join(tmpdir(), 'conformance-chromium-libs');
  if (!existsSync(join(libs, 'lib', 'libnss3.so'))) {
    mkdirSync(libs, { recursive: true });
    // The package exports no package.json: its root is three levels above its CommonJS entry.
    const pkg = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', '..');
    execFileSync('tar', ['-x', '-C', libs], { input: brotliDecompressSync(readFileSync(join(pkg, 'bin', 'al2023.tar.br'))) });
  }
  const env = { ...process.env, LD_LIBRARY_PATH: [join(libs, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } as Record<string, string>;
  return { browser: await chromium.launch({ executablePath, args: [...bundled.args, ...HEADLESS], env }), which: `@sparticuz/chromium (${executablePath})` };
}
