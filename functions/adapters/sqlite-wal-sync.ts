import { closeSync, fdatasync, openSync } from 'node:fs';

/** Flushes a file's data to the disk, calling back when done (node's `fs.fdatasync`, or a test's stand-in). */
export type SyncFile = (fd: number, done: (error: Error | null) => void) => void;

/**
 * Makes commits durable without blocking the event loop. SQLite runs at `synchronous = NORMAL`
 * (WAL frames written, synced only at checkpoints, which keeps the database consistent) and this
 * syncs the WAL file itself in libuv's thread pool after each group of transactions; callers are
 * told their writes are stored only once that sync completes. While one sync runs, the groups that
 * commit meanwhile wait for the next one, which covers them all: one sync per busy interval, and
 * the thread goes on with the next group's work during the sync.
 */
export class WalSync {
  private readonly fd: number;
  private running = false;
  /** A failed sync leaves unknown what reached the disk (and Linux reports it once): every later sync fails too. */
  private failure: Error | null = null;
  private waiting: ((error: Error | null) => void)[] = [];
  private idle: (() => void)[] = [];

  constructor(
    walPath: string,
    private readonly syncFile: SyncFile = fdatasync,
  ) {
    // Created if absent (SQLite treats an empty WAL as no WAL); only ever synced, never written here.
    this.fd = openSync(walPath, 'a');
  }

  /** Calls `done` once everything written to the WAL before this call is on the disk. */
  after(done: (error: Error | null) => void): void {
    if (this.failure) return done(this.failure);
    this.waiting.push(done);
    if (!this.running) this.start();
  }

  /** Resolves when no sync is running or waiting, then closes the file. */
  async close(): Promise<void> {
    if (this.running) await new Promise<void>((resolve) => this.idle.push(resolve));
    closeSync(this.fd);
  }

  private start(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.running = true;
    this.syncFile(this.fd, (error) => {
      this.running = false;
      if (error && !this.failure)
        this.failure = new Error(`syncing the SQLite WAL failed: ${error.message}`, { cause: error });
      for (const done of batch) done(this.failure);
      if (this.waiting.length) return this.start();
      for (const resolve of this.idle.splice(0)) resolve();
    });
  }
}
