import type { JobDocument } from './api-types.js';
import { type Resource, useResource } from './hooks.js';

/** Who did something to a job, as its history names them (engine/job/history.ts). */
export interface HistoryActor {
  kind: 'root' | 'token' | 'schedule';
  id?: string;
  description?: string;
  name?: string;
}

/** One entry of `GET /api/job/{id}/events`. */
export interface HistoryEntry {
  seq: number;
  at: string;
  kind: string;
  step?: string;
  attempt?: number;
  message?: string;
  actor?: HistoryActor;
  worker?: string;
}

export interface EventsPage {
  events: HistoryEntry[];
  dropped: number;
  cursor?: string;
}

/** The job's history, read again whenever the job changes. */
export function useJobHistory(job: JobDocument): Resource<EventsPage> {
  return useResource(
    (client, signal) => client.request<EventsPage>(`api/job/${job.uuid}/events?limit=500`, { signal }),
    `${job.uuid}@${job.updatedAt}`,
  );
}

/** Who an entry names: the actor of a command, the worker of a reply. */
export function who(entry: HistoryEntry): string {
  const actor = entry.actor;
  if (actor?.kind === 'token')
    return `token ${actor.id}${actor.description ? ` (${actor.description})` : ''}`;
  if (actor?.kind === 'schedule') return `schedule ${actor.name}`;
  if (actor?.kind === 'root') return 'root';
  return entry.worker ? `worker ${entry.worker}` : '';
}

/**
 * The signals sent to `step`, oldest first: each `step.signalled` entry names who sent it (taken at
 * once, or kept until the step waited; one refused leaves no entry).
 */
export function signalsTo(entries: readonly HistoryEntry[] | undefined, step: string): HistoryEntry[] {
  return (entries ?? []).filter((entry) => entry.kind === 'step.signalled' && entry.step === step);
}
