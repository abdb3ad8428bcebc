import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueueTagsCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHandlerEnvironment } from '../../../functions/aws/environment.js';
import { MAX_SQS_MESSAGE_BYTES, sqsBusFactory } from '../../../functions/aws/sqs-bus-factory.js';
import { type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';

describe('Function: sqsBusFactory', () => {
  let sqs: Fauxqs;

  beforeAll(async () => {
    sqs = await startSqsEmulator();
  }, 60_000);

  afterAll(async () => {
    await sqs?.stop();
  });

  it('creates a missing step queue with the stack tag (QUEUE_TAGS) and 1 MiB messages', async () => {
    // Prepare
    const prefix = uniqueQueuePrefix('tags');
    const variables = {
      TABLE_NAME: 'switchyard',
      BUS: 'sqs',
      QUEUE_PREFIX: prefix,
      TIMER_QUEUE_URL: `${sqs.endpoint}/000000000000/${prefix}switchyard-timers`,
      REPLY_QUEUE_URL: `${sqs.endpoint}/000000000000/${prefix}workflow-manager`,
      STEP_QUEUE_DLQ_ARN: `arn:aws:sqs:us-east-1:000000000000:${prefix}switchyard-steps-dlq`,
      QUEUE_TAGS: '{"switchyard:stack":"Staging"}',
    };
    const env = readHandlerEnvironment(variables);
    const client = sqs.newClient();
    const bus = await sqsBusFactory({ env, sqs: client, telemetry: recordingTelemetry() });

    // Act
    await bus.ensureQueues([{ queue: 'count', vhost: null }]);

    // Assess
    const { QueueUrl: queueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: `${prefix}count` }));
    const { Tags } = await client.send(new ListQueueTagsCommand({ QueueUrl: queueUrl }));
    expect(Tags).toEqual({ 'switchyard:stack': 'Staging' });
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['MaximumMessageSize'] }),
    );
    expect(Attributes?.MaximumMessageSize).toBe(String(MAX_SQS_MESSAGE_BYTES));
    expect(() => readHandlerEnvironment({ ...variables, QUEUE_TAGS: '[1]' })).toThrow(
      /QUEUE_TAGS is not a JSON object of text values/,
    );
  }, 60_000);
});
