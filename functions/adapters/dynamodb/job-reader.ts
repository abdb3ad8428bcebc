import { type ChildrenPage, type JobJson, type JobRecord, jobFromJson } from '../../../engine/index.js';
import { CHILD_BUCKET, decodeJson, keys, num, pad, str } from './items.js';
import { type HeadCache, headMeta } from './job-items.js';
import type { PendingWrites } from './pending.js';
import { type DynamoDbTable, type Item, type Key, mapLimit } from './table.js';

/** Reads job heads (strongly consistent), resolving pending versions and reassembling chunks. */
export class JobReader {
  constructor(
    private readonly table: DynamoDbTable,
    private readonly pending: PendingWrites,
    private readonly heads: HeadCache,
  ) {}

  readonly readChunks = (wanted: Key[]): Promise<Item[]> => this.table.batchGet(wanted);

  /** A head item as a job record; undefined for a pending head whose commit did not happen. */
  async decode(stored: Item): Promise<JobRecord | undefined> {
    const item = await this.pending.resolve(stored);
    if (!item) return undefined;
    const job = jobFromJson(await decodeJson<JobJson>(item, this.readChunks));
    this.heads.set(job.id, headMeta(item));
    return job;
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const item = await this.table.get(keys.head(id));
    return item && this.decode(item);
  }

  async getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    const items = await this.table.batchGet(ids.map((id) => keys.head(id)));
    const jobs = await mapLimit(items, 16, (item) => this.decode(item));
    const found = new Map<string, JobRecord>();
    for (const job of jobs) if (job) found.set(job.id, job);
    return found;
  }

  /**
   * A fan-out step's children from its index partitions (strongly consistent), then their heads in
   * batches. An entry whose job is missing, pending, or belongs elsewhere (an id clash) is skipped.
   */
  async listChildren(
    parentId: string,
    step: string,
    page: { fromIndex?: number; limit: number },
  ): Promise<ChildrenPage> {
    const limit = Math.max(0, page.limit);
    const entries = new ChildEntries(this.table, parentId, step, page.fromIndex ?? 0);
    const children: JobRecord[] = [];
    const indexes = new Set<number>();
    while (children.length < limit) {
      const batch: ChildEntry[] = [];
      const want = Math.min(1_000, limit - children.length);
      while (batch.length < want) {
        const entry = await entries.next(want - batch.length + 1);
        if (!entry) break;
        batch.push(entry);
      }
      if (!batch.length) break;
      const jobs = await this.getJobs(batch.map((entry) => entry.id));
      for (const entry of batch) {
        const job = jobs.get(entry.id);
        const link = job?.parent;
        if (
          !job ||
          link?.id !== parentId ||
          link.step !== step ||
          link.index !== entry.index ||
          indexes.has(entry.index)
        )
          continue;
        indexes.add(entry.index);
        children.push(job);
      }
    }
    const last = children.at(-1);
    if (children.length < limit || !last?.parent || !(await entries.peek())) return { children };
    return { children, nextIndex: last.parent.index + 1 };
  }
}

interface ChildEntry {
  index: number;
  id: string;
}

/** The index entries of one fan-out step in index order, bucket after bucket, fetched as needed. */
class ChildEntries {
  private buffer: ChildEntry[] = [];
  private bucket: number;
  private from: number;
  private start: Item | undefined;
  /** The current bucket is read from its first possible index. */
  private wholeBucket = false;
  private exhausted = false;

  constructor(
    private readonly table: DynamoDbTable,
    private readonly parentId: string,
    private readonly step: string,
    fromIndex: number,
  ) {
    this.from = Math.max(0, fromIndex);
    this.bucket = Math.floor(this.from / CHILD_BUCKET);
  }

  async next(pageSize: number): Promise<ChildEntry | undefined> {
    while (!this.buffer.length && !this.exhausted) await this.fill(pageSize);
    return this.buffer.shift();
  }

  async peek(): Promise<ChildEntry | undefined> {
    while (!this.buffer.length && !this.exhausted) await this.fill(1);
    return this.buffer[0];
  }

  private async fill(pageSize: number): Promise<void> {
    const page = await this.table.queryPage({
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: {
        ':pk': { S: keys.childrenPk(this.parentId, this.step, this.bucket) },
        ':from': { S: pad(this.from, 9) },
      },
      ConsistentRead: true,
      Limit: Math.max(1, Math.min(pageSize, 1_000)),
      ExclusiveStartKey: this.start,
    });
    for (const item of page.items) {
      const index = num(item, 'ix');
      const id = str(item, 'id');
      if (index !== undefined && id !== undefined) this.buffer.push({ index, id });
    }
    if (page.next) {
      this.start = page.next;
      return;
    }
    // Indexes are dense (0 … total-1): a bucket empty from its start means there are no more.
    if (!page.items.length && this.wholeBucket && !this.start) {
      this.exhausted = true;
      return;
    }
    this.bucket++;
    this.from = this.bucket * CHILD_BUCKET;
    this.start = undefined;
    this.wholeBucket = true;
  }
}
