import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AMQP_URL, addVhost, deleteVhost, uniqueName } from '../support/rabbitmq.js';
import { environmentOutsideNpm } from '../support/run-command.js';
import { type RunnableBlock, runnableBlocks, scenarioScript } from '../support/runnable-docs.js';

const ROOT = join(import.meta.dirname, '../..');
const run = promisify(execFile);

/**
 * Every scenario the docs mark runnable (`<!-- runnable: NAME … -->` before a block), with what its
 * output must show. A page that marks a new scenario fails the first test until it is added here.
 */
const SCENARIOS: Record<string, RegExp[]> = {
  'README.md namespaces': [/^[0-9a-f-]{36}$/m, /billing/],
  'docs/protocol.md sdk-quick-start': [/"greeting": "hello, Ada"/, /"greeting": "hello, Grace"/],
  'docs/protocol.md python-worker': [/"greeting": "hello from Python, Ada"/],
  'docs/workflows.md pause-resume': [/paused/, /^409$/m],
};

/** README.md and docs/*.md: the pages whose marked blocks run. */
async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

async function scenariosOfTheDocs(): Promise<Map<string, RunnableBlock[]>> {
  const scenarios = new Map<string, RunnableBlock[]>();
  for (const page of await pages())
    for (const block of await runnableBlocks(join(ROOT, page), page))
      for (const name of block.scenarios) {
        const key = `${page} ${name}`;
        scenarios.set(key, [...(scenarios.get(key) ?? []), block]);
      }
  return scenarios;
}

/** A python3 that can import pika (scripts/ensure-test-services.sh installs Debian's python3-pika). */
async function pythonWithPika(): Promise<string> {
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      const { stdout } = await run(python, ['-c', 'import pika, sys; print(sys.executable)']);
      return stdout.trim();
    } catch {
      // not this one
    }
  }
  throw new Error(
    'no python3 can import pika: run scripts/ensure-test-services.sh (it installs python3-pika)',
  );
}

interface ScriptRun {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/**
 * Runs a scenario's script with bash in `cwd`, in a process group of its own; once bash ends (or
 * at the deadline), ends what it left running in the background.
 */
function runScript(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ScriptRun> {
  const child = spawn('bash', ['-c', script], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const group = child.pid as number;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      // the group is gone
    }
  };
  return new Promise((resolve) => {
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(deadline);
      signalGroup('SIGTERM');
      const kill = setTimeout(() => signalGroup('SIGKILL'), 10_000);
      child.once('close', () => {
        clearTimeout(kill);
        resolve({ code, output, timedOut });
      });
    });
  });
}

/**
 * The docs' marked blocks, run as a reader runs them: in a folder that stands for a clone of
 * Switchyard (links to this repository's files), with `switchyard` on PATH as `npm link` puts it
 * and the broker at AMQP_URL, on a vhost of each scenario's own.
 */
describe('The docs that are marked runnable run as written', { timeout: 300_000 }, () => {
  let dir: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;
  let scenarios: Map<string, RunnableBlock[]>;

  beforeAll(async () => {
    scenarios = await scenariosOfTheDocs();
    dir = await mkdtemp(join(tmpdir(), 'switchyard-docs-'));
    clone = join(dir, 'switchyard');
    await mkdir(clone);
    for (const entry of await readdir(ROOT))
      if (!['.git', '.scratch', 'test-artifacts'].includes(entry) && !/\.(db|db-shm|db-wal|tgz)$/.test(entry))
        await symlink(join(ROOT, entry), join(clone, entry));
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await symlink(join(ROOT, 'bin/switchyard.js'), join(bin, 'switchyard'));
    await symlink(await pythonWithPika(), join(bin, 'python3'));
    env = environmentOutsideNpm({
      PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH}`,
      // What this repository's npm ci installed is in npm's cache: no need to ask the registry again.
      npm_config_prefer_offline: 'true',
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('marks exactly the scenarios this test knows', () => {
    const unknown = [...scenarios.keys()].filter((key) => !(key in SCENARIOS));
    const missing = Object.keys(SCENARIOS).filter((key) => !scenarios.has(key));
    expect(
      unknown,
      'a page marks a scenario runnable that this test does not know: add it to SCENARIOS with what its output must show',
    ).toEqual([]);
    expect(missing, 'a scenario this test expects is no longer marked runnable in its page').toEqual([]);
  });

  for (const [key, expected] of Object.entries(SCENARIOS)) {
    it(key, async () => {
      const vhost = uniqueName('docs');
      await addVhost(vhost);
      try {
        const script = scenarioScript(scenarios.get(key) ?? []);
        const ran = await runScript(
          script,
          clone,
          { ...env, AMQP_URL: `${AMQP_URL.replace(/\/$/, '')}/${vhost}` },
          240_000,
        );

        const told = `the script:\n${script}\nits output:\n${ran.output.slice(-6000)}`;
        expect(ran.timedOut, told).toBe(false);
        expect(ran.code, told).toBe(0);
        for (const pattern of expected) expect(ran.output, told).toMatch(pattern);
      } finally {
        await deleteVhost(vhost).catch(() => {});
      }
    });
  }
});
