import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../support/cli-process.js';
import { AMQP_URL, addVhost, deleteVhost, eventually, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const ROOT = join(import.meta.dirname, '../..');

/**
 * The README's "Using it locally", command by command, each in its own process as in its own
 * terminal: serve, `npm run workers`, then `switchyard submit … --wait`; then Ctrl-C for each. On a
 * vhost of its own, so that the example's fixed queue names meet no other test's.
 */
describe("The README's three terminals: serve, workers, submit", { timeout: 120_000 }, () => {
  const vhost = uniqueName('readme');
  const amqpUrl = `${AMQP_URL.replace(/\/$/, '')}/${vhost}`;
  let dir: string;
  let serve: ServeProcess | undefined;
  let workers: ChildProcess | undefined;

  beforeAll(async () => {
    await addVhost(vhost);
    dir = await mkdtemp(join(tmpdir(), 'switchyard-readme-'));
  });

  afterAll(async () => {
    if (workers?.pid) {
      try {
        process.kill(-workers.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await serve?.kill('SIGKILL');
    await deleteVhost(vhost).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });

  it('counts 12 chapters and 29,371 words, and each process stops on Ctrl-C', async () => {
    // The README's commands, as written there.
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('switchyard serve --config examples/word-counts/workflows.yaml');
    expect(readme).toContain('npm run workers');
    expect(readme).toContain("switchyard submit book-word-counts --input '{}' --wait");

    // Terminal 1: serve (on a free port, with a database of its own)
    serve = await spawnServe(
      ['--config', 'examples/word-counts/workflows.yaml', '--db', join(dir, 'switchyard.db')],
      { AMQP_URL: amqpUrl },
    );

    // Terminal 2: npm run workers
    let workerOutput = '';
    workers = spawn('npm', ['run', 'workers'], {
      cwd: ROOT,
      env: { ...process.env, AMQP_URL: amqpUrl, PATH: `${join(process.execPath, '..')}:${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as a terminal's: Ctrl-C signals npm and the workers alike.
      detached: true,
    });
    const keep = (chunk: Buffer) => {
      workerOutput += chunk.toString();
    };
    workers.stdout?.on('data', keep);
    workers.stderr?.on('data', keep);
    const group = workers.pid as number;
    const npmExited = new Promise<void>((resolve) => workers?.once('exit', () => resolve()));
    await eventually('the workers to run', () => workerOutput.includes('workers running'), 60_000);

    // Terminal 3: submit --wait
    const submitted = await runCli(
      ['submit', 'book-word-counts', '--input', '{}', '--wait', '--url', serve.url],
      60_000,
    );

    expect(submitted.code, describeRun(submitted)).toBe(0);
    const result = JSON.parse(submitted.stdout) as { chapters: number; tokens: number; title: string };
    expect(result).toMatchObject({ chapters: 12, tokens: 29_371 });
    expect(result.title).toMatch(/Alice/);
    // The id and the dashboard's link came at once, on stderr.
    expect(submitted.stderr).toMatch(
      new RegExp(`started job [0-9a-f-]{36}  ${serve.url.replace(/[.]/g, '\\.')}/#/job/[0-9a-f-]{36}`),
    );

    // Ctrl-C in terminal 2: npm and the workers stop, every process of the group
    process.kill(-group, 'SIGINT');
    await npmExited;
    await eventually(
      'every process of the workers terminal to end',
      () => {
        try {
          process.kill(-group, 0);
          return false;
        } catch {
          return true;
        }
      },
      15_000,
    );
    // Ctrl-C in terminal 1: serve stops, exit 0
    expect(await serve.kill('SIGINT')).toBe(0);
  });
});
