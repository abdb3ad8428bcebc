import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../engine/index.js';
import { keys } from '../../../functions/adapters/dynamodb/items.js';
import { countsKey } from '../../../functions/adapters/dynamodb/job-counts.js';
import { createJobEventsHandler } from '../../../functions/handlers/job-events.js';
import { aJob } from '../../support/factories.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { headOf, lambdaImage } from '../../support/stream-records.js';

/*
 * Retention by TTL deletes a finished job's head for free, and nothing else takes it off the finished
 * counts (`CNT#`) the delete sweep used to decrement in its own transaction: the job-events function
 * does, from the head's deletion on the table's stream. A TTL deletion is a REMOVE whose userIdentity
 * is the service dynamodb.amazonaws.com
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html).
 * A record the event source redelivers (at and after the first failed one, named in the partial
 * batch response: https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html)
 * must not have been counted already.
 */

const dynamo = mockClient(DynamoDBClient);
const eventBridge = mockClient(EventBridgeClient);
const TABLE = 'switchyard-test';
let sequence = 500;

function removed(job: JobRecord, by: 'ttl' | 'someone'): DynamoDBRecord {
  return {
    eventName: 'REMOVE',
    ...(by === 'ttl' ? { userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } } : {}),
    dynamodb: {
      Keys: lambdaImage(keys.head(job.id)),
      OldImage: lambdaImage(headOf(job)),
      SequenceNumber: String(++sequence),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  } as DynamoDBRecord;
}

function modified(before: JobRecord, after: JobRecord): DynamoDBRecord {
  return {
    eventName: 'MODIFY',
    dynamodb: {
      Keys: lambdaImage(keys.head(after.id)),
      OldImage: lambdaImage(headOf(before)),
      NewImage: lambdaImage(headOf(after)),
      SequenceNumber: String(++sequence),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

function handler() {
  return createJobEventsHandler({
    events: new EventBridgeClient({ region: 'us-east-1' }),
    source: 'switchyard.test',
    stack: 'test',
    logger: recordingTelemetry().logger,
    counts: { client: new DynamoDBClient({ region: 'us-east-1' }), tableName: TABLE },
  });
}

const finished = (status: 'completed' | 'failed', overrides = {}) =>
  aJob({ workflow: 'team-a/orders', status, endedAt: 9_000, ...overrides });

function updates() {
  return dynamo.commandCalls(UpdateItemCommand).map((call) => call.args[0].input);
}

beforeEach(() => {
  dynamo.reset();
  dynamo.on(UpdateItemCommand).resolves({});
  eventBridge.reset();
  eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
    FailedEntryCount: 0,
    Entries: input.Entries.map((_, n) => ({ EventId: `e-${n}` })),
  }));
});

describe('Handler: job-events, finished counts of expired jobs', () => {
  it('takes a finished top-level job that TTL deleted off its status count, once', async () => {
    const job = finished('failed');

    const response = await handler()({ Records: [removed(job, 'ttl')] });

    expect(response.batchItemFailures).toEqual([]);
    expect(updates()).toEqual([
      expect.objectContaining({
        TableName: TABLE,
        Key: countsKey('team-a/orders', job.id),
        UpdateExpression: 'ADD #s0 :s0',
        ExpressionAttributeNames: { '#s0': 'failed' },
        ExpressionAttributeValues: { ':s0': { N: '-1' } },
      }),
    ]);
    expect(eventBridge.commandCalls(PutEventsCommand)).toHaveLength(0);
  });

  it('counts nothing for a deletion by anyone else, a child, or a job that had not ended', async () => {
    const parent = finished('completed');
    const child = finished('completed', { parent: { id: parent.id, step: 'each', index: 0 } });
    const running = aJob({ workflow: 'team-a/orders', status: 'running' });

    const response = await handler()({
      Records: [removed(finished('completed'), 'someone'), removed(child, 'ttl'), removed(running, 'ttl')],
    });

    expect(response.batchItemFailures).toEqual([]);
    expect(updates()).toEqual([]);
  });

  it('leaves a deletion after the first refused event to the redelivery, and names a count it could not write', async () => {
    // Prepare: EventBridge refuses the status change of the first record.
    eventBridge
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] });
    const before = aJob({ workflow: 'team-a/orders', status: 'running' });
    const change = modified(before, { ...before, status: 'completed', rev: before.rev + 1, endedAt: 9_000 });
    const expired = removed(finished('completed'), 'ttl');

    // Act
    const refused = await handler()({ Records: [change, expired] });

    // Assess: redelivered from the refused record, the deletion not counted yet (it comes again).
    expect(refused.batchItemFailures).toEqual([{ itemIdentifier: change.dynamodb?.SequenceNumber }]);
    expect(updates()).toEqual([]);

    // Act: the count cannot be written.
    dynamo.on(UpdateItemCommand).rejects(new Error('ProvisionedThroughputExceededException'));
    const failed = await handler()({ Records: [expired] });

    // Assess
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: expired.dynamodb?.SequenceNumber }]);
  });
});
