import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { HistoryEntry, ListedStatus } from '../../engine/index.js';
import { type StreamHead, type StreamImage, streamHeadOf } from '../adapters/dynamodb/stream-heads.js';

/** The detail-types of the events the job-events function puts on the default bus (docs/deploying.md). */
export const JOB_STATUS_CHANGE = 'Switchyard Job Status Change';
export const STEP_WAITING = 'Switchyard Step Waiting';

/** The events' `source`: one stack's events are told from another's in the same account. */
export function eventSourceOf(stack: string): string {
  return `switchyard.${stack}`;
}

/** The longest error message an event carries (the job document has the whole of it). */
export const MAX_EVENT_ERROR = 1_000;

/** What a change of a job head record gives the EventBridge events of. */
export interface HeadChangeRecord {
  eventName?: string;
  dynamodb?: { NewImage?: StreamImage; OldImage?: StreamImage; SequenceNumber?: string };
}

export interface JobStatusChangeDetail {
  stack: string;
  namespace: string;
  workflow: string;
  jobId: string;
  /** The job's revision after the change: with jobId, a key to drop an event delivered twice. */
  rev: number;
  status: ListedStatus;
  /** null when the job was created by this change. */
  previousStatus: ListedStatus | null;
  parentId: string | null;
  rootId: string | null;
  createdAt: string | null;
  endedAt: string | null;
  /** A failed, aborted (or timed out) job's error: the step (null for the whole job) and message. */
  error: { step: string | null; message: string } | null;
}

export interface StepWaitingDetail {
  stack: string;
  namespace: string;
  workflow: string;
  jobId: string;
  rev: number;
  step: string;
  /** `signal`: a signal step waits for its signal; `suspended`: a worker suspended the step. */
  reason: 'signal' | 'suspended';
  /** A suspended step's note (what it waits for), when its worker gave one. */
  note: string | null;
  since: string;
}

export interface JobEvent {
  detailType: typeof JOB_STATUS_CHANGE | typeof STEP_WAITING;
  detail: JobStatusChangeDetail | StepWaitingDetail;
  /** Milliseconds since the epoch. */
  time: number;
}

/**
 * The events one head record makes: a status change when the listed status differs between the old
 * and new images (a created job: no old image), and one event per step that started waiting for
 * someone (history entries after the old image's). Anything else a head write changes (inline
 * requests, marks, a step's progress) makes none.
 */
export function jobEventsOf(record: HeadChangeRecord, stack: string): JobEvent[] {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return [];
  const after = streamHeadOf(record.dynamodb?.NewImage);
  if (!after) return [];
  const before = streamHeadOf(record.dynamodb?.OldImage);
  const events: JobEvent[] = [];
  const time = after.job?.updatedAt ?? Date.now();
  if (before?.listedStatus !== after.listedStatus) {
    events.push({
      detailType: JOB_STATUS_CHANGE,
      detail: statusDetail(after, before?.listedStatus ?? null, stack),
      time,
    });
  }
  for (const entry of newWaits(before, after)) {
    const step = entry.step ?? '';
    const note = after.job?.steps.find((state) => state.name === step)?.suspendNote;
    events.push({
      detailType: STEP_WAITING,
      detail: {
        ...common(after, stack),
        step,
        reason: entry.kind === 'step.suspended' ? 'suspended' : 'signal',
        note: note ?? null,
        since: new Date(entry.at).toISOString(),
      },
      time: entry.at,
    });
  }
  return events;
}

/**
 * History entries of steps that began waiting, after the old image's last entry. Without the old
 * image's JSON (chunked) the history cannot be compared: only a job that waits now and did not
 * before reports its latest waiting entry.
 */
function newWaits(before: StreamHead | undefined, after: StreamHead): HistoryEntry[] {
  const history = after.job?.history ?? [];
  const waits = (entry: HistoryEntry) => entry.kind === 'step.waiting' || entry.kind === 'step.suspended';
  if (before && before.job === undefined) {
    if (before.listedStatus === 'waiting' || after.listedStatus !== 'waiting') return [];
    const latest = history.findLast(waits);
    return latest ? [latest] : [];
  }
  const seen = before?.job?.history?.at(-1)?.seq ?? 0;
  return history.filter((entry) => entry.seq > seen && waits(entry));
}

function common(head: StreamHead, stack: string) {
  return {
    stack,
    namespace: head.namespace,
    workflow: head.workflow,
    jobId: head.jobId,
    rev: head.rev,
  };
}

function statusDetail(
  head: StreamHead,
  previousStatus: ListedStatus | null,
  stack: string,
): JobStatusChangeDetail {
  const job = head.job;
  const error = job?.error;
  return {
    ...common(head, stack),
    status: head.listedStatus,
    previousStatus,
    parentId: head.parentId ?? null,
    rootId: job?.root ?? null,
    createdAt: job ? new Date(job.createdAt).toISOString() : null,
    endedAt: job?.endedAt !== undefined ? new Date(job.endedAt).toISOString() : null,
    error: error ? { step: error.step, message: error.message.slice(0, MAX_EVENT_ERROR) } : null,
  };
}

/** The PutEvents entry of an event on the default bus, from `source`. */
export function putEventsEntryOf(event: JobEvent, source: string): PutEventsRequestEntry {
  return {
    Source: source,
    DetailType: event.detailType,
    Detail: JSON.stringify(event.detail),
    Time: new Date(event.time),
  };
}

/**
 * An entry's size as EventBridge counts it against the 256 KB of one PutEvents request: the time
 * (14 bytes), and the UTF-8 bytes of source, detail-type, detail and resources.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 */
export function entrySize(entry: PutEventsRequestEntry): number {
  let size = entry.Time ? 14 : 0;
  for (const text of [entry.Source, entry.DetailType, entry.Detail, ...(entry.Resources ?? [])])
    if (text) size += Buffer.byteLength(text);
  return size;
}
