import { inNamespace } from '../definition/namespace.js';
import type { JobQuery } from '../ports/store.js';
import { listedStatusOf } from './listed-status.js';
import type { JobRecord } from './types.js';

/**
 * Whether a job passes a query's filters (not its paging): what a store that cannot filter in its
 * index checks on each job it reads (memory; DynamoDB after its listing index), and what the
 * indexed stores' SQL says. An empty workflow, status or vhost filters nothing.
 */
export function matchesJobQuery(job: JobRecord, query: JobQuery): boolean {
  if (!query.includeChildren && job.parent !== null) return false;
  if (query.workflow && job.workflow !== query.workflow) return false;
  if (query.namespace !== undefined && !inNamespace(job.workflow, query.namespace)) return false;
  if (query.status && listedStatusOf(job) !== query.status) return false;
  if (query.vhost && job.vhost !== query.vhost) return false;
  if (query.createdAfter !== undefined && job.createdAt < query.createdAfter) return false;
  if (query.createdBefore !== undefined && job.createdAt >= query.createdBefore) return false;
  if (query.endedSince !== undefined && (job.endedAt === undefined || job.endedAt < query.endedSince))
    return false;
  if (query.endedBefore !== undefined && (job.endedAt === undefined || job.endedAt >= query.endedBefore))
    return false;
  if (query.errorContains && !errorHolds(job, query.errorContains)) return false;
  if (query.attributes) {
    for (const [name, value] of Object.entries(query.attributes)) {
      if (job.attributes?.[name] !== value) return false;
    }
  }
  return true;
}

function errorHolds(job: JobRecord, text: string): boolean {
  const error = job.error;
  if (!error) return false;
  const needle = text.toLowerCase();
  return error.message.toLowerCase().includes(needle) || error.step?.toLowerCase().includes(needle) === true;
}
