// The report formats a run can write into its report folder, as data: what --reporter calls
// each, the file it writes, and a line for --help. Their renderers are in reporters/registry.ts,
// which the compiler holds to this list (one renderer per name). Light on purpose: --help
// reads it on every start.

export const REPORT_FORMATS = [
  { name: 'json', file: 'results.json', about: 'the whole results model, a replay command per failure' },
  { name: 'junit', file: 'junit.xml', about: 'JUnit XML, for CI test tabs' },
  { name: 'html', file: 'report.html', about: 'one page, with the checks × operations grid' },
  { name: 'ctrf', file: 'ctrf.json', about: 'CTRF, the Common Test Report Format (ctrf.io)' },
] as const;

export type FormatName = (typeof REPORT_FORMATS)[number]['name'];

/** What a run writes when no --reporter is given. */
export const DEFAULT_REPORTERS: readonly FormatName[] = ['json', 'junit', 'html'];

/** The formats for --help: `name (file): about`, one per line. */
export function describeFormats(indent: string): string {
  return REPORT_FORMATS.map((f) => `${indent}${f.name} (${f.file}): ${f.about}`).join('\n');
}
