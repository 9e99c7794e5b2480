// The report formats a run can write into its report folder, by name: --reporter NAME[,NAME]
// (key `reporter`) picks them. Each is a pure function of the results model; adding a format is
// its renderer's file and one line here.
import { didYouMean } from '../lib/config.js';
import { renderCtrf } from './ctrf.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import type { RunReport } from './model.js';

export interface ReportFormat {
  /** What --reporter calls it. */
  name: string;
  /** The file it writes in the report folder. */
  file: string;
  /** One line for --help. */
  about: string;
  render(report: RunReport): string;
}

export const REPORT_FORMATS: readonly ReportFormat[] = [
  { name: 'json', file: 'results.json', about: 'the whole results model, with a replay command per failure', render: renderJson },
  { name: 'junit', file: 'junit.xml', about: 'JUnit XML, for CI test tabs', render: renderJunit },
  { name: 'html', file: 'report.html', about: 'one self-contained page, with the checks × operations grid', render: renderHtml },
  { name: 'ctrf', file: 'ctrf.json', about: 'CTRF, the Common Test Report Format (ctrf.io)', render: renderCtrf },
];

/** What a run writes when no --reporter is given. */
export const DEFAULT_REPORTERS: readonly string[] = ['json', 'junit', 'html'];

/** Why a list of names is refused (the first unknown one, the nearest known name, the known ones), or undefined. */
export function unknownReporter(names: readonly string[]): string | undefined {
  const known = REPORT_FORMATS.map((f) => f.name);
  const name = names.find((n) => !known.includes(n));
  return name === undefined ? undefined : `unknown reporter '${name}'${didYouMean(name, known, (c) => `'${c}'`)} (known: ${known.join(', ')})`;
}

/** The formats named, in the registry's order; an unknown name is refused (the CLI says which, with the nearest). */
export function reportFormats(names: readonly string[] = DEFAULT_REPORTERS): ReportFormat[] {
  const unknown = names.filter((n) => !REPORT_FORMATS.some((f) => f.name === n));
  if (unknown.length) throw new RangeError(`unknown reporter '${unknown[0]}'; known: ${REPORT_FORMATS.map((f) => f.name).join(', ')}`);
  return REPORT_FORMATS.filter((f) => names.includes(f.name));
}
