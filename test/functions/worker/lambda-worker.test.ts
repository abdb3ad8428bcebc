import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  GetQueueUrlCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { abort, SuspendStep, WorkerError, type WorkerLogger } from '../../../functions/worker/index.js';
import { BACK_AFTER_DEADLINE_SECONDS } from '../../../functions/worker/lambda/hidden-while-handled.js';
import { type LambdaWorkerOptions, lambdaWorker } from '../../../functions/worker/lambda/index.js';
import type { WorkerHandler } from '../../../functions/worker/worker-types.js';
import { aLambdaContext, anSqsEvent, anSqsRecord } from '../../support/aws-events.js';
import { eventually } from '../../support/rabbitmq.js';

const STEP_QUEUE = 'Switchyard_count-words';
const STEP_QUEUE_URL = `https://sqs.us-east-1.amazonaws.com/123456789012/${STEP_QUEUE}`;
const REPLY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard_workflow-manager';

const clients: SQSClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

interface Harness {
  replies: SendMessageCommandInput[];
  visibilityChanges: ChangeMessageVisibilityCommandInput[];
  logged: string[];
  run(records: SQSRecord[], remainingMs?: number): ReturnType<ReturnType<typeof lambdaWorker>>;
}

/** A lambdaWorker on a mocked SQS client that records the replies and visibility changes it sends. */
function aLambdaWorker(
  handler: WorkerHandler,
  options: Omit<LambdaWorkerOptions, 'client' | 'logger'> & { replyFails?: boolean } = {},
): Harness {
  const client = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  clients.push(client);
  const replies: SendMessageCommandInput[] = [];
  const visibilityChanges: ChangeMessageVisibilityCommandInput[] = [];
  const mock = mockClient(client);
  mock.on(GetQueueUrlCommand, { QueueName: STEP_QUEUE }).resolves({ QueueUrl: STEP_QUEUE_URL });
  mock.on(SendMessageCommand).callsFake((input: SendMessageCommandInput) => {
    if (options.replyFails) throw Object.assign(new Error('throttled'), { name: 'RequestThrottled' });
    replies.push(input);
    return { MessageId: randomUUID() };
  });
  mock.on(ChangeMessageVisibilityCommand).callsFake((input: ChangeMessageVisibilityCommandInput) => {
    visibilityChanges.push(input);
    return {};
  });
  const logged: string[] = [];
  const logger: WorkerLogger = {
    info: (message) => logged.push(message),
    warn: (message, details) => logged.push(details ? `${message} ${JSON.stringify(details)}` : message),
    error: (message) => logged.push(message),
  };
  const fn = lambdaWorker(handler, { ...options, client, logger });
  return {
    replies,
    visibilityChanges,
    logged,
    run: (records, remainingMs = 60_000) => fn(anSqsEvent(records), aLambdaContext(remainingMs)),
  };
}

/** A request as the manager's SQS bus sends it, delivered by the event source. */
function aRequest(body: unknown, options: { attempt?: number; receiveCount?: number } = {}): SQSRecord {
  return anSqsRecord({
    body: typeof body === 'string' ? body : JSON.stringify(body),
    queue: STEP_QUEUE,
    receiveCount: options.receiveCount ?? 1,
    attributes: {
      correlation_id: `${randomUUID()}:count-words`,
      reply_to: REPLY_QUEUE_URL,
      attempt: options.attempt ?? 1,
    },
  });
}

function correlationIdOf(record: SQSRecord): string {
  return record.messageAttributes.correlation_id?.stringValue as string;
}

/** The replies by correlation id: body, `type`, `attempt` and `x-retryable` attributes. */
function repliesById(replies: SendMessageCommandInput[]): Map<string, Record<string, unknown>> {
  return new Map(
    replies.map((reply) => {
      const attributes = reply.MessageAttributes ?? {};
      const said: Record<string, unknown> = { body: reply.MessageBody, queue: reply.QueueUrl };
      for (const name of ['type', 'attempt', 'x-retryable']) {
        if (attributes[name]) said[name] = attributes[name].StringValue;
      }
      return [attributes.correlation_id?.StringValue as string, said];
    }),
  );
}

const countWords: WorkerHandler = (input) => ({
  words: String(input.text).split(/\s+/).filter(Boolean).length,
});

describe('Function: lambdaWorker', () => {
  it('answers every request of a batch on its reply queue, with its attempt, and reports no failure', async () => {
    // Prepare
    const worker = aLambdaWorker(countWords);
    const records = [aRequest({ text: 'a b c' }, { attempt: 2 }), aRequest({ text: 'one' })];

    // Act
    const response = await worker.run(records);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const replies = repliesById(worker.replies);
    expect(replies.get(correlationIdOf(records[0] as SQSRecord))).toEqual({
      body: '{"words":3}',
      queue: REPLY_QUEUE_URL,
      attempt: '2',
    });
    expect(replies.get(correlationIdOf(records[1] as SQSRecord))).toMatchObject({ body: '{"words":1}' });
    expect(worker.visibilityChanges).toEqual([]);
  });

  it('reports only the request whose handler threw, made visible again at once, and answers the rest', async () => {
    // Prepare
    const worker = aLambdaWorker((input) => {
      if (input.fail) throw new Error('the index is down');
      return { ok: true };
    });
    const failing = aRequest({ fail: true });
    const fine = [aRequest({}), aRequest({})];

    // Act
    const response = await worker.run([fine[0] as SQSRecord, failing, fine[1] as SQSRecord]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect([...repliesById(worker.replies).keys()].sort()).toEqual(fine.map(correlationIdOf).sort());
    expect(worker.visibilityChanges).toEqual([
      { QueueUrl: STEP_QUEUE_URL, ReceiptHandle: failing.receiptHandle, VisibilityTimeout: 0 },
    ]);
  });

  it('answers a request whose handler keeps throwing with an error reply on its last delivery', async () => {
    // Prepare
    const worker = aLambdaWorker(
      () => {
        throw new Error('the index is down');
      },
      { maxDeliveries: 3, rejectVisibilityTimeoutSeconds: 30 },
    );
    const second = aRequest({}, { receiveCount: 2 });
    const third = aRequest({}, { receiveCount: 3 });

    // Act
    const response = await worker.run([second, third]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: second.messageId }] });
    expect(worker.visibilityChanges).toMatchObject([{ VisibilityTimeout: 30 }]);
    expect(repliesById(worker.replies).get(correlationIdOf(third))).toMatchObject({
      type: 'error',
      body: JSON.stringify({ error: 'the index is down (failed 3 times)' }),
    });
  });

  it('answers a WorkerError with an error reply, marked not retryable when it says so', async () => {
    // Prepare
    const worker = aLambdaWorker((input) => {
      throw new WorkerError(`bad ${input.n}`, input.n === 2 ? { retryable: false } : {});
    });
    const [retryable, final] = [aRequest({ n: 1 }), aRequest({ n: 2 })];

    // Act
    const response = await worker.run([retryable, final]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const replies = repliesById(worker.replies);
    expect(replies.get(correlationIdOf(retryable))).toEqual({
      body: '{"error":"bad 1"}',
      queue: REPLY_QUEUE_URL,
      type: 'error',
      attempt: '1',
    });
    expect(replies.get(correlationIdOf(final))).toMatchObject({
      body: '{"error":"bad 2"}',
      type: 'error',
      'x-retryable': 'false',
    });
  });

  it('sends the control replies: abort() returned, SuspendStep thrown', async () => {
    // Prepare
    const worker = aLambdaWorker((input) => {
      if (input.order === 'missing') return abort('there is no such order');
      throw new SuspendStep('waiting for approval');
    });
    const [aborting, suspending] = [aRequest({ order: 'missing' }), aRequest({ order: 'big' })];

    // Act
    const response = await worker.run([aborting, suspending]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const replies = repliesById(worker.replies);
    expect(replies.get(correlationIdOf(aborting))).toMatchObject({
      type: 'abort',
      body: '{"reason":"there is no such order"}',
    });
    expect(replies.get(correlationIdOf(suspending))).toMatchObject({
      type: 'suspend',
      body: '{"reason":"waiting for approval"}',
    });
  });

  it('answers a body that is not a JSON object with an error reply, without calling the handler', async () => {
    // Prepare
    let calls = 0;
    const worker = aLambdaWorker(() => {
      calls++;
      return {};
    });
    const [notJson, notObject] = [aRequest('{"text": '), aRequest([1, 2])];

    // Act
    const response = await worker.run([notJson, notObject]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(calls).toBe(0);
    const replies = repliesById(worker.replies);
    expect(replies.get(correlationIdOf(notJson))).toMatchObject({
      type: 'error',
      body: '{"error":"the request body is not JSON"}',
    });
    expect(replies.get(correlationIdOf(notObject))).toMatchObject({
      type: 'error',
      body: '{"error":"the request body is a list, not a JSON object"}',
    });
  });

  it('reports a message without correlation_id or reply_to, unanswered, for the dead-letter queue', async () => {
    // Prepare
    let calls = 0;
    const worker = aLambdaWorker(() => {
      calls++;
      return {};
    });
    const stray = anSqsRecord({ body: '{}', queue: STEP_QUEUE, attributes: { correlation_id: 'x:y' } });
    const fine = aRequest({});

    // Act
    const response = await worker.run([stray, fine]);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: stray.messageId }] });
    expect(calls).toBe(1);
    expect([...repliesById(worker.replies).keys()]).toEqual([correlationIdOf(fine)]);
    expect(worker.logged).toContainEqual(
      expect.stringMatching(/has no correlation_id or reply_to attribute: not handled$/),
    );
  });

  it('reports every request of a batch whose replies cannot be sent, without throwing', async () => {
    // Prepare
    const worker = aLambdaWorker(countWords, { replyFails: true });
    const records = [aRequest({ text: 'a' }), aRequest({ text: 'b' })];

    // Act
    const response = await worker.run(records);

    // Assess
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(
      records.map((record) => record.messageId).sort(),
    );
  });

  it("keeps a long step's message hidden until the invocation's deadline, and heartbeat() tells the manager", async () => {
    // Prepare: a handler that runs until its message's visibility was extended once on its own.
    let worker: Harness | undefined;
    worker = aLambdaWorker(
      async (_input, { heartbeat }) => {
        await eventually(
          'the visibility to be extended',
          () => (worker?.visibilityChanges.length ?? 0) >= 1,
          10_000,
        );
        await heartbeat();
        return { done: true };
      },
      { heartbeatIntervalMs: 20 },
    );
    const request = aRequest({});

    // Act
    const response = await worker.run([request], 120_000);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const [byTimer, byHeartbeat] = worker.visibilityChanges;
    expect(worker.visibilityChanges).toHaveLength(2);
    for (const change of [byTimer, byHeartbeat]) {
      expect(change).toMatchObject({ QueueUrl: STEP_QUEUE_URL, ReceiptHandle: request.receiptHandle });
      // Hidden for the invocation's remaining time (at most 120 s) and a little after, never beyond.
      expect(change?.VisibilityTimeout).toBeGreaterThan(BACK_AFTER_DEADLINE_SECONDS);
      expect(change?.VisibilityTimeout).toBeLessThanOrEqual(120 + BACK_AFTER_DEADLINE_SECONDS);
    }
    const replies = worker.replies.map((reply) => reply.MessageAttributes?.type?.StringValue ?? 'result');
    expect(replies).toEqual(['heartbeat', 'result']);
  });

  it('answers a step that cannot finish before the function times out with an error reply, and drops its late result', async () => {
    // Prepare
    let release: () => void = () => {};
    const worker = aLambdaWorker(async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { late: true };
    });
    const request = aRequest({}, { attempt: 3 });

    // Act: an invocation with half a second left.
    const response = await worker.run([request], 500);
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(worker.replies).toHaveLength(1);
    const reply = repliesById(worker.replies).get(correlationIdOf(request));
    expect(reply).toMatchObject({ type: 'error', attempt: '3' });
    expect(String(reply?.body)).toMatch(/did not finish before the Lambda function's timeout/);
    expect(worker.logged).toContainEqual(
      expect.stringMatching(/finished after it was handed back; dropping its reply/),
    );
  });

  it('refuses options out of range', () => {
    expect(() => lambdaWorker(countWords, { maxDeliveries: 0 })).toThrow(/maxDeliveries/);
    expect(() => lambdaWorker(countWords, { heartbeatIntervalMs: 0 })).toThrow(/heartbeatIntervalMs/);
    expect(() => lambdaWorker(countWords, { rejectVisibilityTimeoutSeconds: -1 })).toThrow(
      /rejectVisibilityTimeoutSeconds/,
    );
  });
});
