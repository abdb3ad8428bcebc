import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../engine/index.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { bucketSource } from '../../../functions/adapters/s3/archive-bucket.js';
import { showArchivedJob } from '../../../functions/cli/commands/archive.js';
import { createArchiveHandler } from '../../../functions/handlers/archive.js';
import { fileSource } from '../../../functions/local/job-archive.js';
import { silentTelemetry } from '../../../functions/telemetry/telemetry.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { aChild, aJob, creating, updating } from '../../support/factories.js';

/**
 * The deployed archive: the table's stream records of what DynamoDB's TTL deleted (REMOVE, its
 * `userIdentity` of type "Service" and principal `dynamodb.amazonaws.com`: the stream record's
 * reference, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html)
 * become JSON Lines objects in S3. The items are the ones the DynamoDB store writes (on DynamoDB
 * Local), turned into the old images a stream record carries (binary as base64).
 */

const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
const NOW = Date.UTC(2026, 10, 28, 3, 0, 0);
const s3 = mockClient(S3Client);

let dynamo: Promise<DynamoDbLocal> | undefined;
afterAll(async () => {
  await (await dynamo)?.stop();
});

/** The items a finished root with two children and a record too large for its head leave in the table. */
async function storedItems(): Promise<{
  items: Record<string, AttributeValue>[];
  root: JobRecord;
  children: JobRecord[];
}> {
  dynamo ??= startDynamoDbLocal();
  const local = await dynamo;
  const tableName = uniqueTableName('archive');
  await createSwitchyardTable(local.client, tableName);
  const store = new DynamoDbStore({ client: local.client, tableName, retentionSeconds: 86_400 });
  const root = aJob({ workflow: 'archived' });
  const children = [0, 1].map((index) => aChild(root, 'fan', index, { workflow: 'archived' }));
  await store.commit([creating(root, { creates: children })]);
  for (const child of children)
    await store.commit([updating(child, { ...child, rev: 2, status: 'completed', endedAt: 1_500 })]);
  // A result too large for the head: its JSON goes to chunk items.
  const noise = randomBytes(400_000).toString('base64');
  const done = { ...root, rev: 2, status: 'completed' as const, endedAt: 2_000, result: { noise } };
  await store.commit([updating(root, done)]);
  const { Items } = await local.client.send(new ScanCommand({ TableName: tableName }));
  const finished = await store.getJobs([root.id, ...children.map((child) => child.id)]);
  return {
    items: Items ?? [],
    root: finished.get(root.id) as JobRecord,
    children: children.map((child) => finished.get(child.id) as JobRecord),
  };
}

/** A stream record of an item's removal, its old image as the stream carries it. */
function removal(
  item: Record<string, AttributeValue>,
  identity: object | null = TTL_IDENTITY,
): DynamoDBRecord {
  const image = (value: AttributeValue): unknown => {
    if (value.B) return { B: Buffer.from(value.B).toString('base64') };
    if (value.M) return { M: Object.fromEntries(Object.entries(value.M).map(([k, v]) => [k, image(v)])) };
    if (value.L) return { L: value.L.map(image) };
    return value;
  };
  return {
    eventName: 'REMOVE',
    eventSource: 'aws:dynamodb',
    userIdentity: identity ?? undefined,
    dynamodb: {
      Keys: { pk: { S: item.pk?.S as string }, sk: { S: item.sk?.S as string } },
      OldImage: Object.fromEntries(Object.entries(item).map(([k, v]) => [k, image(v)])) as never,
    },
  };
}

const put = (): { key: string; lines: { archivedAt: string; job: { id: string }; partial?: true }[] }[] =>
  s3.commandCalls(PutObjectCommand).map((call) => ({
    key: call.args[0].input.Key as string,
    lines: String(call.args[0].input.Body)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)),
  }));

const handler = () =>
  createArchiveHandler({
    s3: new S3Client({ region: 'eu-west-1' }),
    bucket: 'the-archive',
    logger: silentTelemetry.logger,
    clock: () => NOW,
  });

describe('The archive function', () => {
  beforeEach(() => {
    s3.reset();
    s3.on(PutObjectCommand).resolves({});
  });

  it('writes the jobs TTL deleted as JSON Lines (chunked records reassembled), and nothing a user or the sweep deleted', async () => {
    // Prepare
    const { items, root, children } = await storedItems();
    const byUser = items.filter((item) => item.sk?.S === 'J').map((item) => removal(item, null));
    const byTtl = items.map((item) => removal(item));

    // Act
    await handler()(
      { Records: [...byUser, { ...byTtl[0], eventName: 'MODIFY' } as DynamoDBRecord, ...byTtl] },
      {
        awsRequestId: 'req-1',
      },
    );

    // Assess
    const objects = put();
    expect(objects).toHaveLength(1);
    expect(objects[0]?.key).toBe(`jobs/2026-11-28/00${NOW}-req-1.jsonl`);
    const lines = objects[0]?.lines ?? [];
    expect(lines.map((line) => line.job.id).sort()).toEqual([root.id, ...children.map((c) => c.id)].sort());
    expect(lines.every((line) => line.archivedAt === new Date(NOW).toISOString() && !line.partial)).toBe(
      true,
    );
    const archivedRoot = lines.find((line) => line.job.id === root.id)?.job;
    expect(archivedRoot).toEqual(JSON.parse(JSON.stringify(root)));
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({ Bucket: 'the-archive' });
  }, 120_000);

  it('archives a head whose chunks expired in another batch by its plain attributes, marked partial', async () => {
    // Prepare
    const { items, root } = await storedItems();
    const head = items.find((item) => item.pk?.S === `JOB#${root.id}` && item.sk?.S === 'J');

    // Act
    await handler()(
      { Records: [removal(head as Record<string, AttributeValue>)] },
      { awsRequestId: 'req-2' },
    );

    // Assess
    const lines = put()[0]?.lines ?? [];
    expect(lines).toEqual([
      {
        archivedAt: new Date(NOW).toISOString(),
        partial: true,
        job: {
          id: root.id,
          workflow: 'archived',
          status: 'completed',
          createdAt: root.createdAt,
          endedAt: 2_000,
          parent: null,
        },
      },
    ]);
  }, 120_000);

  it('writes nothing for a batch with no expired head, and throws when S3 refuses (the batch is retried)', async () => {
    // Prepare
    const { items } = await storedItems();
    const chunksOnly = items.filter((item) => item.sk?.S?.startsWith('C#')).map((item) => removal(item));
    s3.on(PutObjectCommand).rejects(new Error('SlowDown'));

    // Act
    await handler()({ Records: chunksOnly }, { awsRequestId: 'req-3' });
    const failing = handler()({ Records: items.map((item) => removal(item)) }, { awsRequestId: 'req-4' });

    // Assess
    await expect(failing).rejects.toThrow('SlowDown');
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(1);
  }, 120_000);

  it('is read back by switchyard archive from the bucket and from a downloaded object', async () => {
    // Prepare
    const { items, root, children } = await storedItems();
    await handler()({ Records: items.map((item) => removal(item)) }, { awsRequestId: 'req-5' });
    const [object] = s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
    const body = String(object?.Body);
    s3.on(ListObjectsV2Command).resolves({ Contents: [{ Key: object?.Key }], IsTruncated: false });
    // What the SDK's body offers and the reader uses.
    s3.on(GetObjectCommand).resolves({ Body: { transformToString: async () => body } as never });
    const dir = await mkdtemp(join(tmpdir(), 'archive-object-'));
    const downloaded = join(dir, 'downloaded.jsonl');
    await writeFile(downloaded, body);

    // Act
    const fromBucket: string[] = [];
    const code = await showArchivedJob(
      root.id,
      { source: bucketSource(new S3Client({ region: 'eu-west-1' }), 's3://the-archive') },
      (line) => fromBucket.push(line),
    );
    const fromFile: string[] = [];
    await showArchivedJob(root.id, { source: fileSource(downloaded) }, (line) => fromFile.push(line));
    await rm(dir, { recursive: true, force: true });

    // Assess
    expect(code).toBe(0);
    const shown = JSON.parse(fromBucket.join('\n'));
    expect(shown.job).toEqual(JSON.parse(JSON.stringify(root)));
    expect(shown.children.map((child: JobRecord) => child.id)).toEqual(children.map((child) => child.id));
    expect(JSON.parse(fromFile.join('\n')).job.id).toBe(root.id);
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).toMatchObject({
      Bucket: 'the-archive',
      Prefix: 'jobs/',
    });
  }, 120_000);
});
