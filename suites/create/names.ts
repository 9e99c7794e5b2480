// Create an Application Key: the name's length (spec/contract/README.md#limits; counted in
// Unicode code points, not bytes: #create.name-valid).
import type { Faker } from '@faker-js/faker';
import { type WrittenCheck, type CheckContext, expectStatus, fail, astralTag, bmpTag } from '../../lib/runner/index.js';
import type { Clause } from '../../lib/contract/index.js';
import type { HttpResponse } from '../../lib/transport/index.js';
import { asciiName, astralName, codePoints, markupName, nonAsciiName, oneCharName } from '../../fixtures/names.js';
import { shown } from '../../lib/evidence/index.js';
import { keyBody, keyData, postApplicationKey, validKeyBody } from './application-key.js';
import type { Exploration, NameDraft } from './explore.js';
import { brokenRule, rejectionCheck } from './rejections.js';

const area = 'create-application-key';
const CLAUSE: Clause = { at: 'limits', detail: 'Name length of an application key' };

function describeName(name: string): string {
  return `a name of ${codePoints(name)} characters (${name.length} UTF-16 units, ${Buffer.byteLength(name)} UTF-8 bytes)`;
}

/**
 * Names drawn for create.name.verbatim when the run explores (--explore; explore.ts, loaded
 * only then): any plane, any Unicode form, invisible and right-to-left characters, markup.
 */
async function drawnNames(ctx: CheckContext): Promise<Exploration<NameDraft> | undefined> {
  if (!ctx.run.settings.explore) return undefined;
  const { explorationShare, nameExploration } = await import('./explore.js');
  return nameExploration(ctx, explorationShare(ctx.run.settings.explore)!.names);
}

/** A valid name: accepted with a 2xx and echoed byte for byte. */
function expectEchoed(res: HttpResponse, name: string): void {
  expectStatus(res, { range: '2xx' }, `Create an Application Key with ${describeName(name)}`);
  const echoed = keyData(res)?.name;
  if (echoed !== name) {
    fail('data.name is not the name sent, byte for byte', {
      expected: `${describeName(name)}: ${JSON.stringify(name)}`,
      actual: typeof echoed === 'string' ? `${describeName(echoed)}: ${JSON.stringify(echoed)}` : `data.name ${shown(echoed)}`,
      res,
    });
  }
}

/**
 * Every name of the family is accepted with a 2xx and comes back byte for byte. `explored`:
 * names drawn beside it, sent at the same time, and judged after the family (a drawn name may
 * also be refused with 400 or 422 and the Error shape).
 */
function accepts(
  id: string,
  title: string,
  make: (faker: Faker, prefix: string, runId: string) => string[],
  clause: Clause = CLAUSE,
  explored?: (ctx: CheckContext) => Promise<Exploration<NameDraft> | undefined>,
): WrittenCheck {
  return {
    id,
    area,
    clause,
    title,
    async run(ctx: CheckContext) {
      const names = make(ctx.faker, `${ctx.name()}-`, ctx.run.settings.runId);
      // Not even a tick of delay without exploration: the fixed names go out when they always did.
      const exploration = explored && ctx.run.settings.explore ? await explored(ctx) : undefined;
      // Both sets go out together; the check ends only once every create has its answer.
      const [fixed, drawn] = await Promise.allSettled([
        Promise.all(names.map(async (name) => ({ name, res: await postApplicationKey(ctx, { json: validKeyBody(name) }) }))),
        exploration?.send(),
      ]);
      if (fixed.status === 'rejected') throw fixed.reason;
      const sent = fixed.value;
      for (const { name, res } of sent) expectEchoed(res, name);
      if (drawn.status === 'rejected') throw drawn.reason;
      await exploration?.judge(ctx);
    },
  };
}

function rejects(id: string, title: string, make: (faker: Faker, prefix: string, runId: string) => string[]): WrittenCheck {
  return rejectionCheck(id, CLAUSE, title, (ctx) =>
    make(ctx.faker, `${ctx.name()}-`, ctx.run.settings.runId).map((name) => ({ send: { json: keyBody(name) }, what: describeName(name) })),
  );
}

export const nameChecks: WrittenCheck[] = [
  accepts('create.name.1-char', 'a name of 1 character is accepted and echoed exactly', (f) => [oneCharName(f)]),
  accepts('create.name.255-chars', 'a name of 255 ASCII characters is accepted and echoed exactly', (f, prefix) => [asciiName(f, prefix, 255)]),
  accepts('create.name.255-non-ascii', 'a name of 255 non-ASCII BMP characters (more than 255 bytes) is accepted and echoed exactly', (f, _prefix, runId) => [
    nonAsciiName(f, 255, bmpTag(runId)),
  ]),
  accepts('create.name.astral', 'a name of 255 characters outside the BMP (emoji, 510 UTF-16 units) is accepted and echoed exactly', (f, _prefix, runId) => [
    astralName(f, 255, astralTag(runId)),
  ]),
  // spec/contract/README.md#create.name-verbatim: the name comes back byte for byte. A target that
  // "sanitises" names (escapes HTML, trims whitespace) changes what a client stored.
  // With --explore, names drawn from every plane and Unicode form (NFC, NFD, NFKC), with
  // combining, zero-width and right-to-left characters, markup and surrounding whitespace too.
  {
    ...accepts(
      'create.name.verbatim',
      'names with & < > quotes and a backslash, and with surrounding spaces, are accepted and echoed byte for byte',
      (f, prefix) => markupName(f, prefix),
      { at: 'application-key', detail: 'name' },
      drawnNames,
    ),
    // Every name an observed create sent that breaks no rule, answered 2xx: echoed byte for byte.
    observe(seen) {
      const name = (seen.sent as { data?: { name?: unknown } } | undefined)?.data?.name;
      if (seen.operation !== 'create-application-key' || typeof name !== 'string' || brokenRule(seen) || seen.res.status < 200 || seen.res.status >= 300)
        return false;
      expectEchoed(seen.res, name);
      return true;
    },
  },
  rejects('create.name.empty.rejected', 'an empty name is rejected with 400 or 422 and the Error shape', () => ['']),
  // Near misses of 256: 255 characters and a trailing space (a target that trims before it
  // counts takes it), and 256 characters of two bytes each.
  rejects(
    'create.name.256-chars.rejected',
    'a name of 256 characters (ASCII, 255 and a trailing space, non-ASCII) is rejected with 400 or 422 and the Error shape',
    (f, prefix, runId) => [asciiName(f, prefix, 256), `${asciiName(f, prefix, 255)} `, nonAsciiName(f, 256, bmpTag(runId))],
  ),
];
