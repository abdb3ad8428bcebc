import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { settleEachSqsRecord, settleSqsBatch } from '../../../functions/aws/sqs-batch.js';
import { anSqsRecord } from '../../support/aws-events.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';

const FAILED = 'message failed; it comes back after its visibility timeout';

/** Work that fails for the messages whose body is `"poison"`, and remembers the calls it got. */
function workFailingOnPoison(options: { batchFails: boolean }) {
  const batches: string[][] = [];
  const singles: string[] = [];
  return {
    batches,
    singles,
    all: async (records: readonly SQSRecord[]) => {
      batches.push(records.map((record) => record.messageId));
      if (options.batchFails) throw new Error('store unavailable');
    },
    one: async (record: SQSRecord) => {
      singles.push(record.messageId);
      if (record.body === 'poison') throw new Error('cannot store this one');
    },
  };
}

const ids = (response: { batchItemFailures: { itemIdentifier: string }[] }): string[] =>
  response.batchItemFailures.map((failure) => failure.itemIdentifier).sort();

describe('settleSqsBatch', () => {
  it('handles a batch in one call and reports nothing when it succeeds', async () => {
    // Prepare
    const records = [anSqsRecord(), anSqsRecord(), anSqsRecord()];
    const work = workFailingOnPoison({ batchFails: false });

    // Act
    const response = await settleSqsBatch(records, work, recordingTelemetry().logger);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(work.batches).toEqual([records.map((record) => record.messageId)]);
    expect(work.singles).toEqual([]);
  });

  it('when the batch fails, handles each message alone and reports only those that fail again', async () => {
    // Prepare
    const good = anSqsRecord({ body: 'fine' });
    const poison = anSqsRecord({
      body: 'poison',
      attributes: { correlation_id: 'job-1:step' },
      receiveCount: 3,
    });
    const alsoGood = anSqsRecord({ body: 'fine' });
    const telemetry = recordingTelemetry();
    const work = workFailingOnPoison({ batchFails: true });

    // Act
    const response = await settleSqsBatch([good, poison, alsoGood], work, telemetry.logger);

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: poison.messageId }]);
    expect(work.singles.sort()).toEqual([good.messageId, poison.messageId, alsoGood.messageId].sort());
    expect(telemetry.logged('batch failed; handling its messages one at a time')).toHaveLength(1);
    expect(telemetry.logged(FAILED).map((log) => log.fields)).toEqual([
      expect.objectContaining({ messageId: poison.messageId, correlationId: 'job-1:step', receiveCount: 3 }),
    ]);
  });

  it('reports every message, rather than throwing, when each fails alone too', async () => {
    // Prepare
    const records = [anSqsRecord({ body: 'poison' }), anSqsRecord({ body: 'poison' })];

    // Act
    const response = await settleSqsBatch(
      records,
      workFailingOnPoison({ batchFails: true }),
      recordingTelemetry().logger,
    );

    // Assess
    expect(ids(response)).toEqual(records.map((record) => record.messageId).sort());
  });

  it('reports nothing and calls nothing for an empty batch', async () => {
    // Prepare
    const work = workFailingOnPoison({ batchFails: true });

    // Act
    const response = await settleSqsBatch([], work, recordingTelemetry().logger);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(work.batches).toEqual([]);
  });
});

describe('settleEachSqsRecord', () => {
  it('handles each message once and reports only those that fail', async () => {
    // Prepare
    const records = [
      anSqsRecord({ body: 'poison' }),
      anSqsRecord({ body: 'fine' }),
      anSqsRecord({ body: 'poison' }),
    ];
    const telemetry = recordingTelemetry();
    const work = workFailingOnPoison({ batchFails: false });

    // Act
    const response = await settleEachSqsRecord(records, work.one, telemetry.logger);

    // Assess
    expect(ids(response)).toEqual([records[0]?.messageId, records[2]?.messageId].sort());
    expect(work.singles.sort()).toEqual(records.map((record) => record.messageId).sort());
    expect(telemetry.logged(FAILED)).toHaveLength(2);
  });

  it('reports a whole batch that fails, so that each message comes back', async () => {
    // Prepare
    const records = [anSqsRecord({ body: 'poison' })];

    // Act
    const response = await settleEachSqsRecord(
      records,
      workFailingOnPoison({ batchFails: false }).one,
      recordingTelemetry().logger,
    );

    // Assess
    expect(ids(response)).toEqual([records[0]?.messageId]);
  });

  it('reports nothing for an empty batch', async () => {
    // Act
    const response = await settleEachSqsRecord([], async () => {}, recordingTelemetry().logger);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
  });
});
