import Database from 'better-sqlite3';
import { assertNotNewer, migrate, schemaVersionOf } from './schema.js';

export type SqliteSynchronous = 'FULL' | 'NORMAL';

export interface SqliteOpenOptions {
  /**
   * `FULL` syncs the WAL at every commit (durable across power loss); `NORMAL` only at checkpoints
   * (durable across a crash of the process, not of the machine).
   * @default 'FULL'
   */
  synchronous?: SqliteSynchronous;
  /**
   * Hold an exclusive lock on the database for as long as it is open, so that a second
   * `switchyard serve` on the same file fails at once. The OS drops the lock when the process dies.
   * @default true
   */
  exclusive?: boolean;
}

/** How long opening waits for another connection's lock before it reports the database as in use. */
const LOCK_PROBE_MS = 100;
/** How long a statement waits for another connection's lock (only when not exclusive). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens (creating if needed) and prepares a database: the lock, WAL, the synchronous level, the
 * caches, and the schema migrated to the current version. On any failure the connection is closed;
 * a database that is refused (in use by another process, or written by a newer switchyard) is left
 * exactly as it was.
 */
export function openSqliteDatabase(path: string, options: SqliteOpenOptions = {}): Database.Database {
  const synchronous = options.synchronous ?? 'FULL';
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new Error(`synchronous must be FULL or NORMAL, not "${String(synchronous)}"`);
  }
  const db = new Database(path, { timeout: LOCK_PROBE_MS });
  try {
    // Before the first read: with EXCLUSIVE the first access in WAL mode takes the lock and keeps it.
    if (options.exclusive ?? true) db.pragma('locking_mode = EXCLUSIVE');
    // Checked before anything is written (switching to WAL is a write).
    assertNotNewer(schemaVersionOf(db), path);
    const journalMode = db.pragma('journal_mode = WAL', { simple: true });
    if (!db.memory && journalMode !== 'wal') {
      throw new Error(
        `the database ${path} cannot use write-ahead logging (journal mode stays ${String(journalMode)})`,
      );
    }
    db.pragma(`synchronous = ${synchronous}`);
    // 16 MB of page cache: it holds the pages a running workload touches (index roots, the tables'
    // tails), and every page more counts in serve's memory; older pages come back from the OS's cache.
    db.pragma('cache_size = -16384');
    // Temporary files on disk, not in memory: a commit that creates children runs in a savepoint, and
    // SQLite keeps the savepoint's journal (every page the commit changes, ~48 MB for a slice of 10,000
    // children) in the heap when temp_store is MEMORY; with FILE it spills to a temporary file past
    // 64 KB. The freed journal had left glibc's heap fragmented: serve's RSS grew with every slice
    // (BENCHMARKS.md, "The savepoint's journal").
    db.pragma('temp_store = FILE');
    // Checkpoint every ~40 MB of WAL instead of every 4 MB: pages written again and again (the
    // outbox's tail, counters, index roots) are copied into the database once per checkpoint.
    db.pragma('wal_autocheckpoint = 10000');
    db.pragma('journal_size_limit = 67108864');
    // A write transaction: in exclusive mode the write lock is now held until close.
    migrate(db, path);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return db;
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new Error(`another switchyard serve is using ${path}`, { cause: error });
    throw error;
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith('SQLITE_BUSY');
}
