// The parts of `conformance verify` that need no bundle: the version window and the comparison
// of a re-run with the bundle it repeats.
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../lib/runner/index.js';
import { checkBundle, versionWindow } from '../reporters/bundle-check.js';
import { differences, thisSuite } from '../cli/verify.js';

describe('the version window', () => {
  it.each([
    ['0.3.0', '0.3.0', 2, undefined],
    ['0.3.0', '0.3.2', 2, 'note'],
    ['0.2.9', '0.3.0', 2, 'note'],
    ['0.1.0', '0.3.0', 2, 'note'],
    ['0.0.9', '0.3.0', 2, 'invalid'],
    ['0.1.0', '0.3.0', 1, 'invalid'],
    ['0.3.0', '0.3.0', 0, undefined],
    ['0.2.0', '0.3.0', 0, 'invalid'],
    ['0.3.1', '0.3.0', 2, 'unchecked'],
    ['0.4.0', '0.3.0', 2, 'unchecked'],
    ['1.0.0', '0.3.0', 2, 'unchecked'],
    ['0.9.0', '1.0.0', 2, 'invalid'],
    ['1.0.0', '2.1.0', 5, 'invalid'],
    ['not-a-version', '0.3.0', 2, 'invalid'],
  ] as const)('a bundle of %s, judged by %s with a window of %i: %s', (made, current, window, severity) => {
    expect(versionWindow(made, current, window)?.severity).toBe(severity);
  });
});

const result = (id: string, outcome: CheckResult['outcome'], operation?: string, level: CheckResult['level'] = 'MUST'): CheckResult =>
  ({ id, title: id, level, clause: '', clauseLink: '', area: 'lists', outcome, ...(operation ? { operation } : {}) }) as unknown as CheckResult;

describe('a re-run against the bundle', () => {
  it('lists every result whose outcome or level differs, or that is in one only, and nothing else', () => {
    const before = [
      result('a', 'pass'),
      result('b', 'pass', 'orders'),
      result('b', 'pass', 'accounts'),
      result('c', 'skip'),
      result('d', 'fail', undefined, 'SHOULD'),
    ];
    const after = [
      result('a', 'pass'),
      result('b', 'fail', 'orders'),
      result('b', 'pass', 'accounts'),
      result('d', 'fail', undefined, 'MUST'),
      result('e', 'pass'),
    ];
    expect(differences(before, after).map((d) => [d.key, d.before?.outcome ?? null, d.after?.outcome ?? null])).toEqual([
      ['b orders', 'pass', 'fail'],
      ['c', 'skip', null],
      ['d', 'fail', 'fail'],
      ['e', null, 'pass'],
    ]);
    expect(differences(before, before)).toEqual([]);
  });
});

it('a folder that is not a bundle cannot be checked: exit 2, said as such', () => {
  const c = checkBundle(new Map([['index.html', Buffer.from('<p>hi</p>')]]), thisSuite(2), { strict: false });
  expect(c.exit).toBe(2);
  expect(c.findings).toEqual([expect.objectContaining({ severity: 'unchecked', message: expect.stringMatching(/^not a certification bundle/) })]);
});
