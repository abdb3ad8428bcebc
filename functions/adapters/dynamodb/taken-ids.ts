import { heldByOtherJobs, type JobRecord } from '../../../engine/index.js';

/**
 * Of the created children whose head was found in place (`found`, by id), those held by another
 * job rather than by that same child written before. A head that reads as no job (another commit's
 * pending write) counts as held: the child must not wait on a job that may never be its own.
 */
export async function takenIds(
  readJobs: (ids: readonly string[]) => Promise<Map<string, JobRecord>>,
  creates: readonly JobRecord[],
  found: ReadonlySet<string>,
): Promise<string[]> {
  const candidates = creates.filter((child) => child.parent && found.has(child.id));
  if (!candidates.length) return [];
  const stored = await readJobs(candidates.map((child) => child.id));
  return heldByOtherJobs(candidates, (id) => stored.get(id) ?? { parent: null });
}
