import {
  type Actor,
  type AuditAction,
  type AuditEntry,
  type EveryField,
  type FanCounts,
  type FanInit,
  type FollowUp,
  type JobRecord,
  listedStatusOf,
  type OutboxEntry,
  type QueuedJob,
  type Role,
  type RunningCount,
  type StepRequest,
  type StoredToken,
  type StoredWorkflow,
  type Timer,
  type TimerKey,
  type TimerKind,
  type WorkflowDefinition,
} from '../../../engine/index.js';
import type {
  AuditRow,
  AuditRowValues,
  FanCountsRow,
  JobRow,
  OutboxRow,
  TimerRow,
  TokenRow,
  WorkflowVersionRow,
} from './statements.js';

// Each record as its row and back. A job is its whole record as JSON (plus columns copied out of it
// for queries), so it keeps every field there is. The other rows are written field by field: each
// decoder below names every field of what it returns (`EveryField`), so a field added to one of
// them fails tsc here until its row keeps it. A field a row does not keep is named in the placement
// of its encoder, with the reason.

/** The step column of a job's own deadline (step names are never empty). */
const JOB_TIMER_STEP = '';

export function jobRow(job: JobRecord, record: string): JobRow {
  return [
    job.id,
    job.rev,
    job.workflow,
    // The listed status (`waiting`: waiting for someone; `pending`: not started): what lists filter
    // and count on. The record keeps the engine's own status.
    listedStatusOf(job),
    job.root,
    job.parent?.id ?? null,
    job.parent?.step ?? null,
    job.parent?.index ?? null,
    job.vhost ?? null,
    job.createdAt,
    job.endedAt ?? null,
    record,
  ];
}

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;
type FollowUpEntry = Extract<OutboxEntry, { kind: 'followUp' }>;

export function outboxRow(entry: OutboxEntry): OutboxRow {
  const payload = entry.kind === 'request' ? entry.request : entry.followUp;
  return [entry.id, entry.jobId, entry.kind, entry.createdAt, JSON.stringify(payload)];
}

export function outboxEntry([id, jobId, kind, createdAt, payload]: OutboxRow): OutboxEntry {
  if (kind === 'request') {
    return {
      id,
      kind,
      jobId,
      createdAt,
      request: JSON.parse(payload) as StepRequest,
    } satisfies EveryField<RequestEntry>;
  }
  return {
    id,
    kind: 'followUp',
    jobId,
    createdAt,
    followUp: JSON.parse(payload) as FollowUp,
  } satisfies EveryField<FollowUpEntry>;
}

export function timerRow(timer: Timer): TimerRow {
  return [timer.jobId, timer.step ?? JOB_TIMER_STEP, timer.kind, timer.attempt, timer.at];
}

export function timerKeyRow(key: TimerKey): [jobId: string, step: string] {
  return [key.jobId, key.step ?? JOB_TIMER_STEP];
}

export function timerOf([jobId, step, kind, attempt, at]: TimerRow): Timer {
  return {
    jobId,
    step: step === JOB_TIMER_STEP ? null : step,
    kind: kind as TimerKind,
    attempt,
    at,
  } satisfies EveryField<Timer>;
}

/**
 * Where each field of a FanInit goes in `fan_counts`. `continueOnError` is not kept: the last
 * child's commit counts it and stores its fan-in follow-up in one transaction, so nothing recovers a
 * fan-in here by the counters alone (DynamoDB's watcher does, and keeps it).
 */
export const FAN_INIT_COLUMNS = {
  parentId: 'parent_id',
  step: 'step',
  total: 'total',
  done: 'done',
  failed: 'failed',
  continueOnError: null,
} as const satisfies Record<keyof FanInit, string | null>;

export function fanCountsOf(row: FanCountsRow): FanCounts {
  return { total: row.total, done: row.done, failed: row.failed } satisfies EveryField<FanCounts>;
}

export function runningCountOf([running, queued, nextSeq]: [number, number, number]): RunningCount {
  return { running, queued, nextSeq } satisfies EveryField<RunningCount>;
}

export function queuedJobOf([seq, jobId]: [number, string]): QueuedJob {
  return { jobId, seq } satisfies EveryField<QueuedJob>;
}

export function storedWorkflow(name: string, row: WorkflowVersionRow, enabled: boolean): StoredWorkflow {
  return {
    name,
    version: row.version,
    definition: JSON.parse(row.definition) as WorkflowDefinition,
    createdAt: row.created_at,
    enabled,
  } satisfies EveryField<StoredWorkflow>;
}

export function tokenRow(token: StoredToken): [string, string, string, string, string, number] {
  return [token.id, token.hash, token.namespace, token.role, token.description, token.createdAt];
}

export function storedToken(row: TokenRow): StoredToken {
  return {
    id: row.id,
    hash: row.hash,
    namespace: row.namespace,
    role: row.role as Role,
    description: row.description,
    createdAt: row.created_at,
  } satisfies EveryField<StoredToken>;
}

export function auditRowValues(entry: AuditEntry): AuditRowValues {
  return [
    entry.namespace,
    entry.id,
    entry.at,
    JSON.stringify(entry.actor),
    entry.action,
    entry.target,
    entry.detail ?? null,
  ];
}

export function auditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    actor: JSON.parse(row.actor) as Actor,
    action: row.action as AuditAction,
    namespace: row.namespace,
    target: row.target,
    detail: row.detail ?? undefined,
  } satisfies EveryField<AuditEntry>;
}
