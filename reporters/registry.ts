// The renderers of the report formats (reporters/formats.ts lists them as data): each a pure
// function of the results model. Adding a format is its renderer's file, its line in
// formats.ts and its line here; the compiler refuses a name without a renderer.
import { didYouMean } from '../lib/text/index.js';
import { renderCtrf } from './ctrf.js';
import { DEFAULT_REPORTERS, REPORT_FORMATS, type FormatName } from './formats.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import type { RunReport } from './model.js';

const RENDERERS: Record<FormatName, (report: RunReport) => string> = { json: renderJson, junit: renderJunit, html: renderHtml, ctrf: renderCtrf };

export interface ReportFormat {
  name: FormatName;
  file: string;
  render(report: RunReport): string;
}

/** Why a list of names is refused (the first unknown one, the nearest known name, the known ones), or undefined. */
export function unknownReporter(names: readonly string[]): string | undefined {
  const known: string[] = REPORT_FORMATS.map((f) => f.name);
  const name = names.find((n) => !known.includes(n));
  return name === undefined ? undefined : `unknown reporter '${name}'${didYouMean(name, known, (c) => `'${c}'`)} (known: ${known.join(', ')})`;
}

/** The formats named, in the order of REPORT_FORMATS (not of `names`); an unknown name is refused (the CLI says which, with the nearest). */
export function reportFormats(names: readonly string[] = DEFAULT_REPORTERS): ReportFormat[] {
  const refused = unknownReporter(names);
  if (refused) throw new RangeError(refused);
  return REPORT_FORMATS.filter((f) => names.includes(f.name)).map((f) => ({ name: f.name, file: f.file, render: RENDERERS[f.name] }));
}
