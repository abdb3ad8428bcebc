import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { interceptLocalhostDns } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../../functions/aws/tracing.js';
import { handler as apiHandler } from '../../../functions/handlers/api.js';
import { handler as timersHandler } from '../../../functions/handlers/timers.js';
import { aLambdaContext, anApiEvent } from '../../support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  dynamoDbClient,
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
  restoreDns = interceptLocalhostDns();
}, 120_000);

afterAll(async () => {
  restoreDns?.();
  process.env = saved;
  await sqs?.stop();
  await dynamo?.stop();
});

const queue = (name: string) => createQueue(sqs.client, name);

describe('handlers with SWITCHYARD_TRACING=true (Powertools Tracer, disabled outside Lambda)', () => {
  it('answer as without tracing: the API reaches the table and the queues, the timer sweep runs', async () => {
    // Prepare
    const tableName = uniqueTableName('switchyard-tracing');
    await createSwitchyardTable(dynamo.client, tableName);
    const prefix = uniqueQueuePrefix('trace');
    const [reply, timers, dlq] = await Promise.all([
      queue(`${prefix}workflow-manager`),
      queue(`${prefix}switchyard-timers`),
      queue(`${prefix}switchyard-steps-dlq`),
    ]);
    process.env = {
      ...saved,
      SWITCHYARD_TRACING: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      LOG_LEVEL: 'ERROR',
      BUS: 'sqs',
      TABLE_NAME: tableName,
      QUEUE_PREFIX: prefix,
      REPLY_QUEUE_URL: reply.url,
      TIMER_QUEUE_URL: timers.url,
      STEP_QUEUE_DLQ_ARN: dlq.arn,
    };

    // Act
    const health = await apiHandler(anApiEvent('GET', '/healthz'), aLambdaContext());
    const workflows = await apiHandler(anApiEvent('GET', '/api/workflows'), aLambdaContext());
    const sweep = await timersHandler(
      {
        version: '0',
        id: 'sweep',
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '123456789012',
        time: new Date().toISOString(),
        region: 'us-east-1',
        resources: [],
        detail: {},
      },
      aLambdaContext(),
    );

    // Assess
    expect(health.statusCode).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok', store: 'ok', bus: 'ok' });
    expect(workflows.statusCode).toBe(200);
    expect(sweep).toBeUndefined();
  }, 60_000);
});

describe('createTracing', () => {
  it('traced like in Lambda: clients still answer, and a handler keeps its result and its errors', async () => {
    // Prepare: the Tracer turns itself on where Lambda's environment variable is set
    process.env = { ...saved, AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'true' };
    const tracing = createTracing();
    const client = dynamoDbClient(dynamo.endpoint);
    const tableName = uniqueTableName('switchyard-traced');
    await createSwitchyardTable(client, tableName);
    const before = client.middlewareStack.identify().length;

    // Act
    const traced = tracing.captureClient(client);
    const described = await traced.send(new DescribeTableCommand({ TableName: tableName }));
    const ok = await tracing.traceHandler(async (n: number) => n + 1)(41);
    const failed = await tracing
      .traceHandler(async () => {
        throw new Error('the handler failed');
      })()
      .catch((error: Error) => error.message);

    // Assess
    expect(traced).toBe(client);
    expect(client.middlewareStack.identify().length).toBeGreaterThan(before);
    expect(described.Table?.TableName).toBe(tableName);
    expect(ok).toBe(42);
    expect(failed).toBe('the handler failed');
  }, 60_000);
});
