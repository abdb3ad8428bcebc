import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../../engine/index.js';

/** Result codes (primary, before any extension such as `_SHORT_READ`) that say the storage, not the request, failed. */
const UNAVAILABLE = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'];

/** A storage failure as a `StoreUnavailableError` naming SQLite's cause; any other error as it is. */
export function storageError(error: unknown, path: string): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  if (!UNAVAILABLE.some((code) => error.code === code || error.code.startsWith(`${code}_`))) return error;
  return new StoreUnavailableError(
    `the SQLite store ${path} cannot write: ${error.message} (${error.code})`,
    {
      cause: error,
    },
  );
}

/**
 * What the last write found: health reads it, since a read-only probe succeeds on a full disk. A
 * storage failure marks the store unwritable until a write (the caller's, or health's probe) succeeds.
 */
export class WriteOutcome {
  private failure?: StoreUnavailableError;

  constructor(private readonly path: string) {}

  /** Runs a write, recording whether it reached the disk; storage failures come out mapped. */
  run<T>(write: () => T): T {
    try {
      const result = write();
      this.failure = undefined;
      return result;
    } catch (error) {
      const mapped = storageError(error, this.path);
      if (mapped instanceof StoreUnavailableError) this.failure = mapped;
      throw mapped;
    }
  }

  /** The failure of the last write, while no write has succeeded since. */
  get lastFailure(): StoreUnavailableError | undefined {
    return this.failure;
  }
}
