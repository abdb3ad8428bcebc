import type { Role } from '../access/roles.js';
import type { NamespaceSettings } from '../definition/namespace-settings.js';
import type { WorkflowDefinition } from '../definition/types.js';
import type { ListedStatus } from '../job/listed-status.js';
import type { LimitChange, RunningCount } from '../job/running-limit.js';
import type { ChildOutcome, FanInit, JobPatch } from '../job/transition.js';
import type { TreeChange, TreeState } from '../job/tree-quota.js';
import type { FanCounts, FollowUp, JobRecord, StepRequest, Timer, TimerChange } from '../job/types.js';
import type { AuditLog } from './audit-log.js';
import type { DeliveryLog } from './deliveries.js';
import type { RepliesInHand } from './reply-intake.js';

/** A registered version of a workflow definition. Versions are immutable; jobs keep theirs. */
export interface StoredWorkflow {
  name: string;
  version: number;
  definition: WorkflowDefinition;
  createdAt: number;
  /** A disabled workflow refuses new jobs; running ones go on. */
  enabled: boolean;
}

export interface WorkflowSummary {
  name: string;
  latestVersion: number;
  enabled: boolean;
  description?: string;
  vhosts: string[];
  versions: { version: number; createdAt: number }[];
}

/** Work stored with a transition and carried out after it commits (the outbox). */
export type OutboxEntry =
  | { id: string; kind: 'request'; jobId: string; createdAt: number; request: StepRequest }
  | { id: string; kind: 'followUp'; jobId: string; createdAt: number; followUp: FollowUp };

export interface OutboxPage {
  entries: OutboxEntry[];
  /** Pass back to read the next page; absent on the last one. */
  cursor?: string;
}

/**
 * Everything one transition writes, applied atomically: the job (created when `expectedRev` is 0,
 * else updated only if its revision is still `expectedRev`), the child jobs it creates (each only if
 * absent; one whose id another job holds refuses the whole commit, see `CommitResult`), its outbox
 * entries, its timers, and its fan-out counters.
 */
export interface Commit {
  job: JobRecord;
  expectedRev: number;
  patch: JobPatch;
  creates: JobRecord[];
  outbox: OutboxEntry[];
  timers: TimerChange[];
  fanInits: FanInit[];
  /** Counted exactly once, with this write: the counters of the parent's fan-out step. */
  childOutcome?: ChildOutcome;
  /** Delete this job's request entries still in the outbox (it stopped) before adding this commit's. */
  dropUnsent: boolean;
  /**
   * The change to the job's workflow's `maxRunning` counters and queue, written with the job only
   * if its condition holds (engine/job/running-limit.ts); when it does not, nothing is written and
   * the result is a conflict.
   */
  limit?: LimitChange;
  /**
   * What the commit adds to its job's tree, written with it only if `treeChangeAllowed` holds for
   * the tree as stored (engine/job/tree-quota.ts); when it does not, nothing is written and the
   * result is a conflict.
   */
  tree?: TreeChange;
}

/** A job in its workflow's `maxRunning` queue. */
export interface QueuedJob {
  jobId: string;
  seq: number;
}

export type CommitResult =
  /**
   * `fanCounts`: the parent's counters after `childOutcome` was counted. `leftOut`: ids of outbox
   * entries the store did not write because those counters showed them not needed
   * (`followUpNotNeeded`, engine/job/fan-in.ts); the caller must not carry them out either.
   */
  | { ok: true; fanCounts?: FanCounts; leftOut?: readonly string[] }
  /** The job's revision moved on (or it already exists): read it again and retry the event. */
  | { ok: false; conflict: true }
  /**
   * Nothing was written: these created children's ids belong to jobs that are not those same
   * children (`sameChild`); run the transition again with the ids taken.
   */
  | { ok: false; conflict: false; taken: readonly string[] };

/** A cursor the store did not hand out (the API answers 400). */
export class InvalidCursorError extends Error {
  constructor(cursor: string) {
    super(`"${cursor.slice(0, 100)}" is not a cursor this server handed out`);
    this.name = 'InvalidCursorError';
  }
}

/**
 * The store cannot take a write (or a read) for now: the disk is full, I/O failed, the database is
 * read-only or locked past its timeout, the service throttles or is down. The message names the cause;
 * the API answers 503 with it, and the caller may try again later.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export interface JobQuery {
  /** The stored (qualified) workflow name: `<namespace>/<name>`, or the plain name in `default`. */
  workflow?: string;
  /** Only jobs of this namespace's workflows (engine/definition/namespace.ts). @default all */
  namespace?: string;
  /** The listed status (engine/job/listed-status.ts): `waiting` is a job waiting for someone. */
  status?: ListedStatus;
  /** Top-level jobs only (the default), or children too. */
  includeChildren?: boolean;
  /** Jobs created at or after this time (ms). */
  createdAfter?: number;
  /** Jobs created before this time (ms). */
  createdBefore?: number;
  /** Jobs that ended at or after this time (ms). */
  endedSince?: number;
  /** Jobs that ended before this time (ms). */
  endedBefore?: number;
  /** Jobs whose error message holds this text (case-insensitive). */
  errorContains?: string;
  /** Jobs whose search attributes have each of these values (engine/job/search-attributes.ts). */
  attributes?: Readonly<Record<string, string>>;
  vhost?: string;
  /** @default 100 */
  limit?: number;
  /** Opaque: from the previous page. */
  cursor?: string;
}

export interface JobPage {
  /** Newest first. */
  jobs: JobRecord[];
  cursor?: string;
}

export interface ChildrenPage {
  /** Ordered by index. */
  children: JobRecord[];
  /** The index to continue from, when there may be more. */
  nextIndex?: number;
}

/** The registered workflow definitions: the manager registers them, the API and the engine read them. */
export interface WorkflowRegistry {
  saveWorkflow(definition: WorkflowDefinition, now: number): Promise<{ version: number; created: boolean }>;
  getWorkflow(name: string, version?: number): Promise<StoredWorkflow | undefined>;
  listWorkflows(): Promise<WorkflowSummary[]>;
  /** @returns false when there is no such workflow */
  setWorkflowEnabled(name: string, enabled: boolean): Promise<boolean>;
}

/** Reads of jobs by id and of their fan-outs: what running jobs and showing them both read. */
export interface JobReader {
  getJob(id: string): Promise<JobRecord | undefined>;
  getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>>;
  /** A fan-out step's children with index >= `fromIndex`, in index order. */
  listChildren(
    parentId: string,
    step: string,
    page: { fromIndex?: number; limit: number },
  ): Promise<ChildrenPage>;
  getFanCounts(parentId: string, step: string): Promise<FanCounts | undefined>;
  /** A workflow's `maxRunning` counters, as last committed (all 0 when it has none). */
  getRunningCount(workflow: string): Promise<RunningCount>;
  /** The first `limit` jobs of a workflow's `maxRunning` queue, first in line first. */
  listQueued(workflow: string, limit: number): Promise<QueuedJob[]>;
  /** The jobs counted under a tree's root (0 when none), and the root's status, as last committed. */
  getTree(root: string): Promise<TreeState>;
}

/** What the manager writes as it runs jobs: transitions with their outbox, and fan-out counters. */
export interface JobStore extends JobReader {
  /** Applies each commit on its own (one may conflict while the others apply), in order. */
  commit(commits: readonly Commit[]): Promise<CommitResult[]>;
  /** Sets a fan-out step's counters (a retried fan-out recounts its completed children). */
  setFanCounts(parentId: string, step: string, counts: FanCounts): Promise<void>;

  /**
   * Outbox entries not yet acknowledged, oldest first, in pages; `createdBefore` leaves out entries
   * that a running handler may still be sending.
   */
  pendingOutbox(page: { limit: number; cursor?: string; createdBefore?: number }): Promise<OutboxPage>;
  /**
   * Deletes sent entries. A store may hold the write back a moment to group it with others (a crash
   * then only re-sends them); `urgent` asks for it to be written at once (the requests of a long
   * send, recorded as they are confirmed, so that a crash re-sends as few as possible).
   */
  ackOutbox(ids: readonly string[], options?: { urgent?: boolean }): Promise<void>;
}

/** Listings and counts of jobs, for the API, the dashboard and metrics. */
export interface JobQueries extends JobReader {
  queryJobs(query: JobQuery): Promise<JobPage>;
  /** Top-level jobs of a workflow by listed status (`waiting`: waiting for someone). */
  countJobs(workflow: string): Promise<Record<ListedStatus, number>>;
}

/** What the hosts do beside running jobs: sweep timers, delete old jobs, check and close the store. */
export interface Housekeeping {
  /** Armed timers, earliest first; `dueBy` limits them to those due by then. */
  listTimers(page: { dueBy?: number; limit: number }): Promise<Timer[]>;

  /** Retention: deletes finished top-level jobs (and their children) that ended before `endedBefore`. */
  deleteFinishedJobs(endedBefore: number): Promise<number>;

  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A scoped token as stored: its hash and metadata, never its secret (engine/access/roles.ts). */
export interface StoredToken {
  /** The first 16 hex digits of `hash`. */
  id: string;
  /** SHA-256 of the secret, in hex. */
  hash: string;
  /** A namespace, or `*`. */
  namespace: string;
  role: Role;
  description: string;
  createdAt: number;
}

/** The scoped tokens: the API creates, lists and revokes them, and looks each request's token up. */
export interface TokenStore {
  /** @returns false (and writes nothing) when a token of that id is stored already */
  saveToken(token: StoredToken): Promise<boolean>;
  getToken(id: string): Promise<StoredToken | undefined>;
  /** Oldest first. */
  listTokens(): Promise<StoredToken[]>;
  /** Revokes at once. @returns false when there is no such token */
  deleteToken(id: string): Promise<boolean>;
}

/**
 * What the operator set for each namespace (its queue prefix, its vhosts): read at each
 * registration and each start with `?vhost=`, written only by the root.
 */
export interface NamespaceSettingsStore {
  getNamespaceSettings(namespace: string): Promise<NamespaceSettings | undefined>;
  /** Every namespace the operator set something for, by name. */
  listNamespaceSettings(): Promise<NamespaceSettings[]>;
  /** Replaces the namespace's settings whole. */
  saveNamespaceSettings(settings: NamespaceSettings): Promise<void>;
}

/**
 * Secrets the manager keeps for itself, each made once and the same for every process that shares
 * the store: the key that signs each request's reply token.
 */
export interface ManagerKeys {
  /**
   * The key named `name`: the one stored, or `candidate` stored now if there is none (two processes
   * racing both get the one stored first).
   */
  managerKey(name: string, candidate: string): Promise<string>;
}

/**
 * The manager's durable state, in every role (the crash journal of replies in hand is one:
 * `RepliesInHand`, engine/ports/reply-intake.ts). SQLite locally, DynamoDB deployed, memory in tests;
 * every implementation passes the same contract tests (test/functions/store-contract.ts). Code that
 * uses a store takes only the roles it uses.
 */
export type Store = WorkflowRegistry &
  AuditLog &
  JobStore &
  JobQueries &
  Housekeeping &
  TokenStore &
  NamespaceSettingsStore &
  ManagerKeys &
  RepliesInHand &
  DeliveryLog;
