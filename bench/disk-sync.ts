import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Spread, spread } from './stats.js';

/*
 * What a durable commit costs on a disk, measured in a folder on it: the time of a SQLite commit
 * of one small row with serve's journal settings (WAL, synchronous FULL: the WAL is synced at each
 * commit), and of a plain 4 KiB write + fdatasync. The floor under any step a durable manager
 * commits on that disk.
 */

export interface DiskSync {
  /** One-row SQLite commits (WAL, FULL), milliseconds: the median and p99. */
  sqliteCommitMs: Spread & { p99: number };
  /** A 4 KiB append and fdatasync, milliseconds. */
  fdatasyncMs: Spread & { p99: number };
  samples: number;
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

function summarise(ms: number[]): Spread & { p99: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { ...spread(sorted), p99: quantile(sorted, 0.99) };
}

const elapsedMs = (from: bigint): number => Number(process.hrtime.bigint() - from) / 1e6;

/** Raw samples, milliseconds, to pool over several calls (`summariseDiskSync`). */
export interface DiskSyncSamples {
  sqliteCommitMs: number[];
  fdatasyncMs: number[];
}

export function sampleDiskSync(dir: string, samples: number, into?: DiskSyncSamples): DiskSyncSamples {
  const pooled = into ?? { sqliteCommitMs: [], fdatasyncMs: [] };
  const db = new Database(join(dir, 'disk-sync.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const body = 'x'.repeat(300);
    for (let n = 0; n < samples; n++) {
      const began = process.hrtime.bigint();
      insert.run(body);
      pooled.sqliteCommitMs.push(elapsedMs(began));
    }
  } finally {
    db.close();
  }
  const fd = openSync(join(dir, 'disk-sync.bin'), 'a');
  const block = Buffer.alloc(4096, 1);
  try {
    for (let n = 0; n < samples; n++) {
      const began = process.hrtime.bigint();
      writeSync(fd, block);
      fdatasyncSync(fd);
      pooled.fdatasyncMs.push(elapsedMs(began));
    }
  } finally {
    closeSync(fd);
  }
  return pooled;
}

export function summariseDiskSync(samples: DiskSyncSamples): DiskSync {
  return {
    sqliteCommitMs: summarise(samples.sqliteCommitMs),
    fdatasyncMs: summarise(samples.fdatasyncMs),
    samples: samples.sqliteCommitMs.length,
  };
}

export function measureDiskSync(dir: string, samples = 200): DiskSync {
  return summariseDiskSync(sampleDiskSync(dir, samples));
}
