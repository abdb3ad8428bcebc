import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorker } from '../../../scripts/build-worker.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../../support/rabbitmq.js';

const run = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '../../fixtures/worker-package');

describe('The worker SDK as the package entry "switchyard/worker"', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    // The JavaScript that package.json's exports point at: built as `npm run build` builds it.
    await buildWorker();
  });

  it('loads by the package name in plain node, without tsx: switchyard/worker, switchyard/worker/sqs and switchyard/worker/lambda', async () => {
    // Act
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'plain-node.mjs')]);

    // Assess
    expect(JSON.parse(stdout)).toEqual({
      runWorker: 'function',
      createWorker: 'function',
      WorkerError: 'function',
      AbortJob: 'function',
      SqsWorkerTransport: 'function',
      lambdaWorker: 'function',
    });
  });

  describe('a TypeScript file with two typed workers, run with node --import tsx', () => {
    const prefix = uniqueName('package-entry');
    const replies = `${prefix}-replies`;

    afterAll(async () => {
      await deleteQueues([`${prefix}-charge`, `${prefix}-count`, replies]);
    });

    it('answers on both queues, and one SIGTERM stops both and exits 0', async () => {
      // Prepare
      const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'two-workers.ts')], {
        env: { ...process.env, WORKER_QUEUE_PREFIX: prefix },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const { model, channel } = await openTestChannel();
      try {
        await eventually('the workers are ready', () => output.includes('ready'), 20_000);
        await channel.assertQueue(replies, { durable: false, autoDelete: false });
        const ask = (queue: string, id: string, body: object) =>
          channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), {
            correlationId: `${id}:step`,
            replyTo: replies,
            headers: { 'x-attempt': 1 },
          });

        // Act
        ask(`${prefix}-charge`, '00000000-0000-4000-8000-000000000001', { orderId: 'A1', amount: 12.5 });
        ask(`${prefix}-count`, '00000000-0000-4000-8000-000000000002', { text: 'a b  c' });
        const answers = new Map<string, unknown>();
        await eventually(
          'both replies',
          async () => {
            const message = await channel.get(replies, { noAck: true });
            if (message)
              answers.set(String(message.properties.correlationId), JSON.parse(message.content.toString()));
            return answers.size === 2;
          },
          20_000,
        );
        child.kill('SIGTERM');

        // Assess
        expect(answers.get('00000000-0000-4000-8000-000000000001:step')).toEqual({
          chargeId: 'ch-A1-1',
          amount: 12.5,
        });
        expect(answers.get('00000000-0000-4000-8000-000000000002:step')).toEqual({ words: 3 });
        expect(await exited).toBe(0);
      } finally {
        child.kill('SIGKILL');
        await model.close().catch(() => {});
      }
    });
  });
});
