import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/** A function as a DynamoDB stream event source invokes it (with ReportBatchItemFailures). */
export type StreamBatchHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

export interface DynamoDbStreamSourceOptions {
  /** DynamoDB Local's endpoint: it serves the Streams API too. */
  endpoint: string;
  streamArn: string;
  handler: StreamBatchHandler;
  /** The mapping's filter (infra/constructs/job-events.ts): records it does not pass invoke nothing. */
  filter: (record: DynamoDBRecord) => boolean;
  /** @default 100 (JOB_EVENTS_BATCH) */
  batchSize?: number;
  /** Retries of a batch that reports a failure, before it is given up (the stack's retryAttempts). @default 10 */
  retryAttempts?: number;
}

export interface DynamoDbStreamSource {
  stats: { records: number; invocations: number; failures: number };
  stop(): Promise<void>;
}

/**
 * Lambda's DynamoDB stream event source on DynamoDB Local: every shard read from its start, the
 * records that pass the filter handed to the handler as a Lambda event (binary values base64, as
 * Lambda's JSON carries them) in batches, in order; a batch that reports a failure is handed over
 * again from that record, a bounded number of times.
 */
export function startDynamoDbStreamSource(options: DynamoDbStreamSourceOptions): DynamoDbStreamSource {
  const client = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const stats = { records: 0, invocations: 0, failures: 0 };
  const iterators = new Map<string, string | undefined>();
  let stopped = false;

  const discoverShards = async (): Promise<void> => {
    const { StreamDescription } = await client.send(
      new DescribeStreamCommand({ StreamArn: options.streamArn }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      const id = shard.ShardId;
      if (!id || iterators.has(id)) continue;
      const { ShardIterator } = await client.send(
        new GetShardIteratorCommand({
          StreamArn: options.streamArn,
          ShardId: id,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      iterators.set(id, ShardIterator);
    }
  };

  const deliver = async (records: DynamoDBRecord[]): Promise<void> => {
    const size = options.batchSize ?? 100;
    for (let start = 0; start < records.length; ) {
      const batch = records.slice(start, start + size);
      let retries = 0;
      for (;;) {
        stats.invocations++;
        const response = await options.handler({ Records: batch });
        const failed = response.batchItemFailures[0]?.itemIdentifier;
        if (failed === undefined) break;
        stats.failures++;
        if (++retries > (options.retryAttempts ?? 10)) break;
        // Lambda checkpoints before the failed record and retries from it.
        const from = batch.findIndex((record) => record.dynamodb?.SequenceNumber === failed);
        batch.splice(0, Math.max(from, 0));
      }
      start += size;
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await discoverShards();
      let read = 0;
      for (const [shard, iterator] of iterators) {
        if (!iterator) continue;
        const { Records = [], NextShardIterator } = await client.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
        );
        iterators.set(shard, NextShardIterator);
        read += Records.length;
        stats.records += Records.length;
        const passed = Records.map(lambdaRecordOf).filter(options.filter);
        if (passed.length) await deliver(passed);
      }
      if (!read) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();

  return {
    stats,
    async stop() {
      stopped = true;
      await loop;
      client.destroy();
    },
  };
}

/** A Streams API record as Lambda hands it over: binary values base64-encoded, as its JSON carries them. */
function lambdaRecordOf(record: StreamRecord): DynamoDBRecord {
  return JSON.parse(
    JSON.stringify(record, (_key, value) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
    ),
  ) as DynamoDBRecord;
}
