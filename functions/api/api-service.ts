import { randomBytes } from 'node:crypto';
import {
  type Actor,
  type AuditAction,
  type AuditEntry,
  type AuditLog,
  type AuditPage,
  auditIdOf,
  type Bus,
  type ChildrenPage,
  DEFAULT_NAMESPACE,
  type Delivery,
  type DeliveryLog,
  type DeliveryPage,
  type DeliveryQuery,
  type Housekeeping,
  inNamespace,
  type JobPage,
  type JobQueries,
  type JobQuery,
  type JobRecord,
  type JsonObject,
  type ListedStatus,
  type LoadOptions,
  type LoadResult,
  type NamespaceSettings,
  namespaceOf,
  type QueueHealth,
  type StoredWorkflow,
  sentQueueOf,
  splitQualifiedName,
  type TokenStore,
  type WorkflowDefinition,
  type WorkflowRegistry,
  type WorkflowSummary,
} from '../../engine/index.js';
import type { Callback } from '../manager/callbacks.js';

export type { Callback };

import type { Manager, SignalOutcome } from '../manager/manager.js';
import type { NamespaceSettingsChange } from '../manager/namespace-authority.js';

export type { NamespaceSettingsChange };

import { loadForDeployment, type QueueRules } from '../manager/queue-rules.js';
import type { StartJobParams } from '../manager/start-job-params.js';
import { ApiError } from './http.js';
import { type JobDocument, type JobSummary, jobDocument, jobSummary, jobVersion } from './job-document.js';
import { ScopedTokens } from './scoped-tokens.js';
import { SignalSteps } from './signal-steps.js';

/** The manager's commands the API gives its callers. */
export type ApiCommands = Pick<
  Manager,
  | 'now'
  | 'namespaces'
  | 'registerWorkflow'
  | 'startJob'
  | 'cancel'
  | 'retry'
  | 'signal'
  | 'pause'
  | 'resume'
  | 'callback'
  | 'callbackJobId'
  | 'rerun'
>;

/** The store's roles the API reads (and writes a workflow's switch through), and its health check. */
export type ApiStore = WorkflowRegistry &
  JobQueries &
  TokenStore &
  AuditLog &
  Pick<DeliveryLog, 'getDelivery' | 'jobDeliveries' | 'listDeliveries' | 'updateDelivery'> &
  Pick<Housekeeping, 'ping'>;

export interface ApiServiceOptions {
  manager: ApiCommands;
  store: ApiStore;
  bus: Pick<Bus, 'ping' | 'inspectQueues'>;
  /** The deployment's queue rules a registered definition must also satisfy. */
  queueRules?: QueueRules;
  /** How long a scoped token found is trusted without reading the store again (`ScopedTokens`). @default 0 */
  tokenCacheMs?: number;
}

/** What `health` reports of each dependency: `ok`, or why it cannot be reached. */
export interface Health {
  store: string;
  bus: string;
}

/** A step queue of the registered workflows, the steps that send to it, and what the broker says of it. */
export interface QueueReport extends QueueHealth {
  /** The steps sending to it: `{ workflow, task?, step }` (the latest version of each workflow). */
  steps: { workflow: string; task?: string; step: string }[];
}

/** Jobs read per page when the API collects or counts them all. */
const PAGE = 1_000;
/** A workflow's job listing stops collecting ids past this many. */
const MAX_JOB_IDS = 100_000;

/**
 * What the HTTP API does, in one place: commands go to the manager, reads to the store's roles. The
 * routes only parse requests and shape the answers.
 */
export class ApiService {
  private readonly manager: ApiCommands;
  private readonly store: ApiStore;
  private readonly bus: Pick<Bus, 'ping' | 'inspectQueues'>;
  readonly queueRules: QueueRules;
  /** Scoped tokens: created, listed and revoked by their routes, and looked up for each request. */
  readonly tokens: ScopedTokens;
  /** Which steps of a job wait for a signal when running: what documents and summaries say it waits for. */
  private readonly signalSteps: SignalSteps;
  /** The time of the latest audit entry made here, and how many were made in that millisecond. */
  private auditAt = 0;
  private auditCount = 0;

  constructor(options: ApiServiceOptions) {
    this.manager = options.manager;
    this.store = options.store;
    this.bus = options.bus;
    this.queueRules = options.queueRules ?? {};
    this.tokens = new ScopedTokens({
      store: options.store,
      cacheMs: options.tokenCacheMs,
      clock: () => options.manager.now(),
    });
    this.signalSteps = new SignalSteps(options.store);
  }

  now(): number {
    return this.manager.now();
  }

  /** Registers in the definition's namespace; `queuePrefix`: what its document states (must be the namespace's). */
  /** Reads definitions (YAML or JSON) as this deployment takes them: its queue rules applied. */
  loadDefinitions(text: string, options: LoadOptions): LoadResult {
    return loadForDeployment(text, options, this.queueRules);
  }

  async registerWorkflow(
    definition: WorkflowDefinition,
    queuePrefix: string | undefined,
    actor: Actor,
  ): Promise<{ version: number; created: boolean }> {
    const registered = await this.manager.registerWorkflow(
      definition,
      queuePrefix === undefined ? {} : { queuePrefix },
    );
    // A definition registered again unchanged changes nothing: only a new version is a change.
    if (registered.created) {
      const { namespace, name } = splitQualifiedName(definition.name);
      await this.audit(actor, 'workflow.registered', namespace, name, `version ${registered.version}`);
    }
    return registered;
  }

  /** Records who did what (engine/ports/audit-log.ts), now. */
  async audit(
    actor: Actor,
    action: AuditAction,
    namespace: string,
    target: string,
    detail?: string,
  ): Promise<void> {
    const at = this.manager.now();
    // Entries of one millisecond from this process keep their order; other processes' interleave.
    this.auditCount = at === this.auditAt ? this.auditCount + 1 : 0;
    this.auditAt = at;
    const order = (this.auditCount % 0x10000).toString(16).padStart(4, '0');
    const entry: AuditEntry = {
      id: auditIdOf(at, `${order}${randomBytes(2).toString('hex')}`),
      at,
      actor,
      action,
      namespace,
      target,
    };
    if (detail !== undefined) entry.detail = detail;
    await this.store.recordAudit(entry);
  }

  /** A namespace's audit entries, newest first. */
  listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage> {
    return this.store.listAudit(query);
  }

  /** A job's webhook deliveries, oldest first. */
  jobDeliveries(jobId: string): Promise<Delivery[]> {
    return this.store.jobDeliveries(jobId);
  }

  /** A namespace's deliveries in one state, newest first. */
  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    return this.store.listDeliveries(query);
  }

  /**
   * Makes a delivery of `namespace` due now with its attempts anew (a dead letter, or one to post
   * again), recording who asked. `not_found`: no such delivery in the namespace; `conflict`: a pump
   * is posting it, or it changed meanwhile.
   */
  async redeliver(id: string, namespace: string, actor: Actor): Promise<Delivery> {
    const delivery = await this.store.getDelivery(id);
    if (!delivery || delivery.namespace !== namespace)
      throw new ApiError('not_found', `no webhook delivery ${id}`);
    if (delivery.takenAt !== undefined)
      throw new ApiError(
        'conflict',
        `webhook delivery ${id} is being posted now; ask again once it is settled`,
      );
    const now = this.manager.now();
    const { deliveredAt: _delivered, ...rest } = delivery;
    const due: Delivery = {
      ...rest,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      updatedAt: now,
      rev: delivery.rev + 1,
    };
    if (!(await this.store.updateDelivery(due)))
      throw new ApiError('conflict', `webhook delivery ${id} changed meanwhile; ask again`);
    await this.audit(actor, 'delivery.redelivered', namespace, id, `job ${delivery.jobId}`);
    return due;
  }

  getWorkflow(name: string, version?: number): Promise<StoredWorkflow | undefined> {
    return this.store.getWorkflow(name, version);
  }

  listWorkflows(): Promise<WorkflowSummary[]> {
    return this.store.listWorkflows();
  }

  /** A disabled workflow refuses new jobs. @returns false when there is no such workflow */
  async disableWorkflow(name: string, actor: Actor): Promise<boolean> {
    if (!(await this.store.setWorkflowEnabled(name, false))) return false;
    const split = splitQualifiedName(name);
    await this.audit(actor, 'workflow.disabled', split.namespace, split.name);
    return true;
  }

  /** Top-level jobs of a workflow by listed status (`waiting`: waiting for someone). */
  countJobs(workflow: string): Promise<Record<ListedStatus, number>> {
    return this.store.countJobs(workflow);
  }

  /** Running (waiting for someone among them) and paused top-level jobs (a paused job has not ended) of a workflow on one vhost. */
  async countRunningOnVhost(workflow: string, vhost: string): Promise<number> {
    let count = 0;
    for (const status of ['running', 'waiting', 'paused'] as const) {
      let cursor: string | undefined;
      do {
        const page = await this.store.queryJobs({ workflow, vhost, status, limit: PAGE, cursor });
        count += page.jobs.length;
        cursor = page.cursor;
      } while (cursor);
    }
    return count;
  }

  /** A workflow's queued jobs (`maxRunning`), first to start first, up to about 100,000. */
  async queuedJobIds(workflow: string, vhost?: string): Promise<string[]> {
    const queued: JobRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.queryJobs({ workflow, vhost, status: 'queued', limit: PAGE, cursor });
      queued.push(...page.jobs);
      cursor = page.cursor;
    } while (cursor && queued.length < MAX_JOB_IDS);
    return queued.sort((a, b) => (a.queueSeq ?? 0) - (b.queueSeq ?? 0)).map((job) => job.id);
  }

  /** The ids of the jobs a query finds, newest first, all of them up to about 100,000. */
  async jobIds(query: Omit<JobQuery, 'limit' | 'cursor'>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.queryJobs({ ...query, limit: PAGE, cursor });
      ids.push(...page.jobs.map((job) => job.id));
      cursor = page.cursor;
    } while (cursor && ids.length < MAX_JOB_IDS);
    return ids;
  }

  startJob(params: StartJobParams): Promise<{ created: boolean; job: JobRecord }> {
    return this.manager.startJob(params);
  }

  cancel(id: string, actor: Actor): Promise<JobRecord> {
    return this.manager.cancel(id, actor);
  }

  retry(id: string, actor: Actor): Promise<JobRecord> {
    return this.manager.retry(id, actor);
  }

  pause(id: string, actor: Actor): Promise<JobRecord> {
    return this.manager.pause(id, actor);
  }

  resume(id: string, actor: Actor): Promise<JobRecord> {
    return this.manager.resume(id, actor);
  }

  rerun(id: string, from: string, input: JsonObject | undefined, actor: Actor): Promise<JobRecord> {
    return this.manager.rerun(id, from, input, actor);
  }

  /** The job an attempt's callback token names (`not_found` for a token no manager of the store made). */
  callbackJobId(token: string): Promise<string> {
    return this.manager.callbackJobId(token);
  }

  callback(token: string, callback: Callback, actor: Actor): Promise<JobRecord> {
    return this.manager.callback(token, callback, actor);
  }

  signal(id: string, step: string, output: JsonObject, actor: Actor): Promise<SignalOutcome> {
    return this.manager.signal(id, step, output, actor);
  }

  getJob(id: string): Promise<JobRecord | undefined> {
    return this.store.getJob(id);
  }

  queryJobs(query: JobQuery): Promise<JobPage> {
    return this.store.queryJobs(query);
  }

  listChildren(
    parentId: string,
    step: string,
    page: { fromIndex: number; limit: number },
  ): Promise<ChildrenPage> {
    return this.store.listChildren(parentId, step, page);
  }

  async jobDocument(job: JobRecord): Promise<JobDocument> {
    return jobDocument(this.store, job, { signalSteps: await this.signalSteps.of(job) });
  }

  jobVersion(job: JobRecord): Promise<string> {
    return jobVersion(this.store, job);
  }

  async jobSummary(job: JobRecord): Promise<JobSummary> {
    return jobSummary(this.store, job, { signalSteps: await this.signalSteps.of(job) });
  }

  /**
   * Each step queue of a namespace's registered workflows (their latest versions; only `workflow`,
   * a stored name, when given), with the bus's look at it: ready messages and consumers
   * (`GET /api/queues`). Workflows are named in their namespace.
   */
  async queues(namespace: string, workflow?: string): Promise<QueueReport[]> {
    const reports = new Map<string, QueueReport>();
    // A queue under another namespace's prefix is that namespace's: never shown here (a definition
    // registered before the operator set that prefix may still name one).
    const others = (await this.manager.namespaces.list()).filter(
      (settings) => settings.namespace !== namespace && settings.queuePrefix !== undefined,
    );
    const othersQueue = (queue: string) =>
      others.some((settings) => queue.startsWith(settings.queuePrefix as string));
    for (const summary of await this.store.listWorkflows()) {
      if (!inNamespace(summary.name, namespace)) continue;
      if (workflow !== undefined && summary.name !== workflow) continue;
      const stored = await this.store.getWorkflow(summary.name);
      if (!stored) continue;
      const { definition } = stored;
      const steps = [
        ...definition.steps.map((step) => ({ step, task: undefined as string | undefined })),
        ...(definition.tasks ?? []).flatMap((task) => task.steps.map((step) => ({ step, task: task.name }))),
      ];
      const vhosts = definition.vhosts?.length ? definition.vhosts : [null];
      for (const vhost of vhosts) {
        for (const { step, task } of steps) {
          // Signal steps, fan-outs and sub-workflow calls send nothing to a queue of their own.
          const queue = sentQueueOf(step);
          if (queue === undefined) continue;
          if (othersQueue(queue)) continue;
          const key = `${vhost}\u0000${queue}`;
          const report = reports.get(key) ?? { queue, vhost, exists: false, steps: [] };
          const shown = splitQualifiedName(definition.name).name;
          report.steps.push({ workflow: shown, ...(task ? { task } : {}), step: step.name });
          reports.set(key, report);
        }
      }
    }
    const listed = [...reports.values()];
    if (!listed.length) return [];
    if (!this.bus.inspectQueues) {
      return listed.map((report) => ({ ...report, error: 'this bus cannot look at its queues' }));
    }
    const health = await this.bus.inspectQueues(listed.map(({ queue, vhost }) => ({ queue, vhost })));
    const byKey = new Map(health.map((entry) => [`${entry.vhost}\u0000${entry.queue}`, entry]));
    return listed.map((report) => ({
      ...report,
      ...byKey.get(`${report.vhost}\u0000${report.queue}`),
      steps: report.steps,
    }));
  }

  /** The namespaces that hold a workflow or have settings, `default` always among them, in order. */
  async namespaces(): Promise<string[]> {
    const names = new Set([DEFAULT_NAMESPACE]);
    for (const summary of await this.store.listWorkflows()) names.add(namespaceOf(summary.name));
    for (const settings of await this.manager.namespaces.list()) names.add(settings.namespace);
    return [...names].sort();
  }

  /** What the operator set for each namespace that has settings. */
  namespaceSettings(): Promise<NamespaceSettings[]> {
    return this.manager.namespaces.list();
  }

  namespaceSettingsOf(namespace: string): Promise<NamespaceSettings | undefined> {
    return this.manager.namespaces.settings(namespace);
  }

  /** The operator's change of a namespace's queue prefix or vhosts (refused whole when it cannot hold). */
  async changeNamespace(change: NamespaceSettingsChange, actor: Actor): Promise<NamespaceSettings> {
    const settings = await this.manager.namespaces.change(change);
    const changed = [
      change.queuePrefix !== undefined ? `queuePrefix ${change.queuePrefix ?? 'removed'}` : undefined,
      change.vhosts !== undefined ? `vhosts ${change.vhosts?.join(',') ?? 'removed'}` : undefined,
    ].filter((part) => part !== undefined);
    await this.audit(actor, 'namespace.changed', change.namespace, change.namespace, changed.join('; '));
    return settings;
  }

  async health(): Promise<Health> {
    const checks = await Promise.allSettled([this.store.ping(), this.bus.ping()]);
    const [store, bus] = checks.map((check) =>
      check.status === 'fulfilled' ? 'ok' : String((check.reason as Error)?.message ?? check.reason),
    );
    return { store: store as string, bus: bus as string };
  }
}
