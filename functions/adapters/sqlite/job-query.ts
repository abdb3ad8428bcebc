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
 * status or vhost filters nothing (as in the memory store).
 */
export function jobQuerySql(query: JobQuery): JobQuerySql {
  const limit = Math.max(1, Math.trunc(query.limit ?? 100));
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (!query.includeChildren) where.push('parent_id IS NULL');
  if (query.workflow) {
    where.push('workflow = ?');
    params.push(query.workflow);
  }
  if (query.namespace !== undefined) {
    if (query.namespace === DEFAULT_NAMESPACE) {
      where.push("instr(workflow, '/') = 0");
    } else {
      // `<namespace>/…` sorts between `<namespace>/` and `<namespace>0` ('0' follows '/'): an index range.
      where.push('workflow >= ? AND workflow < ?');
      params.push(`${query.namespace}/`, `${query.namespace}0`);
    }
  }
  if (query.status) {
    where.push('status = ?');
    params.push(query.status);
  }
  if (query.vhost) {
    where.push('vhost = ?');
    params.push(query.vhost);
  }
  if (query.endedSince !== undefined) {
    where.push('ended_at >= ?');
    params.push(query.endedSince);
  }
  if (query.cursor) {
    const after = decodeJobCursor(query.cursor);
    where.push('(created_at, id) < (?, ?)');
    params.push(after.createdAt, after.id);
  }
  params.push(limit + 1);
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const order = ' ORDER BY created_at DESC, id DESC';
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
