// The CI recipes, action.yml and ci/gitlab/conformance.yml, run step by step as their runners run
// them, against the bundled reference server: each script under the shell and with the
// environment its runner gives, the inputs and variables put in as the runner puts them in. Then
// what each left is read: the exit code, the step summary, the annotations, the report files.
//
// What only a hosted runner does is not run here, and named (HOSTED_ONLY below, and docs/ci.md):
// setting up Node (the test runs the Node it runs on), the image, and the upload of the reports
// (the test checks that the upload would run, and that what it names is there). One step is
// substituted, named in docs/ci.md too: `npm ci` in the action's folder, and GitLab's
// `npm install` of the suite. The checkout this test runs in is installed and built already (npm
// test builds first), so an `npm` on the PATH answers `ci` with nothing to do and `install` with
// the package linked where npm would put it, and hands every other command (`npm run build`) to
// the real npm. The scripts themselves run unchanged.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SETTINGS } from '../lib/configuration/index.js';
import { TOKEN, withServer } from './support.js';

const ROOT = resolve(import.meta.dirname, '..');
const ACTION_FILE = 'action.yml';
const GITLAB_FILE = 'ci/gitlab/conformance.yml';
const ACTION_TEXT = readFileSync(join(ROOT, ACTION_FILE), 'utf8');
const GITLAB_TEXT = readFileSync(join(ROOT, GITLAB_FILE), 'utf8');

/** Steps and parts of a job that only a hosted runner performs: not run here. docs/ci.md names each. */
const HOSTED_ONLY = {
  github: ['actions/setup-node@v4', 'actions/upload-artifact@v4'],
  gitlab: ['image: node:20', 'artifacts:'],
} as const;

/** A narrow run: one MUST check, so that each run takes a second or two. */
const ONE_MUST = '--check delete.unknown-id.404 --seed 1';
/** A fault of the reference server that breaks that check's MUST. */
const BREAKS_IT = 'delete-unknown-204';
/** Shell in an input or a variable: words, a glob, command substitutions, quotes, each separated by one space. */
const HOSTILE = `"; touch quoted; " $(touch substituted) \`touch backquoted\` /*`;

interface ActionStep {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string | number>;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
}
interface Action {
  inputs: Record<string, { description: string; default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}
const ACTION = parse(ACTION_TEXT) as Action;

// --- GitHub's expressions: exactly the forms action.yml uses, and a test that it uses no other.

/** `${{ inputs.NAME }}` and `${{ steps.ID.outputs.NAME }}`: a value, put in as text. */
const FORMS = [/^inputs\.([a-z][a-z0-9-]*)$/, /^steps\.([a-z][a-z0-9-]*)\.outputs\.([a-z][a-z0-9-]*)$/];
/** The conditions a step's `if:` may have: none (the runner's success()) or always(). */
const CONDITIONS = ['always()'];
const EXPRESSION = /\$\{\{\s*(.*?)\s*\}\}/g;

interface Contexts {
  inputs: Record<string, string>;
  steps: Record<string, Record<string, string>>;
}

function evaluate(expression: string, ctx: Contexts): string {
  const input = FORMS[0]!.exec(expression);
  if (input) {
    if (!(input[1]! in ACTION.inputs)) throw new Error(`${ACTION_FILE}: no input ${input[1]}`);
    // GitHub gives an input's value, else its default, else ''.
    return ctx.inputs[input[1]!] ?? ACTION.inputs[input[1]!]!.default ?? '';
  }
  const output = FORMS[1]!.exec(expression);
  if (output) return ctx.steps[output[1]!]?.[output[2]!] ?? '';
  throw new Error(`${ACTION_FILE}: an expression this test does not evaluate: ${expression}`);
}

function substitute(text: string, ctx: Contexts): string {
  return text.replace(EXPRESSION, (_, expression: string) => evaluate(expression, ctx));
}

// --- Processes, and the npm and node the scripts find on the PATH.

interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

function bash(flags: string[], script: string, cwd: string, env: Record<string, string>): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [...flags, script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `conformance-ci-${prefix}-`));
  scratch.push(dir);
  return dir;
}

interface NodeCall {
  args: string[];
  argv: string;
  settings: string[];
}

interface Shims {
  /** Prepended to the PATH the scripts get. */
  bin: string;
  /** Each npm command: the folder it ran in, then its arguments. */
  npm(): string[];
  /** Each node command's arguments (also joined with spaces), and the CONFORMANCE_* variables it was given (names only). */
  node(): NodeCall[];
}

/**
 * An `npm` that stands in for the installing commands (the checkout is installed and built
 * already) and hands the others to the real npm, and a `node` that records how the suite was
 * started and then starts it.
 */
function shims(): Shims {
  const dir = tempDir('bin');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const npmLog = join(dir, 'npm.log');
  const nodeLog = join(dir, 'node.log');
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    join(bin, 'npm'),
    `#!/bin/sh
printf '%s\\t%s\\n' "$PWD" "$*" >> ${q(npmLog)}
case "$1" in
  ci) exit 0 ;;
  install)
    prefix=
    while [ $# -gt 0 ]; do
      case "$1" in --prefix) prefix=$2; shift 2 ;; *) shift ;; esac
    done
    mkdir -p "$prefix/node_modules" && ln -s ${q(ROOT)} "$prefix/node_modules/conformance" ;;
  *) PATH=${q(process.env.PATH ?? '')} exec npm "$@" ;;
esac
`,
  );
  writeFileSync(
    join(bin, 'node'),
    `#!/bin/sh
{ printf '%s\\037' "$@"; printf '\\t'; env | sed -n 's/^\\(CONFORMANCE_[A-Z_]*\\)=.*/\\1/p' | sort | tr '\\n' ' '; echo; } >> ${q(nodeLog)}
exec ${q(process.execPath)} "$@"
`,
  );
  chmodSync(join(bin, 'npm'), 0o755);
  chmodSync(join(bin, 'node'), 0o755);
  const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  return {
    bin,
    npm: () => lines(npmLog),
    node: () =>
      lines(nodeLog).map((l) => {
        const [argv, names] = l.split('\t');
        const args = argv!.split('\x1f').slice(0, -1);
        return { args, argv: args.join(' '), settings: names!.trim().split(' ').filter(Boolean) };
      }),
  };
}

// --- The action, run as a GitHub runner runs a composite action's steps.

interface StepRecord {
  step: string;
  /** Run here, or performed only on a hosted runner (HOSTED_ONLY): whether it would run, and its `with:`. */
  kind: 'run' | 'hosted';
  runs: boolean;
  with?: Record<string, string>;
  exit?: Exit;
}

interface ActionRun {
  steps: StepRecord[];
  /** The script's exit code of the step that ran the suite. */
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  /** What the steps wrote for the steps after them (GITHUB_ENV, GITHUB_PATH). */
  carried: string;
  workspace: string;
  npm: string[];
  node: NodeCall[];
}

async function runAction(inputs: Record<string, string>, actionPath = ROOT, workspace = tempDir('workspace')): Promise<ActionRun> {
  const runnerTemp = tempDir('runner-temp');
  const shim = shims();
  const ctx: Contexts = { inputs, steps: {} };
  const records: StepRecord[] = [];
  let summary = '';
  let carried = '';
  let failed = false;
  let ran: Exit | undefined;
  for (const [i, step] of ACTION.runs.steps.entries()) {
    const label = step.name ?? step.uses ?? `step ${i}`;
    if (step.if !== undefined && !CONDITIONS.includes(step.if)) throw new Error(`${label}: if: ${step.if} is not evaluated here`);
    // Without `if:`, a step runs while every step before it succeeded (success()).
    const runs = step.if === 'always()' || !failed;
    if (step.uses) {
      expect(HOSTED_ONLY.github, `${label} is run by nobody`).toContain(step.uses);
      const given = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(String(v), ctx)]));
      records.push({ step: label, kind: 'hosted', runs, with: given });
      continue;
    }
    if (!runs) {
      records.push({ step: label, kind: 'run', runs });
      continue;
    }
    // The runner's files for this step, fresh for each step.
    const files = Object.fromEntries(
      ['GITHUB_STEP_SUMMARY', 'GITHUB_OUTPUT', 'GITHUB_ENV', 'GITHUB_PATH'].map((name) => {
        const file = join(runnerTemp, `${name.toLowerCase()}-${i}`);
        writeFileSync(file, '');
        return [name, file];
      }),
    ) as Record<'GITHUB_STEP_SUMMARY' | 'GITHUB_OUTPUT' | 'GITHUB_ENV' | 'GITHUB_PATH', string>;
    const env: Record<string, string> = {
      PATH: `${shim.bin}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? workspace,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_ACTION_PATH: actionPath,
      RUNNER_TEMP: runnerTemp,
      RUNNER_OS: 'Linux',
      ...files,
      ...Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, substitute(String(v), ctx)])),
    };
    expect(step.shell, `${label}: shell`).toBe('bash');
    const script = join(runnerTemp, `step-${i}.sh`);
    writeFileSync(script, step.run!);
    const cwd = step['working-directory'] ? substitute(step['working-directory'], ctx) : workspace;
    // `shell: bash` given: the runner runs `bash --noprofile --norc -eo pipefail {0}`.
    const exit = await bash(['--noprofile', '--norc', '-eo', 'pipefail'], script, cwd, env);
    records.push({ step: label, kind: 'run', runs, exit });
    if (exit.code !== 0) failed = true;
    summary += readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8');
    carried += readFileSync(files.GITHUB_ENV, 'utf8') + readFileSync(files.GITHUB_PATH, 'utf8');
    const written = readFileSync(files.GITHUB_OUTPUT, 'utf8');
    // name=value lines; the runner's multi-line form (name<<DELIMITER) is not used.
    expect(written, `${label}: GITHUB_OUTPUT`).not.toMatch(/<</);
    if (step.id)
      ctx.steps[step.id] = Object.fromEntries(
        written
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
    if (step.id === 'run') ran = exit;
  }
  if (!ran) throw new Error('the step that runs the suite did not run');
  const outputs = Object.fromEntries(Object.entries(ACTION.outputs).map(([k, o]) => [k, substitute(o.value, ctx)]));
  return { steps: records, code: ran.code, stdout: ran.stdout, stderr: ran.stderr, outputs, summary, carried, workspace, npm: shim.npm(), node: shim.node() };
}

/** The report files a run leaves in a folder. */
function reports(dir: string): { results: { exit: { code: number }; shard?: string }; junit: string; html: string } {
  return {
    results: JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { exit: { code: number }; shard?: string },
    junit: readFileSync(join(dir, 'junit.xml'), 'utf8'),
    html: readFileSync(join(dir, 'report.html'), 'utf8'),
  };
}

function upload(run: ActionRun): StepRecord {
  return run.steps.find((s) => s.with?.path !== undefined && s.kind === 'hosted')!;
}

describe(ACTION_FILE, () => {
  it('uses only the expressions this test evaluates, none in a script, and only hosted steps it names', () => {
    for (const [, expression] of ACTION_TEXT.matchAll(EXPRESSION))
      expect(
        FORMS.some((f) => f.test(expression!)),
        expression,
      ).toBe(true);
    for (const step of ACTION.runs.steps) {
      // An expression in a script's text is a script injection: inputs come in through env:.
      if (step.run !== undefined) expect(step.run).not.toMatch(/\$\{\{/);
      if (step.if !== undefined) expect(CONDITIONS).toContain(step.if);
      if (step.uses !== undefined) expect(HOSTED_ONLY.github).toContain(step.uses);
    }
    expect(ACTION.runs.using).toBe('composite');
    expect(ACTION.runs.steps.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with?.['node-version']).toBe(20);
    // The secret is handed to the suite in one place, an environment variable.
    const secret = [...ACTION_TEXT.matchAll(/\$\{\{\s*inputs\.client-secret\s*\}\}/g)];
    expect(secret).toHaveLength(1);
    expect(ACTION.runs.steps.find((s) => s.id === 'run')?.env?.CONFORMANCE_CLIENT_SECRET).toBe('${{ inputs.client-secret }}');
  });

  it('against a conforming target, with a token: installs, passes, writes the summary and the reports, uploads them', async () => {
    await withServer({}, async (server) => {
      const run = await runAction({ 'base-url': server.url, token: TOKEN, args: ONE_MUST });
      expect(run.code, run.stdout).toBe(0);
      expect(run.outputs['exit-code']).toBe('0');
      // Installed where the action lives: `npm ci` substituted (see the top), the build real.
      expect(run.npm).toEqual([`${ROOT}\tci --ignore-scripts --no-audit --no-fund`, `${ROOT}\trun build`]);
      expect(run.node).toHaveLength(1);
      expect(run.node[0]!.argv).toBe(`${ROOT}/dist/cli/bin.js ${ONE_MUST}`);
      // The token only in the environment, and the inputs left empty not given at all.
      expect(run.node[0]!.argv).not.toContain(TOKEN);
      expect(run.node[0]!.settings).toEqual(['CONFORMANCE_BASE_URL', 'CONFORMANCE_REPORT_DIR', 'CONFORMANCE_TOKEN']);
      expect(run.stdout).not.toMatch(/^::error/m);
      expect(run.summary).toMatch(/^## Conformance: ✅ exit 0: every MUST check passed/);
      expect(run.carried).toBe('');
      const dir = join(run.workspace, 'conformance-report');
      const { results, junit, html } = reports(dir);
      expect(results.exit.code).toBe(0);
      expect(junit).toMatch(/<testcase [^>]*name="[^"]*delete\.unknown-id\.404/);
      expect(html).toMatch(/^<!doctype html>/i);
      expect(upload(run)).toMatchObject({ runs: true, with: { name: 'conformance-report', path: 'conformance-report' } });
      expect(run.steps.map((s) => [s.step, s.kind, s.runs])).toEqual([
        ['actions/setup-node@v4', 'hosted', true],
        ['Install the suite', 'run', true],
        ['Run the suite', 'run', true],
        ['Upload the reports', 'hosted', true],
      ]);
    });
  });

  it('against a target that breaks a MUST: the step fails with exit 1, annotates, and the reports are still uploaded', async () => {
    await withServer({ faults: [BREAKS_IT] }, async (server) => {
      const run = await runAction({ 'base-url': server.url, token: TOKEN, args: ONE_MUST, 'report-dir': 'out/reports', 'artifact-name': 'conformance-1' });
      expect(run.code, run.stdout).toBe(1);
      expect(run.outputs['exit-code']).toBe('1');
      expect(run.stdout.split('\n').filter((l) => l.startsWith('::error'))).toEqual([
        expect.stringMatching(/^::error title=conformance delete\.unknown-id\.404::/),
      ]);
      expect(run.summary).toMatch(/^## Conformance: ❌ exit 1: 1 MUST check\(s\) failed/);
      const { results, junit } = reports(join(run.workspace, 'out/reports'));
      expect(results.exit.code).toBe(1);
      expect(junit).toMatch(/<failure/);
      expect(upload(run)).toMatchObject({ runs: true, with: { name: 'conformance-1', path: 'out/reports' } });
    });
  });

  it('strict: a SHOULD failure fails the run', async () => {
    await withServer({ faults: ['create-202'] }, async (server) => {
      const run = await runAction({ 'base-url': server.url, token: TOKEN, args: '--check create.valid.201 --seed 1', strict: 'true' });
      expect(run.code, run.stdout).toBe(1);
      // Without --strict the same failure is a warning (`warn`), and the run passes.
      expect(run.summary).toMatch(/\| `create\.valid\.201` \| SHOULD \| fail \|/);
    });
  });

  it('installed as a package (no lockfile): nothing to install, the suite runs from the package; a shard', async () => {
    // The layout npm installs: the package's files, built, without package-lock.json.
    const installed = tempDir('installed');
    for (const file of ['package.json', ACTION_FILE]) writeFileSync(join(installed, file), readFileSync(join(ROOT, file)));
    symlinkSync(join(ROOT, 'dist'), join(installed, 'dist'));
    await withServer({}, async (server) => {
      const run = await runAction(
        { 'base-url': server.url, token: TOKEN, shard: '2/2', args: '--check delete.unknown-id.404,create.valid.201 --seed 1' },
        installed,
      );
      expect(run.code, run.stdout).toBe(0);
      expect(run.npm).toEqual([]);
      expect(run.node[0]!.argv).toBe(`${installed}/dist/cli/bin.js --shard 2/2 --check delete.unknown-id.404,create.valid.201 --seed 1`);
      expect(reports(join(run.workspace, 'conformance-report')).results.shard).toBe('2/2');
    });
  });

  it('strict left empty: the config file decides; --report-dir in args is refused, as the upload would miss it', async () => {
    await withServer({ faults: ['create-202'] }, async (server) => {
      const workspace = tempDir('workspace');
      writeFileSync(join(workspace, 'conformance.config.yaml'), 'strict: true\n');
      const run = await runAction({ 'base-url': server.url, token: TOKEN, args: '--check create.valid.201 --seed 1' }, ROOT, workspace);
      expect(run.code, run.stdout).toBe(1);
      expect(run.node[0]!.settings).not.toContain('CONFORMANCE_STRICT');
    });
    const moved = await runAction({ args: `${ONE_MUST} --report-dir=elsewhere` });
    expect(moved.code).toBe(2);
    expect(moved.outputs['exit-code']).toBe('2');
    expect(moved.node).toEqual([]);
    expect(moved.stdout).toMatch(/^::error::give the report directory as the report-dir input, not in args/m);
  });

  it("shards in a matrix, then merge: the shards' folders joined into one report, uploaded", async () => {
    await withServer({ faults: [BREAKS_IT] }, async (server) => {
      const workspace = tempDir('workspace');
      const args = '--check delete.unknown-id.404,create.valid.201 --seed 1';
      for (const i of [1, 2]) {
        // download-artifact puts each artifact in a folder of its name under its path.
        const shard = await runAction({ 'base-url': server.url, token: TOKEN, shard: `${i}/2`, args, 'report-dir': `shards/shard-${i}` }, ROOT, workspace);
        expect(shard.code).toBeLessThan(2);
      }
      const run = await runAction({ merge: 'shards/*' }, ROOT, workspace);
      expect(run.node[0]!.args.slice(1)).toEqual(['merge', 'shards/shard-1', 'shards/shard-2']);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const merged = JSON.parse(readFileSync(join(workspace, 'conformance-report', 'results.json'), 'utf8')) as { exit: { code: number }; shards: unknown[] };
      expect(merged.exit.code).toBe(1);
      expect(merged.shards).toHaveLength(2);
      expect(upload(run)).toMatchObject({ runs: true, with: { path: 'conformance-report' } });
    });
  });

  it('an input is data, never shell: no command substitution, no file names, no quoting', async () => {
    const run = await runAction({ token: HOSTILE, args: `--check delete.unknown-id.404 ${HOSTILE}` });
    // The words reach the suite as they were written, which refuses them as arguments.
    expect(run.node[0]!.args).toEqual([`${ROOT}/dist/cli/bin.js`, '--check', 'delete.unknown-id.404', ...HOSTILE.split(' ')]);
    expect(run.code).toBe(2);
    expect(run.outputs['exit-code']).toBe('2');
    for (const file of ['quoted', 'substituted', 'backquoted']) expect(existsSync(join(run.workspace, file)), file).toBe(false);
  });

  it('client credentials: the secret reaches the suite in CONFORMANCE_CLIENT_SECRET only', async () => {
    await withServer({}, async (server) => {
      const created = await fetch(`${server.url}/v2/application-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { type: 'application_key', name: 'ci recipe' } }),
      });
      const key = ((await created.json()) as { data: { client_id: string; client_secret: string } }).data;
      const run = await runAction({ 'base-url': server.url, 'client-id': key.client_id, 'client-secret': key.client_secret, args: ONE_MUST });
      expect(run.node[0]!.argv).not.toContain(key.client_secret);
      expect(run.node[0]!.settings).toEqual(['CONFORMANCE_BASE_URL', 'CONFORMANCE_CLIENT_ID', 'CONFORMANCE_CLIENT_SECRET', 'CONFORMANCE_REPORT_DIR']);
      // The suite logs in with them where it reads them; before it does, a target without a token is a usage error.
      if (SETTINGS.some((s) => (s.env as string) === 'CONFORMANCE_CLIENT_ID')) {
        expect(run.code, run.stdout + run.stderr).toBe(0);
        const dir = join(run.workspace, 'conformance-report');
        const { results, junit, html } = reports(dir);
        expect((results as { auth?: { logins: number } }).auth?.logins).toBeGreaterThan(0);
        for (const text of [run.stdout, run.summary, JSON.stringify(results), junit, html]) expect(text).not.toContain(key.client_secret);
      } else {
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/a target needs a token/);
      }
      expect(run.outputs['exit-code']).toBe(String(run.code));
      expect(upload(run).runs).toBe(true);
    });
  });
});

// --- The GitLab template, run as a GitLab runner runs a job's scripts.

interface GitlabJob {
  extends?: string;
  image?: string;
  variables?: Record<string, string>;
  before_script?: string[];
  script?: string[];
  artifacts?: { when?: string; paths?: string[]; reports?: { junit?: string } };
}
const GITLAB = parse(GITLAB_TEXT) as Record<string, GitlabJob>;

/** The job with what it extends merged in, as GitLab does: maps deeply, the job's keys winning. */
function gitlabJob(name: string): GitlabJob {
  const job = GITLAB[name]!;
  if (job.extends === undefined) return job;
  const merge = (base: unknown, over: unknown): unknown =>
    base && over && typeof base === 'object' && typeof over === 'object' && !Array.isArray(base) && !Array.isArray(over)
      ? Object.fromEntries(
          [...new Set([...Object.keys(base), ...Object.keys(over)])].map((k) => [
            k,
            k in over ? merge((base as never)[k], (over as never)[k]) : (base as never)[k],
          ]),
        )
      : (over ?? base);
  const { extends: parent, ...own } = job;
  return merge(gitlabJob(parent), own) as GitlabJob;
}

/** `$NAME` and `${NAME}` with the job's variables, as GitLab expands artifact paths. */
function expandPath(path: string, env: Record<string, string>): string {
  return path.replace(/\$\{?([A-Z_][A-Z0-9_]*)\}?/g, (_, name: string) => env[name] ?? '');
}

interface GitlabRun extends Exit {
  projectDir: string;
  artifacts: string[];
  junit: string;
  npm: string[];
  node: NodeCall[];
}

/**
 * The job's before_script and script, one shell as the runner joins them, under `set -eo pipefail`,
 * in CI_PROJECT_DIR; `project` as the project's CI/CD variables, which win over the file's.
 */
async function runGitlab(
  name: string,
  project: Record<string, string>,
  parallel?: { index: number; total: number },
  projectDir = tempDir('gitlab-project'),
): Promise<GitlabRun> {
  const job = gitlabJob(name);
  const shim = shims();
  const env: Record<string, string> = {
    PATH: `${shim.bin}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? projectDir,
    CI: 'true',
    GITLAB_CI: 'true',
    CI_PROJECT_DIR: projectDir,
    CI_JOB_ID: '4242',
    CI_JOB_NAME: name,
    ...(parallel ? { CI_NODE_INDEX: String(parallel.index), CI_NODE_TOTAL: String(parallel.total) } : {}),
    ...job.variables,
    ...project,
  };
  const script = join(tempDir('gitlab-script'), 'job.sh');
  writeFileSync(script, ['set -eo pipefail', ...(job.before_script ?? []), ...(job.script ?? [])].join('\n'));
  const exit = await bash(['--noprofile', '--norc'], script, projectDir, env);
  return {
    ...exit,
    projectDir,
    artifacts: (job.artifacts?.paths ?? []).map((p) => expandPath(p, env)),
    junit: expandPath(job.artifacts?.reports?.junit ?? '', env),
    npm: shim.npm(),
    node: shim.node(),
  };
}

describe(GITLAB_FILE, () => {
  const PACKAGE = `git+file://${ROOT}`;

  it('a hidden template and a job that extends it; variables GitLab need not expand; artifacts kept always', () => {
    expect(gitlabJob('conformance')).toEqual({ ...GITLAB['.conformance'], extends: undefined } as GitlabJob);
    const job = gitlabJob('conformance');
    expect(job.image).toBe('node:20');
    // Values with no `$`: GitLab's expansion of one variable into another is not emulated here.
    for (const [k, v] of Object.entries(job.variables ?? {})) expect(v, k).not.toMatch(/\$/);
    expect(job.artifacts).toEqual({ when: 'always', paths: ['$CONFORMANCE_REPORT_DIR'], reports: { junit: '$CONFORMANCE_REPORT_DIR/junit.xml' } });
  });

  it('against a conforming target: installs the package named, passes, writes the reports the artifacts name', async () => {
    await withServer({}, async (server) => {
      const run = await runGitlab('conformance', {
        CONFORMANCE_PACKAGE: PACKAGE,
        CONFORMANCE_BASE_URL: server.url,
        CONFORMANCE_TOKEN: TOKEN,
        CONFORMANCE_ARGS: ONE_MUST,
      });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.npm).toEqual([`${run.projectDir}\tinstall --prefix ${run.projectDir}/.conformance-suite --no-audit --no-fund ${PACKAGE}`]);
      expect(run.node.map((n) => n.argv)).toEqual([`${run.projectDir}/.conformance-suite/node_modules/conformance/dist/cli/bin.js ${ONE_MUST}`]);
      expect(run.artifacts).toEqual(['conformance-report']);
      const { results, html } = reports(join(run.projectDir, run.artifacts[0]!));
      expect(results.exit.code).toBe(0);
      expect(html).toMatch(/^<!doctype html>/i);
      expect(readFileSync(join(run.projectDir, run.junit), 'utf8')).toMatch(/<testsuites/);
      // Not under GitHub Actions: no annotations.
      expect(run.stdout).not.toMatch(/^::error/m);
    });
  });

  it('against a target that breaks a MUST, under parallel: the job fails with exit 1 and leaves the reports', async () => {
    await withServer({ faults: [BREAKS_IT] }, async (server) => {
      const run = await runGitlab(
        'conformance',
        {
          CONFORMANCE_PACKAGE: PACKAGE,
          CONFORMANCE_BASE_URL: server.url,
          CONFORMANCE_TOKEN: TOKEN,
          CONFORMANCE_ARGS: '--check delete.unknown-id.404,create.valid.201 --seed 1',
        },
        { index: 2, total: 2 },
      );
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const { results } = reports(join(run.projectDir, run.artifacts[0]!));
      expect(results).toMatchObject({ exit: { code: 1 }, shard: '2/2' });
      expect(readFileSync(join(run.projectDir, run.junit), 'utf8')).toMatch(/<failure/);
    });
  });

  it('parallel: parts in folders of their own, joined by a job that extends .conformance-merge', async () => {
    await withServer({ faults: [BREAKS_IT] }, async (server) => {
      const projectDir = tempDir('gitlab-project');
      const common = {
        CONFORMANCE_PACKAGE: PACKAGE,
        CONFORMANCE_BASE_URL: server.url,
        CONFORMANCE_TOKEN: TOKEN,
        CONFORMANCE_ARGS: '--check delete.unknown-id.404,create.valid.201 --seed 1',
      };
      for (const index of [1, 2]) {
        // docs/ci.md's job: CONFORMANCE_REPORT_DIR: conformance-report-$CI_NODE_INDEX, as GitLab expands it.
        const part = await runGitlab('conformance', { ...common, CONFORMANCE_REPORT_DIR: `conformance-report-${index}` }, { index, total: 2 });
        expect(part.artifacts).toEqual([`conformance-report-${index}`]);
        // The merge job's `needs:` brings each part's artifacts into its own project folder.
        cpSync(join(part.projectDir, part.artifacts[0]!), join(projectDir, part.artifacts[0]!), { recursive: true });
      }
      const run = await runGitlab('.conformance-merge', { CONFORMANCE_PACKAGE: PACKAGE }, undefined, projectDir);
      expect(run.node[0]!.args.slice(1)).toEqual(['merge', 'conformance-report-1', 'conformance-report-2']);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.artifacts).toEqual(['conformance-report']);
      expect(reports(join(projectDir, 'conformance-report')).results.exit.code).toBe(1);
      expect(gitlabJob('.conformance-merge')).toMatchObject({ when: 'always' });
    });
  });

  it('a variable is data, never shell: no command substitution, no file names, no quoting', async () => {
    const run = await runGitlab('conformance', { CONFORMANCE_PACKAGE: PACKAGE, CONFORMANCE_ARGS: `--check delete.unknown-id.404 ${HOSTILE}` });
    expect(run.node[0]!.args.slice(1)).toEqual(['--check', 'delete.unknown-id.404', ...HOSTILE.split(' ')]);
    expect(run.code).toBe(2);
    for (const file of ['quoted', 'substituted', 'backquoted']) expect(existsSync(join(run.projectDir, file)), file).toBe(false);
  });

  it('without CONFORMANCE_PACKAGE: stops before installing, and says what to set', async () => {
    const run = await runGitlab('conformance', {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Set CONFORMANCE_PACKAGE/);
    expect(run.npm).toEqual([]);
  });
});

describe('docs/ci.md and the package', () => {
  const doc = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
  const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]!) as unknown);

  it('names what is not run here', () => {
    for (const part of [...HOSTED_ONLY.github, ...HOSTED_ONLY.gitlab]) expect(doc).toContain(part);
  });

  it('gives the action only inputs it has, and the template only variables it or the suite reads', () => {
    const uses = JSON.stringify(blocks).match(/"uses":"[^"]*\/conformance@[^"]*"/g) ?? [];
    expect(uses.length).toBeGreaterThan(0);
    const walk = (x: unknown, seen: (o: Record<string, unknown>) => void): void => {
      if (Array.isArray(x)) x.forEach((y) => walk(y, seen));
      else if (x && typeof x === 'object') {
        seen(x as Record<string, unknown>);
        Object.values(x).forEach((y) => walk(y, seen));
      }
    };
    const known = new Set([
      ...Object.keys(gitlabJob('conformance').variables ?? {}),
      ...SETTINGS.map((s) => s.env as string),
      'CONFORMANCE_CLIENT_ID',
      'CONFORMANCE_TOKEN_URL',
    ]);
    let included = 0;
    for (const block of blocks)
      walk(block, (o) => {
        if (typeof o.uses === 'string' && /\/conformance@/.test(o.uses))
          for (const k of Object.keys((o.with as object) ?? {})) expect(Object.keys(ACTION.inputs), k).toContain(k);
        if (o.extends === '.conformance') {
          included++;
          for (const k of Object.keys((o.variables as object) ?? {})) expect(known, k).toContain(k);
        }
      });
    expect(included).toBeGreaterThan(0);
  });

  it('the package ships the action and the template, without the lockfile the action installs from', async () => {
    const packed = await bash(['-c'], 'npm pack --dry-run --json --ignore-scripts', ROOT, { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT });
    expect(packed.code, packed.stderr).toBe(0);
    const files = (JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining([ACTION_FILE, GITLAB_FILE]));
    expect(files).not.toContain('package-lock.json');
  });
});
