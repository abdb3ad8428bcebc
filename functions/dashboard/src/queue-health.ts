import type { QueueReport } from '../../api/api-service.js';
import type { JobDocument, StepDefinition, TaskDefinition } from './api-types.js';

/** Whether a queue holds requests that no worker takes: the usual reason a job does not move. */
export function unattended(queue: Pick<QueueReport, 'ready' | 'consumers'>): boolean {
  return (queue.ready ?? 0) > 0 && queue.consumers === 0;
}

/** How long a step runs before its page looks at its queue (as `switchyard status` does). */
export const QUEUE_CHECK_AFTER_MS = 5_000;

/** A worker step's queue; none for a signal step, a fan-out or a call, which send to no queue of their own. */
function queueOf(step: StepDefinition): string | undefined {
  if (step.type === 'signal' || step.task || step.workflow) return undefined;
  return step.queue ?? step.name;
}

/**
 * The queues a job's requests wait in, worth a look: those of its worker steps running for
 * `QUEUE_CHECK_AFTER_MS` or more, and those of the task of a fan-out whose children are not all done.
 * `steps`: the job's own step definitions (a child's: its task's).
 */
export function queuesToCheck(
  job: Pick<JobDocument, 'status' | 'steps'>,
  steps: readonly StepDefinition[],
  tasks: readonly TaskDefinition[],
  now: number,
): Set<string> {
  const queues = new Set<string>();
  if (job.status !== 'running' && job.status !== 'waiting') return queues;
  for (const step of steps) {
    const view = job.steps[step.name];
    if (view?.status !== 'running') continue;
    const sent = view.attempts.at(-1)?.sentAt ?? view.startedAt;
    if (!sent || now - Date.parse(sent) < QUEUE_CHECK_AFTER_MS) continue;
    const queue = queueOf(step);
    if (queue) queues.add(queue);
    const task = step.task ? tasks.find((candidate) => candidate.name === step.task) : undefined;
    if (task && (view.childrenDone ?? 0) < (view.children ?? 0)) {
      for (const inner of task.steps) {
        const innerQueue = queueOf(inner);
        if (innerQueue) queues.add(innerQueue);
      }
    }
  }
  return queues;
}

/** Of the broker's reports, the queues of `names` that no worker listens to (or that do not exist yet). */
export function unheardQueues(reports: readonly QueueReport[], names: ReadonlySet<string>): QueueReport[] {
  return reports.filter(
    (report) => names.has(report.queue) && !report.error && (!report.exists || report.consumers === 0),
  );
}
