import type Database from 'better-sqlite3';

/**
 * The changes a write group's commits make to `job_counts` (top-level jobs by workflow and listed
 * status), summed and written once at the end of the group's transaction: one upsert a workflow
 * and status the group moved, where triggers on `jobs` wrote one for each job started and two for
 * each change of status (BENCHMARKS.md, "A new job's writes").
 *
 * A commit taken back by its savepoint takes its changes back with `rollBackTo`; a group whose
 * transaction fails drops them all with `clear`.
 */
export class JobCountChanges {
  private changes: [workflow: string, status: string, by: number][] = [];

  /** A top-level job written: created in `to`, or moved from `from` to `to`. */
  add(workflow: string, from: string | undefined, to: string): void {
    if (from === to) return;
    if (from !== undefined) this.changes.push([workflow, from, -1]);
    this.changes.push([workflow, to, 1]);
  }

  mark(): number {
    return this.changes.length;
  }

  rollBackTo(mark: number): void {
    this.changes.length = mark;
  }

  /** Writes the summed changes, inside the caller's transaction; the caller then clears them. */
  write(bump: Database.Statement<[workflow: string, status: string, by: number]>): void {
    if (!this.changes.length) return;
    const sums = new Map<string, [workflow: string, status: string, by: number]>();
    for (const [workflow, status, by] of this.changes) {
      const key = `${workflow}\u0000${status}`;
      const sum = sums.get(key);
      if (sum) sum[2] += by;
      else sums.set(key, [workflow, status, by]);
    }
    for (const [workflow, status, by] of sums.values()) if (by !== 0) bump.run(workflow, status, by);
  }

  clear(): void {
    this.changes = [];
  }
}
