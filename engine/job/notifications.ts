import { namespaceOf, splitQualifiedName } from '../definition/namespace.js';
import type { NotifyTarget } from '../definition/notify.js';
import { jsonBytesWithin } from '../json-size.js';
import type { HistoryEntry } from './history-entry.js';
import type { JobRecord, NewDelivery, NotificationBody } from './types.js';
import { uuidV5 } from './uuid-v5.js';

export type { NewDelivery, NotificationBody } from './types.js';

/** A job's result rides in its notification up to this many bytes of JSON; a larger one is left out. */
export const MAX_NOTIFIED_RESULT_BYTES = 16 * 1024;

/**
 * The deliveries a transition's new history entries call for: one per entry and target that names
 * its kind. Only top-level jobs notify (a fan-out's children would send one per element).
 */
export function deliveriesOf(
  job: JobRecord,
  entries: readonly HistoryEntry[],
  targets: readonly NotifyTarget[],
): NewDelivery[] {
  if (job.parent !== null || targets.length === 0) return [];
  const deliveries: NewDelivery[] = [];
  for (const entry of entries) {
    targets.forEach((target, index) => {
      if (!target.events.includes(entry.kind)) return;
      const id = uuidV5(`${job.id}/notify/${entry.seq}/${index}`);
      deliveries.push({
        id,
        jobId: job.id,
        namespace: namespaceOf(job.workflow),
        url: target.url,
        secret: target.secret,
        body: bodyOf(id, job, entry),
      });
    });
  }
  return deliveries;
}

function bodyOf(id: string, job: JobRecord, entry: HistoryEntry): NotificationBody {
  const { namespace, name } = splitQualifiedName(job.workflow);
  const body: NotificationBody = {
    id,
    type: entry.kind,
    time: new Date(entry.at).toISOString(),
    namespace,
    jobId: job.id,
    workflow: name,
    version: job.version,
    status: job.status,
  };
  if (entry.step !== undefined) body.step = entry.step;
  if (entry.attempt !== undefined) body.attempt = entry.attempt;
  if (entry.message !== undefined) body.message = entry.message;
  if (entry.kind === 'job.completed' && job.result) {
    if (jsonBytesWithin(job.result, MAX_NOTIFIED_RESULT_BYTES) !== undefined) body.result = job.result;
    else body.resultOmitted = true;
  }
  if ((entry.kind === 'job.failed' || entry.kind === 'job.aborted') && job.error) {
    body.error = { step: job.error.step, message: job.error.message };
  }
  return body;
}
