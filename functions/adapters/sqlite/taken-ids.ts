import type Database from 'better-sqlite3';
import { heldByOtherJobs, type JobRecord } from '../../../engine/index.js';

export interface ParentRow {
  parent_id: string | null;
  parent_step: string | null;
  parent_index: number | null;
}

/** Thrown inside a commit's savepoint to take it back: these created children's ids belong to other jobs. */
export class CreatesTaken extends Error {
  constructor(readonly ids: string[]) {
    super(`ids held by other jobs: ${ids.join(', ')}`);
    this.name = 'CreatesTaken';
  }
}

/** The created children whose id a stored job holds that is not that same child. */
export function takenIds(
  parentOf: Database.Statement<[string], ParentRow>,
  creates: readonly JobRecord[],
): string[] {
  return heldByOtherJobs(creates, (id) => {
    const row = parentOf.get(id);
    if (!row) return undefined;
    return {
      parent:
        row.parent_id === null
          ? null
          : { id: row.parent_id, step: row.parent_step ?? '', index: row.parent_index ?? -1 },
    };
  });
}
