import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build-worker.js';
import { createQueue, type Fauxqs, startSqsEmulator } from '../support/fauxqs.js';
import {
  AMQP_URL,
  addVhost,
  deleteVhost,
  eventually,
  openTestChannel,
  uniqueName,
} from '../support/rabbitmq.js';

const ROOT = join(import.meta.dirname, '../..');

/** The TypeScript examples of docs/protocol.md that import the SDK by the package's name, in order. */
async function documentedWorkers(): Promise<string[]> {
  const text = await readFile(join(ROOT, 'docs/protocol.md'), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => match[1] as string)
    .filter((code) => code.includes("from 'switchyard/worker'"));
}

/**
 * Runs a file as the docs say: `node --import tsx FILE`, from inside the package (its self-reference).
 * `preload`: another module node imports first (the SQS emulator's host names).
 */
function runDocumented(file: string, env: NodeJS.ProcessEnv, preload?: string) {
  let output = '';
  const imports = ['--import', 'tsx', ...(preload ? ['--import', preload] : [])];
  const child: ChildProcess = spawn(process.execPath, [...imports, file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('docs/protocol.md: the example workers run as written', { timeout: 60_000 }, () => {
  // Inside the repository, so that `switchyard/worker` resolves to this package; .scratch/ is ignored by git.
  const dir = join(ROOT, '.scratch', uniqueName('protocol-examples'));
  let examples: string[];

  beforeAll(async () => {
    await buildWorker();
    examples = await documentedWorkers();
    await mkdir(dir, { recursive: true });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('documents one worker for RabbitMQ and one for SQS', () => {
    expect(examples).toHaveLength(2);
    expect(examples[1]).toContain('SqsWorkerTransport');
  });

  describe('the RabbitMQ worker', () => {
    const vhost = uniqueName('protocol-docs');

    beforeAll(async () => {
      await addVhost(vhost);
    });

    afterAll(async () => {
      await deleteVhost(vhost).catch(() => {});
    });

    it('answers a request on its queue and stops on SIGTERM with exit 0', async () => {
      // Prepare
      const file = join(dir, 'worker.ts');
      await writeFile(file, examples[0] as string);
      const worker = runDocumented(file, { AMQP_URL: `${AMQP_URL.replace(/\/$/, '')}/${vhost}` });
      const { model, channel } = await openTestChannel(vhost);
      try {
        await channel.assertQueue('segment-word-counts', { durable: true });
        await channel.assertQueue('replies', { durable: false });
        await eventually(
          'the worker to consume',
          async () => (await channel.checkQueue('segment-word-counts')).consumerCount === 1,
          30_000,
        );

        // Act
        channel.sendToQueue(
          'segment-word-counts',
          Buffer.from(JSON.stringify({ section: { id: 's1', title: 'I' }, dataDir: '/tmp' })),
          { correlationId: '00000000-0000-4000-8000-000000000001:section', replyTo: 'replies' },
        );
        const reply = await eventually(
          'the reply',
          async () => (await channel.get('replies', { noAck: true })) || undefined,
          20_000,
        );
        worker.child.kill('SIGTERM');

        // Assess
        expect(JSON.parse(reply.content.toString())).toEqual({
          section: { id: 's1', title: 'I' },
          dataDir: '/tmp',
          counted: true,
        });
        expect(await worker.exited, worker.output()).toBe(0);
      } finally {
        worker.child.kill('SIGKILL');
        await model.close().catch(() => {});
      }
    });
  });

  describe('the SQS worker', () => {
    let sqs: Fauxqs;

    beforeAll(async () => {
      sqs = await startSqsEmulator();
    });

    afterAll(async () => {
      await sqs?.stop();
    });

    it('answers a request on <prefix>count-words, found through the AWS SDK environment', async () => {
      // Prepare
      const file = join(dir, 'count-words.ts');
      await writeFile(file, examples[1] as string);
      const { url: queueUrl } = await createQueue(sqs.client, 'Switchyard-count-words');
      const { url: replyUrl } = await createQueue(sqs.client, 'Switchyard-replies');
      // The emulator's queue URLs are on sqs.us-east-1.localhost, which the client follows: resolve it here.
      const preload = join(dir, 'localhost-dns.mjs');
      await writeFile(preload, "import { interceptLocalhostDns } from 'fauxqs';\ninterceptLocalhostDns();\n");
      const worker = runDocumented(
        file,
        {
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_ENDPOINT_URL_SQS: sqs.endpoint,
        },
        preload,
      );
      try {
        // Act
        await sqs.client.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: JSON.stringify({ text: 'the quick  brown fox' }),
            MessageAttributes: {
              correlation_id: {
                DataType: 'String',
                StringValue: '00000000-0000-4000-8000-000000000002:count',
              },
              reply_to: { DataType: 'String', StringValue: replyUrl },
              attempt: { DataType: 'Number', StringValue: '1' },
            },
          }),
        );
        const reply = await eventually(
          'the reply',
          async () => {
            const { Messages } = await sqs.client.send(
              new ReceiveMessageCommand({
                QueueUrl: replyUrl,
                MessageAttributeNames: ['All'],
                WaitTimeSeconds: 1,
              }),
            );
            const message = Messages?.[0];
            if (message?.ReceiptHandle)
              await sqs.client.send(
                new DeleteMessageCommand({ QueueUrl: replyUrl, ReceiptHandle: message.ReceiptHandle }),
              );
            return message;
          },
          30_000,
        ).catch((error: Error) => {
          throw new Error(`${error.message}; the worker said:\n${worker.output()}`);
        });
        worker.child.kill('SIGTERM');

        // Assess
        expect(JSON.parse(reply.Body as string)).toEqual({ words: 4 });
        expect(reply.MessageAttributes?.correlation_id?.StringValue).toBe(
          '00000000-0000-4000-8000-000000000002:count',
        );
        expect(await worker.exited, worker.output()).toBe(0);
      } finally {
        worker.child.kill('SIGKILL');
      }
    });
  });
});
