import type { WorkflowSchedulesDocument } from '../../api/workflow-documents.js';
import { ApiClient, type ClientOptions } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;

const shortTime = (iso: string) =>
  iso
    .replace('T', ' ')
    .replace(/:00\.000Z$/, 'Z')
    .replace(/\.\d+Z$/, 'Z');

/**
 * `switchyard schedules [workflow]`: each cron schedule with its next ticks, then the jobs waiting
 * for a delayed start (`submit --at`), soonest first.
 */
export async function listSchedules(
  workflow: string | undefined,
  options: ClientOptions & { output?: string; ticks?: string },
  out: Out,
): Promise<void> {
  const format = outputFormat(options.output);
  const api = new ApiClient(options);
  const ticks = new URLSearchParams({ ticks: options.ticks ?? '3' });
  const documents = workflow
    ? [
        await api.get<WorkflowSchedulesDocument>(
          `/api/workflow/${encodeURIComponent(workflow)}/schedules?${ticks}`,
        ),
      ]
    : await api.get<WorkflowSchedulesDocument[]>(`/api/schedules?${ticks}`);
  if (format === 'json') {
    out(JSON.stringify(workflow ? documents[0] : documents, null, 2));
    return;
  }
  const p = paint(colourFor(process.stdout));
  const schedules = documents.flatMap((document) =>
    document.schedules.map((schedule) => [
      p.bold(document.name),
      schedule.cron,
      schedule.timezone,
      schedule.catchUp,
      document.enabled ? schedule.nextTicks.map(shortTime).join(', ') : p.yellow('disabled'),
    ]),
  );
  const scheduled = documents.flatMap((document) =>
    document.scheduled.map((job) => [job.id, p.bold(document.name), shortTime(job.startAt)]),
  );
  const more = documents.reduce(
    (sum, document) => sum + document.scheduledCount - document.scheduled.length,
    0,
  );
  const where = workflow ? ` of ${workflow}` : '';
  out(
    schedules.length
      ? renderTable(['WORKFLOW', 'CRON', 'TIME ZONE', 'CATCH-UP', 'NEXT TICKS (UTC)'], schedules, p)
      : `no schedules${where}`,
  );
  out('');
  out(
    scheduled.length
      ? renderTable(['SCHEDULED JOB', 'WORKFLOW', 'STARTS (UTC)'], scheduled, p)
      : `no scheduled jobs${where}`,
  );
  if (more > 0) out(p.dim(`… and ${more} more scheduled jobs: switchyard jobs --status scheduled`));
}
