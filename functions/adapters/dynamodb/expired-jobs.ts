import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord, AttributeValue as StreamValue } from 'aws-lambda';
import { type JobJson, jobFromJson } from '../../../engine/index.js';
import { chunkKeys, chunkRefOf, decodeJson, jobIdOf } from './items.js';
import type { Item } from './table.js';

/**
 * Jobs DynamoDB's TTL deleted, rebuilt from the table's stream for the archive (the deployed
 * counterpart of serve's `--archive-dir`). A record is TTL's when its `userIdentity` is the service
 * `dynamodb.amazonaws.com` (the stream record's `userIdentity`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html);
 * a delete by the sweep or by anyone else is not archived. A head's old image holds the job (its JSON
 * inline, or in chunk items, themselves expired and found in the same batch of records).
 */

export interface ExpiredJobs {
  jobs: JobJson[];
  /** Heads whose chunks were not in the batch: archived as their plain attributes only. */
  partial: JobJson[];
}

/** Whether DynamoDB's TTL (not a user, nor the sweep) removed the record's item. */
export function removedByTtl(record: DynamoDBRecord): boolean {
  const identity = record.userIdentity as { type?: string; principalId?: string } | undefined;
  return (
    record.eventName === 'REMOVE' &&
    identity?.type === 'Service' &&
    identity.principalId === 'dynamodb.amazonaws.com'
  );
}

/** The jobs whose heads TTL removed in these records (a pending head, never committed, is no job). */
export async function expiredJobs(records: readonly DynamoDBRecord[]): Promise<ExpiredJobs> {
  const images = records
    .filter(removedByTtl)
    .map((record) => itemOf(record.dynamodb?.OldImage))
    .filter((item): item is Item => item !== undefined);
  const chunks = new Map<string, Uint8Array>();
  for (const item of images) {
    const sk = item.sk?.S ?? '';
    if (sk.startsWith('C#') && item.b?.B) chunks.set(`${item.pk?.S}\u0000${sk}`, item.b.B);
  }
  const result: ExpiredJobs = { jobs: [], partial: [] };
  for (const item of images) {
    if (item.sk?.S !== 'J' || !(item.j || item.z || item.ck)) continue;
    const ref = chunkRefOf(item);
    const missing = ref && chunkKeys(ref).some((key) => !chunks.has(`${key.pk.S}\u0000${key.sk.S}`));
    if (missing) {
      result.partial.push(plainJob(item));
      continue;
    }
    const json = await decodeJson<JobJson>(item, async (keys) =>
      keys.map((key) => ({ ...key, b: { B: chunks.get(`${key.pk.S}\u0000${key.sk.S}`) as Uint8Array } })),
    );
    result.jobs.push(JSON.parse(JSON.stringify(jobFromJson(json))) as JobJson);
  }
  return result;
}

/** What a head says of its job without its JSON: id, workflow, status and times. */
function plainJob(item: Item): JobJson {
  return {
    id: jobIdOf(item),
    workflow: item.wf?.S ?? '',
    status: item.st?.S,
    createdAt: Number(item.ca?.N ?? 0),
    endedAt: item.ea?.N ? Number(item.ea.N) : undefined,
    parent: item.par?.S ? { id: item.par.S } : null,
  } as unknown as JobJson;
}

/** A stream image (binary as base64) as an item of the SDK's shape (binary as bytes). */
export function itemOf(image: Record<string, StreamValue> | undefined): Item | undefined {
  if (!image) return undefined;
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, attributeOf(value)]));
}

function attributeOf(value: StreamValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B, 'base64') };
  if (value.M !== undefined) return { M: itemOf(value.M) as Item };
  if (value.L !== undefined) return { L: value.L.map(attributeOf) };
  if (value.BS !== undefined) return { BS: value.BS.map((b) => Buffer.from(b, 'base64')) };
  return value as AttributeValue;
}
