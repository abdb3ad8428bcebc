import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../../engine/ports/store.js';
import { storageError } from '../../../../functions/adapters/sqlite/storage-errors.js';
import { SqliteStore } from '../../../../functions/adapters/sqlite/store.js';
import { aJob, creating } from '../../../support/factories.js';

describe('Function: storageError', () => {
  it.each([
    ['SQLITE_FULL', 'database or disk is full'],
    ['SQLITE_IOERR_WRITE', 'disk I/O error'],
    ['SQLITE_BUSY', 'database is locked'],
    ['SQLITE_READONLY', 'attempt to write a readonly database'],
    ['SQLITE_CANTOPEN', 'unable to open database file'],
  ])('maps %s to a StoreUnavailableError naming the cause', (code, message) => {
    const mapped = storageError(new Database.SqliteError(message, code), '/data/s.db');

    expect(mapped).toBeInstanceOf(StoreUnavailableError);
    expect((mapped as Error).message).toBe(`the SQLite store /data/s.db cannot write: ${message} (${code})`);
  });

  it('leaves other errors as they are', () => {
    const constraint = new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE');
    const plain = new Error('a bug');

    expect([storageError(constraint, 'x'), storageError(plain, 'x')]).toEqual([constraint, plain]);
  });
});

describe('SqliteStore: a write the storage refuses', () => {
  let dir: string;
  let store: SqliteStore;
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('throws StoreUnavailableError, writes nothing, and fails ping until a write gets through', async () => {
    // Prepare
    dir = mkdtempSync(join(tmpdir(), 'switchyard-store-errors-'));
    store = SqliteStore.open(join(dir, 's.db'));
    const db = (store as unknown as { db: Database.Database }).db;
    db.pragma('query_only = ON');
    const job = aJob();

    // Act
    const error = await store.commit([creating(job)]).catch((caught: unknown) => caught);
    const pingWhileRefused = await store.ping().catch((caught: unknown) => caught);
    db.pragma('query_only = OFF');
    const pingAfter = await store.ping().catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/cannot write: .*readonly.* \(SQLITE_READONLY\)$/);
    expect(await store.getJob(job.id)).toBeUndefined();
    expect(pingWhileRefused).toBeInstanceOf(StoreUnavailableError);
    expect(pingAfter).toBeUndefined();
  });
});
