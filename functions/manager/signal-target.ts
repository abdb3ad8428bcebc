import { graphOf, hopTarget, type JobStore, parseStepPath } from '../../engine/index.js';
import { ManagerError } from './errors.js';
import type { WorkflowCache } from './workflow-cache.js';

/**
 * The job and step a signal's path names (`approve`, `publish/approve`, `review[2]/approve`): each hop
 * read from the store, the engine saying where it leads (engine/job/step-path.ts).
 */
export async function signalTargetOf(
  store: JobStore,
  workflows: WorkflowCache,
  id: string,
  path: string,
): Promise<{ jobId: string; step: string }> {
  const parsed = parseStepPath(path);
  if ('error' in parsed) throw new ManagerError('invalid', parsed.error);
  let jobId = id;
  for (const hop of parsed.hops) {
    const job = await store.getJob(jobId);
    const workflow = job && (await workflows.get(job.workflow, job.version));
    if (!job || !workflow) throw new ManagerError('not_found', `no job ${jobId}`);
    const node = graphOf(workflow, job.task).byName.get(hop.step);
    const target = hopTarget(job, hop, node, node && job.steps.get(node.index));
    if (target.kind === 'refuse') throw new ManagerError(target.code, target.reason);
    if (target.kind === 'job') {
      jobId = target.id;
      continue;
    }
    const page = await store.listChildren(job.id, target.step, { fromIndex: target.index, limit: 1 });
    const child = page.children[0];
    if (!child || child.parent?.index !== target.index)
      throw new ManagerError(
        'conflict',
        `child ${target.index} of step "${target.step}" of job ${job.id} does not exist yet`,
      );
    jobId = child.id;
  }
  return { jobId, step: parsed.step };
}
