import type { Actor } from '../job/history-entry.js';

/** What an audited command did (the commands on jobs are in each job's own history instead). */
export const AUDIT_ACTIONS = [
  'workflow.registered',
  'workflow.disabled',
  'token.created',
  'token.revoked',
  'namespace.changed',
  'delivery.redelivered',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One command that changed something other than a job: who, when, what, in which namespace. */
export interface AuditEntry {
  /** `<at, 13 digits>-<8 hex digits>`: sorts as the entries were made. */
  id: string;
  at: number;
  actor: Actor;
  action: AuditAction;
  /** The namespace it acted in (a token's scope; `*` for a token of every namespace). */
  namespace: string;
  /** What it acted on: a workflow's name, a token's id, a namespace, a webhook delivery's id. */
  target: string;
  /** A registered workflow's version, a token's role. */
  detail?: string;
}

/** Entries are kept this long, then a store lets them go (TTL deployed, pruned at each write locally). */
export const AUDIT_RETENTION_MS = 90 * 24 * 3_600_000;

export interface AuditPage {
  entries: AuditEntry[];
  /** Where the next page starts (absent on the last). */
  cursor?: string;
}

/**
 * The record of the commands that change definitions, tokens and namespace settings, and who sent
 * them (a job's commands are in its history, engine/job/history.ts).
 */
export interface AuditLog {
  recordAudit(entry: AuditEntry): Promise<void>;
  /** A namespace's entries, newest first, from `cursor` (an entry's id: those before it) on. */
  listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage>;
}

/** A new entry's id, sortable by time: `random` is 8 hex digits. */
export function auditIdOf(at: number, random: string): string {
  return `${String(Math.trunc(at)).padStart(13, '0')}-${random}`;
}
