import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { HistoryEntry, JobRecord } from '../../../engine/index.js';
import { keys } from '../../../functions/adapters/dynamodb/items.js';
import { JOB_STATUS_CHANGE, STEP_WAITING } from '../../../functions/aws/job-events.js';
import { createJobEventsHandler } from '../../../functions/handlers/job-events.js';
import { aJob, type JobOverrides } from '../../support/factories.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { headOf, lambdaImage } from '../../support/stream-records.js';

/*
 * The job-events function on stream records made of real head items (job-items.ts), as Lambda hands
 * them over (binary attributes base64-encoded), with EventBridge played by aws-sdk-client-mock.
 * PutEvents: at most 10 entries a request; a refused entry has an ErrorCode, the response a
 * FailedEntryCount (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevents.html).
 * Partial batch responses name the first failed record's SequenceNumber
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html).
 */

const eventBridge = mockClient(EventBridgeClient);
const STACK = 'Switchyard-test';

let sequence = 100;

function record(before: JobRecord | undefined, after: JobRecord): DynamoDBRecord {
  return {
    eventName: before ? 'MODIFY' : 'INSERT',
    dynamodb: {
      Keys: lambdaImage(keys.head(after.id)),
      ...(before ? { OldImage: lambdaImage(headOf(before)) } : {}),
      NewImage: lambdaImage(headOf(after)),
      SequenceNumber: String(++sequence),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const streamEvent = (records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

function sentEntries(): PutEventsRequestEntry[][] {
  return eventBridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries ?? []);
}

function handler() {
  const telemetry = recordingTelemetry();
  return {
    telemetry,
    handle: createJobEventsHandler({
      events: new EventBridgeClient({ region: 'us-east-1' }),
      source: `switchyard.${STACK}`,
      stack: STACK,
      logger: telemetry.logger,
    }),
  };
}

const accepted = (count: number) => ({
  FailedEntryCount: 0,
  Entries: Array.from({ length: count }, (_, n) => ({ EventId: `e-${n}` })),
});

function job(overrides: JobOverrides): JobRecord {
  return aJob({ workflow: 'team-a/orders', ...overrides });
}

/** `earlier` with these changes: the same job at a later revision. */
function later(earlier: JobRecord, overrides: JobOverrides): JobRecord {
  return aJob({ ...earlier, steps: [...earlier.steps], ...overrides });
}

const history = (...entries: Omit<HistoryEntry, 'seq'>[]): HistoryEntry[] =>
  entries.map((entry, n) => ({ seq: n + 1, ...entry }));

beforeEach(() => {
  eventBridge.reset();
  eventBridge
    .on(PutEventsCommand)
    .callsFake((input: { Entries: unknown[] }) => accepted(input.Entries.length));
});

describe('Handler: job-events', () => {
  it('puts a status change with the documented detail, from switchyard.<stack>', async () => {
    // Prepare
    const running = job({ status: 'running', rev: 3, updatedAt: 5_000 });
    const failed = later(running, {
      status: 'failed',
      rev: 4,
      updatedAt: 6_000,
      endedAt: 6_000,
      error: { step: 'a', attempt: 1, message: `worker said no ${'x'.repeat(2_000)}`, at: 6_000 },
      steps: [{ name: 'a', status: 'failed', attempts: 1, firstAttempt: 1 }],
    });

    // Act
    const response = await handler().handle(streamEvent([record(running, failed)]));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    const [entries] = sentEntries();
    expect(entries).toHaveLength(1);
    const entry = entries?.[0];
    expect(entry?.Source).toBe(`switchyard.${STACK}`);
    expect(entry?.DetailType).toBe(JOB_STATUS_CHANGE);
    expect(entry?.Time).toEqual(new Date(6_000));
    const detail = JSON.parse(entry?.Detail ?? '{}');
    expect(detail).toEqual({
      stack: STACK,
      namespace: 'team-a',
      workflow: 'orders',
      jobId: running.id,
      rev: 4,
      status: 'failed',
      previousStatus: 'running',
      parentId: null,
      rootId: running.id,
      createdAt: new Date(1_000).toISOString(),
      endedAt: new Date(6_000).toISOString(),
      error: { step: 'a', message: expect.stringMatching(/^worker said no x+$/) },
    });
    expect(detail.error.message).toHaveLength(1_000);
  });

  it('tells a created job (no old image) and a job that starts waiting for someone, and stays quiet on writes that change no status', async () => {
    // Prepare
    const created = job({ status: 'waiting', rev: 1 });
    const running = later(created, { status: 'running', rev: 2 });
    const progressed = later(running, { rev: 3, seq: 1 });
    const waits = later(running, {
      rev: 4,
      waitsForSomeone: true,
      history: history({ at: 1_000, kind: 'job.created' }, { at: 7_000, kind: 'step.suspended', step: 'a' }),
      steps: [
        { name: 'a', status: 'suspended', attempts: 1, firstAttempt: 1, suspendNote: 'approval by finance' },
      ],
    });

    // Act
    await handler().handle(
      streamEvent([
        record(undefined, created),
        record(created, running),
        record(running, progressed),
        record(progressed, waits),
      ]),
    );

    // Assess
    const entries = sentEntries().flat();
    const summary = entries.map((entry) => {
      const detail = JSON.parse(entry.Detail ?? '{}');
      return [entry.DetailType, detail.previousStatus ?? detail.reason, detail.status ?? detail.step];
    });
    expect(summary).toEqual([
      [JOB_STATUS_CHANGE, undefined, 'pending'],
      [JOB_STATUS_CHANGE, 'pending', 'running'],
      [JOB_STATUS_CHANGE, 'running', 'waiting'],
      [STEP_WAITING, 'suspended', 'a'],
    ]);
    expect(JSON.parse(entries[0]?.Detail ?? '{}').previousStatus).toBeNull();
    expect(JSON.parse(entries[3]?.Detail ?? '{}')).toMatchObject({
      note: 'approval by finance',
      since: new Date(7_000).toISOString(),
      namespace: 'team-a',
      workflow: 'orders',
    });
  });

  it("reports only the waits after the old image's last history entry", async () => {
    // Prepare
    const entries = history(
      { at: 1_000, kind: 'job.created' },
      { at: 2_000, kind: 'step.waiting', step: 'approve' },
      { at: 3_000, kind: 'step.signalled', step: 'approve' },
      { at: 4_000, kind: 'step.waiting', step: 'second-approval' },
    );
    const before = job({ rev: 5, waitsForSomeone: true, history: entries.slice(0, 3) });
    const after = later(before, { rev: 6, history: entries });

    // Act
    await handler().handle(streamEvent([record(before, after)]));

    // Assess
    const sent = sentEntries().flat();
    expect(sent.map((entry) => [entry.DetailType, JSON.parse(entry.Detail ?? '{}').step])).toEqual([
      [STEP_WAITING, 'second-approval'],
    ]);
    expect(JSON.parse(sent[0]?.Detail ?? '{}').reason).toBe('signal');
  });

  it('ignores other items, deletions and heads of pending versions', async () => {
    // Prepare
    const a = job({ status: 'completed', rev: 2 });
    const removed: DynamoDBRecord = { ...record(later(a, { status: 'running' }), a), eventName: 'REMOVE' };
    const counter: DynamoDBRecord = {
      eventName: 'MODIFY',
      dynamodb: {
        NewImage: lambdaImage({ ...keys.counts(1, 'orders'), st: { S: 'running' } }),
        SequenceNumber: '7',
      },
    };
    const pending = record(undefined, a);
    const newImage = pending.dynamodb?.NewImage;
    if (newImage) newImage.pv = { L: [] };

    // Act
    const response = await handler().handle(streamEvent([removed, counter, pending]));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(sentEntries()).toEqual([]);
  });

  it("puts 10 entries a request, in the records' order", async () => {
    // Prepare
    const records = Array.from({ length: 23 }, (_, n) => {
      const a = job({ status: 'running', rev: n + 1 });
      return record(a, later(a, { status: 'completed', rev: n + 2, endedAt: 2_000 }));
    });

    // Act
    const response = await handler().handle(streamEvent(records));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(sentEntries().map((entries) => entries.length)).toEqual([10, 10, 3]);
    expect(
      sentEntries()
        .flat()
        .map((entry) => JSON.parse(entry.Detail ?? '{}').jobId),
    ).toEqual(records.map((r) => r.dynamodb?.NewImage?.pk?.S?.slice(4)));
  });

  it('on FailedEntryCount reports the first record with a refused entry and sends nothing after it', async () => {
    // Prepare
    const records = Array.from({ length: 15 }, (_, n) => {
      const a = job({ status: 'running', rev: n + 1 });
      return record(a, later(a, { status: 'completed', rev: n + 2 }));
    });
    eventBridge
      .on(PutEventsCommand)
      .resolvesOnce(accepted(10))
      .resolvesOnce({
        FailedEntryCount: 2,
        Entries: [
          { EventId: 'ok' },
          { EventId: 'ok' },
          { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' },
          { EventId: 'ok' },
          { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' },
        ],
      });
    const { handle, telemetry } = handler();

    // Act
    const response = await handle(streamEvent(records));

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[12]?.dynamodb?.SequenceNumber }]);
    expect(sentEntries().map((entries) => entries.length)).toEqual([10, 5]);
    expect(telemetry.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ errorCode: 'ThrottlingException' }),
      }),
    );
  });

  it('when PutEvents itself fails, reports the first record of that request', async () => {
    // Prepare
    const records = Array.from({ length: 12 }, (_, n) => {
      const a = job({ status: 'running', rev: n + 1 });
      return record(a, later(a, { status: 'cancelled', rev: n + 2 }));
    });
    eventBridge.on(PutEventsCommand).resolvesOnce(accepted(10)).rejectsOnce(new Error('connection reset'));

    // Act
    const response = await handler().handle(streamEvent(records));

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[10]?.dynamodb?.SequenceNumber }]);
  });
});
