import type Database from 'better-sqlite3';

/**
 * The schema, as an ordered list of migrations: migration n (0-based) takes a database from
 * `user_version` n to n + 1. Append new migrations; never edit one that has shipped.
 *
 * Each job is one row: the columns that queries filter or sort on, copied out of the record, and
 * the whole `JobRecord` as JSON in `record` (last, so that reading the small columns never touches
 * its overflow pages). The identity columns (workflow, root, parent, vhost, created_at) are fixed
 * when the job is created; updates rewrite only rev, status, ended_at and record.
 *
 * Most indexes cover top-level jobs only (`parent_id IS NULL`), so that creating and finishing
 * 100,000 fan-out children never touches them. Children have one index, (parent, step, index): it
 * lists them, and retention walks a job's tree through it (an index on `root` would cost every
 * child another index entry for the sake of one delete). Tables are not STRICT: a time that is not a
 * whole number of milliseconds is kept exactly (as REAL) rather than refused.
 *
 * An outbox row keeps the entry's fields in columns and only its request or follow-up as JSON.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE workflow_versions (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (name, version)
  );

  CREATE TABLE workflows (
    name TEXT NOT NULL PRIMARY KEY,
    enabled INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE jobs (
    id TEXT NOT NULL PRIMARY KEY,
    rev INTEGER NOT NULL,
    workflow TEXT NOT NULL,
    status TEXT NOT NULL,
    root TEXT NOT NULL,
    parent_id TEXT,
    parent_step TEXT,
    parent_index INTEGER,
    vhost TEXT,
    created_at INTEGER NOT NULL,
    ended_at INTEGER,
    record TEXT NOT NULL
  );

  CREATE INDEX jobs_children ON jobs (parent_id, parent_step, parent_index) WHERE parent_id IS NOT NULL;
  CREATE INDEX jobs_top_created ON jobs (created_at, id) WHERE parent_id IS NULL;
  CREATE INDEX jobs_top_workflow ON jobs (workflow, created_at, id) WHERE parent_id IS NULL;
  CREATE INDEX jobs_top_workflow_status ON jobs (workflow, status, created_at, id) WHERE parent_id IS NULL;
  CREATE INDEX jobs_top_status ON jobs (status, created_at, id) WHERE parent_id IS NULL;
  CREATE INDEX jobs_top_finished ON jobs (ended_at)
    WHERE parent_id IS NULL AND status IN ('completed', 'failed', 'cancelled');

  CREATE TABLE fan_counts (
    parent_id TEXT NOT NULL,
    step TEXT NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    PRIMARY KEY (parent_id, step)
  ) WITHOUT ROWID;

  -- seq: insertion order, never reused (AUTOINCREMENT), so a paging cursor never skips a new entry.
  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    job_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    payload TEXT NOT NULL
  );
  CREATE INDEX outbox_by_job ON outbox (job_id, kind);

  -- step '' is the job's own deadline (step names are never empty).
  CREATE TABLE timers (
    job_id TEXT NOT NULL,
    step TEXT NOT NULL,
    kind TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (job_id, step)
  ) WITHOUT ROWID;
  CREATE INDEX timers_by_at ON timers (at);
  `,
  // Top-level jobs per workflow and status, kept by triggers in the transaction that changes them:
  // counting the index instead read every job a workflow ever had, at each GET /api/workflows.
  `
  CREATE TABLE job_counts (
    workflow TEXT NOT NULL,
    status TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (workflow, status)
  ) WITHOUT ROWID;

  INSERT INTO job_counts (workflow, status, count)
    SELECT workflow, status, count(*) FROM jobs WHERE parent_id IS NULL GROUP BY workflow, status;

  CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs WHEN NEW.parent_id IS NULL BEGIN
    INSERT INTO job_counts (workflow, status, count) VALUES (NEW.workflow, NEW.status, 1)
      ON CONFLICT (workflow, status) DO UPDATE SET count = count + 1;
  END;

  CREATE TRIGGER job_counts_update AFTER UPDATE OF status ON jobs
    WHEN NEW.parent_id IS NULL AND OLD.status <> NEW.status BEGIN
    UPDATE job_counts SET count = count - 1 WHERE workflow = OLD.workflow AND status = OLD.status;
    INSERT INTO job_counts (workflow, status, count) VALUES (NEW.workflow, NEW.status, 1)
      ON CONFLICT (workflow, status) DO UPDATE SET count = count + 1;
  END;

  CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs WHEN OLD.parent_id IS NULL BEGIN
    UPDATE job_counts SET count = count - 1 WHERE workflow = OLD.workflow AND status = OLD.status;
  END;
  `,
  // The definition each workflow's file gave `serve --config` at its last start: a restart with the
  // file unchanged registers nothing, so it keeps what was registered through the API since.
  `
  CREATE TABLE config_definitions (
    name TEXT NOT NULL PRIMARY KEY,
    definition TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // Aborted jobs (a worker's `abort` reply) are finished too: retention deletes them as it does the rest.
  `
  DROP INDEX jobs_top_finished;
  CREATE INDEX jobs_top_finished ON jobs (ended_at)
    WHERE parent_id IS NULL AND status IN ('completed', 'failed', 'cancelled', 'aborted');
  `,
  // Scoped tokens: the SHA-256 of each secret and its scope, never the secret (engine/access/roles.ts).
  `
  CREATE TABLE tokens (
    id TEXT NOT NULL PRIMARY KEY,
    hash TEXT NOT NULL,
    namespace TEXT NOT NULL,
    role TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // maxRunning (engine/job/running-limit.ts): each workflow's counters, and its queue by place.
  `
  CREATE TABLE running_counts (
    workflow TEXT NOT NULL PRIMARY KEY,
    running INTEGER NOT NULL,
    queued INTEGER NOT NULL,
    next_seq INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE job_queue (
    workflow TEXT NOT NULL,
    seq INTEGER NOT NULL,
    job_id TEXT NOT NULL,
    PRIMARY KEY (workflow, seq)
  ) WITHOUT ROWID;
  `,
  // serve's schedules: the last tick handled of each (functions/local/local-schedules.ts).
  `
  CREATE TABLE schedule_cursors (
    workflow TEXT NOT NULL,
    schedule TEXT NOT NULL,
    last_tick INTEGER NOT NULL,
    PRIMARY KEY (workflow, schedule)
  ) WITHOUT ROWID;
  `,
  // What the operator set for each namespace, and the manager's own keys (the reply token key).
  `
  CREATE TABLE namespace_settings (
    namespace TEXT NOT NULL PRIMARY KEY,
    queue_prefix TEXT,
    vhosts TEXT,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE manager_keys (
    name TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // Bounded job trees (engine/job/tree-quota.ts): the jobs counted under each tree's root.
  `
  CREATE TABLE tree_sizes (
    root TEXT NOT NULL PRIMARY KEY,
    size INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // The crash journal (engine/ports/reply-intake.ts): a reply handled alone is noted here first, and
  // its note deleted once it is settled; a note found at the next start names a reply in hand when
  // serve died.
  `
  CREATE TABLE replies_in_hand (
    key TEXT NOT NULL PRIMARY KEY,
    holder TEXT NOT NULL,
    held_alone INTEGER NOT NULL,
    died_alone INTEGER NOT NULL,
    died_among_others INTEGER NOT NULL,
    since INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // Who changed definitions, tokens and namespace settings (engine/ports/audit-log.ts), by namespace
  // and newest first; entries older than the retention are pruned at each write, through \`at\`.
  `
  CREATE TABLE audit_log (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT,
    PRIMARY KEY (namespace, id)
  ) WITHOUT ROWID;
  CREATE INDEX audit_log_at ON audit_log (at);
  `,
  // Search (engine/job/listed-status.ts, search-attributes.ts). The status column holds the listed
  // status from now on: a job not started is 'pending' (the counts' triggers follow the update), and
  // a job waiting for someone becomes 'waiting' at its next change. Each top-level job's search
  // attributes are index rows, kept by triggers from its record: written when it is created (they
  // never change) and deleted with it; a listing by attribute walks this table newest first.
  `
  UPDATE jobs SET status = 'pending' WHERE status = 'waiting';

  CREATE TABLE job_attributes (
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    job_id TEXT NOT NULL,
    PRIMARY KEY (name, value, created_at, job_id)
  ) WITHOUT ROWID;

  INSERT INTO job_attributes (name, value, created_at, job_id)
    SELECT attribute.key, attribute.value, jobs.created_at, jobs.id
      FROM jobs, json_each(jobs.record, '$.attributes') AS attribute
      WHERE jobs.parent_id IS NULL AND json_type(jobs.record, '$.attributes') = 'object';

  CREATE TRIGGER job_attributes_insert AFTER INSERT ON jobs
    WHEN NEW.parent_id IS NULL AND json_type(NEW.record, '$.attributes') = 'object' BEGIN
    INSERT OR IGNORE INTO job_attributes (name, value, created_at, job_id)
      SELECT key, value, NEW.created_at, NEW.id FROM json_each(NEW.record, '$.attributes');
  END;

  CREATE TRIGGER job_attributes_delete AFTER DELETE ON jobs
    WHEN OLD.parent_id IS NULL AND json_type(OLD.record, '$.attributes') = 'object' BEGIN
    DELETE FROM job_attributes WHERE (name, value, created_at, job_id) IN
      (SELECT key, value, OLD.created_at, OLD.id FROM json_each(OLD.record, '$.attributes'));
  END;
  `,
  // Webhook deliveries (engine/ports/deliveries.ts): the record as JSON, indexed for the pump (due
  // pending ones), a job's page, a state's listing newest first (page_key: time, then id), and the
  // settled ones past the retention (settled_at: when a delivered or dead one settled).
  `
  CREATE TABLE deliveries (
    id TEXT NOT NULL PRIMARY KEY,
    job_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    state TEXT NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    page_key TEXT NOT NULL,
    rev INTEGER NOT NULL,
    settled_at INTEGER,
    record TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX deliveries_settled ON deliveries (settled_at) WHERE settled_at IS NOT NULL;
  CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
  CREATE INDEX deliveries_job ON deliveries (job_id, page_key);
  CREATE INDEX deliveries_listed ON deliveries (state, namespace, page_key);
  `,
  // A new job's search attribute rows and the job counts of starts and status changes: the store
  // writes them (the counts summed once a transaction, job-count-changes.ts), where triggers parsed
  // every new job's record and wrote two upserts a job. Deletes keep their triggers.
  `
  DROP TRIGGER job_counts_insert;
  DROP TRIGGER job_counts_update;
  DROP TRIGGER job_attributes_insert;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function schemaVersionOf(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Refuses a database that a newer switchyard wrote: this one would misread it. */
export function assertNotNewer(version: number, path: string): void {
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `the database ${path} has schema version ${version}, newer than this switchyard knows (${SCHEMA_VERSION}): ` +
        'upgrade switchyard to open it',
    );
  }
}

/**
 * Brings the database to the current schema in one transaction; a database already at the current
 * version is left exactly as it was.
 */
export function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    const version = schemaVersionOf(db);
    assertNotNewer(version, path);
    if (version === SCHEMA_VERSION) return;
    for (const migration of MIGRATIONS.slice(version)) db.exec(migration);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
