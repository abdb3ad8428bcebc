import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Timer } from '../../../../engine/index.js';
import {
  decodeTimer,
  delaySeconds,
  encodeTimer,
  SqsTimers,
} from '../../../../functions/adapters/sqs/timers.js';
import { type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../../support/fauxqs.js';

let sqs: Fauxqs;

beforeAll(async () => {
  sqs = await startSqsEmulator();
});

afterAll(async () => {
  await sqs.stop();
});

function aTimer(at: number, overrides: Partial<Timer> = {}): Timer {
  return { jobId: randomUUID(), step: 'count', kind: 'attempt', attempt: 1, at, ...overrides };
}

async function timerQueue(): Promise<string> {
  const { QueueUrl } = await sqs.client.send(
    new CreateQueueCommand({ QueueName: `${uniqueQueuePrefix()}switchyard-timers` }),
  );
  return QueueUrl as string;
}

async function receive(queueUrl: string, waitTimeSeconds: number) {
  const { Messages = [] } = await sqs.client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitTimeSeconds,
    }),
  );
  return Messages;
}

describe('Class: SqsTimers', () => {
  describe('on fauxqs', () => {
    it('sends each timer as a message delayed until it is due', async () => {
      // Prepare
      const queueUrl = await timerQueue();
      const timers = new SqsTimers({ client: sqs.client, queueUrl });
      const sentAt = Date.now();
      const timer = aTimer(sentAt + 2_000, { step: null, kind: 'job', attempt: 0 });

      // Act
      await timers.arm([timer]);
      const early = await receive(queueUrl, 0);
      const deadline = Date.now() + 10_000;
      let messages = await receive(queueUrl, 1);
      while (messages.length === 0 && Date.now() < deadline) messages = await receive(queueUrl, 1);
      const arrivedAfter = Date.now() - sentAt;

      // Assess
      expect(early).toEqual([]);
      expect(messages.map((message) => decodeTimer(message.Body ?? ''))).toEqual([timer]);
      expect(arrivedAfter).toBeGreaterThanOrEqual(1_900);
    });

    it('sends many timers in batches of ten', async () => {
      // Prepare
      const queueUrl = await timerQueue();
      const timers = new SqsTimers({ client: sqs.client, queueUrl });
      const due = Array.from({ length: 25 }, () => aTimer(0));

      // Act
      await timers.arm(due);
      const received = [];
      const deadline = Date.now() + 10_000;
      while (received.length < 25 && Date.now() < deadline) received.push(...(await receive(queueUrl, 1)));

      // Assess
      expect(received.map((message) => decodeTimer(message.Body ?? '')?.jobId).sort()).toEqual(
        due.map((timer) => timer.jobId).sort(),
      );
    });
  });

  describe('when SQS fails (aws-sdk-client-mock)', () => {
    // One mocked client per test: mocking the class would take the emulator's clients too.
    const client = new SQSClient({ region: 'us-east-1' });
    const mocked = mockClient(client);

    afterEach(() => {
      mocked.reset();
    });

    it('never throws from arm: it reports the timers that were not sent, for the sweep to fire', async () => {
      // Prepare
      mocked
        .on(SendMessageBatchCommand)
        .rejects(Object.assign(new Error('down'), { name: 'ServiceUnavailable' }));
      const reported: { message: string; timers: readonly Timer[] }[] = [];
      const timers = new SqsTimers({
        client,
        queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/timers',
        onError: (error, lost) => reported.push({ message: error.message, timers: lost }),
      });
      const timer = aTimer(Date.now());

      // Act
      await timers.arm([timer]);

      // Assess
      expect(reported).toEqual([
        { message: 'sending 1 timer message(s) failed: ServiceUnavailable: down', timers: [timer] },
      ]);
    });

    it('reports the entries SQS refused, and resend throws for them', async () => {
      // Prepare
      mocked.on(SendMessageBatchCommand).resolves({
        Successful: [{ Id: 't0', MessageId: 'm0', MD5OfMessageBody: '' }],
        Failed: [{ Id: 't1', SenderFault: false, Code: 'InternalError', Message: 'try again' }],
      });
      const reported: Timer[] = [];
      const timers = new SqsTimers({
        client,
        queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/timers',
        onError: (_error, lost) => reported.push(...lost),
      });
      const pair = [aTimer(Date.now()), aTimer(Date.now())];

      // Act
      await timers.arm(pair);
      const resend = timers.resend(pair);

      // Assess
      expect(reported).toEqual([pair[1]]);
      await expect(resend).rejects.toThrow('SQS did not take 1 timer message(s): InternalError: try again');
    });
  });
});

describe('Function: delaySeconds', () => {
  it('rounds up to whole seconds and stays within SQS limits', () => {
    expect(delaySeconds(1_000, 1_000)).toBe(0);
    expect(delaySeconds(500, 1_000)).toBe(0);
    expect(delaySeconds(1_001, 0)).toBe(2);
    expect(delaySeconds(3_600_000, 0)).toBe(900);
  });
});

describe('Function: decodeTimer', () => {
  it('reads back what encodeTimer wrote, and nothing else', () => {
    const timer = aTimer(123, { kind: 'retry', attempt: 2 });
    expect(decodeTimer(encodeTimer(timer))).toEqual(timer);
    expect(decodeTimer('{"jobId":"x","step":null,"kind":"nap","attempt":1,"at":1}')).toBeUndefined();
    expect(decodeTimer('[]')).toBeUndefined();
    expect(decodeTimer('nope')).toBeUndefined();
  });
});
