import { randomBytes, randomInt } from 'node:crypto';
import { ackInline } from './inline-outbox.js';
import { N, S } from './items.js';
import type { HeadCache } from './job-items.js';
import { type DynamoDbTable, forEachLimit, type Item } from './table.js';

// Inline requests marked sent in a log rather than in their heads: see README.md, "The outbox".

/** Log items of one minute, spread over partitions so that one busy minute is not one hot partition. */
const SHARDS = 16;
const MINUTE = 60_000;
const KEEP_SECONDS = 86_400;
/** Ids per log item: far under 400 KB. */
const MAX_IDS = 4_000;

const partition = (minute: number, shard: number): string => `SNT#${minute}#${shard}`;
const minuteOf = (createdAt: number): number => Math.floor(createdAt / MINUTE);

/** Logs requests as sent: one item per minute of creation they span (usually one). */
export async function logSent(
  table: DynamoDbTable,
  requests: readonly { id: string; createdAt: number }[],
): Promise<void> {
  const byMinute = new Map<number, string[]>();
  for (const { id, createdAt } of requests) {
    const minute = minuteOf(createdAt);
    const ids = byMinute.get(minute);
    if (ids) ids.push(id);
    else byMinute.set(minute, [id]);
  }
  const items: Item[] = [];
  for (const [minute, ids] of byMinute) {
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += MAX_IDS) {
      items.push({
        pk: S(partition(minute, randomInt(SHARDS))),
        sk: S(randomBytes(9).toString('base64url')),
        ids: { SS: unique.slice(start, start + MAX_IDS) },
        expiresAt: N(Math.ceil(((minute + 1) * MINUTE) / 1000) + KEEP_SECONDS),
      });
    }
  }
  await table.batchWrite(items.map((item) => ({ put: item })));
}

/**
 * What one recovery page learns of the log: which of the requests it found in heads were sent
 * (each minute's log read once), and which heads to remove those from once the page is taken.
 */
export class SentRequests {
  private readonly minutes = new Map<number, Promise<Set<string>>>();
  private readonly clean = new Map<string, Set<string>>();

  constructor(
    private readonly table: DynamoDbTable,
    private readonly heads: HeadCache,
  ) {}

  /** The ids among `requests` that the log names. */
  async sent(requests: readonly { id: string; createdAt: number }[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const { id, createdAt } of requests)
      if ((await this.minute(minuteOf(createdAt))).has(id)) found.add(id);
    return found;
  }

  /** A sent request still in its head, to remove (short id, as the head names it). */
  noteSent(jobId: string, short: string): void {
    const shorts = this.clean.get(jobId);
    if (shorts) shorts.add(short);
    else this.clean.set(jobId, new Set([short]));
  }

  async removeFromHeads(): Promise<void> {
    await forEachLimit([...this.clean], 16, async ([jobId, shorts]) => {
      await ackInline(this.table, jobId, [...shorts]);
      this.heads.forgetInline(jobId, [...shorts]);
    });
    this.clean.clear();
  }

  private minute(minute: number): Promise<Set<string>> {
    let ids = this.minutes.get(minute);
    if (!ids) {
      ids = this.readMinute(minute);
      this.minutes.set(minute, ids);
    }
    return ids;
  }

  private async readMinute(minute: number): Promise<Set<string>> {
    const ids = new Set<string>();
    await forEachLimit(
      Array.from({ length: SHARDS }, (_, shard) => shard),
      SHARDS,
      async (shard) => {
        const items = await this.table.queryAll({
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': S(partition(minute, shard)) },
          ConsistentRead: false,
        });
        for (const item of items) for (const id of item.ids?.SS ?? []) ids.add(id);
      },
    );
    return ids;
  }
}
