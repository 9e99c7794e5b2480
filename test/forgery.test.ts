// Forgeries of a certification bundle, and legitimate bundles, against `conformance verify`
// (reporters/bundle-check.ts checkBundle, in-process). One real certification run, in
// beforeAll: against a reference server that does not serve `jobs`, with `--absent jobs
// --empty catalog-rules`, signed. Every other bundle is that one changed in memory, either by
// someone without the key (the signature must break) or by a vendor who holds it and signs a
// consistent bundle again (`forge`). Each forgery says what gives it away.
import { generateKeyPairSync, sign as signBytes } from 'node:crypto';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleToJSON, toDSSEBundle } from '@sigstore/bundle';
import { dsse } from '@sigstore/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { openAttestation, PAYLOAD_TYPE, signingKey, verifyingKey, type SigningKey, type Statement } from '../reporters/attestation.js';
import { checkBundle, type BundleCheck, type BundleFolder } from '../reporters/bundle-check.js';
import { summarise } from '../reporters/model.js';
import { readBundle, thisSuite } from '../cli/verify.js';
import { cli, reseal, TOKEN, withServer } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'conformance-forgery-'));
const ed = generateKeyPairSync('ed25519');
const edPem = ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const edPub = ed.publicKey.export({ type: 'spki', format: 'pem' }) as string;
let made: BundleFolder;

beforeAll(async () => {
  writeFileSync(join(dir, 'ed.key'), edPem, { mode: 0o600 });
  await withServer({ behaviour: { absentPaths: ['/pcm/jobs'] } }, async (server) => {
    const r = await cli(
      [
        '--base-url',
        server.url,
        '--certify',
        join(dir, 'bundle'),
        '--signing-key',
        join(dir, 'ed.key'),
        '--absent',
        'jobs',
        '--empty',
        'catalog-rules',
        '--product',
        'Acme',
        '--product-version',
        '5.1',
        // A certification runs every MUST check: the store's page length ones change it (and restore it).
        '--change-settings',
      ],
      { env: { CONFORMANCE_TOKEN: TOKEN } },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
  made = readBundle(join(dir, 'bundle'));
}, 120_000);

type J = Record<string, any>;
interface Parts {
  results: J;
  certificate: J;
  config: J;
  statement: Statement;
}

/**
 * The bundle changed by `change`, made consistent again (summary and signed counts recomputed,
 * SHA256SUMS and the subjects rewritten) and signed with `key`: what a vendor holding the key can
 * make. `after` edits the statement once its subjects are set.
 */
function forge(change: (p: Parts) => void = () => {}, opts: { key?: SigningKey; after?: (s: Statement) => void } = {}): Map<string, Buffer> {
  const text = new Map([...made].filter(([n]) => n !== 'attestation.json').map(([n, b]) => [n, b.toString('utf8')]));
  const statement = openAttestation(made.get('attestation.json')!.toString('utf8')).statement as Statement;
  const p: Parts = {
    results: JSON.parse(text.get('results.json')!),
    certificate: JSON.parse(text.get('certificate.json')!),
    config: JSON.parse(text.get('config.json')!),
    statement,
  };
  change(p);
  p.results.summary = summarise(p.results.results);
  statement.predicate.counts = p.results.summary;
  text.set('results.json', `${JSON.stringify(p.results, null, 2)}\n`);
  text.set('certificate.json', `${JSON.stringify(p.certificate, null, 2)}\n`);
  text.set('config.json', `${JSON.stringify(p.config, null, 2)}\n`);
  const attestation = reseal(text, statement, opts.key ?? signingKey(edPem), opts.after);
  const out = new Map([...text].map(([n, c]) => [n, Buffer.from(c)]));
  out.set('attestation.json', Buffer.from(attestation));
  return out;
}

const verify = (files: ReadonlyMap<string, Buffer>, pub = edPub, suite = thisSuite(2)): BundleCheck =>
  checkBundle(files, suite, { key: verifyingKey(pub), strict: false });
/** The findings that make a bundle invalid, one line each, for a failing assertion's message. */
const invalid = (c: BundleCheck): string =>
  c.findings
    .filter((f) => f.severity === 'invalid')
    .map((f) => `${f.file ?? ''} ${f.field ?? ''}: ${f.message}`)
    .join('\n');
const mustResult = (p: Parts, id: string, operation?: string): J => p.results.results.find((r: J) => r.id === id && r.operation === operation)!;
/** A version on every file that names it. */
const relabel = (p: Parts, version: string): void => {
  p.results.tool.version = version;
  p.certificate.suite = `conformance ${version}`;
  p.statement.predicate.suite.version = version;
};
/** A MUST result taken out of the results and out of the signed plan. */
const dropMust = (p: Parts, id: string): void => {
  p.results.results = p.results.results.filter((r: J) => r.id !== id);
  p.statement.predicate.mustChecks = p.statement.predicate.mustChecks.filter((k) => k !== id);
};

describe('legitimate bundles verify', () => {
  it('a partial profile: an operation the server does not serve declared --absent, and a list declared --empty', () => {
    const c = verify(made);
    expect(c.exit, invalid(c)).toBe(0);
    expect(c.profile).toEqual({ name: 'partial', absent: ['jobs'], empty: ['catalog-rules'] });
    expect(c.facts).toContainEqual(['completeness', expect.stringMatching(/^\d+ planned MUST results present$/)]);
  });

  it('signed again with an ECDSA P-256 key', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const c = verify(
      forge(() => {}, { key: signingKey(ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string) }),
      ec.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    );
    expect(c.exit, invalid(c)).toBe(0);
    expect(c.facts).toContainEqual(['signature', expect.stringMatching(/^valid, ECDSA P-256 key/)]);
  });

  const encrypted = [
    [
      'Ed25519, encrypted PKCS#8',
      () =>
        generateKeyPairSync('ed25519', {
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'open sesame' },
        }),
    ],
    [
      'P-256, encrypted SEC1',
      () =>
        generateKeyPairSync('ec', {
          namedCurve: 'P-256',
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'sec1', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'open sesame' },
        }),
    ],
  ] as const;

  it.each(encrypted)('signed with an encrypted private key (%s) and its passphrase; a wrong passphrase is named', (_, make) => {
    const { privateKey, publicKey } = make();
    expect(() => signingKey(privateKey, 'wrong')).toThrow(/CONFORMANCE_SIGNING_KEY_PASSPHRASE/);
    const c = verify(
      forge(() => {}, { key: signingKey(privateKey, 'open sesame') }),
      publicKey,
    );
    expect(c.exit, invalid(c)).toBe(0);
  });

  // At f56ddfd this failed: without a passphrase OpenSSL 3 (every Node the package supports)
  // says ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED, which signingKey's test of the error
  // (/PASSPHRASE|BAD_DECRYPT/) missed, so `--signing-key enc.key` said "not a PEM private key".
  it.each(encrypted)('an encrypted private key (%s) without its passphrase: the message asks for it', (_, make) => {
    expect(() => signingKey(make().privateKey)).toThrow(/CONFORMANCE_SIGNING_KEY_PASSPHRASE/);
  });

  it('made by an older suite within the window: verified, with a note; outside it, or with --window 0, refused; a newer one cannot be checked', () => {
    const as = (version: string, window = 2) => verify(made, edPub, { ...thisSuite(window), version });
    for (const current of ['0.1.7', '0.2.0', '0.3.0']) {
      const c = as(current);
      expect(c.exit, `${current}: ${invalid(c)}`).toBe(0);
      expect(c.findings).toContainEqual(
        expect.objectContaining({ severity: 'note', field: 'suite', message: expect.stringMatching(/an earlier version within the window/) }),
      );
    }
    expect(as('0.4.0').exit).toBe(1);
    expect(as('0.2.0', 0).exit).toBe(1);
    expect(as('0.1.7', 0).exit).toBe(0);
    expect(verify(made, edPub, thisSuite(0)).exit).toBe(0);
    expect(as('1.0.0').exit).toBe(1);
    expect(as('0.0.9').exit).toBe(2);
  });
});

describe('forgeries that are refused (exit 1)', () => {
  describe('without the key', () => {
    it('a second signature in the envelope, after or before the real one: not a Sigstore v0.3 bundle', () => {
      const att = JSON.parse(made.get('attestation.json')!.toString('utf8')) as J;
      for (const where of ['push', 'unshift'] as const) {
        const a = structuredClone(att);
        a.dsseEnvelope.signatures[where]({ sig: Buffer.alloc(64, 1).toString('base64'), keyid: '' });
        const c = verify(new Map([...made, ['attestation.json', Buffer.from(JSON.stringify(a))]]));
        expect(c.exit).toBe(1);
        expect(invalid(c)).toMatch(/attestation\.json : not a Sigstore bundle/);
      }
    });

    it('a file added as a symlink (to another file, or to a signed file under another name)', () => {
      const d = mkdtempSync(join(tmpdir(), 'conformance-forgery-disk-'));
      for (const [n, c] of made) writeFileSync(join(d, n), c);
      symlinkSync(join(d, 'results.json'), join(d, 'results-copy.json'));
      const c = verify(readBundle(d));
      expect(c.exit).toBe(1);
      expect(invalid(c)).toMatch(/results-copy\.json : not a plain file/);
    });
  });

  describe('signed by the key holder', () => {
    it('an envelope of another payloadType', () => {
      const payload = Buffer.from(JSON.stringify(openAttestation(made.get('attestation.json')!.toString('utf8')).statement));
      const key = signingKey(edPem);
      const other = bundleToJSON(
        toDSSEBundle({
          artifact: payload,
          artifactType: 'application/json',
          signature: signBytes(null, dsse.preAuthEncoding('application/json', payload), key.key),
          keyHint: key.hint,
        }),
      );
      expect(PAYLOAD_TYPE).not.toBe('application/json');
      const c = verify(new Map([...made, ['attestation.json', Buffer.from(JSON.stringify(other))]]));
      expect(c.exit).toBe(1);
      expect(invalid(c)).toMatch(/payloadType is "application\/json"/);
    });

    it.each([
      ['another predicateType', (s: J) => void (s.predicateType = 'https://slsa.dev/provenance/v1'), /predicateType must be equal to constant/],
      ['another in-toto _type', (s: J) => void (s._type = 'https://in-toto.io/Statement/v0.1'), /_type must be equal to constant/],
      [
        'a subject with a path part (../x)',
        (s: J) => void s.subject.push({ name: '../x', digest: { sha256: 'a'.repeat(64) } }),
        /\.\.\/x : removed after signing/,
      ],
      ['an empty mustChecks', (s: J) => void (s.predicate.mustChecks = []), /predicate\.mustChecks: not this suite's plan/],
    ])('a statement with %s', (_, change, why) => {
      const c = verify(forge(() => {}, { after: (s) => change(s as unknown as J) }));
      expect(c.exit).toBe(1);
      expect(invalid(c)).toMatch(why);
    });

    it.each([
      [
        'a MUST result relabelled SHOULD, and failed',
        (p: Parts) => Object.assign(mustResult(p, 'delete.existing.204'), { level: 'SHOULD', outcome: 'fail', reason: 'answered 200' }),
        /1 MUST result\(s\) are held at another level: delete\.existing\.204/,
      ],
      ['a MUST result relabelled INFO', (p: Parts) => Object.assign(mustResult(p, 'delete.existing.204'), { level: 'INFO' }), /held at another level/],
      [
        'a MUST result left out of the results and of the signed plan',
        (p: Parts) => dropMust(p, 'delete.existing.204'),
        /predicate\.mustChecks: not this suite's plan.*left out \(delete\.existing\.204\)/,
      ],
      [
        'a MUST failure marked baselined, without a baseline',
        (p: Parts) => Object.assign(mustResult(p, 'delete.existing.204'), { outcome: 'fail', baselined: true, reason: 'x' }),
        /results give false \(1 MUST check\(s\) failed \(baselines do not count/,
      ],
      ['an error of the suite', (p: Parts) => void p.results.suiteErrors.push('boom'), /exit\.code: says 0, its results give 2/],
      [
        'a served operation declared absent, its MUST results skipped as absent',
        (p: Parts) => {
          for (const r of p.results.results)
            if (r.operation === 'orders' && r.level === 'MUST' && r.id !== 'list.endpoint.present')
              Object.assign(r, { outcome: 'skip', absent: true, reason: 'absent: 404' });
          for (const list of [
            p.certificate.declaredAbsent,
            p.results.certification.declaredAbsent,
            p.certificate.profile.absent,
            p.results.certification.profile.absent,
            p.statement.predicate.profile.absent,
          ])
            list.push('orders');
        },
        /declared absent but served: orders/,
      ],
      [
        'a declared-empty list whose results saw records',
        (p: Parts) => {
          for (const r of p.results.results) if (r.operation === 'catalog-rules' && r.records !== undefined) r.records = 5;
        },
        /declared empty but holding records: catalog-rules/,
      ],
      ['a narrowing (--operation) in the recorded config', (p: Parts) => void (p.results.config.operations = ['orders']), /narrowed by --operation/],
    ])('%s', (_, change, why) => {
      const c = verify(forge(change));
      expect(c.exit).toBe(1);
      expect(invalid(c)).toMatch(why);
    });
  });
});

describe('forgeries a key holder signs, each refused for what gives it away', () => {
  // The profile follows from the declarations (32 MUST checks not exercised here): `full` is a
  // claim the results do not bear out.
  it('the profile rewritten to full, the declarations (absent jobs, empty catalog-rules) kept', () => {
    const c = verify(
      forge((p) => {
        const full = { name: 'full', absent: [], empty: [] };
        p.certificate.profile = full;
        p.results.certification.profile = full;
        p.statement.predicate.profile = full as Statement['predicate']['profile'];
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/results\.json certification\.profile: says \{"name":"full"/);
  });

  // Recorded catalog overrides are held to what a config file may give: no file can make one of
  // the contract's operations an extra list, out of the plan and out of certification.
  it("a contract operation made 'extra' by the recorded catalog override: its MUST results dropped", () => {
    const c = verify(
      forge((p) => {
        const catalog = { operations: { orders: { extra: true } } };
        p.results.config.catalog = catalog;
        p.config.catalog = catalog;
        p.results.results = p.results.results.filter((r: J) => r.operation !== 'orders');
        p.statement.predicate.mustChecks = p.statement.predicate.mustChecks.filter((k) => !k.endsWith(' orders'));
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/config\.json catalog: the catalog overrides are not ones a config file can give/);
  });

  // One result per check and operation: a failure relabelled SHOULD cannot hide behind a passing twin.
  it('two results for one check: the real failure relabelled SHOULD, a passing MUST twin after it', () => {
    const c = verify(
      forge((p) => {
        const i = p.results.results.findIndex((r: J) => r.id === 'delete.existing.204');
        p.results.results.splice(i, 0, { ...p.results.results[i], level: 'SHOULD', outcome: 'fail', reason: 'DELETE answered 200 with a body' });
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/results\.json results: 1 check\(s\) with more than one result for one operation: delete\.existing\.204/);
  });

  // The reason is recomputed from the results, as the verdict is.
  it("the verdict's why rewritten to hide the skipped MUST checks", () => {
    const c = verify(
      forge((p) => {
        const why = 'every MUST check passed';
        p.certificate.why = why;
        p.results.certification.why = why;
        p.statement.predicate.verdict.why = why;
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/results\.json certification\.why: says "every MUST check passed", its results and declarations give/);
  });

  // What a declared-empty list could not exercise, and the declarations, are recomputed too.
  it("the declared-empty list's checks not exercised hidden, and results.json's certification disagreeing with the certificate", () => {
    const c = verify(
      forge((p) => {
        for (const d of [p.certificate.declaredEmpty[0], p.results.certification.declaredEmpty[0]])
          Object.assign(d, { notExercised: [], evidence: 'list.endpoint.present saw 0 records' });
        p.results.certification.declaredAbsent = [];
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/results\.json certification\.declaredEmpty: says/);
  });

  // The signed target and run times are the ones results.json records (a re-run goes by those).
  it("the signed statement's target and start time differ from results.json's", () => {
    const c = verify(
      forge((p) => {
        p.statement.predicate.target = { baseUrl: 'https://shop.acme.example', embedded: false };
        p.statement.predicate.run.startedAt = '2020-01-01T00:00:00.000Z';
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/results\.json target: says "http:\/\/127\.0\.0\.1:\d+", the signed attestation says "https:\/\/shop\.acme\.example"/);
    expect(invalid(c)).toMatch(/results\.json startedAt: says/);
  });

  // A build of this version is this version (its plan is compared); a version npm would not
  // write is refused.
  it.each([
    ['0.1.0+x', /predicate\.mustChecks: not this suite's plan/],
    ['00.1.0', /suite version '00\.1\.0' is not a version this suite can place/],
    ['0.1.00', /suite version '0\.1\.00' is not a version this suite can place/],
  ])("the suite version relabelled '%s', a MUST check dropped from the results and the plan", (version, why) => {
    const c = verify(
      forge((p) => {
        relabel(p, version);
        dropMust(p, 'delete.existing.204');
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(why);
  });

  // A statement names each file once (as sha256sum -c would stop on the second line).
  it('a statement naming results.json twice, once with a digest that matches nothing', () => {
    const c = verify(forge(() => {}, { after: (s) => void s.subject.unshift({ name: 'results.json', digest: { sha256: 'a'.repeat(64) } }) }));
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/attestation\.json subject: names results\.json more than once/);
  });

  // config.json is results.json's config, the same: the settings are judged from one and shown in the other.
  it("config.json narrowed (--check, --explore 0) while results.json's config is not", () => {
    const c = verify(
      forge((p) => {
        p.config.checks = ['delete.existing.204'];
        p.config.explore = 0;
      }),
    );
    expect(c.exit).toBe(1);
    expect(invalid(c)).toMatch(/config\.json : is not results\.json's config/);
  });
});
