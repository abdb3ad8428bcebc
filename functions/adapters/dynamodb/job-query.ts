import {
  InvalidCursorError,
  inNamespace,
  type JobPage,
  type JobQuery,
  type JobRecord,
  LISTED_STATUSES,
  type ListedStatus,
  listedStatusOf,
  matchesJobQuery,
} from '../../../engine/index.js';
import { type ChildEntry, readBucket } from './child-packs.js';
import { gsi, jobIdOf, keys, pad, S, SHARDS, str } from './items.js';
import { workflowsWithJobs } from './job-counts.js';
import type { JobReader } from './job-reader.js';
import { type Candidate, MergeSource, mergePage, pageSizeFor } from './merge.js';
import type { DynamoDbTable, Item } from './table.js';

const STATUSES: readonly ListedStatus[] = LISTED_STATUSES;
const CURSOR = /^\d{15}#.+$/;

/**
 * Jobs newest first. Top-level jobs are listed by gsi1 partitions `L#<workflow>#<listed status>#<shard>`
 * (sort key `<createdAt>#<id>`), so a status filter reads only that status, and a creation range
 * only that range of each partition; the index holds keys only, so the jobs are read from the
 * table and the other filters (vhost, end time, error text, search attributes) checked there
 * (README.md, "Search": no index of its own for them). Children are
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

/**
 * The range of a gsi1 partition a query reads: before the cursor and `createdBefore`, from
 * `createdAfter` on (sort keys are `<createdAt padded>#…`, so a padded time bounds them).
 * DynamoDB has one sort-key condition, so both bounds are a BETWEEN, which includes its upper end:
 * the item at the cursor itself is dropped after the read (`newestFirst`).
 */
function keyCondition(partition: string, query: JobQuery): { expression: string; values: Item } {
  const values: Item = { ':p': S(partition) };
  const before = query.createdBefore === undefined ? undefined : pad(Math.max(0, query.createdBefore), 15);
  const upper =
    query.cursor === undefined
      ? before
      : before === undefined || query.cursor < before
        ? query.cursor
        : before;
  const lower = query.createdAfter === undefined ? undefined : pad(Math.max(0, query.createdAfter), 15);
  if (upper !== undefined) values[':c'] = S(upper);
  if (lower !== undefined) values[':a'] = S(lower);
  if (upper !== undefined && lower !== undefined)
    return { expression: 'gsi1pk = :p AND gsi1sk BETWEEN :a AND :c', values };
  if (upper !== undefined) return { expression: 'gsi1pk = :p AND gsi1sk < :c', values };
  if (lower !== undefined) return { expression: 'gsi1pk = :p AND gsi1sk >= :a', values };
  return { expression: 'gsi1pk = :p', values };
}

/** One page of a gsi1 partition, newest first, in the query's range. */
async function newestFirst(
  table: DynamoDbTable,
  partition: string,
  query: JobQuery,
  pageSize: number,
  start: Item | undefined,
): Promise<{ items: Item[]; next?: Item }> {
  const { expression, values } = keyCondition(partition, query);
  const page = await table.queryPage({
    IndexName: 'gsi1',
    KeyConditionExpression: expression,
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
    Limit: pageSize,
    ExclusiveStartKey: start,
  });
  if (query.cursor === undefined) return page;
  const items = page.items.filter((item) => str(item, 'gsi1sk') !== query.cursor);
  return page.next ? { items, next: page.next } : { items };
}

async function topLevelPage(
  table: DynamoDbTable,
  reader: JobReader,
  partition: string,
  status: ListedStatus,
  query: JobQuery,
  pageSize: number,
  start: Item | undefined,
): Promise<{ candidates: Candidate<JobRecord>[]; next?: Item }> {
  const { items, next } = await newestFirst(table, partition, query, pageSize, start);
  // The index holds keys only: the jobs come from the table, as they are now. One whose status
  // moved on since the index was written is listed under its new status, not this one.
  const ids = items.map((item) => jobIdOf(item));
  const jobs = await reader.getJobs(ids);
  const candidates: Candidate<JobRecord>[] = [];
  items.forEach((item, n) => {
    const job = jobs.get(ids[n] as string);
    const sort = str(item, 'gsi1sk');
    if (!job || sort === undefined || job.parent !== null || listedStatusOf(job) !== status) return;
    if (!matchesJobQuery(job, query)) return;
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
  // A bucket's children newest (highest index) first, read whole when reached, handed out a page at a time.
  let bucket: { sort: string; parentId: string; step: string; entries: ChildEntry[] } | undefined;
  const more = (): boolean => !(listingsRead && !listings.length && !bucket);
  return new MergeSource<JobRecord>(async () => {
    const candidates: Candidate<JobRecord>[] = [];
    if (!bucket && !listings.length && !listingsRead) {
      const { items, next } = await newestFirst(table, partition, query, pageSize, listingStart);
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
        // Keys only: the parent and step are in the listing's sort `<createdAt>#<parent>#<step>#<bucket>`.
        const named = sort.slice(16, sort.lastIndexOf('#'));
        const entries = (await readBucket(table, str(listing, 'pk') ?? ''))
          .filter((entry) => below === undefined || entry.index < below)
          .reverse();
        bucket =
          entries.length === 0
            ? undefined
            : {
                sort,
                parentId: named.slice(0, named.indexOf('#')),
                step: named.slice(named.indexOf('#') + 1),
                entries,
              };
      }
    } else {
      const { sort, parentId, step, entries } = bucket;
      const page = entries.splice(0, pageSize);
      const jobs = await reader.getJobs(page.map((entry) => entry.id));
      for (const { index, id } of page) {
        const job = jobs.get(id);
        const link = job?.parent;
        if (!job || !link || link.id !== parentId || link.step !== step || link.index !== index) continue;
        if (matches(job, query)) candidates.push({ sort: `${sort}#${pad(index, 9)}`, value: job });
      }
      if (!entries.length) bucket = undefined;
    }
    return more() ? { candidates, next: {} } : { candidates };
  });
}

function matches(job: JobRecord, query: JobQuery): boolean {
  return job.parent !== null && matchesJobQuery(job, { ...query, includeChildren: true });
}
