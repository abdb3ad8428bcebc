import type { JobRecord, JobStatus } from '../../engine/job/types.js';
import type { JobPage, JobQuery } from '../../engine/ports/store.js';
import { InvalidCursorError } from '../../engine/ports/store.js';
import { gsi, S, SHARDS, str } from './dynamodb-items.js';
import { workflowsWithJobs } from './dynamodb-job-counts.js';
import type { JobReader } from './dynamodb-job-reader.js';
import { type Candidate, MergeSource, mergePage, pageSizeFor } from './dynamodb-merge.js';
import type { DynamoDbTable, Item } from './dynamodb-table.js';

const STATUSES: readonly JobStatus[] = ['waiting', 'running', 'completed', 'failed', 'cancelled'];
const CURSOR = /^\d{15}#.+$/;

/**
 * Jobs newest first. Top-level jobs are listed by gsi1 partitions `L#<workflow>#<status>#<shard>`
 * (sort key `<createdAt>#<id>`), so a status filter reads only that status; the index holds keys
 * only, so the jobs are read from the table and vhost and endedSince filtered there. Children are
 * listed by their index entries in `CL#<workflow>#<shard>` and read from the table, then filtered. Every partition is read newest first and the results merged;
 * the cursor is the sort key of the last job returned. Without a workflow, the workflows come from
 * the job counters.
 */
export async function queryJobs(table: DynamoDbTable, reader: JobReader, query: JobQuery): Promise<JobPage> {
  const limit = Math.max(1, query.limit ?? 100);
  if (query.cursor !== undefined && !CURSOR.test(query.cursor)) throw new InvalidCursorError(query.cursor);
  const workflows = query.workflow
    ? [query.workflow]
    : await workflowsWithJobs(table, query.includeChildren ? undefined : query.status);
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
        sources.push(
          new MergeSource((start) =>
            childPage(table, reader, gsi.childListing(workflow, shard), query, pageSize, start),
          ),
        );
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

async function childPage(
  table: DynamoDbTable,
  reader: JobReader,
  partition: string,
  query: JobQuery,
  pageSize: number,
  start: Item | undefined,
): Promise<{ candidates: Candidate<JobRecord>[]; next?: Item }> {
  const { items, next } = await newestFirst(table, partition, query.cursor, pageSize, start);
  // Keys only: the child's id is the part of the entry's sort key `<index>#<id>` after the index.
  const childId = (item: Item): string => (str(item, 'sk') ?? '').replace(/^\d+#/, '');
  const jobs = await reader.getJobs(items.map(childId));
  const candidates: Candidate<JobRecord>[] = [];
  for (const item of items) {
    const job = jobs.get(childId(item));
    const sort = str(item, 'gsi1sk');
    if (!job || sort === undefined || !matches(job, query)) continue;
    candidates.push({ sort, value: job });
  }
  return { candidates, next };
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
