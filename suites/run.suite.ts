// The one vitest file of a run: every selected check of every area, in the order of
// suites/index.ts (AREAS), run side by side (suites/register.ts).
import { registerRun } from './register.js';
import { expandChecks } from './index.js';

registerRun((settings) => expandChecks(settings.pagination));
