import {
  InvalidCursorError,
  inNamespace,
  JOB_STATUSES,
  type JobPage,
  type JobQuery,
  type JobRecord,
  type JobStatus,
} from '../../../engine/index.js';
import { gsi, keys, num, pad, S, SHARDS, str } from './items.js';
import { workflowsWithJobs } from './job-counts.js';
import type { JobReader } from './job-reader.js';
import { type Candidate, MergeSource, mergePage, pageSizeFor } from './merge.js';
import type { DynamoDbTable, Item } from './table.js';

const STATUSES: readonly JobStatus[] = JOB_STATUSES;
const CURSOR = /^\d{15}#.+$/;

/**
 * Jobs newest first. Top-level jobs are listed by gsi1 partitions `L#<workflow>#<status>#<shard>`
 * (sort key `<createdAt>#<id>`), so a status filter reads only that status; the index holds keys
 * only, so the jobs are read from the table and vhost and endedSince filtered there. Children are
 * listed by their buckets' listing entries in `CL#<workflow>#<shard>` (childSource), read from the
 * table, then filtered. Every partition is read newest first and the results merged;
 * the cursor is the sort key of the last job returned. Without a workflow, the workflows come from
 * the job counters.
 */
export async function queryJobs(table: DynamoDbTable, reader: JobReader, query: JobQuery): Promise<JobPage> {
  const limit = Math.max(1, query.limit ?? 100);
  if (query.cursor !== undefined && !CURSOR.test(query.cursor)) throw new InvalidCursorError(query.cursor);
  const workflows = (
    query.workflow
      ? [query.workflow]
      : await workflowsWithJobs(table, query.includeChildren ? undefined : query.status)
  ).filter((workflow) => query.namespace === undefined || inNamespace(workflow, query.namespace));
  const statuses = query.status ? [query.status] : STATUSES;
  const perWorkflow = statuses.length * SHARDS.listing + (query.includeChildren ? SHARDS.childListing : 0);
  const pageSize = pageSizeFor(limit, workflows.length * perWorkflow);
  const sources: MergeSource<JobRecord>[] = [];
  for (const workflow of workflows) {
    for (const status of statuses) {
      for (let shard = 0; shard < SHARDS.listing; shard++) {
        sources.push(
          new MergeSource((start) =>
            topLevelPage(table, reader, gsi.listing(workflow, status, shard), status, query, pageSize, start),
          ),
        );
      }
    }
    if (query.includeChildren) {
      for (let shard = 0; shard < SHARDS.childListing; shard++) {
        sources.push(childSource(table, reader, gsi.childListing(workflow, shard), query, pageSize));
      }
    }
  }
  const { page, more } = await mergePage(sources, limit, 'descending');
  const jobs = page.map((candidate) => candidate.value);
  const last = page.at(-1);
  return more && last ? { jobs, cursor: last.sort } : { jobs };
}

function keyCondition(partition: string, cursor: string | undefined): { expression: string; values: Item } {
  const values: Item = { ':p': S(partition) };
  if (cursor === undefined) return { expression: 'gsi1pk = :p', values };
  values[':c'] = S(cursor);
  return { expression: 'gsi1pk = :p AND gsi1sk < :c', values };
}

/** One page of a gsi1 partition, newest first, from before `cursor`. */
function newestFirst(
  table: DynamoDbTable,
  partition: string,
  cursor: string | undefined,
  pageSize: number,
  start: Item | undefined,
): Promise<{ items: Item[]; next?: Item }> {
  const { expression, values } = keyCondition(partition, cursor);
  return table.queryPage({
    IndexName: 'gsi1',
    KeyConditionExpression: expression,
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
    Limit: pageSize,
    ExclusiveStartKey: start,
  });
}

async function topLevelPage(
  table: DynamoDbTable,
  reader: JobReader,
  partition: string,
  status: JobStatus,
  query: JobQuery,
  pageSize: number,
  start: Item | undefined,
): Promise<{ candidates: Candidate<JobRecord>[]; next?: Item }> {
  const { items, next } = await newestFirst(table, partition, query.cursor, pageSize, start);
  // The index holds keys only: the jobs come from the table, as they are now. One whose status
  // moved on since the index was written is listed under its new status, not this one.
  const ids = items.map((item) => (str(item, 'pk') ?? '').slice('JOB#'.length));
  const jobs = await reader.getJobs(ids);
  const candidates: Candidate<JobRecord>[] = [];
  items.forEach((item, n) => {
    const job = jobs.get(ids[n] as string);
    const sort = str(item, 'gsi1sk');
    if (!job || sort === undefined || job.parent !== null || job.status !== status) return;
    if (!matchesFilters(job, query)) return;
    candidates.push({ sort, value: job });
  });
  return { candidates, next };
}

/**
 * Children of one workflow, newest first, from one gsi1 partition of bucket listings
 * (`childListing` in commit-items.ts): each listing entry is expanded into its bucket's
 * children, highest index first, read as needed, each sorted as `<listing sort>#<index>`. A cursor
 * inside a bucket resumes there. An entry of a single child (written before listings were) is
 * listed as that child, by its own sort.
 */
function childSource(
  table: DynamoDbTable,
  reader: JobReader,
  partition: string,
  query: JobQuery,
  pageSize: number,
): MergeSource<JobRecord> {
  const listings: Item[] = [];
  let listingStart: Item | undefined;
  let listingsRead = false;
  let bucket: { listing: Item; sort: string; below?: number; start?: Item } | undefined;
  const more = (): boolean => !(listingsRead && !listings.length && !bucket);
  return new MergeSource<JobRecord>(async () => {
    const candidates: Candidate<JobRecord>[] = [];
    if (!bucket && !listings.length && !listingsRead) {
      const { items, next } = await newestFirst(table, partition, query.cursor, pageSize, listingStart);
      listings.push(...items);
      listingStart = next;
      listingsRead = next === undefined;
    } else if (!bucket) {
      const listing = listings.shift() as Item;
      const sort = str(listing, 'gsi1sk') ?? '';
      if (str(listing, 'sk') !== keys.childListing()) {
        // A single child's entry: the child's id follows its index in the entry's sort key.
        const id = (str(listing, 'sk') ?? '').replace(/^\d+#/, '');
        const job = (await reader.getJobs([id])).get(id);
        if (job && matches(job, query)) candidates.push({ sort, value: job });
      } else {
        const cursor = query.cursor;
        const below =
          cursor?.startsWith(`${sort}#`) === true ? Number(cursor.slice(sort.length + 1)) : undefined;
        bucket = { listing, sort, below };
      }
    } else {
      const { listing, sort, below, start } = bucket;
      const page = await table.queryPage({
        KeyConditionExpression: 'pk = :pk AND sk < :below',
        ExpressionAttributeValues: {
          ':pk': listing.pk as Item[string],
          ':below': S(below === undefined ? keys.childListing() : pad(below, 9)),
        },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: pageSize,
        ExclusiveStartKey: start,
      });
      const jobs = await reader.getJobs(page.items.map((item) => str(item, 'id') ?? ''));
      // Keys only: the parent and step are in the listing's sort `<createdAt>#<parent>#<step>#<bucket>`.
      const named = sort.slice(16, sort.lastIndexOf('#'));
      const parentId = named.slice(0, named.indexOf('#'));
      const step = named.slice(named.indexOf('#') + 1);
      for (const item of page.items) {
        const job = jobs.get(str(item, 'id') ?? '');
        const index = num(item, 'ix');
        const link = job?.parent;
        if (
          !job ||
          !link ||
          index === undefined ||
          link.id !== parentId ||
          link.step !== step ||
          link.index !== index
        )
          continue;
        if (matches(job, query)) candidates.push({ sort: `${sort}#${pad(index, 9)}`, value: job });
      }
      bucket = page.next ? { ...bucket, start: page.next } : undefined;
    }
    return more() ? { candidates, next: {} } : { candidates };
  });
}

function matches(job: JobRecord, query: JobQuery): boolean {
  return (
    job.parent !== null &&
    (!query.workflow || job.workflow === query.workflow) &&
    (!query.status || job.status === query.status) &&
    matchesFilters(job, query)
  );
}

function matchesFilters(job: JobRecord, query: JobQuery): boolean {
  return (
    (query.vhost === undefined || job.vhost === query.vhost) &&
    (query.endedSince === undefined || (job.endedAt ?? -1) >= query.endedSince)
  );
}
