import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, describeRun } from '../support/cli-process.js';
import { oldNode } from '../support/old-node.js';
import { environmentOutsideNpm, runCommand } from '../support/run-command.js';

const ROOT = join(import.meta.dirname, '../..');

/** One line on stderr that names the Node found and the way to Node 24; exit 1, not a crash. */
function expectRefusal(run: CliRun, node: string, version: string): void {
  expect(run.signal, describeRun(run)).toBeNull();
  expect(run.code, describeRun(run)).toBe(1);
  const lines = run.stderr.trim().split('\n');
  expect(lines, describeRun(run)).toHaveLength(1);
  expect(lines[0]).toContain(`switchyard needs Node.js 22 or later`);
  expect(lines[0]).toContain(`this is Node.js ${version} (${node})`);
  expect(lines[0]).toContain('scripts/node24.sh');
}

/** npm's own refusal (engine-strict in .npmrc): the Node required and the one found, exit non-zero. */
function expectNpmRefusal(run: CliRun, version: string): void {
  expect(run.signal, describeRun(run)).toBeNull();
  expect(run.code, describeRun(run)).not.toBe(0);
  expect(run.stderr).toContain('EBADENGINE');
  expect(run.stderr).toContain('Required: {"node":">=22"}');
  expect(run.stderr).toContain(`"node":"${version}"`);
}

/**
 * On a Node older than 22 (the machine's own, Debian's 20), better-sqlite3 crashes the process with
 * a segmentation fault and no message: every entry point says so in one line first.
 */
describe('On a Node older than 22', { timeout: 120_000 }, () => {
  let node: string;
  let version: string;
  let env: NodeJS.ProcessEnv;
  let bare: string;

  beforeAll(async () => {
    node = await oldNode();
    version = (await runCommand(node, ['--version'])).stdout.trim();
    // That node first on PATH, as on a machine whose `node` it is; npm is the machine's.
    env = environmentOutsideNpm({ PATH: `${dirname(node)}:${process.env.PATH}` });
    bare = await mkdtemp(join(tmpdir(), 'switchyard-old-node-'));
    for (const file of ['package.json', 'package-lock.json', '.npmrc', 'bin'])
      await cp(join(ROOT, file), join(bare, file), { recursive: true });
  });

  afterAll(async () => {
    await rm(bare, { recursive: true, force: true });
  });

  it('npm ci stops at once, naming the Node found and the one required, and installs nothing', async () => {
    const run = await runCommand('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: bare,
      env,
      timeoutMs: 60_000,
    });

    expectNpmRefusal(run, version);
    expect((await runCommand('ls', [bare])).stdout.split('\n')).not.toContain('node_modules');
  });

  // In this repository, whose node_modules hold a better-sqlite3 built for Node 24: what crashed.
  it('npm run demo refuses it in one line', async () => {
    expectRefusal(await runCommand('npm', ['run', '--silent', 'demo'], { cwd: ROOT, env }), node, version);
  });

  it('npm run workers refuses it in one line', async () => {
    expectRefusal(await runCommand('npm', ['run', '--silent', 'workers'], { cwd: ROOT, env }), node, version);
  });

  it('npx switchyard serve is refused by npm itself, naming both versions', async () => {
    expectNpmRefusal(
      await runCommand('npx', ['switchyard', 'serve', '--bus', 'memory', '--db', ':memory:'], {
        cwd: ROOT,
        env,
      }),
      version,
    );
  });

  it('switchyard serve refuses it in one line, from the repository and from a bare copy', async () => {
    for (const cwd of [ROOT, bare])
      expectRefusal(
        await runCommand(
          node,
          [join(cwd, 'bin/switchyard.js'), 'serve', '--bus', 'memory', '--db', ':memory:'],
          { cwd, env },
        ),
        node,
        version,
      );
  });
});
