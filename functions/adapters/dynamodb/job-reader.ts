import { type ChildrenPage, type JobJson, type JobRecord, jobFromJson } from '../../../engine/index.js';
import { type ChildEntry, readBucket } from './child-packs.js';
import { CHILD_BUCKET, decodeJson, keys } from './items.js';
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
        const entry = await entries.next();
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

/** The index entries of one fan-out step in index order, bucket after bucket, each read whole when reached. */
class ChildEntries {
  private buffer: ChildEntry[] = [];
  private bucket: number;
  private exhausted = false;

  constructor(
    private readonly table: DynamoDbTable,
    private readonly parentId: string,
    private readonly step: string,
    private readonly fromIndex: number,
  ) {
    this.bucket = Math.floor(Math.max(0, fromIndex) / CHILD_BUCKET);
  }

  async next(): Promise<ChildEntry | undefined> {
    while (!this.buffer.length && !this.exhausted) await this.fill();
    return this.buffer.shift();
  }

  async peek(): Promise<ChildEntry | undefined> {
    while (!this.buffer.length && !this.exhausted) await this.fill();
    return this.buffer[0];
  }

  private async fill(): Promise<void> {
    const entries = await readBucket(this.table, keys.childrenPk(this.parentId, this.step, this.bucket));
    // Indexes are dense (0 … total-1): an empty bucket means there are no more.
    if (!entries.length) {
      this.exhausted = true;
      return;
    }
    this.buffer = entries.filter((entry) => entry.index >= this.fromIndex);
    this.bucket++;
  }
}
