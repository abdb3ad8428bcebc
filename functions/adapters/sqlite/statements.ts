import type Database from 'better-sqlite3';
import { FINISHED_JOB_STATUSES } from '../../../engine/index.js';
import type { ParentRow } from './taken-ids.js';

/** The job columns in the order `insertJob` binds them. */
export type JobRow = [
  id: string,
  rev: number,
  workflow: string,
  status: string,
  root: string,
  parentId: string | null,
  parentStep: string | null,
  parentIndex: number | null,
  vhost: string | null,
  createdAt: number,
  endedAt: number | null,
  record: string,
];

export interface WorkflowVersionRow {
  version: number;
  definition: string;
  created_at: number;
}

/** An audit entry's row (engine/ports/audit-log.ts): its actor as JSON. */
export interface AuditRow {
  namespace: string;
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string;
  detail: string | null;
}

export type AuditRowValues = [string, string, number, string, string, string, string | null];

export interface TokenRow {
  id: string;
  hash: string;
  namespace: string;
  role: string;
  description: string;
  created_at: number;
}

export interface ReplyInHandRow {
  holder: string;
  held_alone: number;
  died_alone: number;
  died_among_others: number;
  since: number;
}

export interface FanCountsRow {
  total: number;
  done: number;
  failed: number;
}

export type TimerRow = [jobId: string, step: string, kind: string, attempt: number, at: number];

export type OutboxRow = [id: string, jobId: string, kind: string, createdAt: number, payload: string];

/** Rows per multi-row INSERT: one call into SQLite for this many rows (at most 12 × 64 parameters). */
export const ROWS_PER_INSERT = 64;

const JOB_COLUMNS =
  'id, rev, workflow, status, root, parent_id, parent_step, parent_index, vhost, created_at, ended_at, record';

/** The engine's finished statuses as an SQL list (they are plain words: nothing to escape). */
const FINISHED_STATUSES = FINISHED_JOB_STATUSES.map((status) => `'${status}'`).join(', ');

function valuesFor(columns: number, rows: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** Every statement the store runs, prepared once when it opens (job listings are cached by shape). */
export function prepareStatements(db: Database.Database) {
  return {
    ping: db.prepare<[], number>('SELECT 1').pluck(),

    latestWorkflow: db.prepare<[string], WorkflowVersionRow>(
      'SELECT version, definition, created_at FROM workflow_versions WHERE name = ? ORDER BY version DESC LIMIT 1',
    ),
    workflowVersion: db.prepare<[string, number], WorkflowVersionRow>(
      'SELECT version, definition, created_at FROM workflow_versions WHERE name = ? AND version = ?',
    ),
    workflowVersions: db.prepare<[string], { version: number; created_at: number }>(
      'SELECT version, created_at FROM workflow_versions WHERE name = ? ORDER BY version',
    ),
    insertWorkflowVersion: db.prepare<[string, number, string, number]>(
      'INSERT INTO workflow_versions (name, version, definition, created_at) VALUES (?, ?, ?, ?)',
    ),
    workflowNames: db.prepare<[], string>('SELECT name FROM workflows').pluck(),
    workflowEnabled: db.prepare<[string], number>('SELECT enabled FROM workflows WHERE name = ?').pluck(),
    enableWorkflow: db.prepare<[string]>(
      'INSERT INTO workflows (name, enabled) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET enabled = 1',
    ),
    setWorkflowEnabled: db.prepare<[number, string]>('UPDATE workflows SET enabled = ? WHERE name = ?'),
    hasWorkflowDefinition: db
      .prepare<[string, string], number>(
        'SELECT 1 FROM workflow_versions WHERE name = ? AND definition = ? LIMIT 1',
      )
      .pluck(),
    insertToken: db.prepare<[string, string, string, string, string, number]>(
      'INSERT INTO tokens (id, hash, namespace, role, description, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
    ),
    token: db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?'),
    tokens: db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
    deleteToken: db.prepare<[string]>('DELETE FROM tokens WHERE id = ?'),
    insertAudit: db.prepare<AuditRowValues>(
      'INSERT OR REPLACE INTO audit_log (namespace, id, at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    pruneAudit: db.prepare<[number]>('DELETE FROM audit_log WHERE at < ?'),
    auditPage: db.prepare<[string, string, number], AuditRow>(
      'SELECT * FROM audit_log WHERE namespace = ? AND id < ? ORDER BY id DESC LIMIT ?',
    ),
    configDefinition: db
      .prepare<[string], string>('SELECT definition FROM config_definitions WHERE name = ?')
      .pluck(),
    rememberConfigDefinition: db.prepare<[string, string]>(
      'INSERT INTO config_definitions (name, definition) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET definition = excluded.definition',
    ),
    scheduleCursors: db
      .prepare<[string], [string, number]>(
        'SELECT schedule, last_tick FROM schedule_cursors WHERE workflow = ?',
      )
      .raw(),
    // Never backwards: two passes racing leave the later cursor.
    setScheduleCursor: db.prepare<[string, string, number]>(
      `INSERT INTO schedule_cursors (workflow, schedule, last_tick) VALUES (?, ?, ?)
       ON CONFLICT (workflow, schedule) DO UPDATE SET last_tick = max(last_tick, excluded.last_tick)`,
    ),
    // The one way back: a cursor later than now, left by a clock that was ahead.
    capScheduleCursor: db.prepare<[number, string, string, number]>(
      'UPDATE schedule_cursors SET last_tick = ? WHERE workflow = ? AND schedule = ? AND last_tick > ?',
    ),

    replyInHand: db.prepare<[string], ReplyInHandRow>(
      'SELECT holder, held_alone, died_alone, died_among_others, since FROM replies_in_hand WHERE key = ?',
    ),
    holdReply: db.prepare<[string, string, number, number, number, number]>(
      `INSERT INTO replies_in_hand (key, holder, held_alone, died_alone, died_among_others, since)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, held_alone = excluded.held_alone,
         died_alone = excluded.died_alone, died_among_others = excluded.died_among_others, since = excluded.since`,
    ),
    forgetReply: db.prepare<[string, string]>('DELETE FROM replies_in_hand WHERE key = ? AND holder = ?'),
    letGoOfReply: db.prepare<[string, string]>(
      "UPDATE replies_in_hand SET holder = '' WHERE key = ? AND holder = ?",
    ),
    forgetRepliesInHand: db.prepare<[number]>('DELETE FROM replies_in_hand WHERE since < ?'),

    getJob: db.prepare<[string], string>('SELECT record FROM jobs WHERE id = ?').pluck(),
    jobParent: db.prepare<[string], ParentRow>(
      'SELECT parent_id, parent_step, parent_index FROM jobs WHERE id = ?',
    ),
    insertJob: db.prepare<JobRow>(
      `INSERT INTO jobs (${JOB_COLUMNS}) VALUES ${valuesFor(12, 1)} ON CONFLICT (id) DO NOTHING`,
    ),
    insertJobs: db.prepare<unknown[]>(
      `INSERT INTO jobs (${JOB_COLUMNS}) VALUES ${valuesFor(12, ROWS_PER_INSERT)} ON CONFLICT (id) DO NOTHING`,
    ),
    updateJob: db.prepare<
      [rev: number, status: string, endedAt: number | null, record: string, id: string, expectedRev: number]
    >('UPDATE jobs SET rev = ?, status = ?, ended_at = ?, record = ? WHERE id = ? AND rev = ?'),
    /** When status and end time stay as they were: no index holds rev or record, so none is touched. */
    updateJobRecord: db.prepare<[rev: number, record: string, id: string, expectedRev: number]>(
      'UPDATE jobs SET rev = ?, record = ? WHERE id = ? AND rev = ?',
    ),
    listChildren: db
      .prepare<[string, string, number, number], [number, string]>(
        `SELECT parent_index, record FROM jobs WHERE parent_id = ? AND parent_step = ? AND parent_index >= ?
         ORDER BY parent_index LIMIT ?`,
      )
      .raw(),
    countJobs: db
      .prepare<[string], [string, number]>('SELECT status, count FROM job_counts WHERE workflow = ?')
      .raw(),
    /** A write group's summed change to one count (job-count-changes.ts). */
    bumpJobCount: db.prepare<[workflow: string, status: string, by: number]>(
      `INSERT INTO job_counts (workflow, status, count) VALUES (?, ?, ?)
       ON CONFLICT (workflow, status) DO UPDATE SET count = count + excluded.count`,
    ),
    /** A new top-level job's search attribute (what `queryJobs` walks by attribute). */
    insertJobAttribute: db.prepare<[name: string, value: string, createdAt: number, jobId: string]>(
      'INSERT OR IGNORE INTO job_attributes (name, value, created_at, job_id) VALUES (?, ?, ?, ?)',
    ),
    /** The listed status a job's row holds at a revision: what its update moves the counts from. */
    listedStatusAt: db
      .prepare<[id: string, rev: number], string>('SELECT status FROM jobs WHERE id = ? AND rev = ?')
      .pluck(),

    getFanCounts: db.prepare<[string, string], FanCountsRow>(
      'SELECT total, done, failed FROM fan_counts WHERE parent_id = ? AND step = ?',
    ),
    setFanCounts: db.prepare<[string, string, number, number, number]>(
      `INSERT INTO fan_counts (parent_id, step, total, done, failed) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (parent_id, step) DO UPDATE SET total = excluded.total, done = excluded.done, failed = excluded.failed`,
    ),
    countChild: db.prepare<[done: number, failed: number, parentId: string, step: string], FanCountsRow>(
      `UPDATE fan_counts SET done = done + ?, failed = failed + ? WHERE parent_id = ? AND step = ?
       RETURNING total, done, failed`,
    ),

    // OR REPLACE: an entry written again takes a new place at the end, as a fresh entry would.
    insertOutbox: db.prepare<OutboxRow>(
      `INSERT OR REPLACE INTO outbox (id, job_id, kind, created_at, payload) VALUES ${valuesFor(5, 1)}`,
    ),
    insertOutboxes: db.prepare<unknown[]>(
      `INSERT OR REPLACE INTO outbox (id, job_id, kind, created_at, payload) VALUES ${valuesFor(5, ROWS_PER_INSERT)}`,
    ),
    dropUnsentRequests: db.prepare<[string]>("DELETE FROM outbox WHERE job_id = ? AND kind = 'request'"),
    pendingOutbox: db
      .prepare<[afterSeq: number, limit: number], [number, ...OutboxRow]>(
        'SELECT seq, id, job_id, kind, created_at, payload FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .raw(),
    pendingOutboxCreatedBefore: db
      .prepare<[afterSeq: number, createdBefore: number, limit: number], [number, ...OutboxRow]>(
        `SELECT seq, id, job_id, kind, created_at, payload FROM outbox WHERE seq > ? AND created_at < ?
         ORDER BY seq LIMIT ?`,
      )
      .raw(),
    ackOutbox: db.prepare<[string]>('DELETE FROM outbox WHERE id = ?'),

    setTimer: db.prepare<TimerRow>(
      `INSERT INTO timers (job_id, step, kind, attempt, at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (job_id, step) DO UPDATE SET kind = excluded.kind, attempt = excluded.attempt, at = excluded.at`,
    ),
    clearTimer: db.prepare<[jobId: string, step: string]>('DELETE FROM timers WHERE job_id = ? AND step = ?'),
    listTimers: db
      .prepare<[limit: number], TimerRow>(
        'SELECT job_id, step, kind, attempt, at FROM timers ORDER BY at, job_id, step LIMIT ?',
      )
      .raw(),
    listTimersDueBy: db
      .prepare<[dueBy: number, limit: number], TimerRow>(
        'SELECT job_id, step, kind, attempt, at FROM timers WHERE at <= ? ORDER BY at, job_id, step LIMIT ?',
      )
      .raw(),

    // INDEXED BY: without statistics the planner would rather walk every finished job by status. The
    // statuses are the engine's; should it gain one, the partial index (migration 3) no longer
    // covers the query and this fails to prepare, so every open fails until a migration adds it.
    finishedRoots: db
      .prepare<[endedBefore: number, limit: number], string>(
        `SELECT id FROM jobs INDEXED BY jobs_top_finished
         WHERE parent_id IS NULL AND status IN (${FINISHED_STATUSES}) AND ended_at < ? LIMIT ?`,
      )
      .pluck(),
    /** A job and all its descendants (children, their children…), breadth first: each after its parent. */
    tree: db
      .prepare<[root: string], string>(
        `WITH RECURSIVE tree (id) AS (VALUES (?) UNION ALL SELECT jobs.id FROM jobs JOIN tree ON jobs.parent_id = tree.id)
         SELECT id FROM tree`,
      )
      .pluck(),
    getRunningCount: db
      .prepare<[string], [number, number, number]>(
        'SELECT running, queued, next_seq FROM running_counts WHERE workflow = ?',
      )
      .raw(),
    setRunningCount: db.prepare<[workflow: string, running: number, queued: number, nextSeq: number]>(
      `INSERT INTO running_counts (workflow, running, queued, next_seq) VALUES (?, ?, ?, ?)
       ON CONFLICT (workflow) DO UPDATE SET running = excluded.running, queued = excluded.queued, next_seq = excluded.next_seq`,
    ),
    enqueue: db.prepare<[workflow: string, seq: number, jobId: string]>(
      'INSERT INTO job_queue (workflow, seq, job_id) VALUES (?, ?, ?)',
    ),
    dequeue: db.prepare<[workflow: string, seq: number]>(
      'DELETE FROM job_queue WHERE workflow = ? AND seq = ?',
    ),
    listQueued: db
      .prepare<[workflow: string, limit: number], [number, string]>(
        'SELECT seq, job_id FROM job_queue WHERE workflow = ? ORDER BY seq LIMIT ?',
      )
      .raw(),

    getTreeSize: db.prepare<[root: string], number>('SELECT size FROM tree_sizes WHERE root = ?').pluck(),
    jobStatus: db.prepare<[id: string], string>('SELECT status FROM jobs WHERE id = ?').pluck(),
    addTreeSize: db.prepare<[root: string, add: number]>(
      `INSERT INTO tree_sizes (root, size) VALUES (?, ?)
       ON CONFLICT (root) DO UPDATE SET size = size + excluded.size`,
    ),
    deleteTreeSize: db.prepare<[root: string]>('DELETE FROM tree_sizes WHERE root = ?'),

    deleteJob: db.prepare<[string]>('DELETE FROM jobs WHERE id = ?'),
    deleteJobTimers: db.prepare<[string]>('DELETE FROM timers WHERE job_id = ?'),
    deleteJobOutbox: db.prepare<[string]>('DELETE FROM outbox WHERE job_id = ?'),
    deleteJobFanCounts: db.prepare<[string]>('DELETE FROM fan_counts WHERE parent_id = ?'),
  };
}

export type SqliteStatements = ReturnType<typeof prepareStatements>;

/**
 * Inserts `items` with one statement call per `ROWS_PER_INSERT` rows (`many`), the rest one by one
 * (`one`); returns how many rows were written (an `ON CONFLICT DO NOTHING` insert may write fewer).
 */
export function insertAll<T, Row extends unknown[]>(
  items: readonly T[],
  toRow: (item: T) => Row,
  one: Database.Statement<Row>,
  many: Database.Statement<unknown[]>,
): number {
  let written = 0;
  let next = 0;
  for (; next + ROWS_PER_INSERT <= items.length; next += ROWS_PER_INSERT) {
    const params: unknown[] = [];
    for (let k = next; k < next + ROWS_PER_INSERT; k++) params.push(...toRow(items[k] as T));
    written += many.run(...params).changes;
  }
  for (; next < items.length; next++) written += one.run(...toRow(items[next] as T)).changes;
  return written;
}
