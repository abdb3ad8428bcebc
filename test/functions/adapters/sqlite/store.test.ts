import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Commit, JobJson, JobRecord, OutboxEntry, StepState } from '../../../../engine/index.js';
import { InvalidCursorError, jobFromJson } from '../../../../engine/index.js';
import { openSqliteDatabase } from '../../../../functions/adapters/sqlite/connection.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../../functions/adapters/sqlite/schema.js';
import { SqliteStore } from '../../../../functions/adapters/sqlite/store.js';
import {
  aChild,
  aJob,
  aWorkflow,
  creating,
  requestEntry,
  updating,
  uuid,
} from '../../../support/factories.js';
import { SimulatedWorld } from '../../../support/simulated-world.js';
import { describeStoreContract } from '../../store-contract.js';

const directories: string[] = [];

function freshDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-'));
  directories.push(directory);
  return directory;
}

afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** Every file of the database (main file, WAL, shared memory) by name, with a hash of its bytes. */
function filesOf(directory: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(directory).sort()) {
    files[name] = createHash('sha256')
      .update(readFileSync(join(directory, name)))
      .digest('hex');
  }
  return files;
}

function userVersionOf(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

describeStoreContract('sqlite (file)', async () => {
  const directory = freshDirectory();
  const store = SqliteStore.open(join(directory, 'switchyard.db'));
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
});

describeStoreContract('sqlite (:memory:)', async () => {
  const store = SqliteStore.open(':memory:');
  return { store, cleanup: () => store.close() };
});

describe('SqliteStore', () => {
  const opened: SqliteStore[] = [];
  const open = (path: string, options?: Parameters<typeof SqliteStore.open>[1]): SqliteStore => {
    const store = SqliteStore.open(path, options);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  describe('Method: open', () => {
    it('keeps everything across close and reopen', async () => {
      // Prepare
      const path = join(freshDirectory(), 'state.db');
      const store = open(path);
      const workflow = aWorkflow();
      const job = aJob({ workflow: workflow.name });
      const child = aChild(job, 'fan', 0);
      const entry = requestEntry(job, 'kept-entry');
      const timer = { jobId: job.id, step: 'a', kind: 'attempt' as const, attempt: 1, at: 7_000 };
      await store.saveWorkflow(workflow, 1_000);
      await store.setWorkflowEnabled(workflow.name, false);
      await store.commit([
        creating(job, {
          creates: [child],
          outbox: [entry],
          timers: [{ op: 'set', timer }],
          fanInits: [{ parentId: job.id, step: 'fan', total: 1, done: 0, failed: 0 }],
        }),
      ]);

      // Act
      await store.close();
      const reopened = open(path);

      // Assess
      expect(await reopened.getWorkflow(workflow.name)).toEqual({
        name: workflow.name,
        version: 1,
        definition: workflow,
        createdAt: 1_000,
        enabled: false,
      });
      expect(await reopened.getJob(job.id)).toEqual(job);
      expect((await reopened.listChildren(job.id, 'fan', { limit: 10 })).children).toEqual([child]);
      expect((await reopened.pendingOutbox({ limit: 10 })).entries).toEqual([entry]);
      expect(await reopened.listTimers({ limit: 10 })).toEqual([timer]);
      expect(await reopened.getFanCounts(job.id, 'fan')).toEqual({ total: 1, done: 0, failed: 0 });
    });

    it('reads a job an earlier version wrote, and writes it back in the same JSON', async () => {
      // Prepare: the record column as Switchyard wrote it before a job's steps became a persistent list.
      const fixture = JSON.parse(
        readFileSync(new URL('../../../fixtures/jobs/wide-40-halfway.json', import.meta.url), 'utf8'),
      ) as JobJson;
      const path = join(freshDirectory(), 'state.db');
      const store = open(path);
      await store.commit([creating(aJob({ id: fixture.id, root: fixture.id, workflow: fixture.workflow }))]);
      await store.close();
      const db = new Database(path);
      db.prepare('UPDATE jobs SET rev = ?, record = ? WHERE id = ?').run(
        fixture.rev,
        JSON.stringify(fixture),
        fixture.id,
      );
      db.close();

      // Act
      const reopened = open(path);
      const job = (await reopened.getJob(fixture.id)) as JobRecord;
      const sink = job.steps.find((step) => step.name === 'sink') as StepState;
      const next: JobRecord = {
        ...job,
        rev: job.rev + 1,
        steps: job.steps.with(37, { ...sink, waitingOn: 15 }),
      };
      await reopened.commit([updating(job, next)]);
      await reopened.close();

      // Assess
      expect(job).toEqual(jobFromJson(structuredClone(fixture)));
      const written = new Database(path, { readonly: true });
      const row = written.prepare('SELECT record FROM jobs WHERE id = ?').get(fixture.id) as {
        record: string;
      };
      written.close();
      const stored = JSON.parse(row.record) as JobJson;
      expect(stored.steps).toEqual(
        fixture.steps.map((step) => (step.name === 'sink' ? { ...step, waitingOn: 15 } : step)),
      );
      expect({ ...stored, steps: [], rev: 0 }).toEqual({ ...fixture, steps: [], rev: 0 });
    });

    it('uses WAL with synchronous FULL and an exclusive lock by default', async () => {
      const store = open(join(freshDirectory(), 'default.db'));
      expect(store.settings()).toEqual({ journalMode: 'wal', synchronous: 'FULL', lockingMode: 'exclusive' });
    });

    it("keeps temporary files, such as a savepoint's journal, on disk rather than in serve's memory", () => {
      // A commit that creates children runs in a savepoint; with temp_store MEMORY its journal (a copy
      // of every page the commit changes, ~48 MB for 10,000 children) went to the C heap, which kept
      // growing, fragmented, with each slice of a large fan-out (BENCHMARKS.md).
      const db = openSqliteDatabase(join(freshDirectory(), 'temp.db'));
      try {
        expect(db.pragma('temp_store', { simple: true })).toBe(1); // FILE
      } finally {
        db.close();
      }
    });

    it('takes synchronous NORMAL and a shared lock when asked', async () => {
      const store = open(join(freshDirectory(), 'normal.db'), { synchronous: 'NORMAL', exclusive: false });
      expect(store.settings()).toEqual({ journalMode: 'wal', synchronous: 'NORMAL', lockingMode: 'normal' });
    });

    it('refuses a synchronous level it does not know', () => {
      const path = join(freshDirectory(), 'bad.db');
      expect(() => SqliteStore.open(path, { synchronous: 'OFF' as 'FULL' })).toThrow(
        'synchronous must be FULL or NORMAL',
      );
    });
  });

  describe('Migrations', () => {
    it('gives a fresh database the current schema version', async () => {
      const path = join(freshDirectory(), 'fresh.db');
      await open(path).close();
      expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
      expect(userVersionOf(path)).toBe(SCHEMA_VERSION);
    });

    it('changes nothing when it opens a database at the current version', async () => {
      // Prepare
      const directory = freshDirectory();
      const path = join(directory, 'current.db');
      const store = open(path);
      await store.commit([creating(aJob())]);
      await store.close();
      const before = filesOf(directory);

      // Act
      await open(path).close();

      // Assess
      expect(filesOf(directory)).toEqual(before);
    });

    it('applies migrations in one transaction: a failing one leaves nothing behind', async () => {
      // Prepare: a database at version 0 where the first migration cannot create its tables.
      const path = join(freshDirectory(), 'blocked.db');
      const db = new Database(path);
      db.exec('CREATE TABLE jobs (anything TEXT)');
      db.close();

      // Act, Assess
      expect(() => SqliteStore.open(path)).toThrow('table jobs already exists');
      const after = new Database(path, { readonly: true });
      const tables = after.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all();
      after.close();
      expect(tables).toEqual(['jobs']);
      expect(userVersionOf(path)).toBe(0);
    });

    it('counts the jobs a database at version 1 already holds when it adds the job counts', async () => {
      // Prepare: a version-1 database with top-level jobs in two statuses and a child.
      const path = join(freshDirectory(), 'version-1.db');
      const workflow = `counted-${uuid()}`;
      const running = [aJob({ workflow }), aJob({ workflow })];
      const done = aJob({ workflow, status: 'completed', endedAt: 1_000 });
      const child = aChild(running[0] as JobRecord, 'fan', 0, { workflow });
      const db = new Database(path);
      db.exec(MIGRATIONS[0] as string);
      db.pragma('user_version = 1');
      const insert = db.prepare(
        `INSERT INTO jobs (id, rev, workflow, status, root, parent_id, parent_step, parent_index, vhost, created_at, ended_at, record)
         VALUES (?, 1, ?, ?, ?, ?, ?, ?, NULL, 0, ?, ?)`,
      );
      for (const job of [...running, done, child]) {
        insert.run(
          job.id,
          job.workflow,
          job.status,
          job.root,
          job.parent?.id ?? null,
          job.parent?.step ?? null,
          job.parent?.index ?? null,
          job.endedAt ?? null,
          JSON.stringify(job),
        );
      }
      db.close();

      // Act
      const store = SqliteStore.open(path);

      // Assess: the counts start from what is there, and follow what happens next.
      expect(await store.countJobs(workflow)).toMatchObject({ running: 2, completed: 1 });
      await store.commit([creating(aJob({ workflow }))]);
      expect(await store.countJobs(workflow)).toMatchObject({ running: 3, completed: 1 });
      await store.close();
      expect(userVersionOf(path)).toBe(SCHEMA_VERSION);
    });

    it('refuses a database written by a newer version, and leaves it as it was', async () => {
      // Prepare
      const directory = freshDirectory();
      const path = join(directory, 'newer.db');
      await open(path).close();
      const db = new Database(path);
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      db.close();
      const before = filesOf(directory);

      // Act, Assess
      expect(() => SqliteStore.open(path)).toThrow(
        `the database ${path} has schema version ${SCHEMA_VERSION + 1}, newer than this switchyard knows (${SCHEMA_VERSION})`,
      );
      expect(filesOf(directory)).toEqual(before);
      expect(userVersionOf(path)).toBe(SCHEMA_VERSION + 1);
    });
  });

  describe('Exclusive lock', () => {
    let holder: ChildProcess | undefined;
    afterEach(() => {
      if (holder?.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL');
      holder = undefined;
    });

    /** Starts a process that opens the store, commits `job`, says "ready" and then waits forever. */
    async function startHolder(path: string, job: JobRecord): Promise<ChildProcess> {
      const storeModule = pathToFileURL(resolve('functions/adapters/sqlite/store.ts')).href;
      const script = `
        import { SqliteStore } from ${JSON.stringify(storeModule)};
        const store = SqliteStore.open(process.env.SWITCHYARD_TEST_DB);
        const job = JSON.parse(process.env.SWITCHYARD_TEST_JOB);
        const patch = { fields: {}, steps: job.steps };
        await store.commit([{ job, expectedRev: 0, patch, creates: [], outbox: [], timers: [], fanInits: [], dropUnsent: false }]);
        process.stdout.write('ready\\n');
        setInterval(() => {}, 60_000);
      `;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: resolve('.'),
        env: { ...process.env, SWITCHYARD_TEST_DB: path, SWITCHYARD_TEST_JOB: JSON.stringify(job) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await new Promise<void>((resolveReady, reject) => {
        const deadline = setTimeout(
          () => reject(new Error(`the lock holder did not get ready in 20 s: ${stderr}`)),
          20_000,
        );
        child.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) {
            clearTimeout(deadline);
            resolveReady();
          }
        });
        child.once('exit', (code) => {
          clearTimeout(deadline);
          reject(new Error(`the lock holder exited (${code}) before it was ready: ${stderr}`));
        });
      });
      return child;
    }

    it('refuses a second process, changing nothing, until the holder dies (even by SIGKILL)', async () => {
      // Prepare
      const directory = freshDirectory();
      const path = join(directory, 'locked.db');
      const job = aJob();
      holder = await startHolder(path, job);
      const before = filesOf(directory);

      // Act, Assess: the holder keeps the database to itself.
      expect(() => SqliteStore.open(path)).toThrow(`another switchyard serve is using ${path}`);
      expect(() => SqliteStore.open(path, { exclusive: false })).toThrow(
        `another switchyard serve is using ${path}`,
      );
      expect(filesOf(directory)).toEqual(before);

      // Act: the holder dies without closing anything.
      const exited = once(holder, 'exit');
      holder.kill('SIGKILL');
      const [, signal] = await exited;
      expect(signal).toBe('SIGKILL');

      // Assess: the lock is gone, and what the holder committed is there.
      const store = open(path);
      expect(await store.getJob(job.id)).toEqual(job);
    });
  });

  describe('Method: commit', () => {
    it('writes the calls made in one turn together, each call getting the results of its own commits', async () => {
      // Prepare
      const store = open(':memory:');
      const taken = aJob();
      await store.commit([creating(taken)]);
      const [a, b, c] = [aJob(), aJob(), aJob()];

      // Act
      const results = await Promise.all([
        store.commit([creating(a as JobRecord), creating(taken)]),
        store.commit([]),
        store.commit([creating(b as JobRecord)]),
        store.commit([creating(c as JobRecord), creating(b as JobRecord)]),
      ]);

      // Assess
      expect(results).toEqual([
        [{ ok: true }, { ok: false, conflict: true }],
        [],
        [{ ok: true }],
        [{ ok: true }, { ok: false, conflict: true }],
      ]);
      expect([...(await store.getJobs([a, b, c].map((job) => (job as JobRecord).id))).keys()]).toHaveLength(
        3,
      );
    });

    it('fails only the call whose commit cannot be written', async () => {
      // Prepare
      const store = open(':memory:');
      const good = aJob();
      const bad = aJob({ input: { size: 1n } as unknown as JobRecord['input'] });

      // Act
      const [goodResult, badResult] = await Promise.allSettled([
        store.commit([creating(good)]),
        store.commit([creating(bad)]),
      ]);

      // Assess
      expect(goodResult).toEqual({ status: 'fulfilled', value: [{ ok: true }] });
      expect(badResult.status).toBe('rejected');
      expect(await store.getJob(good.id)).toEqual(good);
      expect(await store.getJob(bad.id)).toBeUndefined();
    });

    it('acknowledges, in the same group, an entry that a commit queued before it wrote', async () => {
      const store = open(':memory:');
      const job = aJob();
      const entry = requestEntry(job, 'grouped-entry');
      const results = await Promise.all([
        store.commit([creating(job, { outbox: [entry] })]),
        store.ackOutbox([entry.id]),
      ]);
      expect(results).toEqual([[{ ok: true }], undefined]);
      expect((await store.pendingOutbox({ limit: 10 })).entries).toEqual([]);
    });

    it('keeps writes in call order, and shows a commit to reads once it resolves', async () => {
      const store = open(':memory:');
      const job = aJob();
      const committed = store.commit([creating(job, { outbox: [requestEntry(job, 'seen-entry')] })]);
      // Queued in the same turn, after the commit: it applies after it, in the same transaction.
      const acked = store.ackOutbox(['seen-entry']);
      expect(await committed).toEqual([{ ok: true }]);
      await acked;
      expect(await store.getJob(job.id)).toEqual(job);
      expect((await store.pendingOutbox({ limit: 10 })).entries).toEqual([]);
    });

    it('writes only the last finished child’s follow-up of a fan-out that started all its children', async () => {
      const store = open(':memory:');
      const parent = aJob();
      const children = [0, 1, 2].map((index) => aChild(parent, 'fan', index));
      await store.commit([
        creating(parent, {
          creates: children,
          fanInits: [{ parentId: parent.id, step: 'fan', total: 3, done: 0, failed: 0 }],
        }),
      ]);
      const results = [];
      for (const child of children) {
        const index = child.parent?.index ?? 0;
        const entry: OutboxEntry = {
          id: `${child.id}:f0`,
          kind: 'followUp',
          jobId: child.id,
          createdAt: 1,
          followUp: {
            kind: 'childFinished',
            parentId: parent.id,
            step: 'fan',
            index,
            status: 'completed',
            onlyIfLast: true,
          },
        };
        const done = { ...child, rev: 2, status: 'completed' as const };
        const childOutcome = { parentId: parent.id, step: 'fan', index, status: 'completed' as const };
        results.push(...(await store.commit([updating(child, done, { childOutcome, outbox: [entry] })])));
      }
      expect(results).toEqual([
        { ok: true, fanCounts: { total: 3, done: 1, failed: 0 }, leftOut: [`${children[0]?.id}:f0`] },
        { ok: true, fanCounts: { total: 3, done: 2, failed: 0 }, leftOut: [`${children[1]?.id}:f0`] },
        { ok: true, fanCounts: { total: 3, done: 3, failed: 0 } },
      ]);
      const pending = (await store.pendingOutbox({ limit: 10 })).entries.map((entry) => entry.id);
      expect(pending).toEqual([`${children[2]?.id}:f0`]);
    });

    it('writes what is waiting before it closes', async () => {
      const path = join(freshDirectory(), 'closing.db');
      const store = SqliteStore.open(path);
      const job = aJob();
      const committed = store.commit([creating(job)]);
      await store.close();
      expect(await committed).toEqual([{ ok: true }]);
      expect(await open(path).getJob(job.id)).toEqual(job);
    });
  });

  describe('Cache of running jobs', () => {
    it('reads back each committed revision, also after a lost race and a failed group', async () => {
      // Prepare
      const path = join(freshDirectory(), 'cache.db');
      const store = open(path);
      const job = aJob();
      await store.commit([creating(job)]);
      const next = { ...job, rev: 2, updatedAt: 2_000, seq: 1 };
      const stale = { ...job, rev: 2, updatedAt: 3_000 };
      const bad = aJob({ input: { size: 1n } as unknown as JobRecord['input'] });

      // Act
      const results = await Promise.allSettled([
        store.commit([updating(job, next)]),
        store.commit([updating(job, stale)]),
        store.commit([creating(bad)]),
      ]);

      // Assess: what the cache answers is what the file holds.
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(results[1]).toEqual({ status: 'fulfilled', value: [{ ok: false, conflict: true }] });
      expect(await store.getJob(job.id)).toEqual(next);
      expect(await store.getJob(bad.id)).toBeUndefined();
      await store.close();
      expect(await open(path).getJob(job.id)).toEqual(next);
    });

    it('writes each revision of a long job whole, its text built from the revision before', async () => {
      // Prepare: a chain long enough for its record to be written from its parts, its history cut.
      const path = join(freshDirectory(), 'long.db');
      const store = open(path);
      const world = new SimulatedWorld(store);
      const steps = Array.from({ length: 120 }, (_, n) =>
        n ? `      - name: s${n + 1}\n        depends: [s${n}]` : '      - name: s1',
      );
      await world.register(`workflows:\n  - name: long\n    steps:\n${steps.join('\n')}\n`);
      const id = await world.start('long', { text: 'ünïcode "quoted"' });

      // Act and assess: after every step, the file (read through a listing, which parses the row)
      // holds the record the cache answers.
      for (let n = 1; n <= 120; n++) {
        const [request] = world.take();
        if (!request) throw new Error(`no request for s${n}`);
        await world.reply(request, { [`out${n}`]: n });
        const { jobs } = await store.queryJobs({ workflow: 'long' });
        expect(jobs).toEqual([await store.getJob(id)]);
      }
      const job = await world.job(id);
      expect(job.status).toBe('completed');
      expect(job.history?.length).toBe(200);
      await store.close();
      expect(await open(path).getJob(id)).toEqual(job);
    });

    it('keeps the status columns right whether or not a commit changes the status', async () => {
      // Prepare
      const store = open(':memory:');
      const workflow = `columns-${uuid()}`;
      const job = aJob({ workflow });
      await store.commit([creating(job)]);
      const moved = { ...job, rev: 2, seq: 1 };
      const done = { ...moved, rev: 3, status: 'completed' as const, endedAt: 5_000 };

      // Act
      await store.commit([updating(job, moved)]);
      const whileRunning = await store.countJobs(workflow);
      await store.commit([updating(moved, done)]);

      // Assess
      expect(whileRunning.running).toBe(1);
      expect(await store.countJobs(workflow)).toMatchObject({ running: 0, completed: 1 });
      expect((await store.queryJobs({ workflow, status: 'completed' })).jobs).toEqual([done]);
      expect(await store.deleteFinishedJobs(6_000)).toBe(1);
      expect(await store.getJob(job.id)).toBeUndefined();
      expect(await store.countJobs(workflow)).toMatchObject({ running: 0, completed: 0 });
    });

    it('answers fan-out children as the file holds them, also when their creation found them stored', async () => {
      // Prepare: a parent whose first commit created 70 children (more than one multi-row insert),
      // one of them already finished; a second commit of the parent creates them again.
      const path = join(freshDirectory(), 'children.db');
      const store = open(path);
      const parent = aJob();
      const children = Array.from({ length: 70 }, (_, index) => aChild(parent, 'each', index));
      await store.commit([creating(parent, { creates: children })]);
      const first = children[0] as JobRecord;
      const finished = { ...first, rev: 2, status: 'completed' as const, endedAt: 3_000 };
      await store.commit([updating(first, finished)]);
      const again = { ...parent, rev: 2, updatedAt: 4_000 };
      const recreated = children.map((child) => ({ ...child, input: { recreated: true } }));

      // Act
      await store.commit([updating(parent, again, { creates: recreated })]);

      // Assess: the stored children, not the records the second commit carried.
      const answered = await Promise.all(children.map((child) => store.getJob(child.id)));
      expect(answered).toEqual([finished, ...children.slice(1)]);
      await store.close();
      const reopened = open(path);
      expect(await Promise.all(children.map((child) => reopened.getJob(child.id)))).toEqual(answered);
      await reopened.close();
    });

    it('does not cache when another connection may write the file', async () => {
      // Prepare
      const path = join(freshDirectory(), 'shared.db');
      const store = open(path, { exclusive: false });
      const other = open(path, { exclusive: false });
      const job = aJob();
      await store.commit([creating(job)]);
      await store.getJob(job.id);
      const next = { ...job, rev: 2, updatedAt: 2_000 };

      // Act
      await other.commit([updating(job, next)]);

      // Assess
      expect(await store.getJob(job.id)).toEqual(next);
    });
  });

  describe('Job counts', () => {
    /** What the rows say: top-level jobs of `workflow` by listed status, counted afresh. */
    function countedAfresh(path: string, workflow: string): Record<string, number> {
      const db = new Database(path, { readonly: true });
      try {
        const rows = db
          .prepare(
            'SELECT status, count(*) AS n FROM jobs WHERE parent_id IS NULL AND workflow = ? GROUP BY status',
          )
          .all(workflow) as { status: string; n: number }[];
        return Object.fromEntries(rows.map((row) => [row.status, row.n]));
      } finally {
        db.close();
      }
    }

    /** The store's counts without the statuses it counts none of. */
    async function countsOf(store: SqliteStore, workflow: string): Promise<Record<string, number>> {
      return Object.fromEntries(Object.entries(await store.countJobs(workflow)).filter(([, n]) => n !== 0));
    }

    it('counts every start and status change of one write group, and none of its refused commits', async () => {
      // Prepare: two running jobs; a child id that another parent holds.
      const path = join(freshDirectory(), 'counts.db');
      const store = open(path, { exclusive: false });
      const workflow = `counts-${uuid()}`;
      const [a, b] = [aJob({ workflow }), aJob({ workflow })] as [JobRecord, JobRecord];
      const holder = aJob({ workflow });
      const held = aChild(holder, 'each', 0, { workflow });
      await store.commit([creating(a), creating(b), creating(holder, { creates: [held] })]);
      const fresh = aJob({ workflow });
      const paused = aJob({ workflow, status: 'paused' });
      const taker = aJob({ workflow });

      // Act: in one turn, a job ends, another pauses and resumes, two start, one start is refused by
      // its children (savepoint), one update is a lost race, one job starts and ends.
      const results = await Promise.all([
        store.commit([updating(a, { ...a, rev: 2, status: 'completed', endedAt: 2_000 })]),
        store.commit([
          updating(b, { ...b, rev: 2, status: 'paused' }),
          updating({ ...b, rev: 2, status: 'paused' }, { ...b, rev: 3 }),
        ]),
        store.commit([creating(fresh), creating(paused)]),
        store.commit([
          creating(taker, { creates: [{ ...held, parent: { id: taker.id, step: 'each', index: 0 } }] }),
        ]),
        store.commit([updating(a, { ...a, rev: 2, status: 'failed', endedAt: 2_000 })]),
      ]);
      const late = aJob({ workflow });
      await Promise.all([
        store.commit([creating(late)]),
        store.commit([updating(late, { ...late, rev: 2, status: 'cancelled', endedAt: 3_000 })]),
      ]);

      // Assess
      expect(results.map((result) => result.map((one) => one.ok))).toEqual([
        [true],
        [true, true],
        [true, true],
        [false],
        [false],
      ]);
      expect(countedAfresh(path, workflow)).toEqual({ running: 3, completed: 1, paused: 1, cancelled: 1 });
      expect(await countsOf(store, workflow)).toEqual(countedAfresh(path, workflow));
    });

    it('counts right after a group that failed was written one commit at a time', async () => {
      // Prepare
      const path = join(freshDirectory(), 'counts-failed.db');
      const store = open(path, { exclusive: false });
      const workflow = `counts-${uuid()}`;
      const job = aJob({ workflow });
      await store.commit([creating(job)]);
      const bad = aJob({ workflow, input: { size: 1n } as unknown as JobRecord['input'] });

      // Act
      const results = await Promise.allSettled([
        store.commit([updating(job, { ...job, rev: 2, status: 'completed', endedAt: 2_000 })]),
        store.commit([creating(aJob({ workflow }))]),
        store.commit([creating(bad)]),
      ]);

      // Assess
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(countedAfresh(path, workflow)).toEqual({ running: 1, completed: 1 });
      expect(await countsOf(store, workflow)).toEqual({ running: 1, completed: 1 });
    });

    it('moves the count of a job it has not read since it opened', async () => {
      // Prepare: jobs written by an earlier opening of the file; this store has none in its cache.
      const path = join(freshDirectory(), 'counts-cold.db');
      const workflow = `counts-${uuid()}`;
      const [a, b] = [aJob({ workflow }), aJob({ workflow })] as [JobRecord, JobRecord];
      const first = open(path);
      await first.commit([creating(a), creating(b)]);
      await first.close();
      const store = open(path);

      // Act
      await store.commit([
        updating(a, { ...a, rev: 2, status: 'completed', endedAt: 2_000 }),
        updating(b, { ...b, rev: 2, updatedAt: 2_000 }),
      ]);

      // Assess
      expect(await countsOf(store, workflow)).toEqual({ running: 1, completed: 1 });
    });

    it('keeps the counts and search attributes of a database the version before wrote, and adds to them', async () => {
      // Prepare: a database at the schema version before this one, counting by triggers.
      const path = join(freshDirectory(), 'counts-before.db');
      const workflow = `counts-${uuid()}`;
      const db = new Database(path);
      for (const migration of MIGRATIONS.slice(0, SCHEMA_VERSION - 1)) db.exec(migration);
      db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
      const jobs = [
        aJob({ workflow, attributes: { customer: 'acme' } }),
        aJob({ workflow }),
        aJob({ workflow, status: 'completed', endedAt: 1_000 }),
      ];
      const insert = db.prepare(
        `INSERT INTO jobs (id, rev, workflow, status, root, parent_id, parent_step, parent_index, vhost, created_at, ended_at, record)
         VALUES (?, 1, ?, ?, ?, NULL, NULL, NULL, NULL, 0, ?, ?)`,
      );
      for (const job of jobs)
        insert.run(job.id, workflow, job.status, job.root, job.endedAt ?? null, JSON.stringify(job));
      db.close();

      // Act
      const store = open(path, { exclusive: false });
      const before = await countsOf(store, workflow);
      const running = jobs[0] as JobRecord;
      const started = aJob({ workflow, attributes: { customer: 'acme', region: 'eu' }, createdAt: 5_000 });
      await store.commit([
        updating(running, { ...running, rev: 2, status: 'failed', endedAt: 2_000 }),
        creating(started),
      ]);

      // Assess: the counts, and the search attributes of a job the old version wrote and of a new one.
      expect(before).toEqual({ running: 2, completed: 1 });
      expect(await countsOf(store, workflow)).toEqual({ running: 2, completed: 1, failed: 1 });
      expect(await countsOf(store, workflow)).toEqual(countedAfresh(path, workflow));
      const acme = await store.queryJobs({ workflow, attributes: { customer: 'acme' } });
      expect(acme.jobs.map((job) => job.id)).toEqual([started.id, running.id]);
      const eu = await store.queryJobs({ attributes: { region: 'eu', customer: 'acme' } });
      expect(eu.jobs.map((job) => job.id)).toEqual([started.id]);
    });
  });

  describe('Method: timeWrites', () => {
    it('tells its listener the time of each write transaction, one for a group of calls', async () => {
      // Prepare
      const store = open(join(freshDirectory(), 'timed.db'));
      const seconds: number[] = [];
      store.timeWrites((taken) => seconds.push(taken));
      const [a, b, c] = [aJob(), aJob(), aJob()];

      // Act: one turn's calls (one transaction), a lone one, a refused one (its transaction commits
      // having written nothing), then one after the listener is removed.
      await Promise.all([store.commit([creating(a)]), store.commit([creating(b)])]);
      await store.commit([creating(c)]);
      const grouped = seconds.length;
      await store.commit([creating(c)]);
      store.timeWrites(undefined);
      await store.commit([creating(aJob())]);

      // Assess
      expect(grouped).toBe(2);
      expect(seconds).toHaveLength(3);
      for (const taken of seconds) {
        expect(taken).toBeGreaterThan(0);
        expect(taken).toBeLessThan(30);
      }
    });

    it('keeps a committed write committed when its listener throws', async () => {
      const store = open(':memory:');
      store.timeWrites(() => {
        throw new Error('a broken listener');
      });
      const job = aJob();
      expect(await store.commit([creating(job)])).toEqual([{ ok: true }]);
      expect(await store.getJob(job.id)).toEqual(job);
    });
  });

  describe('Method: ackOutbox', () => {
    it('writes acknowledgements with the next transaction, hiding them from pendingOutbox until then', async () => {
      // Prepare
      const path = join(freshDirectory(), 'acks.db');
      const store = open(path);
      const job = aJob();
      const [first, second] = [requestEntry(job, 'first-entry'), requestEntry(job, 'second-entry')];
      await store.commit([creating(job, { outbox: [first, second] })]);

      // Act
      await store.ackOutbox([first.id]);
      const pending = (await store.pendingOutbox({ limit: 10 })).entries;
      await store.close();

      // Assess: closing wrote the deferred delete.
      expect(pending).toEqual([second]);
      expect((await open(path).pendingOutbox({ limit: 10 })).entries).toEqual([second]);
    });

    it('writes a lone acknowledgement on its own shortly after', async () => {
      const path = join(freshDirectory(), 'lone-ack.db');
      // Not exclusive, so that another connection can look at the file.
      const store = open(path, { exclusive: false });
      const job = aJob();
      const entry = requestEntry(job, 'lone-entry');
      await store.commit([creating(job, { outbox: [entry] })]);
      await store.ackOutbox([entry.id]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const reader = new Database(path, { readonly: true });
      try {
        expect(reader.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
      } finally {
        reader.close();
      }
    });

    it('lists an entry written again after its acknowledgement', async () => {
      const store = open(':memory:');
      const job = aJob();
      const entry = requestEntry(job, 'again-entry');
      await store.commit([creating(job, { outbox: [entry] })]);
      await store.ackOutbox([entry.id]);
      const next = { ...job, rev: 2 };
      await store.commit([updating(job, next, { outbox: [entry] })]);
      expect((await store.pendingOutbox({ limit: 10 })).entries).toEqual([entry]);
    });
  });

  describe('Closed store', () => {
    it('closes once and then refuses every call with a clear error', async () => {
      const store = SqliteStore.open(':memory:');
      await store.close();
      await store.close();
      await expect(store.getJob(aJob().id)).rejects.toThrow('the SQLite store :memory: is closed');
      await expect(store.commit([creating(aJob())])).rejects.toThrow('is closed');
      await expect(store.ping()).rejects.toThrow('is closed');
      expect(() => store.settings()).toThrow('is closed');
    });
  });

  describe('JSON', () => {
    it('keeps a key named __proto__ as data, without changing any prototype', async () => {
      const store = open(':memory:');
      const input = JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}');
      const job = aJob({ input });
      await store.commit([creating(job)]);
      const read = (await store.getJob(job.id)) as JobRecord;
      expect(Object.keys(read.input)).toEqual(['__proto__', 'plain']);
      expect(Object.getPrototypeOf(read.input)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('Method: queryJobs', () => {
    it('pages through children too when asked, newest first', async () => {
      // Prepare
      const store = open(':memory:');
      const workflow = `children-${uuid()}`;
      const parent = aJob({ workflow, createdAt: 100 });
      const children = Array.from({ length: 7 }, (_, index) =>
        aChild(parent, 'fan', index, { workflow, createdAt: 200 + (index % 3) }),
      );
      await store.commit([creating(parent, { creates: children })]);

      // Act
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.queryJobs({ workflow, includeChildren: true, limit: 2, cursor });
        ids.push(...page.jobs.map((job) => job.id));
        cursor = page.cursor;
      } while (cursor);

      // Assess
      const newestFirst = [parent, ...children].sort(
        (a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1),
      );
      expect(ids).toEqual(newestFirst.map((job) => job.id));
    });

    it('refuses a cursor it did not make', async () => {
      const store = open(':memory:');
      await expect(store.queryJobs({ cursor: 'not-a-cursor' })).rejects.toThrow(InvalidCursorError);
    });
  });

  describe('Method: deleteFinishedJobs', () => {
    it('deletes in chunks a large backlog with its children, counters, outbox entries and timers', async () => {
      // Prepare: more top-level jobs than one chunk takes, and one with more children than one chunk takes.
      const store = open(join(freshDirectory(), 'retention.db'));
      const finished = (n: number) => aJob({ status: 'completed', endedAt: 1_000 + n });
      const roots = Array.from({ length: 620 }, (_, n) => finished(n));
      const big = roots[0] as JobRecord;
      const children = Array.from({ length: 6_000 }, (_, index) =>
        aChild(big, 'fan', index, { status: 'completed', endedAt: 900 }),
      );
      const kept = aJob({ status: 'running' });
      const timer = (job: JobRecord) => ({
        op: 'set' as const,
        timer: { jobId: job.id, step: 'a', kind: 'attempt' as const, attempt: 1, at: 1 },
      });
      await store.commit([
        creating(big, {
          creates: children,
          outbox: [requestEntry(children[0] as JobRecord, 'child-entry')],
          timers: [timer(children[1] as JobRecord), timer(big)],
          fanInits: [{ parentId: big.id, step: 'fan', total: children.length, done: 0, failed: 0 }],
        }),
        ...roots.slice(1).map((job) => creating(job)),
        creating(kept, { outbox: [requestEntry(kept, 'kept-entry')], timers: [timer(kept)] }),
      ]);

      // Act
      const deleted = await store.deleteFinishedJobs(5_000);

      // Assess
      expect(deleted).toBe(roots.length + children.length);
      expect(await store.getJob(big.id)).toBeUndefined();
      expect(await store.getJob((children.at(-1) as JobRecord).id)).toBeUndefined();
      expect((await store.listChildren(big.id, 'fan', { limit: 10 })).children).toEqual([]);
      expect(await store.getFanCounts(big.id, 'fan')).toBeUndefined();
      expect((await store.pendingOutbox({ limit: 100 })).entries.map((entry) => entry.id)).toEqual([
        'kept-entry',
      ]);
      expect((await store.listTimers({ limit: 100 })).map((t) => t.jobId)).toEqual([kept.id]);
      expect(await store.getJob(kept.id)).toEqual(kept);
      expect(await store.deleteFinishedJobs(5_000)).toBe(0);
    });
  });

  describe('Performance (times are reported, not asserted)', { timeout: 300_000 }, () => {
    it('commits a 100,000-child fan-out in one commit', async () => {
      // Prepare
      const store = open(join(freshDirectory(), 'fan-out.db'));
      const parent = aJob();
      const total = 100_000;
      const children = Array.from({ length: total }, (_, index) => aChild(parent, 'fan', index));
      const outbox: OutboxEntry[] = children.map((child, n) => requestEntry(child, `${parent.id}:1:r${n}`));
      const commit = creating(parent, {
        creates: children,
        outbox,
        fanInits: [{ parentId: parent.id, step: 'fan', total, done: 0, failed: 0 }],
      });

      // Act
      const started = performance.now();
      const results = await store.commit([commit]);
      const elapsed = performance.now() - started;

      // Assess
      console.log(`[sqlite-store] 100,000-child fan-out commit: ${elapsed.toFixed(0)} ms`);
      expect(results).toEqual([{ ok: true }]);
      const last = await store.listChildren(parent.id, 'fan', { fromIndex: total - 5, limit: 10 });
      expect(last.children).toEqual(children.slice(-5));
      expect(last.nextIndex).toBeUndefined();
      expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total, done: 0, failed: 0 });
      const pending = await store.pendingOutbox({ limit: total + 1 });
      expect(pending.entries.length).toBe(total);
      expect(pending.entries.at(-1)).toEqual(outbox.at(-1));
    });

    it('commits 1,000 single-job updates in one call', async () => {
      // Prepare
      const store = open(join(freshDirectory(), 'updates.db'));
      const jobs = Array.from({ length: 1_000 }, () => aJob());
      await store.commit(jobs.map((job) => creating(job)));
      const completed: StepState = {
        name: 'a',
        status: 'completed',
        attempts: 1,
        firstAttempt: 1,
        endedAt: 2_000,
        output: { n: 1 },
        seq: 1,
      };
      const commits: Commit[] = jobs.map((job) => {
        const next: JobRecord = {
          ...job,
          rev: 2,
          seq: 1,
          updatedAt: 2_000,
          steps: job.steps.with(0, completed),
        };
        return updating(job, next, {
          outbox: [requestEntry(job, `${job.id}:2:r0`, 2_000)],
          timers: [{ op: 'clear', key: { jobId: job.id, step: 'a' } }],
        });
      });

      // Act
      const started = performance.now();
      const results = await store.commit(commits);
      const elapsed = performance.now() - started;

      // Assess
      console.log(`[sqlite-store] 1,000 single-job update commits in one call: ${elapsed.toFixed(1)} ms`);
      expect(results.every((result) => result.ok)).toBe(true);
      expect(await store.getJob((jobs[999] as JobRecord).id)).toEqual(commits[999]?.job);
    });
  });
});
