import {
  ACTIVE_LISTED_STATUSES,
  isFinished,
  type JobRecord,
  type JobStatus,
  type OutboxEntry,
} from '../../../engine/index.js';
import { INLINE_INDEX, inlineIndexKey } from './inline-outbox.js';
import { type InlineRecovery, recoverable } from './inline-recovery.js';
import { gsi, jobIdOf, N, num, S, SHARDS, str, time } from './items.js';
import { type Candidate, heldUntilRead, type MergeSource, pageSizeFor } from './merge.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit, type Item, type Key } from './table.js';

// Young top-level jobs keep their inline entries out of gsi3: see README.md, "The outbox".

/** A commit this soon after the job's creation keeps its head out of gsi3. */
export const YOUNG_FOR_MS = 60_000;
/** Longer than any commit takes to land after it was computed (function timeouts are at most 2 minutes). */
export const LATE_COMMIT_MS = 300_000;

/**
 * Listings recovery reads for young heads: every listed status that has not ended (paused included;
 * `waiting` also holds the heads of jobs not started written before listings used listed statuses).
 */
const ACTIVE = ACTIVE_LISTED_STATUSES;

/** Whether a commit of a top-level job may leave the inline entries its head holds out of gsi3. */
export function youngRuleCovers(
  job: JobRecord,
  statusBefore: JobStatus | undefined,
  registered: boolean,
): boolean {
  return (
    registered &&
    job.parent === null &&
    !isFinished(job.status) &&
    statusBefore === job.status &&
    job.updatedAt - job.createdAt < YOUNG_FOR_MS
  );
}

const WATERMARK = { pk: S('RCV'), sk: S('young') };

/** Where the next recovery pass starts reading the listings (creation time). */
export async function readWatermark(table: DynamoDbTable): Promise<number> {
  return num(await table.get(WATERMARK), 'w') ?? 0;
}

/** After a whole pass of recovery with `createdBefore`: the jobs created before the new mark need no reading again. */
export async function advanceWatermark(table: DynamoDbTable, createdBefore: number): Promise<void> {
  const mark = createdBefore - YOUNG_FOR_MS - LATE_COMMIT_MS;
  try {
    await table.update({
      Key: WATERMARK,
      UpdateExpression: 'SET w = :w',
      ConditionExpression: 'attribute_not_exists(w) OR w < :w',
      ExpressionAttributeValues: { ':w': N(mark) },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Heads the young sources found holding entries: put into gsi3 once the page is taken. */
export class YoungHeads {
  private readonly found = new Map<string, Item>();

  constructor(private readonly table: DynamoDbTable) {}

  note(head: Item): void {
    const pk = str(head, 'pk');
    if (pk) this.found.set(pk, head);
  }

  /**
   * Puts each into gsi3 under the time of its job's creation (no later than any entry it holds),
   * unless it holds nothing any more; a head that entered meanwhile keeps its key.
   */
  async promote(): Promise<void> {
    await forEachLimit([...this.found.values()], 16, async (head) => {
      const jobId = jobIdOf(head);
      const index = inlineIndexKey(jobId, num(head, 'ca') ?? 0);
      try {
        await this.table.update({
          Key: { pk: head.pk as Item[string], sk: S('J') },
          UpdateExpression: 'SET #ipk = if_not_exists(#ipk, :ipk), #isk = if_not_exists(#isk, :isk)',
          ConditionExpression: 'attribute_exists(#oi)',
          ExpressionAttributeNames: {
            '#oi': 'oi',
            '#ipk': INLINE_INDEX.partitionKey,
            '#isk': INLINE_INDEX.sortKey,
          },
          ExpressionAttributeValues: { ':ipk': S(index.pk), ':isk': S(index.sk) },
        });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    });
    this.found.clear();
  }
}

/**
 * The sources of one recovery page for the heads outside gsi3: one per registered workflow, status
 * that has not ended and listing shard. Each reads its partition in creation order from the
 * watermark on (a cursor cannot skip a head: an early job may hold late entries) and hands on an
 * entry once no head still to read can hold an earlier one (entries are no older than their job).
 */
export function youngSources(
  table: DynamoDbTable,
  workflows: readonly string[],
  from: number,
  limit: number,
  recovery: InlineRecovery,
  heads: YoungHeads,
): MergeSource<OutboxEntry>[] {
  const partitions = workflows.flatMap((workflow) =>
    ACTIVE.flatMap((status) =>
      Array.from({ length: SHARDS.listing }, (_, shard) => gsi.listing(workflow, status, shard)),
    ),
  );
  const pageSize = pageSizeFor(limit, Math.max(1, partitions.length));
  return partitions.map((partition) => listingSource(table, partition, from, pageSize, recovery, heads));
}

function listingSource(
  table: DynamoDbTable,
  partition: string,
  from: number,
  pageSize: number,
  recovery: InlineRecovery,
  heads: YoungHeads,
): MergeSource<OutboxEntry> {
  const values: Item = { ':p': S(partition), ':from': S(time(from)) };
  let condition = 'gsi1pk = :p AND gsi1sk >= :from';
  if (recovery.createdBefore !== undefined) {
    condition = 'gsi1pk = :p AND gsi1sk BETWEEN :from AND :before';
    values[':before'] = S(time(recovery.createdBefore));
  }
  return heldUntilRead<OutboxEntry>(async (start) => {
    const page = await table.queryPage({
      IndexName: 'gsi1',
      KeyConditionExpression: condition,
      ExpressionAttributeValues: values,
      Limit: pageSize,
      ExclusiveStartKey: start,
    });
    const found = page.items.length
      ? await table.batchGet(page.items.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key))
      : [];
    const candidates: Candidate<OutboxEntry>[] = [];
    for (const head of found) {
      // A head in gsi3 is recovery's there.
      if (head[INLINE_INDEX.partitionKey]) continue;
      const recovered = await recoverable(head, recovery);
      if (recovered.unsent) heads.note(head);
      for (const short of recovered.sent) recovery.sent.noteSent(jobIdOf(head), short);
      candidates.push(...recovered.candidates);
    }
    return { candidates, lastTime: str(page.items.at(-1), 'gsi1sk')?.slice(0, 15), next: page.next };
  });
}
