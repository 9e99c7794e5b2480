// Create an Application Key, explored (--explore N): values drawn with fast-check beside the
// fixed probes of create.name.verbatim, create.rate-limit.echo and create.keys.distinct, for
// the bugs that live in the values a short list never sends (a name stored in another Unicode
// form, a rate limit kept in 32 bits, a client_id derived from the name). Everything is drawn
// from the run's seed and a fixed key per check, so `--seed` replays a run value for value.
//
// How a value is judged: all drawn values are sent at once (the HTTP client bounds what is in
// flight) and each answer is judged and kept by value. When one disagrees, fast-check shrinks
// it: fc.check with the same seed and number of runs meets the same values first (their
// answers are kept, nothing is sent again), then tries smaller ones, each a new create, at most
// SHRINK_BUDGET of them; past that every untried value counts as agreeing, so fast-check keeps
// the smallest disagreement it confirmed. The failure shows that value, what was expected and
// what came back, and the seed.
//
// Loaded by the checks when they explore (a dynamic import): the check catalogue (--list)
// never loads fast-check.
import fc from 'fast-check';
import { type CheckContext, expectErrorBody, fail, hash32 } from '../../lib/runner/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { CheckFailure, shown } from '../../lib/evidence/index.js';
import { keyData, NAME_MAX, postApplicationKey, validKeyBody, VALIDATION } from './application-key.js';

/**
 * The share of --explore that key creation takes. Every drawn value is a create, and most
 * creates make a key, so the share stays modest: three fifths of it in names (about half the
 * names drawn are in a form NFC rewrites: with 12, a target that normalises names escapes about
 * one seed in 2,000; with 8 it escaped one in 100), an eighth in rate limits (the 8 edges of
 * RATE_LIMIT_EDGES, where narrow storage breaks, are sent besides), and one group of GROUP_SIZE
 * keys with one name per 24. At the default (20): 12 names, 3 + 8 rate limits and 3 keys with
 * one name, 26 creates; at
 * most SHRINK_BUDGET more per check when a value disagrees. Undefined when exploration is off.
 */
export function explorationShare(explore: number | undefined): { names: number; rateLimits: number; groups: number; bodies: number } | undefined {
  if (!explore || explore <= 0) return undefined;
  return { names: Math.ceil((explore * 3) / 5), rateLimits: Math.ceil(explore / 8), groups: Math.ceil(explore / 24), bodies: Math.ceil(explore / 4) };
}

/** Keys created at once with one name and one reserved_rate_limit (create.keys.distinct). */
export const GROUP_SIZE = 3;

/** The most creates shrinking one disagreement may send. */
export const SHRINK_BUDGET = 20;

/** The fast-check seed of a check's draws: the run's seed and the check's fixed key. */
export function drawSeed(runSeed: number, key: string): number {
  return hash32(`${runSeed}:explore:${key}`) | 0;
}

// --- What is drawn ----------------------------------------------------------------------

/** One code point of [min, max] (none of them a surrogate: the ranges below avoid them). */
const cp = (min: number, max: number): fc.Arbitrary<string> => fc.integer({ min, max }).map((n) => String.fromCodePoint(n));
const run = (a: fc.Arbitrary<string>, max = 4): fc.Arbitrary<string> => fc.array(a, { minLength: 1, maxLength: max }).map((xs) => xs.join(''));

/**
 * Text whose Unicode forms differ: precomposed and decomposed letters, marks out of canonical
 * order, singletons NFC itself rewrites (Ångström and Ohm signs, CJK compatibility ideographs),
 * Hangul syllables and their jamo, kana with a combining voiced mark, and compatibility
 * characters NFKC rewrites (ligatures, circled and full-width letters, ½, ², ㎏).
 */
const COMPOSABLE = [
  'é',
  'e\u0301',
  'Å',
  'A\u030a',
  '\u212b',
  '\u2126',
  'ñ',
  'n\u0303',
  'ệ',
  'e\u0323\u0302',
  'e\u0302\u0323',
  'ǖ',
  'u\u0308\u0304',
  'ḱ',
  '\u0958',
  'ǅ',
  'Ǆ',
  'ĳ',
  'ﬁ',
  '①',
  'Ａ',
  '½',
  'x²',
  'ℌ',
  '㎏',
  'ﾊﾟ',
  '가',
  '\u1100\u1161',
  '한국어',
  '\u1112\u1161\u11ab',
  'が',
  'か\u3099',
  '\uf900',
  'Café',
  'Cafe\u0301',
];
/** Zero-width and format characters: spaces, joiners, the BOM, direction marks, overrides and isolates. */
const INVISIBLE = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\ufeff',
  '\u2060',
  '\u00ad',
  '\u034f',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const RTL = ['שָׁלוֹם', 'עברית', 'مَرْحَبًا', 'العربية', '\u202eabc\u202c', 'abc\u200fשלום', '\ufdfa', '\ufefb'];
const EMOJI = ['👨‍👩‍👧‍👦', '👍🏽', '🇫🇷', '🏳️‍🌈', '❤️', '1️⃣', '🧑🏿‍💻'];
const SPACES = [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2003', '\u3000', '\u2028', '\u2029', '\u0085'];
const MARKUP = ['<b>', '</b>', '&amp;', '&lt;', '"', "'", '\\', '<b>&amp;"\'</b>', '<script>', '${x}', '%s'];

/** Text a normalising target changes: COMPOSABLE, or a base letter and combining marks (U+0300..U+036F), which NFC may compose into one. */
const accented: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...COMPOSABLE) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...'aeiounycAEIOUNC'), fc.array(cp(0x300, 0x36f), { minLength: 1, maxLength: 4 })).map(([b, m]) => b + m.join('')),
  },
);

/** A piece of a name; fast-check shrinks a piece within its kind, printable ASCII first. */
const piece: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 6 }) },
  { weight: 6, arbitrary: accented },
  { weight: 1, arbitrary: fc.constantFrom(...MARKUP) },
  { weight: 2, arbitrary: fc.constantFrom(...INVISIBLE) },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...RTL), run(cp(0x5d0, 0x5ea)), run(cp(0x620, 0x64a))) },
  // CJK ideographs, Hangul syllables, kana (with the combining voiced marks), CJK compatibility ideographs.
  { weight: 2, arbitrary: fc.oneof(run(cp(0x4e00, 0x9fff)), run(cp(0xac00, 0xd7a3)), run(cp(0x3041, 0x30ff)), cp(0xf900, 0xfad9)) },
  // Outside the BMP: emoji and their sequences, CJK extension B, mathematical letters (NFKC rewrites them), any plane.
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...EMOJI), cp(0x1f300, 0x1faff), cp(0x20000, 0x2a6df), cp(0x1d400, 0x1d7ff), cp(0x10000, 0x10ffff)) },
  { weight: 1, arbitrary: fc.constantFrom(...SPACES) },
  // Any code point at all (never half of a surrogate pair). Not fc.string's 'binary' unit: its
  // shrinker maps all 1.1 million code points back to indexes once, about 0.7 s of CPU a run.
  { weight: 2, arbitrary: run(fc.oneof(cp(0, 0xd7ff), cp(0xe000, 0x10ffff))) },
);

/**
 * The form a name is sent in: as its pieces were drawn, or normalised. Mostly as drawn or NFD,
 * the forms a normalising target changes; shrinking goes toward "as drawn".
 */
const form = fc.oneof(
  { withCrossShrink: true },
  { weight: 3, arbitrary: fc.constant('as drawn' as const) },
  { weight: 4, arbitrary: fc.constant('NFD' as const) },
  { weight: 1, arbitrary: fc.constant('NFC' as const) },
  { weight: 1, arbitrary: fc.constant('NFKC' as const) },
);

/** Whitespace around a name, one time in four; shrinking drops it. */
const around = fc.oneof({ withCrossShrink: true }, { weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...SPACES) });

/** The first `max` code points of `s` (never a half of a pair). */
function cut(s: string, max: number): string {
  const points = [...s];
  return points.length <= max ? s : points.slice(0, max).join('');
}

/**
 * What fast-check draws for a name: the drawn text and the form it is sent in. nameOf makes the
 * name sent of it, with the run's tag; a draft does not depend on the run id, so a seed draws
 * the same drafts in every run.
 */
export interface NameDraft {
  lead: string;
  body: string;
  trail: string;
  form: 'as drawn' | 'NFD' | 'NFC' | 'NFKC';
}

/** Drafts of short, long and filling (a piece repeated up to 255) names, maybe with surrounding whitespace. */
export const nameDraftArb: fc.Arbitrary<NameDraft> = fc.record({
  lead: around,
  body: fc.oneof(
    { weight: 3, arbitrary: fc.array(piece, { minLength: 1, maxLength: 8 }).map((xs) => xs.join('')) },
    // Pieces around an accented one: most names carry text whose Unicode forms differ.
    {
      weight: 3,
      arbitrary: fc.tuple(fc.array(piece, { maxLength: 4 }), accented, fc.array(piece, { maxLength: 4 })).map(([a, x, b]) => [...a, x, ...b].join('')),
    },
    { weight: 1, arbitrary: fc.array(piece, { minLength: 9, maxLength: 120 }).map((xs) => xs.join('')) },
    { weight: 1, arbitrary: piece.map((p) => p.repeat(NAME_MAX)) },
  ),
  trail: around,
  form,
});

/**
 * What every drawn name carries: `conformance-<run id>-`, so that a create whose answer never
 * came (a run killed mid-flight) is still found by name and deleted (lib/runner/run-names.ts,
 * tracesTo). It is ASCII, the same in every normal form, and it goes after any leading
 * whitespace. The price: no drawn name is shorter than the tag and one drawn character (22 code
 * points for an 8-character run id); create.name.1-char sends the shortest name.
 */
export function runTag(runId: string): string {
  return `conformance-${runId}-`;
}

/**
 * The name sent for a draft: lead, tag, body, trail, in the draft's form, cut to 255 code points
 * as sent (a name of 255 precomposed letters is cut to 255 code points of its NFD form; the tag,
 * at its start, is never cut). Always 22 to 255 code points (for an 8-character run id), valid Unicode.
 */
export function nameOf(d: NameDraft, tag: string): string {
  const name = `${d.lead}${tag}${d.body}${d.trail}`;
  return cut(d.form === 'as drawn' ? name : name.normalize(d.form), NAME_MAX);
}

/**
 * Integers that break narrow storage and careless bounds: 0 and 1, both sides of 2^31 and 2^32,
 * the largest safe integer and past it (2^53 + 2, 2^63, 2^64: a 64-bit store wraps the last two),
 * and negatives. Sent whenever the check explores, smallest first.
 */
export const RATE_LIMIT_EDGES: readonly number[] = [
  0,
  1,
  -1,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 31,
  2 ** 32,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
  2 ** 63,
  2 ** 64,
];

/** Any safe integer (fast-check favours small ones now and then), or one around the 32-bit range. */
export const rateLimitArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 2, arbitrary: fc.maxSafeInteger() },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 32), max: 2 ** 32 }) },
);

/** One name and one reserved_rate_limit (or none), for GROUP_SIZE keys. */
export interface Group {
  name: NameDraft;
  limit?: number;
}

/** The limit is small (or absent) so a target that bounds it still creates the keys. */
export const groupArb: fc.Arbitrary<Group> = fc
  .tuple(nameDraftArb, fc.option(fc.nat({ max: 100 }), { nil: undefined }))
  .map(([name, limit]) => (limit === undefined ? { name } : { name, limit }));

/**
 * Bodies of shapes no fixed probe sends, each valid in its members but extreme in its form: an
 * extra member nested `n` deep (arrays or objects: a recursive parser runs out of stack), data
 * thousands of members wide, a long string or a number past every float in an extra member, the
 * name given twice, data given twice, JSON after a byte order mark, bytes after the JSON, a
 * `type` written with a \u escape, and whitespace padding. What a target does with each is open
 * (spec/contract/README.md#create.open-bodies): accepted or refused, never a 5xx.
 */
export const BODY_KINDS = [
  'deep-arrays',
  'deep-objects',
  'wide',
  'long-string',
  'huge-number',
  'name-twice',
  'data-twice',
  'bom',
  'trailing-bytes',
  'escaped-type',
  'padding',
] as const;
export interface BodyDraft {
  kind: (typeof BODY_KINDS)[number];
  /** How big: nesting depth, members, characters (fast-check shrinks it toward the smallest). */
  size: number;
  /** Which trailing bytes (trailing-bytes). */
  variant: number;
}

export const bodyDraftArb: fc.Arbitrary<BodyDraft> = fc.record({
  kind: fc.constantFrom(...BODY_KINDS),
  size: fc.integer({ min: 1, max: 100 }),
  variant: fc.nat({ max: 4 }),
});

const TRAILING = [' x', '{}', '\u0000', ' // comment', ','];

/** One body of each kind at its largest (nested 10,000 deep, 3,000 members), sent whenever the check explores. */
export const BODY_EDGES: readonly BodyDraft[] = BODY_KINDS.map((kind, i) => ({ kind, size: 100, variant: i % TRAILING.length }));

/** The body text of a draft, with `name` (carrying the run's tag) as the key's name; `names`: the names a 2xx may echo. */
export function bodyOf(d: BodyDraft, name: string): { text: string; what: string; names: string[] } {
  const head = `"type":"application_key","name":${JSON.stringify(name)}`;
  const valid = `{"data":{${head}}}`;
  const n = d.size;
  switch (d.kind) {
    case 'deep-arrays':
      return {
        text: `{"data":{${head},"extra":${'['.repeat(n * 100)}${']'.repeat(n * 100)}}}`,
        what: `an extra member of arrays nested ${n * 100} deep`,
        names: [name],
      };
    case 'deep-objects':
      return {
        text: `{"data":{${head},"extra":${'{"a":'.repeat(n * 100)}1${'}'.repeat(n * 100)}}}`,
        what: `an extra member of objects nested ${n * 100} deep`,
        names: [name],
      };
    case 'wide':
      return {
        text: `{"data":{${head}${Array.from({ length: n * 30 }, (_, i) => `,"x${i}":${i}`).join('')}}}`,
        what: `data with ${n * 30} extra members`,
        names: [name],
      };
    case 'long-string':
      return { text: `{"data":{${head},"extra":"${'x'.repeat(n * 1000)}"}}`, what: `an extra member of ${n * 1000} characters`, names: [name] };
    case 'huge-number':
      return { text: `{"data":{${head},"extra":1e${n * 1000}}}`, what: `an extra member 1e${n * 1000} (past every float)`, names: [name] };
    case 'name-twice':
      return {
        text: `{"data":{"type":"application_key","name":${JSON.stringify(`${name}-a`)},"name":${JSON.stringify(`${name}-b`)}}}`,
        what: 'the name given twice',
        names: [`${name}-a`, `${name}-b`],
      };
    case 'data-twice':
      return {
        text: `{"data":{${head}},"data":{"type":"application_key","name":${JSON.stringify(`${name}-b`)}}}`,
        what: 'data given twice',
        names: [name, `${name}-b`],
      };
    case 'bom':
      return { text: `\ufeff${valid}`, what: 'JSON after a byte order mark', names: [name] };
    case 'trailing-bytes':
      return {
        text: `${valid}${TRAILING[d.variant % TRAILING.length]}`,
        what: `bytes after the JSON (${JSON.stringify(TRAILING[d.variant % TRAILING.length])})`,
        names: [name],
      };
    case 'escaped-type':
      return {
        text: `{"data":{"type":"application\\u005fkey","name":${JSON.stringify(name)}}}`,
        what: 'type written with a \\u escape (application\\u005fkey)',
        names: [name],
      };
    case 'padding':
      return {
        text: `${' \n\t\r'.repeat(n * 250)}${valid}${' '.repeat(n * 250)}`,
        what: `JSON padded with ${n * 2000} characters of whitespace`,
        names: [name],
      };
  }
}

/**
 * create.request.open-shapes, for a drawn body: never a 5xx; a refusal as invalid (400, 409, 422)
 * with the Error shape (another 4xx is an undocumented error, held to the shape at SHOULD
 * elsewhere); a 2xx that echoes a name echoes one of the names sent.
 */
export function judgeBody(what: string, names: readonly string[], res: HttpResponse): Verdict {
  if (res.status >= 400 && res.status < 500 && ![...VALIDATION, 409].includes(res.status)) return agree(`refused (${res.status})`, res);
  if (!is2xx(res))
    return refusal(res, [...VALIDATION, 409], `Create an Application Key (${what})`, 'a 2xx (accepted) or a 4xx with the Error shape (refused), never a 5xx');
  const echoed = keyData(res)?.name;
  if (echoed === undefined || names.includes(echoed as string)) return agree('accepted', res, true);
  return {
    agrees: false,
    message: `Create an Application Key (${what}): data.name is none of the names sent`,
    expected: `data.name ${names.map((x) => escaped(x)).join(' or ')}`,
    actual: `data.name ${shown(echoed)}`,
    res,
  };
}

// --- Member names in another letter case ----------------------------------------------------

/**
 * The members a create body must carry, each in lower case as the contract names them
 * (spec/contract/README.md#application-key). JSON member names are case-sensitive strings (RFC
 * 8259), so `NAME` is not `name`: a body that holds one only in another case lacks it.
 */
export const REQUIRED_MEMBERS = ['data', 'name', 'type'] as const;
export type RequiredMember = (typeof REQUIRED_MEMBERS)[number];

/**
 * How one required member is spelled: `mask` 0 is the contract's spelling; any other sets letter
 * i in upper case where bit i is set (1: `Name`, 15: `NAME`). `alsoExact`: the contract's
 * spelling is sent as well, first (which of the two a target takes is not judged: undefined).
 */
export interface Spelling {
  mask: number;
  alsoExact: boolean;
}
export type MemberCaseDraft = Record<RequiredMember, Spelling>;

/** The member's name with the letters of `mask` in upper case. */
export function spelled(member: string, mask: number): string {
  return [...member].map((c, i) => (mask & (1 << i) ? c.toUpperCase() : c)).join('');
}

const spellingArb: fc.Arbitrary<Spelling> = fc.record({ mask: fc.integer({ min: 0, max: 15 }), alsoExact: fc.boolean() });

/** Drafts with at least one required member in another case (shrinking goes toward `Name`, `Type`, `Data`, alone). */
export const memberCaseDraftArb: fc.Arbitrary<MemberCaseDraft> = fc
  .record({ data: spellingArb, name: spellingArb, type: spellingArb })
  .filter((d) => REQUIRED_MEMBERS.some((m) => d[m].mask !== 0));

const AS_NAMED: Spelling = { mask: 0, alsoExact: false };
const only = (mask: number): Spelling => ({ mask, alsoExact: false });

/**
 * Sent on every run (the check's fixed probes, fast-check's examples when it explores): name and
 * type only in upper case, name only as `Name`, type only as `Type`, data only as `DATA`, and all
 * three in other cases at once.
 */
export const MEMBER_CASE_EDGES: readonly MemberCaseDraft[] = [
  { data: AS_NAMED, name: only(15), type: only(15) },
  { data: AS_NAMED, name: only(1), type: AS_NAMED },
  { data: AS_NAMED, name: AS_NAMED, type: only(1) },
  { data: only(15), name: AS_NAMED, type: AS_NAMED },
  { data: only(15), name: only(15), type: only(1) },
];

/** Whether every required member is there as the contract spells it: the body is valid (its extra members left open). */
export function membersPresent(d: MemberCaseDraft): boolean {
  return REQUIRED_MEMBERS.every((m) => d[m].mask === 0 || d[m].alsoExact);
}

/**
 * A member and its value as a draft spells it: the contract's spelling first when it is also
 * sent; the copy under another case holds `other` (a name of its own, so an echo tells which
 * one a target took).
 */
function member(s: Spelling, key: RequiredMember, value: unknown, other: unknown): Array<[string, unknown]> {
  if (s.mask === 0) return [[key, value]];
  return s.alsoExact
    ? [
        [key, value],
        [spelled(key, s.mask), other],
      ]
    : [[spelled(key, s.mask), value]];
}

/** The body of a draft, with `name` (carrying the run's tag) as the key's name; `names`: the names a 2xx may echo. */
export function memberCaseBodyOf(d: MemberCaseDraft, name: string): { json: unknown; what: string; names: string[] } {
  const inner = (n: string): Record<string, unknown> => Object.fromEntries([...member(d.type, 'type', TYPE, TYPE), ...member(d.name, 'name', n, `${n}-other`)]);
  const json = Object.fromEntries(member(d.data, 'data', inner(name), inner(`${name}-data`)));
  const names = [name, `${name}-other`, `${name}-data`, `${name}-data-other`];
  return { json, what: describeMemberCase(d), names };
}

/** "name only as \"NAME\", type only as \"Type\"": how the report shows a draft. */
export function describeMemberCase(d: MemberCaseDraft): string {
  const parts = REQUIRED_MEMBERS.filter((m) => d[m].mask !== 0).map(
    (m) => `${m} ${d[m].alsoExact ? `and ${JSON.stringify(spelled(m, d[m].mask))}` : `only as ${JSON.stringify(spelled(m, d[m].mask))}`}`,
  );
  return `a body with ${parts.join(', ')}`;
}

/**
 * create.reject.member-case, for one body: a required member present only in another case is
 * missing, so the body is refused as create.invalid-bodies says (400 or 422, the Error shape).
 * A body whose required members are all there as named (the other spellings extra members) is
 * open (create.open-bodies): accepted or refused, never a 5xx; which copy a 2xx took is not judged.
 */
export function judgeMemberCase(d: MemberCaseDraft, name: string, res: HttpResponse): Verdict {
  const { what, names } = memberCaseBodyOf(d, name);
  if (membersPresent(d)) return judgeBody(what, names, res);
  if (!is2xx(res)) return refusal(res, VALIDATION, `Create an Application Key (${what})`, 'a refusal (400 or 422) with the Error shape');
  const missing = REQUIRED_MEMBERS.filter((m) => d[m].mask !== 0 && !d[m].alsoExact);
  return {
    agrees: false,
    message: `Create an Application Key (${what}) was accepted, though ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing (JSON member names are case-sensitive)`,
    expected: 'a refusal (400 or 422) with the Error shape, as for a body without them',
    actual: `status ${res.status}`,
    res,
  };
}

const TYPE = 'application_key';

// --- How a value is shown -----------------------------------------------------------------

/** A string as JSON, every character outside printable ASCII as a \u escape: invisible ones show. */
export function escaped(s: string): string {
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

function measure(s: string): string {
  return `${count([...s].length, 'code point')}, ${count(s.length, 'UTF-16 unit')}, ${count(Buffer.byteLength(s), 'UTF-8 byte')}`;
}

function clip(s: string, max = 240): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;
}

/** An integer, with the power of two it is next to (2^31, 2^53−1) when it is one. */
export function describeInt(n: number): string {
  const a = Math.abs(n);
  for (let k = 8; k <= 53; k++) {
    const sign = n < 0 ? '-' : '';
    if (a === 2 ** k) return `${n} (${sign}2^${k})`;
    if (a === 2 ** k - 1) return `${n} (${sign}(2^${k}-1))`;
    if (a === 2 ** k + 1) return `${n} (${sign}(2^${k}+1))`;
  }
  return String(n);
}

/** What a changed name is, when it is a known rewriting of the name sent. */
function rewriting(sent: string, echoed: string): string {
  for (const form of ['NFC', 'NFD', 'NFKC', 'NFKD'] as const) if (echoed === sent.normalize(form)) return ` (the name sent, normalised to ${form})`;
  if (echoed === sent.trim()) return ' (the name sent, trimmed)';
  return '';
}

// --- How an answer is judged ----------------------------------------------------------------

/**
 * What an answer says about the rule: it agrees (`judged` when it exercised the rule: a name
 * or a rate limit echoed, keys compared; not for a refusal or an absent member), or it does not.
 */
export type Verdict =
  { agrees: true; how: string; judged: boolean; res?: HttpResponse } | { agrees: false; message: string; expected: string; actual: string; res?: HttpResponse };

const agree = (how: string, res?: HttpResponse, judged = false): Verdict => ({ agrees: true, how, judged, res });

const is2xx = (res: HttpResponse): boolean => res.status >= 200 && res.status < 300;

/** Any answer but a 2xx: a refusal with one of `statuses` and the Error shape, or a disagreement. */
function refusal(res: HttpResponse, statuses: readonly number[], what: string, wanted: string): Verdict {
  if (statuses.includes(res.status)) {
    try {
      expectErrorBody(res, what);
      return agree(`refused (${res.status})`, res);
    } catch (e) {
      if (e instanceof CheckFailure) return { agrees: false, message: e.message, expected: e.expected, actual: e.actual, res };
      throw e;
    }
  }
  const server = res.status >= 500 ? ' (a server error)' : '';
  return { agrees: false, message: `${what}: status ${res.status}${server}`, expected: wanted, actual: `status ${res.status}`, res };
}

/** create.name.verbatim: a 2xx echoes the name byte for byte; a refusal is 400 or 422 with the Error shape. */
export function judgeName(name: string, res: HttpResponse): Verdict {
  if (!is2xx(res))
    return refusal(
      res,
      VALIDATION,
      `Create an Application Key with the name ${clip(escaped(name))}`,
      'a 2xx echoing the name byte for byte, or a refusal (400 or 422) with the Error shape',
    );
  const echoed = keyData(res)?.name;
  if (echoed === name) return agree('accepted and echoed byte for byte', res, true);
  return {
    agrees: false,
    message: 'data.name is not the name sent, byte for byte',
    expected: `data.name ${escaped(name)} (${measure(name)}), as sent`,
    actual: typeof echoed === 'string' ? `data.name ${escaped(echoed)} (${measure(echoed)})${rewriting(name, echoed)}` : `data.name ${shown(echoed)}`,
    res,
  };
}

/** create.rate-limit.echo: a 2xx carrying the member carries the integer sent; a refusal is 400, 409 or 422 with the Error shape. */
export function judgeRateLimit(limit: number, res: HttpResponse): Verdict {
  if (!is2xx(res))
    return refusal(
      res,
      [...VALIDATION, 409],
      `Create an Application Key with reserved_rate_limit ${describeInt(limit)}`,
      'a 2xx (with the same integer when the answer carries reserved_rate_limit), or a refusal (400, 409 or 422) with the Error shape',
    );
  const data = keyData(res);
  if (!data) return agree('accepted, no data object (see create.response.schema)', res);
  if (!('reserved_rate_limit' in data)) return agree('accepted, reserved_rate_limit not in the answer', res);
  // Past 2^53 a double cannot tell 2^63 from 2^63 - 1 (a store that saturates): the integer the
  // answer wrote is compared digit for digit with the one sent (rateLimitBody writes it exactly).
  const digits = Number.isSafeInteger(limit) ? undefined : /"reserved_rate_limit"\s*:\s*(-?\d+)\s*[,}]/.exec(res.text)?.[1];
  if (data.reserved_rate_limit === limit && (digits === undefined || BigInt(digits) === BigInt(limit))) return agree('accepted and echoed', res, true);
  const got = digits ?? data.reserved_rate_limit;
  return {
    agrees: false,
    message: 'data.reserved_rate_limit is not the integer sent',
    expected: `data.reserved_rate_limit ${Number.isSafeInteger(limit) ? describeInt(limit) : BigInt(limit).toString()}, the integer sent`,
    actual: `data.reserved_rate_limit ${typeof got === 'number' ? describeInt(got) : typeof got === 'string' ? got : shown(got)}`,
    res,
  };
}

/** A name sent, as the report shows it: escaped, measured, and its form when it was normalised. */
export function describeName(d: NameDraft, tag: string): string {
  const name = nameOf(d, tag);
  return `the name ${escaped(name)} (${measure(name)}${d.form === 'as drawn' ? '' : `, in ${d.form}`})`;
}

/** A group as the report shows it. */
export function describeGroup(group: Group, tag: string, keys = GROUP_SIZE): string {
  return `${keys} keys with ${describeName(group.name, tag)} and ${group.limit === undefined ? 'no reserved_rate_limit' : `reserved_rate_limit ${describeInt(group.limit)}`}`;
}

/** create.keys.distinct: the keys of one group that were created have pairwise different id, client_id and client_secret. */
export function judgeGroup(group: Group, tag: string, answers: readonly HttpResponse[]): Verdict {
  const statuses = group.limit === undefined ? VALIDATION : [...VALIDATION, 409];
  const made: Array<{ n: number; res: HttpResponse; data: Record<string, unknown> }> = [];
  for (const [i, res] of answers.entries()) {
    if (!is2xx(res)) {
      const v = refusal(
        res,
        statuses,
        `Create an Application Key (key ${i + 1} of ${answers.length} with one name)`,
        'a 2xx, or a refusal (400 or 422, 409 for a rate limit) with the Error shape',
      );
      if (!v.agrees) return v;
      continue;
    }
    const data = keyData(res);
    if (data) made.push({ n: i + 1, res, data: data as Record<string, unknown> });
  }
  if (made.length < 2) return agree(`with ${made.length} of ${answers.length} keys created (not testable)`);
  for (const field of ['id', 'client_id', 'client_secret'] as const) {
    const seen = new Map<string, number>();
    for (const { n, res, data } of made) {
      if (data[field] === undefined) continue;
      const key = JSON.stringify(data[field]);
      const first = seen.get(key);
      // The value is never quoted: a client_secret must not reach a report.
      if (first !== undefined) {
        return {
          agrees: false,
          message: `two keys created with one name share their ${field}`,
          expected: `${made.length} different values of data.${field}, for ${describeGroup(group, tag, answers.length)}`,
          actual: `keys ${first} and ${n} of the ${answers.length} have the same ${field}`,
          res,
        };
      }
      seen.set(key, n);
    }
  }
  return agree(`with ${made.length} keys, pairwise distinct`, undefined, true);
}

/** Waits for every promise, then throws the first rejection: nothing a check sent is left in flight. */
export async function settled<T>(ps: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const all = await Promise.allSettled(ps);
  const failed = all.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return all.map((r) => (r as PromiseFulfilledResult<T>).value);
}

// --- Drawing, sending, shrinking -------------------------------------------------------------

export interface Plan<T> {
  /** Fixed key mixed with the run's seed (the check's id). */
  key: string;
  arb: fc.Arbitrary<T>;
  /** How many values are drawn. */
  runs: number;
  /** Values always sent before the drawn ones (fast-check's examples: shrunk like them). */
  edges?: readonly T[];
  /** What the values are called in the summary ("names", "reserved_rate_limit values"). */
  noun: string;
  /** What was sent, as the report shows it ("the name \"A\\u030a\" (2 code points, …)"). */
  show(v: T): string;
  /** Creates one probe sends. */
  cost: number;
  /** Sends the value and judges the answer. */
  probe(v: T): Promise<Verdict>;
}

export interface Found<T> {
  value: T;
  verdict: Extract<Verdict, { agrees: false }>;
  /** The first drawn value that disagreed, which shrinking started from. */
  first: T;
  shrinks: number;
  /** Creates shrinking sent. */
  spent: number;
}

/** The values of a plan: its edges, then what fast-check draws from the seed. */
export function drawValues<T>(plan: Pick<Plan<T>, 'arb' | 'runs' | 'edges'>, seed: number): T[] {
  return [...(plan.edges ?? []), ...(plan.runs > 0 ? fc.sample(plan.arb, { seed, numRuns: plan.runs }) : [])];
}

const idOf = (v: unknown): string => JSON.stringify(v) ?? 'undefined';

export class Exploration<T> {
  readonly plan: Plan<T>;
  readonly runSeed: number;
  readonly explore: number;
  readonly seed: number;
  readonly values: T[];
  readonly #memo = new Map<string, Verdict>();
  #spent = 0;
  #stopped?: string;

  constructor(ctx: CheckContext, plan: Plan<T>) {
    this.plan = plan;
    this.runSeed = ctx.run.settings.seed;
    this.explore = ctx.run.settings.explore ?? 0;
    this.seed = drawSeed(this.runSeed, plan.key);
    this.values = drawValues(plan, this.seed);
  }

  /** Sends every value at once (each distinct value once) and keeps the verdicts. */
  async send(): Promise<void> {
    const distinct = [...new Map(this.values.map((v) => [idOf(v), v])).entries()];
    const verdicts = await settled(distinct.map(([, v]) => this.plan.probe(v)));
    distinct.forEach(([id], i) => this.#memo.set(id, verdicts[i]!));
  }

  verdictOf(v: T): Verdict | undefined {
    return this.#memo.get(idOf(v));
  }

  /** A digest of the values drawn: two runs with one seed show the same. */
  digest(): string {
    return hash32(this.values.map(idOf).join('\u0000')).toString(16).padStart(8, '0');
  }

  /** "names: 12 drawn (seed …, draw …): 10 accepted and echoed byte for byte, 2 refused (400)". */
  summary(): string {
    const counts = new Map<string, number>();
    for (const v of this.values) {
      const verdict = this.verdictOf(v);
      const how = !verdict ? 'not sent' : verdict.agrees ? verdict.how : 'disagreed';
      counts.set(how, (counts.get(how) ?? 0) + 1);
    }
    const edges = this.plan.edges?.length ? `${this.plan.edges.length} edge values and ` : '';
    return `${this.plan.noun}: ${edges}${this.plan.runs} drawn (seed ${this.runSeed}, draw ${this.digest()}): ${[...counts].map(([how, n]) => `${n} ${how}`).join(', ')}`;
  }

  /** Whether some value sent exercised the rule (and agreed): a name or rate limit echoed, keys compared. */
  judgedAny(): boolean {
    return this.values.some((v) => {
      const verdict = this.verdictOf(v);
      return verdict?.agrees === true && verdict.judged;
    });
  }

  /** The smallest disagreement fast-check finds from the first one sent, or undefined when all agree. */
  async smallest(): Promise<Found<T> | undefined> {
    const failing = this.values.filter((v) => this.verdictOf(v)?.agrees === false);
    if (failing.length === 0) return undefined;
    const { plan } = this;
    const property = fc.asyncProperty(plan.arb, async (v: T): Promise<boolean> => {
      const known = this.verdictOf(v);
      if (known) return known.agrees;
      // Out of budget (or the target stopped answering): untried values count as agreeing.
      if (this.#stopped !== undefined || this.#spent + plan.cost > SHRINK_BUDGET) return true;
      this.#spent += plan.cost;
      try {
        const verdict = await plan.probe(v);
        this.#memo.set(idOf(v), verdict);
        return verdict.agrees;
      } catch (e) {
        this.#stopped = (e as Error)?.message ?? String(e);
        return true;
      }
    });
    const edges = plan.edges ?? [];
    const details = await fc.check(property, { seed: this.seed, numRuns: edges.length + plan.runs, examples: edges.map((v) => [v] as [T]) });
    const shrunk = details.failed && details.counterexample ? details.counterexample[0] : failing[0]!;
    const verdict = this.verdictOf(shrunk);
    const value = verdict?.agrees === false ? shrunk : failing[0]!;
    return {
      value,
      verdict: this.verdictOf(value) as Found<T>['verdict'],
      first: failing[0]!,
      shrinks: details.failed ? details.numShrinks : 0,
      spent: this.#spent,
    };
  }

  /** Fails the check with the smallest disagreement: the value, what was expected and came back, the seed. */
  report(found: Found<T>): never {
    const { plan } = this;
    const from =
      idOf(found.first) === idOf(found.value)
        ? 'the first drawn value that disagrees; shrinking found none smaller'
        : `the smallest drawn value that disagrees, shrunk in ${found.shrinks} steps from ${clip(plan.show(found.first))}`;
    const spent = `${count(found.spent, 'more create')} sent shrinking${found.spent + plan.cost > SHRINK_BUDGET ? ` (at most ${SHRINK_BUDGET})` : ''}`;
    const stopped = this.#stopped !== undefined ? `; shrinking stopped: ${this.#stopped}` : '';
    fail(
      `${found.verdict.message}, for ${plan.show(found.value)} (${from}; ${spent}${stopped}; drawn with seed ${this.runSeed}: replay with --seed ${this.runSeed} --explore ${this.explore})`,
      {
        expected: found.verdict.expected,
        actual: found.verdict.actual,
        ...(found.verdict.res ? { res: found.verdict.res } : {}),
      },
    );
  }

  /** Notes the summary, or fails with the smallest disagreement. */
  async judge(ctx: CheckContext): Promise<void> {
    const found = await this.smallest();
    if (found) this.report(found);
    ctx.note(this.summary());
  }
}

// --- The three plans ---------------------------------------------------------------------

export function nameExploration(ctx: CheckContext, runs: number): Exploration<NameDraft> {
  const tag = runTag(ctx.run.settings.runId);
  return new Exploration(ctx, {
    key: 'create.name.verbatim',
    arb: nameDraftArb,
    runs,
    noun: 'names',
    show: (d) => describeName(d, tag),
    cost: 1,
    probe: async (d) => {
      const name = nameOf(d, tag);
      return judgeName(name, await postApplicationKey(ctx, { json: validKeyBody(name) }));
    },
  });
}

/**
 * A valid body with `limit` as reserved_rate_limit, written exactly: past 2^53 JSON.stringify
 * writes 2^63 as 9223372036854776000 (2^63 + 192 to a parser that reads integers exactly), so
 * the integer's own digits are put in.
 */
export function rateLimitBody(name: string, limit: number): { json: unknown } | { body: string; contentType: string } {
  if (Number.isSafeInteger(limit)) return { json: validKeyBody(name, { reserved_rate_limit: limit }) };
  return {
    body: JSON.stringify(validKeyBody(name, { reserved_rate_limit: 0 })).replace(
      '"reserved_rate_limit":0',
      `"reserved_rate_limit":${BigInt(limit).toString()}`,
    ),
    contentType: 'application/json',
  };
}

export function rateLimitExploration(ctx: CheckContext, runs: number): Exploration<number> {
  return new Exploration(ctx, {
    key: 'create.rate-limit.echo',
    arb: rateLimitArb,
    runs,
    edges: RATE_LIMIT_EDGES,
    noun: 'reserved_rate_limit values',
    show: (limit) => `reserved_rate_limit ${describeInt(limit)}`,
    cost: 1,
    probe: async (limit) => judgeRateLimit(limit, await postApplicationKey(ctx, rateLimitBody(ctx.name(), limit))),
  });
}

export function bodyExploration(ctx: CheckContext, runs: number): Exploration<BodyDraft> {
  return new Exploration(ctx, {
    key: 'create.request.open-shapes',
    arb: bodyDraftArb,
    runs,
    edges: BODY_EDGES,
    noun: 'bodies of extreme shapes',
    show: (d) => bodyOf(d, '<name>').what,
    cost: 1,
    probe: async (d) => {
      const { text, what, names } = bodyOf(d, ctx.name());
      return judgeBody(what, names, await postApplicationKey(ctx, { body: text, contentType: 'application/json' }));
    },
  });
}

/** The bodies with member names in another case that one exploring run draws, beside MEMBER_CASE_EDGES (none without --explore). */
export function memberCaseRuns(explore: number | undefined): number {
  return explore && explore > 0 ? Math.ceil(explore / 5) : 0;
}

/**
 * create.reject.member-case: MEMBER_CASE_EDGES on every run, and `runs` drafts more. `sent` is
 * told every body sent and its answer, for the look-up of what a refusal left behind.
 */
export function memberCaseExploration(
  ctx: CheckContext,
  runs: number,
  sent: (shape: { what: string; send: { json: unknown } }, res: HttpResponse) => void,
): Exploration<MemberCaseDraft> {
  return new Exploration(ctx, {
    key: 'create.reject.member-case',
    arb: memberCaseDraftArb,
    runs,
    edges: MEMBER_CASE_EDGES,
    noun: 'bodies with member names in another case',
    show: describeMemberCase,
    cost: 1,
    probe: async (d) => {
      const name = ctx.name();
      const { json, what } = memberCaseBodyOf(d, name);
      const res = await postApplicationKey(ctx, { json });
      sent({ what, send: { json } }, res);
      return judgeMemberCase(d, name, res);
    },
  });
}

export function groupExploration(ctx: CheckContext, groups: number): Exploration<Group> {
  const tag = runTag(ctx.run.settings.runId);
  return new Exploration(ctx, {
    key: 'create.keys.distinct',
    arb: groupArb,
    runs: groups,
    noun: `groups of ${GROUP_SIZE} keys with one name and one reserved_rate_limit`,
    show: (g) => describeGroup(g, tag),
    cost: GROUP_SIZE,
    probe: async (g) => {
      const body = () => validKeyBody(nameOf(g.name, tag), g.limit === undefined ? {} : { reserved_rate_limit: g.limit });
      const answers = await settled(Array.from({ length: GROUP_SIZE }, () => postApplicationKey(ctx, { json: body() })));
      return judgeGroup(g, tag, answers);
    },
  });
}
