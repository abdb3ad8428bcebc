import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  RequestThrottled,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JsonObject } from '../../../../engine/json.js';
import { UndeliverableError } from '../../../../engine/ports/bus.js';
import { SqsBus } from '../../../../functions/adapters/sqs/bus.js';
import { REQUEST_IN_SQS } from '../../../../functions/adapters/sqs/request-message.js';
import { SqsSendError } from '../../../../functions/adapters/sqs/send-error.js';
import { aRequestTo } from '../../../support/factories.js';
import {
  createQueue,
  type Fauxqs,
  sqsClient,
  startSqsEmulator,
  uniqueQueuePrefix,
} from '../../../support/fauxqs.js';
import { describeBusContract, fromCorrelationId } from '../../bus-contract.js';

let sqs: Fauxqs;

beforeAll(async () => {
  sqs = await startSqsEmulator();
});

afterAll(async () => {
  await sqs.stop();
});

/** A body whose JSON is exactly `bytes` long. */
function bodyOfSize(bytes: number): JsonObject {
  return { pad: 'x'.repeat(bytes - '{"pad":""}'.length) };
}

/** Receives until `count` messages arrived, or fails after the deadline. */
async function receiveAll(
  client: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 10_000,
): Promise<Message[]> {
  const messages: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count) {
    if (Date.now() > deadline)
      throw new Error(`received ${messages.length} of ${count} messages from ${queueUrl}`);
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        VisibilityTimeout: 300,
      }),
    );
    messages.push(...Messages);
  }
  return messages;
}

async function sendError(promise: Promise<unknown>): Promise<SqsSendError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SqsSendError);
  return error as SqsSendError;
}

describeBusContract('sqs (fauxqs)', async () => {
  const prefix = uniqueQueuePrefix();
  const { url: replyQueueUrl } = await createQueue(sqs.client, `${prefix}replies`);
  const queueUrls = new Map<string, string>();
  return {
    bus: new SqsBus({ client: sqs.client, queuePrefix: prefix, replyQueueUrl }),
    placement: REQUEST_IN_SQS,
    vhost: 'tenant-a',
    aQueue: async () => {
      const queue = `contract${queueUrls.size}`;
      queueUrls.set(queue, (await createQueue(sqs.client, `${prefix}${queue}`)).url);
      return queue;
    },
    receive: async (queue) => {
      const [message] = await receiveAll(sqs.client, queueUrls.get(queue) as string, 1);
      const attributes = message?.MessageAttributes ?? {};
      return {
        ...fromCorrelationId(attributes.correlation_id?.StringValue ?? ''),
        queue,
        attempt: Number(attributes.attempt?.StringValue),
        body: JSON.parse(message?.Body ?? ''),
      };
    },
    cleanup: async () => {},
  };
});

describe('Class: SqsBus (on fauxqs)', () => {
  describe('Method: send', () => {
    it('sends the body as JSON with exactly the attributes of protocol.md', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const { url: queueUrl } = await createQueue(sqs.client, `${prefix}count`);
      const { url: replyQueueUrl } = await createQueue(sqs.client, `${prefix}replies`);
      const bus = new SqsBus({ client: sqs.client, queuePrefix: prefix, replyQueueUrl });
      const request = aRequestTo('count', { attempt: 2, body: { text: 'héllo', n: 3 } });

      // Act
      await bus.send([request]);

      // Assess
      const [message] = await receiveAll(sqs.client, queueUrl, 1);
      expect(message?.Body).toBe('{"text":"héllo","n":3}');
      expect(message?.MessageAttributes).toEqual({
        correlation_id: { DataType: 'String', StringValue: request.correlationId },
        reply_to: { DataType: 'String', StringValue: replyQueueUrl },
        attempt: { DataType: 'Number', StringValue: '2' },
      });
    });

    it('sends 250 requests to 3 queues in batches of at most 10, and every one arrives', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const queues = ['alpha', 'beta', 'gamma'];
      const urls = await Promise.all(
        queues.map(async (queue) => (await createQueue(sqs.client, `${prefix}${queue}`)).url),
      );
      const client = sqs.newClient();
      const sendSpy = vi.spyOn(client, 'send');
      const bus = new SqsBus({ client, queuePrefix: prefix, replyQueueUrl: 'http://unused/replies' });
      const requests = Array.from({ length: 250 }, (_, index) =>
        aRequestTo(queues[index % 3] as string, { body: { index } }),
      );

      // Act
      await bus.send(requests);

      // Assess
      const batchCalls = sendSpy.mock.calls
        .map(([command]) => command)
        .filter((command) => command instanceof SendMessageBatchCommand);
      expect(batchCalls).toHaveLength(9 + 9 + 9); // 84, 83 and 83 requests
      for (const command of batchCalls) expect(command.input.Entries?.length).toBeLessThanOrEqual(10);
      for (const [index, url] of urls.entries()) {
        const expected = requests.filter((request) => request.queue === queues[index]);
        const received = await receiveAll(sqs.client, url, expected.length);
        expect(
          received.map((message) => message.MessageAttributes?.correlation_id?.StringValue).sort(),
        ).toEqual(expected.map((request) => request.correlationId).sort());
      }
    });

    it('splits a batch by size: three 400 KB requests go in two calls under the 1 MiB batch limit', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const { url: queueUrl } = await createQueue(sqs.client, `${prefix}big`);
      const client = sqs.newClient();
      const sendSpy = vi.spyOn(client, 'send');
      const bus = new SqsBus({ client, queuePrefix: prefix, replyQueueUrl: 'http://unused/replies' });
      const requests = [1, 2, 3].map(() => aRequestTo('big', { body: bodyOfSize(400_000) }));

      // Act
      await bus.send(requests);

      // Assess
      const batchCalls = sendSpy.mock.calls.filter(([command]) => command instanceof SendMessageBatchCommand);
      expect(batchCalls).toHaveLength(2);
      expect(await receiveAll(sqs.client, queueUrl, 3)).toHaveLength(3);
    });

    it('rejects a request over 1 MiB with a clear message, and still sends the others of the call', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const { url: queueUrl } = await createQueue(sqs.client, `${prefix}work`);
      const bus = new SqsBus({
        client: sqs.client,
        queuePrefix: prefix,
        replyQueueUrl: 'http://unused/replies',
      });
      const small = aRequestTo('work');
      const tooLarge = aRequestTo('work', { body: bodyOfSize(1_048_576) });
      const largestAllowed = aRequestTo('work', { body: bodyOfSize(1_048_000) });

      // Act
      const error = await sendError(bus.send([small, tooLarge, largestAllowed]));

      // Assess
      expect(error.retryable).toEqual([]);
      expect(error.undeliverable).toHaveLength(1);
      const [undeliverable] = error.undeliverable;
      expect(undeliverable).toBeInstanceOf(UndeliverableError);
      expect(undeliverable?.correlationId).toBe(tooLarge.correlationId);
      const size =
        1_048_576 +
        ('correlation_id' + 'String' + tooLarge.correlationId).length +
        ('reply_to' + 'String' + 'http://unused/replies').length +
        ('attempt' + 'Number' + '1').length;
      expect(undeliverable?.message).toBe(
        `the request ${tooLarge.correlationId} for queue ${prefix}work is ${size} bytes (body and message ` +
          'attributes), over the SQS limit of 1048576 bytes (1 MiB); it was not sent',
      );
      expect(error.message).toContain(tooLarge.correlationId);
      const received = await receiveAll(sqs.client, queueUrl, 2);
      expect(
        received.map((message) => message.MessageAttributes?.correlation_id?.StringValue).sort(),
      ).toEqual([small.correlationId, largestAllowed.correlationId].sort());
    });

    it('reports a queue name SQS cannot have as undeliverable', async () => {
      // Prepare
      const bus = new SqsBus({
        client: sqs.client,
        queuePrefix: uniqueQueuePrefix(),
        replyQueueUrl: 'http://x/r',
      });
      const request = aRequestTo('words.count');

      // Act
      const error = await sendError(bus.send([request]));

      // Assess
      expect(error.undeliverable.map((failure) => failure.correlationId)).toEqual([request.correlationId]);
      expect(error.undeliverable[0]?.message).toMatch(/is not a valid SQS queue name/);
    });

    it('reports requests to a queue that does not exist as retryable', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const bus = new SqsBus({ client: sqs.client, queuePrefix: prefix, replyQueueUrl: 'http://x/r' });
      const request = aRequestTo('missing');

      // Act
      const error = await sendError(bus.send([request]));

      // Assess
      expect(error.undeliverable).toEqual([]);
      expect(error.retryable).toEqual([request.correlationId]);
      expect(error.message).toContain(`the SQS queue ${prefix}missing does not exist`);
    });
  });

  describe('Method: ensureQueues', () => {
    it('creates missing queues with the configured attributes, and is idempotent', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const deadLetter = sqs.server.createQueue(`${prefix}dlq`);
      const bus = new SqsBus({
        client: sqs.client,
        queuePrefix: prefix,
        replyQueueUrl: 'http://x/r',
        createMissingQueues: {
          visibilityTimeoutSeconds: 45,
          messageRetentionSeconds: 86_400,
          deadLetter: { targetArn: deadLetter.queueArn, maxReceiveCount: 3 },
          encryption: { kind: 'kms', keyId: 'alias/switchyard', dataKeyReusePeriodSeconds: 300 },
          tlsOnly: { queueArnPrefix: 'arn:aws:sqs:us-east-1:000000000000:' },
        },
      });
      const { url: existingUrl } = await createQueue(sqs.client, `${prefix}existing`);

      // Act
      await bus.ensureQueues([
        { queue: 'fresh', vhost: null },
        { queue: 'existing', vhost: null },
        { queue: 'fresh', vhost: '/' },
      ]);
      await bus.ensureQueues([{ queue: 'fresh', vhost: null }]);

      // Assess
      const { QueueUrl } = await sqs.client.send(new GetQueueUrlCommand({ QueueName: `${prefix}fresh` }));
      const { Attributes } = await sqs.client.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
      );
      expect(Attributes).toMatchObject({
        VisibilityTimeout: '45',
        MessageRetentionPeriod: '86400',
        KmsMasterKeyId: 'alias/switchyard',
        KmsDataKeyReusePeriodSeconds: '300',
      });
      expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
        deadLetterTargetArn: deadLetter.queueArn,
        maxReceiveCount: 3,
      });
      expect(JSON.parse(Attributes?.Policy ?? '{}').Statement).toEqual([
        {
          Sid: 'DenyInsecureTransport',
          Effect: 'Deny',
          Principal: '*',
          Action: 'sqs:*',
          Resource: `arn:aws:sqs:us-east-1:000000000000:${prefix}fresh`,
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ]);
      const existing = await sqs.client.send(
        new GetQueueAttributesCommand({ QueueUrl: existingUrl, AttributeNames: ['VisibilityTimeout'] }),
      );
      expect(existing.Attributes?.VisibilityTimeout).toBe('30');
    });

    it('fails on a missing queue when it is not configured to create queues', async () => {
      // Prepare
      const prefix = uniqueQueuePrefix();
      const bus = new SqsBus({ client: sqs.client, queuePrefix: prefix, replyQueueUrl: 'http://x/r' });

      // Act
      const attempt = bus.ensureQueues([{ queue: 'absent', vhost: null }]);

      // Assess
      await expect(attempt).rejects.toThrow(
        `the SQS queue ${prefix}absent does not exist and this bus is not configured to create missing queues`,
      );
    });
  });

  describe('Method: ping', () => {
    it('resolves while SQS answers, and rejects once the endpoint is gone', async () => {
      // Prepare
      const other = await startSqsEmulator();
      const { url: replyQueueUrl } = await createQueue(other.client, `${uniqueQueuePrefix()}replies`);
      const client = sqsClient(other.endpoint);
      const bus = new SqsBus({ client, queuePrefix: 'p-', replyQueueUrl, pingTimeoutMs: 3_000 });
      await bus.ping();

      // Act
      await other.stop();

      // Assess
      await expect(bus.ping()).rejects.toThrow();
      client.destroy();
    });
  });

  describe('Method: close', () => {
    it('refuses calls once closed', async () => {
      // Prepare
      const bus = new SqsBus({ client: sqs.client, queuePrefix: 'p-', replyQueueUrl: 'http://x/r' });

      // Act
      await bus.close();

      // Assess
      await expect(bus.send([aRequestTo('q')])).rejects.toThrow('the SQS bus is closed');
    });
  });
});

describe('Class: SqsBus (error paths, mocked SQS)', () => {
  const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/p-work';

  function mockedBus(): { bus: SqsBus; mock: ReturnType<typeof mockClient> } {
    const client = sqsClient('http://127.0.0.1:1');
    const mock = mockClient(client);
    mock.on(GetQueueUrlCommand).resolves({ QueueUrl: queueUrl });
    const bus = new SqsBus({
      client,
      queuePrefix: 'p-',
      replyQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/p-replies',
      sendAttempts: 3,
      retryBaseDelayMs: 5,
    });
    return { bus, mock };
  }

  it('sends a throttled batch again, and resolves when it goes through', async () => {
    // Prepare
    const { bus, mock } = mockedBus();
    mock
      .on(SendMessageBatchCommand)
      .rejectsOnce(new RequestThrottled({ message: 'Rate exceeded', $metadata: {} }))
      .resolves({ Successful: [{ Id: 'r0', MessageId: 'm0', MD5OfMessageBody: '' }], Failed: [] });

    // Act
    await bus.send([aRequestTo('work')]);

    // Assess
    expect(mock.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });

  it('resends only the entries SQS failed, then rejects with them as retryable', async () => {
    // Prepare
    const { bus, mock } = mockedBus();
    const requests = [aRequestTo('work'), aRequestTo('work'), aRequestTo('work')];
    mock.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.filter((entry) => entry.Id !== 'r1').map((entry) => ({
        Id: entry.Id,
        MessageId: `m-${entry.Id}`,
        MD5OfMessageBody: '',
      })),
      Failed: input.Entries.filter((entry) => entry.Id === 'r1').map((entry) => ({
        Id: entry.Id,
        SenderFault: false,
        Code: 'InternalError',
        Message: 'try again',
      })),
    }));

    // Act
    const error = await sendError(bus.send(requests));

    // Assess
    const calls = mock.commandCalls(SendMessageBatchCommand);
    expect(calls.map((call) => call.args[0].input.Entries?.map((entry) => entry.Id))).toEqual([
      ['r0', 'r1', 'r2'],
      ['r1'],
      ['r1'],
    ]);
    expect(error.undeliverable).toEqual([]);
    expect(error.retryable).toEqual([requests[1]?.correlationId]);
    expect(error.message).toContain('after 3 attempts: InternalError: try again');
  });

  it('does not resend an entry SQS refused as the sender fault: it is undeliverable', async () => {
    // Prepare
    const { bus, mock } = mockedBus();
    const request = aRequestTo('work');
    mock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: 'r0', SenderFault: true, Code: 'InvalidMessageContents', Message: 'bad characters' }],
    });

    // Act
    const error = await sendError(bus.send([request]));

    // Assess
    expect(mock.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
    expect(error.undeliverable.map((failure) => failure.correlationId)).toEqual([request.correlationId]);
    expect(error.undeliverable[0]?.message).toContain('InvalidMessageContents: bad characters');
  });

  it('gives up at once on a client fault such as access denied, keeping the requests retryable', async () => {
    // Prepare
    const { bus, mock } = mockedBus();
    const request = aRequestTo('work');
    const denied = Object.assign(new Error('not authorized to perform sqs:SendMessage'), {
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: {},
    });
    mock.on(SendMessageBatchCommand).rejects(denied);

    // Act
    const error = await sendError(bus.send([request]));

    // Assess
    expect(mock.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
    expect(error.retryable).toEqual([request.correlationId]);
    expect(error.errors[0]?.message).toContain('not authorized to perform sqs:SendMessage');
  });

  it('keeps throttled requests retryable once the attempts run out', async () => {
    // Prepare
    const { bus, mock } = mockedBus();
    const request = aRequestTo('work');
    mock
      .on(SendMessageBatchCommand)
      .rejects(new RequestThrottled({ message: 'Rate exceeded', $metadata: {} }));

    // Act
    const error = await sendError(bus.send([request]));

    // Assess
    expect(mock.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
    expect(error.retryable).toEqual([request.correlationId]);
    expect(error.message).toContain('RequestThrottled: Rate exceeded');
  });
});
