// The vitest glue: a run of the checks driven in-process through vitest's Node API. The top of
// lib/, apart from the runner because it loads vitest on import: only a run imports it.
export { discardingSink, runSuite, type ProvidedRun } from './vitest-run.js';
