#!/usr/bin/env node
import { main } from './main.js';
import { processIo } from './io.js';

const code = await main(process.argv.slice(2), processIo());
// Exit explicitly: the exit code is ours (computed from levels), whatever vitest left set.
process.exit(code);
