import { interceptLocalhostDns } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/handlers/api.js';
import { anApiEvent } from '../../support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';

let dynamo: DynamoDbLocal;
let sqs: Fauxqs;
let restoreDns: () => void;
const saved = { ...process.env };

beforeAll(async () => {
  [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
  // With its endpoint from the environment, the SDK sends to the queue URL's host (sqs.<region>.localhost).
  restoreDns = interceptLocalhostDns();
}, 120_000);

afterAll(async () => {
  restoreDns?.();
  process.env = saved;
  await sqs?.stop();
  await dynamo?.stop();
});

const queue = (name: string) => createQueue(sqs.client, name);

describe('Module handler (the lazy container built from the environment)', () => {
  it('fails clearly while the environment is incomplete, then builds the container once it is right', async () => {
    // Prepare
    const tableName = uniqueTableName('switchyard-env');
    await createSwitchyardTable(dynamo.client, tableName);
    const prefix = uniqueQueuePrefix('env');
    const reply = await queue(`${prefix}workflow-manager`);
    const timers = await queue(`${prefix}switchyard-timers`);
    const dlq = await queue(`${prefix}switchyard-steps-dlq`);
    process.env = {
      ...saved,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      // The SDK's service-specific endpoints: the handler's default clients reach the emulators.
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      LOG_LEVEL: 'ERROR',
      BUS: 'sqs',
    };

    // Act
    const broken = await handler(anApiEvent('GET', '/healthz')).catch((error: Error) => error.message);
    Object.assign(process.env, {
      TABLE_NAME: tableName,
      QUEUE_PREFIX: prefix,
      REPLY_QUEUE_URL: reply.url,
      TIMER_QUEUE_URL: timers.url,
      STEP_QUEUE_DLQ_ARN: dlq.arn,
    });
    const healthy = await handler(anApiEvent('GET', '/healthz'));

    // Assess
    expect(broken).toMatch(/TABLE_NAME is not set/);
    expect(broken).toMatch(/REPLY_QUEUE_URL is not set/);
    expect(JSON.parse(healthy.body)).toEqual({ status: 'ok', store: 'ok', bus: 'ok' });
    expect(healthy.statusCode).toBe(200);
  }, 60_000);
});
