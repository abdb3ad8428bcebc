import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../support/cli-process.js';
import { AMQP_URL, addVhost, deleteVhost, uniqueName } from '../support/rabbitmq.js';
import { environmentOutsideNpm, runCommand, startCommand } from '../support/run-command.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { packWorkerSdk, userProject } from '../support/worker-package.js';

const run = promisify(execFile);
const TSC = join(import.meta.dirname, '../../node_modules/typescript/bin/tsc');

const HELLO_WORKFLOW = `workflows:
  - name: hello
    steps:
      - name: greet
`;

/** A worker in plain JavaScript, as a CommonJS project (npm init's default) writes it. */
const COMMONJS_WORKER = `const { runWorker, WorkerError } = require('switchyard-worker');

runWorker({
  queue: 'greet',
  handler: ({ name }) => {
    if (typeof name !== 'string') throw new WorkerError('no name in the input', { retryable: false });
    return { greeting: \`hello, \${name}\` };
  },
});
`;

/** The same in TypeScript compiled to CommonJS (a .cts file): what the user's tsc checks. */
const COMMONJS_TYPESCRIPT_WORKER = `import sdk = require('switchyard-worker');

sdk.runWorker<{ name: string }, { greeting: string }>({
  queue: 'greet',
  handler: ({ name }) => {
    if (!name) throw new sdk.WorkerError('no name in the input', { retryable: false });
    return { greeting: \`hello, \${name}\` };
  },
});
`;

/**
 * The worker SDK as \`npm run pack:worker\` packs it, installed from its tarball into a fresh
 * \`npm init -y\` project (CommonJS), with no tsx and nothing of Switchyard's sources.
 */
describe('switchyard-worker, packed and installed into a fresh CommonJS project', {
  timeout: 300_000,
}, () => {
  const vhost = uniqueName('worker-package');
  let dir: string;
  let tarball: string;
  let project: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-worker-package-'));
    tarball = await packWorkerSdk(dir);
    project = join(dir, 'hello-worker');
    await userProject(project, [tarball]);
    await addVhost(vhost);
  });

  afterAll(async () => {
    await deleteVhost(vhost).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });

  it('holds the built JavaScript and its declarations, and none of the sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n');

    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/types/functions/worker/index.d.ts');
    const other = files.filter(
      (file) =>
        !/^package\/dist\/[\w-]+\.js$/.test(file) &&
        !/^package\/dist\/types\/.+\.d\.ts$/.test(file) &&
        !['package/package.json', 'package/README.md'].includes(file),
    );
    expect(other).toEqual([]);
  });

  it("a require()d worker answers a job of serve's on RabbitMQ, and stops on SIGTERM with exit 0", async () => {
    // Prepare
    await writeFile(join(project, 'worker.js'), COMMONJS_WORKER);
    await writeFile(join(project, 'hello.yaml'), HELLO_WORKFLOW);
    const amqpUrl = `${AMQP_URL.replace(/\/$/, '')}/${vhost}`;
    let serve: ServeProcess | undefined;
    const worker = startCommand(process.execPath, ['worker.js'], {
      cwd: project,
      env: environmentOutsideNpm({ AMQP_URL: amqpUrl }),
    });
    try {
      serve = await spawnServe(['--config', join(project, 'hello.yaml'), '--db', ':memory:'], {
        AMQP_URL: amqpUrl,
      });

      // Act
      const submitted = await runCli(
        ['submit', 'hello', '--input', '{"name":"Ada"}', '--wait', '--url', serve.url],
        60_000,
      );
      worker.child.kill('SIGTERM');

      // Assess
      expect(submitted.code, `${describeRun(submitted)}\nworker: ${worker.output()}`).toBe(0);
      expect(JSON.parse(submitted.stdout)).toMatchObject({ greeting: 'hello, Ada' });
      expect(await worker.exited, worker.output()).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await serve?.kill('SIGKILL');
    }
  });

  it("the user's tsc (tsc --init's strict defaults) checks a worker against the declarations without errors", async () => {
    // Prepare
    await writeFile(join(project, 'worker.cts'), COMMONJS_TYPESCRIPT_WORKER);
    await writeFile(
      join(project, 'wrong.cts'),
      COMMONJS_TYPESCRIPT_WORKER.replace('greeting: `', 'greting: `'),
    );
    const tsc = (...args: string[]) => runCommand(process.execPath, [TSC, ...args], { cwd: project });
    expect((await tsc('--init')).code).toBe(0);

    // Act
    const checked = await tsc('--noEmit', '--listFiles');

    // Assess: only wrong.cts fails, on the misspelt key; no file of Switchyard's sources is read.
    expect(checked.stdout.split('\n').filter((line) => /error TS/.test(line))).toEqual([
      expect.stringMatching(/^wrong\.cts\(\d+,\d+\): error TS2322: .*greting/),
    ]);
    const read = checked.stdout
      .split('\n')
      .filter((line) => line.includes('node_modules/switchyard-worker/'));
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((file) => !file.endsWith('.d.ts'))).toEqual([]);
  });
});
