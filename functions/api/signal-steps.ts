import { type JobRecord, signalStepsOf, type WorkflowRegistry } from '../../engine/index.js';

/** Definitions whose signal steps are kept: a version never changes, so none is ever stale. */
const KEPT = 500;

/**
 * The `type: signal` steps of each job's workflow version (of its task, for a fan-out child), read
 * once per version and kept: a list of jobs of a few workflows reads each definition once.
 */
export class SignalSteps {
  private readonly known = new Map<string, ReadonlySet<string>>();

  constructor(private readonly registry: Pick<WorkflowRegistry, 'getWorkflow'>) {}

  async of(job: Pick<JobRecord, 'workflow' | 'version' | 'task'>): Promise<ReadonlySet<string>> {
    const key = `${job.version}\u0000${job.task ?? ''}\u0000${job.workflow}`;
    const kept = this.known.get(key);
    if (kept) return kept;
    const stored = await this.registry.getWorkflow(job.workflow, job.version);
    // A version that cannot be read (deleted since) has no known signal steps: its suspended steps still show.
    const steps = stored ? signalStepsOf(stored.definition, job.task) : new Set<string>();
    if (!stored) return steps;
    if (this.known.size >= KEPT) this.known.delete(this.known.keys().next().value as string);
    this.known.set(key, steps);
    return steps;
  }
}
