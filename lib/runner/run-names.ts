// Every name the suite creates can be traced to its run, so that a run's leftovers can be told
// from a user's data, and found by name when a run stopped before the target answered. ASCII
// names start with `conformance-<run id>-`; names whose characters are the point of a check
// (255 characters of the BMP outside ASCII, or outside the BMP) start with the run id written
// in such characters: § then one Greek letter per character (0→α … f→π), or 🧪 then one emoji.
// Only the 1-character name cannot carry it: the ledger knows it by id alone.

const GREEK = [...'αβγδεζηθικλμνξοπ'];
const EMOJI = [...'😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩'];

function spell(runId: string, alphabet: readonly string[]): string {
  return [...runId].map((c) => alphabet[(Number.parseInt(c, 16) || c.charCodeAt(0)) % 16]).join('');
}

/** The run id in BMP characters outside ASCII (2 bytes each in UTF-8). */
export function bmpTag(runId: string): string {
  return `§${spell(runId, GREEK)}`;
}

/** The run id in characters outside the BMP. */
export function astralTag(runId: string): string {
  return `🧪${spell(runId, EMOJI)}`;
}

/** Whether a name was made by the run `runId`. */
export function tracesTo(name: string, runId: string): boolean {
  return name.includes(`conformance-${runId}-`) || name.startsWith(bmpTag(runId)) || name.startsWith(astralTag(runId));
}
