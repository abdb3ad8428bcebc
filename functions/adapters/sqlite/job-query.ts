import { DEFAULT_NAMESPACE, InvalidCursorError, type JobQuery } from '../../../engine/index.js';

export type SqlValue = string | number;

/** A job listing as SQL; queries with the same filters share the same SQL (and prepared statement). */
export interface JobQuerySql {
  sql: string;
  params: SqlValue[];
  limit: number;
}

interface JobCursor {
  createdAt: number;
  id: string;
}

/**
 * Newest first, by (created_at, id) descending; a page continues after the last (created_at, id)
 * of the previous one (keyset paging: stable while jobs are added, and every page is an index range).
 * Asks for one row more than `limit` to learn whether another page follows. An empty workflow,
 * status or vhost filters nothing (as in the memory store). `status` is the listed status, which
 * the status column holds (rows.ts).
 *
 * A query by search attribute walks that attribute's rows in `job_attributes` (name, value,
 * created_at, job_id) newest first, and looks each job up by id: the page is an index range however
 * many jobs other values have. Further attributes are each an index probe per job.
 */
export function jobQuerySql(query: JobQuery): JobQuerySql {
  const limit = Math.max(1, Math.trunc(query.limit ?? 100));
  const where: string[] = [];
  const params: SqlValue[] = [];
  const attributes = Object.entries(query.attributes ?? {});
  const first = query.includeChildren ? undefined : attributes.shift();
  // Keys of the order (and the cursor): the attribute's row when walking one, else the job's.
  const createdAt = first ? 'a.created_at' : 'created_at';
  const id = first ? 'a.job_id' : 'id';
  const column = (name: string): string => (first ? `jobs.${name}` : name);
  if (first) {
    where.push('a.name = ? AND a.value = ?');
    params.push(first[0], first[1]);
  }
  if (!query.includeChildren) where.push(`${column('parent_id')} IS NULL`);
  if (query.workflow) {
    where.push(`${column('workflow')} = ?`);
    params.push(query.workflow);
  }
  if (query.namespace !== undefined) {
    if (query.namespace === DEFAULT_NAMESPACE) {
      where.push(`instr(${column('workflow')}, '/') = 0`);
    } else {
      // `<namespace>/…` sorts between `<namespace>/` and `<namespace>0` ('0' follows '/'): an index range.
      where.push(`${column('workflow')} >= ? AND ${column('workflow')} < ?`);
      params.push(`${query.namespace}/`, `${query.namespace}0`);
    }
  }
  if (query.status) {
    where.push(`${column('status')} = ?`);
    params.push(query.status);
  }
  if (query.vhost) {
    where.push(`${column('vhost')} = ?`);
    params.push(query.vhost);
  }
  if (query.createdAfter !== undefined) {
    where.push(`${createdAt} >= ?`);
    params.push(query.createdAfter);
  }
  if (query.createdBefore !== undefined) {
    where.push(`${createdAt} < ?`);
    params.push(query.createdBefore);
  }
  if (query.endedSince !== undefined) {
    where.push(`${column('ended_at')} >= ?`);
    params.push(query.endedSince);
  }
  if (query.endedBefore !== undefined) {
    where.push(`${column('ended_at')} < ?`);
    params.push(query.endedBefore);
  }
  if (query.errorContains) {
    // The error is in the record only: read for the jobs the indexed filters left.
    const record = column('record');
    where.push(
      `(instr(lower(json_extract(${record}, '$.error.message')), ?) > 0 OR instr(lower(json_extract(${record}, '$.error.step')), ?) > 0)`,
    );
    params.push(query.errorContains.toLowerCase(), query.errorContains.toLowerCase());
  }
  for (const [name, value] of query.includeChildren ? Object.entries(query.attributes ?? {}) : attributes) {
    const record = column('record');
    if (query.includeChildren) {
      // Children have no attribute rows (only top-level jobs are given attributes).
      where.push(`json_extract(${record}, ?) = ?`);
      params.push(`$.attributes.${JSON.stringify(name)}`, value);
    } else {
      where.push(
        `EXISTS (SELECT 1 FROM job_attributes b WHERE b.name = ? AND b.value = ? AND b.created_at = ${createdAt} AND b.job_id = ${id})`,
      );
      params.push(name, value);
    }
  }
  if (query.cursor) {
    const after = decodeJobCursor(query.cursor);
    where.push(`(${createdAt}, ${id}) < (?, ?)`);
    params.push(after.createdAt, after.id);
  }
  params.push(limit + 1);
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const order = ` ORDER BY ${createdAt} DESC, ${id} DESC`;
  if (first) {
    const sql = `SELECT jobs.created_at, jobs.id, jobs.record FROM job_attributes a JOIN jobs ON jobs.id = a.job_id${filter}${order} LIMIT ?`;
    return { sql, params, limit };
  }
  // Top-level listings walk an index in order. With children there is no such index (it would cost
  // every fan-out child an entry): sort only the keys, then read the page's records.
  const sql = query.includeChildren
    ? `SELECT created_at, id, record FROM jobs WHERE rowid IN (SELECT rowid FROM jobs${filter}${order} LIMIT ?)${order}`
    : `SELECT created_at, id, record FROM jobs${filter}${order} LIMIT ?`;
  return { sql, params, limit };
}

export function encodeJobCursor(cursor: JobCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

function decodeJobCursor(text: string): JobCursor {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (!Array.isArray(decoded) || typeof decoded[0] !== 'number' || typeof decoded[1] !== 'string') {
    throw new InvalidCursorError(text);
  }
  return { createdAt: decoded[0], id: decoded[1] };
}
