// The catalogue of every check, by area. Importing it has no side effects and does not load
// vitest, so the CLI can list and select checks without starting a run.
import type { Check } from '../lib/check.js';
import { createChecks } from './create-application-key/checks.js';
import { deleteChecks } from './delete-custom-api/checks.js';
import { errorChecks } from './errors/checks.js';

/** Areas in the order they run and are reported; each is one folder and one vitest file. */
export const AREAS = ['delete-custom-api', 'create-application-key', 'errors'] as const;
export type Area = (typeof AREAS)[number];

export const allChecks: readonly Check[] = [...deleteChecks, ...createChecks, ...errorChecks];

export function checksOf(area: string): Check[] {
  return allChecks.filter((c) => c.area === area);
}
