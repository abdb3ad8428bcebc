import { type JobRecord, signalStepsOf, type WorkflowRegistry } from '../../engine/index.js';

/** Definitions whose signal steps are kept: a version never changes, so none is ever stale. */
const KEPT = 500;

/**
 * The `type: signal` steps of each job's workflow version (of its task, for a fan-out child), read
 * once per version and kept: a list of jobs of a few workflows, summarized at once, reads each
 * definition once.
 */
export class SignalSteps {
  private readonly known = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(private readonly registry: Pick<WorkflowRegistry, 'getWorkflow'>) {}

  of(job: Pick<JobRecord, 'workflow' | 'version' | 'task'>): Promise<ReadonlySet<string>> {
    const key = `${job.version}\u0000${job.task ?? ''}\u0000${job.workflow}`;
    const kept = this.known.get(key);
    if (kept) return kept;
    const reading = this.registry.getWorkflow(job.workflow, job.version).then((stored) => {
      // A version that cannot be read (deleted since) has no known signal steps, and is asked again
      // next time: its suspended steps still show, as they need no definition.
      if (!stored) this.known.delete(key);
      return stored ? signalStepsOf(stored.definition, job.task) : new Set<string>();
    });
    // A failed read is not kept either: the next document asks again.
    reading.catch(() => this.known.delete(key));
    if (this.known.size >= KEPT) this.known.delete(this.known.keys().next().value as string);
    this.known.set(key, reading);
    return reading;
  }
}
