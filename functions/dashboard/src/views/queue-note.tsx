import type { QueueReport } from '../../../api/api-service.js';
import type { JobDocument, StepDefinition, TaskDefinition } from '../api-types.js';
import { useResource } from '../hooks.js';
import { queuesToCheck, unheardQueues } from '../queue-health.js';

/**
 * Says, on a job's page, which of the queues its running steps wait in no worker listens to: the
 * usual reason a job does not move. Looks only once a step has run a few seconds, every 10 s after.
 */
export function QueueNote({
  job,
  steps,
  tasks,
  now,
}: {
  job: JobDocument;
  steps: readonly StepDefinition[];
  tasks: readonly TaskDefinition[];
  now: number;
}) {
  const names = queuesToCheck(job, steps, tasks, now);
  const key = [...names].sort().join(',');
  const reports = useResource(
    (client, signal) =>
      key
        ? client.request<{ queues: QueueReport[] }>(
            `api/queues?workflow=${encodeURIComponent(job.workflow)}`,
            {
              signal,
            },
          )
        : Promise.resolve({ queues: [] }),
    `queues:${job.workflow}:${key}`,
    key ? 10_000 : undefined,
  );
  const unheard = unheardQueues(reports.data?.queues ?? [], names);
  if (!unheard.length) return null;
  return (
    <div class="note note-warning queue-note" role="status">
      {unheard.map((report) => (
        <p key={`${report.vhost ?? ''}|${report.queue}`} data-unheard-queue={report.queue}>
          Queue <code>{report.queue}</code>
          {report.vhost ? ` (vhost ${report.vhost})` : ''}:{' '}
          {report.exists
            ? `${report.ready ?? 0} ${report.ready === 1 ? 'request waits' : 'requests wait'}, and no worker is listening.`
            : 'the broker has no such queue.'}{' '}
          Is a worker running on “{report.queue}”?
        </p>
      ))}
    </div>
  );
}
