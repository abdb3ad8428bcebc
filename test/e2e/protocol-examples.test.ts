import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueue, type Fauxqs, startSqsEmulator } from '../support/fauxqs.js';
import { eventually } from '../support/rabbitmq.js';
import { environmentOutsideNpm, startCommand } from '../support/run-command.js';
import { lockedVersion, packWorkerSdk, userProject } from '../support/worker-package.js';

const ROOT = join(import.meta.dirname, '../..');

/** The TypeScript examples of docs/protocol.md that import the SDK by the package's name, in order. */
async function documentedWorkers(): Promise<string[]> {
  const text = await readFile(join(ROOT, 'docs/protocol.md'), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => match[1] as string)
    .filter((code) => code.includes("from 'switchyard-worker'"));
}

/**
 * docs/protocol.md's quick start runs in test/e2e/runnable-docs.test.ts; its SQS worker needs AWS,
 * so it runs here against the SQS emulator: in a project as the docs make it (the packed SDK and
 * @aws-sdk/client-sqs installed, `"type": "module"`), with `node FILE` as the docs say.
 */
describe('docs/protocol.md: the example workers run as written', { timeout: 300_000 }, () => {
  let dir: string;
  let project: string;
  let examples: string[];

  beforeAll(async () => {
    examples = await documentedWorkers();
    dir = await mkdtemp(join(tmpdir(), 'switchyard-protocol-examples-'));
    project = join(dir, 'workers');
    await userProject(
      project,
      [await packWorkerSdk(dir), await lockedVersion('@aws-sdk/client-sqs')],
      'module',
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('documents one worker for RabbitMQ (the quick start) and one for SQS', () => {
    expect(examples).toHaveLength(2);
    expect(examples[1]).toContain('SqsWorkerTransport');
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
      await writeFile(join(project, 'count-words.ts'), examples[1] as string);
      const { url: queueUrl } = await createQueue(sqs.client, 'Switchyard-count-words');
      const { url: replyUrl } = await createQueue(sqs.client, 'Switchyard-replies');
      // The emulator's queue URLs are on sqs.us-east-1.localhost, which the client follows: resolve it here.
      const preload = join(dir, 'localhost-dns.mjs');
      await writeFile(
        preload,
        `import { interceptLocalhostDns } from '${import.meta.resolve('fauxqs')}';\ninterceptLocalhostDns();\n`,
      );
      const worker = startCommand(process.execPath, ['--import', preload, 'count-words.ts'], {
        cwd: project,
        env: environmentOutsideNpm({
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_ENDPOINT_URL_SQS: sqs.endpoint,
        }),
      });
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
