import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun } from '../support/cli-process.js';
import { AMQP_URL, addVhost, deleteVhost, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { environmentOutsideNpm, runCommand } from '../support/run-command.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const ROOT = join(import.meta.dirname, '../..');

/**
 * `npm run demo` and `npm run demo:orders` next to the state the README's walkthrough leaves: a
 * `switchyard serve` consuming the reply queue `workflow-manager` on the same broker. On a vhost of
 * its own, so that the demos' fixed queue names meet no other test's.
 */
describe('The demos beside another serve on the same broker', { timeout: 180_000 }, () => {
  const vhost = uniqueName('demos');
  const amqpUrl = `${AMQP_URL.replace(/\/$/, '')}/${vhost}`;
  const env = environmentOutsideNpm({ AMQP_URL: amqpUrl });
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    await addVhost(vhost);
    serve = await spawnServe(['--config', 'examples/word-counts/workflows.yaml', '--db', ':memory:'], {
      AMQP_URL: amqpUrl,
    });
  });

  afterAll(async () => {
    await serve?.kill('SIGKILL');
    await deleteVhost(vhost).catch(() => {});
  });

  it('npm run demo counts the book on queues of its own', async () => {
    const run = await runCommand('npm', ['run', '--silent', 'demo'], { cwd: ROOT, env, timeoutMs: 150_000 });

    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain('12 chapters, 29,371 words, 5,947 distinct');
    expect(run.stderr, describeRun(run)).toBe('');
  });

  it('npm run demo:orders runs its four orders', async () => {
    const run = await runCommand('npm', ['run', '--silent', 'demo:orders'], {
      cwd: ROOT,
      env,
      timeoutMs: 150_000,
    });

    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout.match(/job [0-9a-f-]{36}: (completed|failed|aborted)/g), describeRun(run)).toHaveLength(
      4,
    );
  });

  it('npm run demo:documents reviews, approves, pays and rejects its three documents', async () => {
    const run = await runCommand('npm', ['run', '--silent', 'demo:documents'], {
      cwd: ROOT,
      env,
      timeoutMs: 150_000,
    });

    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout.match(/job [0-9a-f-]{36}: (completed|failed)/g), describeRun(run)).toEqual([
      expect.stringMatching(/completed$/),
      expect.stringMatching(/completed$/),
      expect.stringMatching(/failed$/),
    ]);
    expect(run.stdout).toContain('"approvedBy":"no approval needed"');
    expect(run.stdout).toContain('"approvedBy":"ann"');
    expect(run.stdout).toContain('error: the customer server decided to reject file-986.pdf');
    expect(run.stderr, describeRun(run)).toBe('');
  });

  it('a demo whose reply queue another manager holds ends in one line and exit 1', async () => {
    // Another manager (another demo) consumes the demo's reply queue, exclusively as serve does.
    const { model, channel } = await openTestChannel(vhost);
    try {
      await channel.assertQueue('switchyard-demo', { durable: true });
      await channel.consume('switchyard-demo', () => {}, { exclusive: true });

      const run = await runCommand('npm', ['run', '--silent', 'demo'], { cwd: ROOT, env, timeoutMs: 60_000 });

      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stderr.trim().split('\n'), describeRun(run)).toEqual([
        expect.stringMatching(
          /^demo failed: switchyard serve stopped: the reply queue "switchyard-demo" at .* is consumed by another manager/,
        ),
      ]);
    } finally {
      await model.close().catch(() => {});
    }
  });
});
