import { namespaceOf, splitQualifiedName } from '../definition/namespace.js';
import type { NotifyTarget } from '../definition/notify.js';
import type { JsonObject } from '../json.js';
import { jsonBytesWithin } from '../json-size.js';
import type { HistoryEntry, HistoryKind } from './history-entry.js';
import type { JobRecord, JobStatus } from './types.js';
import { uuidV5 } from './uuid-v5.js';

/** A job's result rides in its notification up to this many bytes of JSON; a larger one is left out. */
export const MAX_NOTIFIED_RESULT_BYTES = 16 * 1024;

/** What each delivery posts (docs/notifications.md documents it field by field). */
export interface NotificationBody {
  /** The delivery's id, also in the `Switchyard-Delivery` header: receivers dedupe on it. */
  id: string;
  type: HistoryKind;
  /** When it happened, ISO 8601. */
  time: string;
  namespace: string;
  jobId: string;
  /** The workflow's name within its namespace. */
  workflow: string;
  version: number;
  /** The job's status after the transition that caused the event. */
  status: JobStatus;
  step?: string;
  attempt?: number;
  /** The history entry's message: an error, a retry's delay, a reason. */
  message?: string;
  /** job.completed: the job's result, when it is at most `MAX_NOTIFIED_RESULT_BYTES` of JSON. */
  result?: JsonObject;
  /** job.completed with a larger result: read it from `GET /api/job/{id}`. */
  resultOmitted?: true;
  /** job.failed, job.aborted: the job's error. */
  error?: { step: string | null; message: string };
}

/** One webhook call to make: recorded with the transition, delivered by the hosts' delivery pump. */
export interface NewDelivery {
  id: string;
  jobId: string;
  namespace: string;
  url: string;
  /** The name of the secret that signs it (never its value). */
  secret: string;
  body: NotificationBody;
}

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
