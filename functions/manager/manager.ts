import { randomUUID } from 'node:crypto';
import {
  type Actor,
  actsOnRoot,
  applyEvent,
  type Bus,
  type Commit,
  type CompiledWorkflow,
  createJob,
  DEFAULT_FAN_OUT_SLICE,
  DEFAULT_MAX_FAN_OUT,
  DEFAULT_MAX_REPLY_BYTES,
  type DeliveryLog,
  type EngineContext,
  type InboundReply,
  isSameStart,
  isUuid,
  type JobEvent,
  type JobRecord,
  type JobStore,
  type JsonObject,
  type ManagerKeys,
  mayStartJob,
  type NamespaceSettingsStore,
  type NotifyTarget,
  type OutboxEntry,
  parseCorrelationId,
  type Rejection,
  type ReplyEvent,
  type RunningLimit,
  replyEvent,
  type SecretResolver,
  STARTED_MEANWHILE,
  type StoredWorkflow,
  sentQueueOf,
  type Timer,
  type TimerScheduler,
  type Transition,
  type TreeState,
  type WorkflowDefinition,
  type WorkflowRegistry,
} from '../../engine/index.js';
import { silentTelemetry, type Telemetry } from '../telemetry/telemetry.js';
import { type Callback, callbackReply } from './callbacks.js';
import { combineTransitions } from './combine.js';
import { type DeliveryRules, notifyTargetProblems } from './delivery-rules.js';
import { ManagerError } from './errors.js';
import { FanOutPace } from './fan-out-pace.js';
import { FollowUpRunner } from './follow-ups.js';
import { ReplyIsolation } from './isolate-replies.js';
import type { JobEventHub } from './job-event-hub.js';
import type { JobEventInput } from './job-event-input.js';
import { NamespaceAuthority } from './namespace-authority.js';
import { OutboxPump } from './outbox-pump.js';
import type { QueueRules } from './queue-rules.js';
import { ReplyTrust } from './reply-trust.js';
import { RequestRefresher } from './request-refresher.js';
import { RequestTokens } from './request-tokens.js';
import { SignalSchemas, signalSchemasOf } from './signal-schemas.js';
import { signalTargetOf } from './signal-target.js';
import type { StartJobParams } from './start-job-params.js';
import { recordNotes } from './transition-telemetry.js';
import { WorkflowCache } from './workflow-cache.js';

export interface ManagerOptions {
  store: WorkflowRegistry & JobStore & NamespaceSettingsStore & ManagerKeys;
  bus: Bus;
  timers: TimerScheduler;
  telemetry?: Telemetry;
  /** Told each committed history entry while a stream listens (serve's `GET /api/events`). */
  events?: Pick<JobEventHub, 'listening' | 'publish'>;
  /** @default Date.now */
  clock?: () => number;
  /** @default crypto.randomUUID */
  newId?: () => string;
  /** @default 100000 */
  maxFanOut?: number;
  /**
   * Children a fan-out creates per transition (the engine's `fanOutSlice`) at most; with a deadline
   * (`setDeadline`), fewer when the time left holds fewer (fan-out-pace.ts). @default 10000
   */
  fanOutSlice?: number;
  /** The largest reply taken, and the largest request sent. @default 1 MiB */
  maxReplyBytes?: number;
  /** The most bytes of input one fan-out may give its children. @default 256 MiB */
  maxFanOutBytes?: number;
  /** The deployment's rules for step queue names (its reply queue, the SQS prefix). */
  queueRules?: QueueRules;
  /**
   * Take only replies (and dead letters) that carry their request's token (`serve --reply-auth`,
   * deployed `REPLY_AUTH`): anyone who can publish on the broker can otherwise answer any step.
   * @default false
   */
  replyAuth?: boolean;
  /** The most jobs a tree may hold under its root (engine/job/tree-quota.ts). @default 1000000 */
  maxTreeJobs?: number;
  /** Called after a definition is registered (the local host starts consuming new vhosts). */
  onRegistered?: (definition: WorkflowDefinition) => Promise<void>;
  /**
   * The bus lets every request expire after this long (`serve --request-ttl`): the manager then
   * sends again, as the same attempt, each request still awaited when its copy expires
   * (`RequestRefresher`). Undefined: requests do not expire but at their deadline; nothing is re-sent.
   */
  requestTtlMs?: number;
  /** Webhook targets for workflows without a `notify:` of their own (`serve --notify-url`, `NOTIFY_URL`). */
  defaultNotify?: readonly NotifyTarget[];
  /**
   * Where a transition's `notify` follow-ups record their deliveries. @default the store, when it
   * keeps a delivery log (a store without one logs and drops them)
   */
  deliveries?: Pick<DeliveryLog, 'addDeliveries'>;
  /**
   * Where deliveries may go and where their signing secrets are read: a definition whose `notify:`
   * breaks the rules or names a secret not set is refused at registration. @default any host, no secrets
   */
  notifyChecks?: { rules: DeliveryRules; secrets: SecretResolver | undefined };
}

export interface EventOutcome {
  /** The job's state changed. */
  applied: boolean;
  /** No such job. */
  missing?: boolean;
  ignored?: string;
  rejected?: Rejection;
  job?: JobRecord;
  /** A signal the job keeps until its step waits for it: why the step does not take it now. */
  kept?: string;
}

/** What a signal did: taken by its step now, or kept by the job (`kept`: why) until the step waits. */
export interface SignalOutcome {
  job: JobRecord;
  kept?: string;
}

const MAX_ROUNDS = 50;

/**
 * Carries the engine's decisions out through the ports: reads jobs, applies events, stores each
 * transition conditionally (retrying a lost race from a fresh read), then sends what it produced.
 * Every runtime uses it: the local host, and each Lambda handler.
 */
export class Manager {
  readonly store: WorkflowRegistry & JobStore & NamespaceSettingsStore & ManagerKeys;
  readonly bus: Bus;
  /** Each request's token: minted as it is sent, checked on replies when `replyAuth` is on. */
  readonly tokens: RequestTokens;
  private readonly signalSchemas = new SignalSchemas();
  /** Which replies and dead letters may act: all, or with `replyAuth` those with their request's token. */
  private readonly trust: ReplyTrust;
  /** What the operator set for each namespace, applied to registrations and starts. */
  readonly namespaces: NamespaceAuthority;
  readonly telemetry: Telemetry;
  readonly workflows: WorkflowCache;
  private readonly timers: TimerScheduler;
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly maxFanOut: number;
  private readonly defaultNotify: readonly NotifyTarget[] | undefined;
  private readonly notifyChecks: ManagerOptions['notifyChecks'];
  /** Sizes each fan-out slice to the invocation's time left. */
  private readonly pace: FanOutPace;
  private readonly maxReplyBytes: number;
  private readonly maxFanOutBytes: number | undefined;
  private readonly maxTreeJobs: number | undefined;
  private readonly pump: OutboxPump;
  private readonly followUps: FollowUpRunner;
  private readonly isolation: ReplyIsolation;
  private readonly onRegistered?: (definition: WorkflowDefinition) => Promise<void>;
  /** With a request TTL: re-sends the requests still awaited when their copy expires. */
  readonly refresher?: RequestRefresher;
  private readonly events: ManagerOptions['events'];

  constructor(options: ManagerOptions) {
    this.onRegistered = options.onRegistered;
    this.events = options.events;
    this.store = options.store;
    this.bus = options.bus;
    this.timers = options.timers;
    this.telemetry = options.telemetry ?? silentTelemetry;
    this.clock = options.clock ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.maxFanOut = options.maxFanOut ?? DEFAULT_MAX_FAN_OUT;
    this.pace = new FanOutPace({ maxSlice: options.fanOutSlice ?? DEFAULT_FAN_OUT_SLICE, clock: this.clock });
    this.maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.maxFanOutBytes = options.maxFanOutBytes;
    this.maxTreeJobs = options.maxTreeJobs;
    this.defaultNotify = options.defaultNotify;
    this.notifyChecks = options.notifyChecks;
    this.workflows = new WorkflowCache(this.store);
    this.namespaces = new NamespaceAuthority(this.store, options.queueRules ?? {}, this.clock);
    this.tokens = new RequestTokens(this.store);
    this.trust = new ReplyTrust(this.tokens, this.telemetry, options.replyAuth ?? false);
    this.isolation = new ReplyIsolation(
      this.telemetry.logger,
      this.telemetry.metrics,
      (jobId) =>
        this.store.getJobs([jobId]).then(
          () => true,
          () => false,
        ),
      this.clock,
    );
    this.followUps = new FollowUpRunner({
      store: this.store,
      workflows: this.workflows,
      logger: this.telemetry.logger,
      apply: (inputs) => this.apply(inputs),
      startJob: (params) => this.startJob(params),
      runningLimit: (workflow) => this.runningLimitOf(workflow),
      deliveries: options.deliveries ?? deliveryLogOf(options.store),
      clock: this.clock,
    });
    this.pump = new OutboxPump({
      store: this.store,
      bus: this.bus,
      logger: this.telemetry.logger,
      runFollowUps: (entries) => this.followUps.run(entries.map((entry) => entry.followUp)),
      clock: this.clock,
      tokens: this.tokens,
      onSent: (seconds) => this.telemetry.metrics.observe('step_overhead_seconds', seconds),
      onRequestsSent: (requests) => this.refresher?.sent(requests),
      onSendTimed: (requests, ms) => this.pace.sent(requests, ms),
      // A fan-out's next slice that no longer fits in this invocation waits for the next one.
      holdFollowUp: (entry) => entry.followUp.kind === 'createChildren' && !this.pace.mayCreate(),
      onUndeliverable: async (entry, message) => {
        this.telemetry.logger.error('request cannot be delivered', {
          correlationId: entry.request.correlationId,
          message,
        });
        await this.apply([
          {
            jobId: entry.jobId,
            event: { type: 'failure', step: entry.request.step, attempt: entry.request.attempt, message },
          },
        ]);
      },
    });
    if (options.requestTtlMs !== undefined) {
      this.refresher = new RequestRefresher({
        ttlMs: options.requestTtlMs,
        loadJobs: (ids) => this.store.getJobs(ids),
        workflowOf: (job) => this.workflows.get(job.workflow, job.version),
        resend: (entries) => this.pump.enqueue(entries),
        logger: this.telemetry.logger,
        clock: this.clock,
      });
    }
  }

  now(): number {
    return this.clock();
  }

  /**
   * The broker dead-lettered a request as expired: sent again now if its step still waits for that
   * attempt (a step without `timeout`, or one whose deadline is further than the request TTL).
   */
  async requestExpired(correlationId: string, attempt: number | undefined, token?: string): Promise<void> {
    if (!(await this.trust.genuineDeadLetter(correlationId, attempt, token))) return;
    if (!this.refresher) return;
    if (!(await this.refresher.expired(correlationId, attempt))) {
      this.telemetry.metrics.count('dead_letters_ignored_total', { reason: 'not_expired' });
    }
  }

  /**
   * Refuses webhook targets deliveries could not go to (the operator's hosts, https deployed) or
   * whose signing secret is not set: found now rather than as dead letters later.
   */
  async checkNotify(targets: readonly NotifyTarget[]): Promise<void> {
    const checks = this.notifyChecks ?? { rules: {}, secrets: undefined };
    const problems = notifyTargetProblems(targets, checks.rules);
    const names = [...new Set(targets.map((target) => target.secret))];
    const values = checks.secrets ? await checks.secrets.resolve(names) : new Map<string, string>();
    for (const name of names.filter((secret) => !values.has(secret))) {
      problems.push(
        checks.secrets
          ? `"notify": secret ${JSON.stringify(name)} is not set (add it to the secrets this manager reads: docs/notifications.md)`
          : `"notify": secret ${JSON.stringify(name)} cannot be read: this manager was started without secrets (serve --secrets-file or --secrets-env-prefix)`,
      );
    }
    if (problems.length) throw new ManagerError('invalid', problems.join('\n'));
  }

  /**
   * Registers a definition (its name qualified by its namespace) under its namespace's queue prefix:
   * an identical one keeps its version, a different one makes the next. `queuePrefix`: the prefix
   * its document states, which must be the namespace's.
   */
  async registerWorkflow(
    written: WorkflowDefinition,
    options: { queuePrefix?: string } = {},
  ): Promise<{ version: number; created: boolean }> {
    for (const { step, schema } of signalSchemasOf(written)) {
      const problem = this.signalSchemas.schemaProblem(schema);
      if (problem)
        throw new ManagerError('invalid', `step "${step}": "signal.schema" is not a JSON Schema: ${problem}`);
    }
    if (written.notify?.length) await this.checkNotify(written.notify);
    const definition = await this.namespaces.prepare(written, options.queuePrefix);
    const saved = await this.store.saveWorkflow(definition, this.now());
    const queues = new Map<string, { queue: string; vhost: string | null }>();
    const steps = [...definition.steps, ...(definition.tasks ?? []).flatMap((task) => task.steps)];
    for (const vhost of definition.vhosts?.length ? definition.vhosts : [null]) {
      for (const step of steps) {
        const queue = sentQueueOf(step);
        if (queue === undefined) continue;
        queues.set(`${vhost}\u0000${queue}`, { queue, vhost });
      }
    }
    try {
      await this.bus.ensureQueues([...queues.values()]);
    } catch (error) {
      // Not fatal: the bus declares each queue again before its first request.
      this.telemetry.logger.warn('could not declare the step queues yet', {
        workflow: definition.name,
        error,
      });
    }
    await this.onRegistered?.(definition);
    // A raised (or removed) maxRunning lets queued jobs start now rather than at the next job's end.
    if (saved.created) {
      await this.followUps.promoteQueued(definition.name).catch((error: unknown) => {
        // Not fatal: each running job's end promotes queued ones again.
        this.telemetry.logger.warn('could not start the queued jobs the new limit lets run yet', {
          workflow: definition.name,
          error,
        });
      });
    }
    return saved;
  }

  /**
   * A workflow's `maxRunning` (its latest version's) with its counters, read for a decision to start
   * a top-level job; undefined when it has no limit.
   */
  private async runningLimitOf(workflow: string, latest?: StoredWorkflow): Promise<RunningLimit | undefined> {
    const stored = latest ?? (await this.store.getWorkflow(workflow));
    const max = stored?.definition.maxRunning;
    if (max === undefined) return undefined;
    return { max, count: await this.store.getRunningCount(workflow) };
  }

  /**
   * Starts a job. The same id again with the same workflow and input (the same JSON value, whatever
   * its key order) is the same job (`created: false`); with anything different it is a conflict.
   */
  async startJob(params: StartJobParams): Promise<{ created: boolean; job: JobRecord }> {
    const id = (params.id ?? this.newId()).toLowerCase();
    if (!isUuid(id)) throw new ManagerError('invalid', `job id "${params.id}" is not a UUID`);
    const input = params.input ?? {};
    const taken = new Set<string>();
    const seed = randomUUID();
    let tree: TreeState | undefined;
    for (let round = 0; ; round++) {
      if (round >= MAX_ROUNDS) {
        throw new ManagerError(
          'unavailable',
          taken.size
            ? `job ${id}: its children found no free ids`
            : `job ${id}: its workflow's maxRunning counters or its tree kept moving; try again`,
        );
      }
      const started = await this.tryStartJob(id, params, input, { ...this.context(taken, seed), tree });
      if ('taken' in started) for (const childId of started.taken) taken.add(childId);
      else if (!('again' in started)) return started;
      // Refused by its tree (engine/job/tree-quota.ts): decided again on the tree as it is now.
      else if (started.tree) tree = await this.store.getTree(started.tree);
    }
  }

  /** One attempt of `startJob`; `taken`: the ids its children took were held by other jobs. */
  private async tryStartJob(
    id: string,
    params: StartJobParams,
    input: JsonObject,
    context: EngineContext,
  ): Promise<
    { created: boolean; job: JobRecord } | { taken: readonly string[] } | { again: true; tree?: string }
  > {
    let planned: { workflow: CompiledWorkflow; transition: Transition };
    try {
      planned = await this.planNewJob(id, params, input, context);
    } catch (error) {
      // A job id the caller chose may name a job already started: a start sent again answers from
      // that job (or as a conflict) even where a new start would now be refused. One made here
      // cannot, so only then, and only on a refusal, is the job read.
      if (params.id === undefined || !(error instanceof ManagerError) || error.code === 'not_found')
        throw error;
      const existing = await this.store.getJob(id);
      if (!existing) throw error;
      return { created: false, job: this.sameJob(existing, params.workflow, input) };
    }
    const { workflow, transition } = planned;
    if (transition.rejected) throw new ManagerError(transition.rejected.code, transition.rejected.message);
    const commit = this.toCommit(transition);
    const [result] = await this.store.commit([commit]);
    if (result && !result.ok && !result.conflict) return { taken: result.taken };
    if (!result?.ok) {
      const winner = await this.store.getJob(id);
      // Refused by its workflow's maxRunning counters, which moved on, or by its tree: decide again
      // from a new read.
      if (!winner && (commit.limit || commit.tree)) return { again: true, tree: commit.tree?.root };
      if (!winner) throw new ManagerError('unavailable', `job ${id} could not be stored`);
      return { created: false, job: this.sameJob(winner, params.workflow, input) };
    }
    this.telemetry.metrics.count('jobs_started_total', { workflow: workflow.name });
    this.telemetry.logger.info('job started', {
      jobId: id,
      workflow: workflow.name,
      version: workflow.version,
    });
    await this.afterCommit(transition, commit, result.leftOut);
    return { created: true, job: transition.job };
  }

  /** A new job's first transition, or the refusal of a new start (unknown or disabled workflow, vhost). */
  private async planNewJob(
    id: string,
    params: StartJobParams,
    input: JsonObject,
    context: EngineContext,
  ): Promise<{ workflow: CompiledWorkflow; transition: Transition }> {
    const stored = await this.store.getWorkflow(params.workflow, params.version);
    if (!stored) {
      throw new ManagerError(
        'not_found',
        params.version === undefined
          ? `no workflow named "${params.workflow}"`
          : `workflow "${params.workflow}" has no version ${params.version}`,
      );
    }
    if (!stored.enabled)
      throw new ManagerError('conflict', `workflow "${params.workflow}" is disabled: new jobs are refused`);
    const workflow = (await this.workflows.get(stored.name, stored.version)) as CompiledWorkflow;
    const vhost = params.vhost ?? workflow.vhosts[0] ?? null;
    if (params.vhost !== undefined && workflow.vhosts.length && !workflow.vhosts.includes(params.vhost)) {
      throw new ManagerError(
        'invalid',
        `workflow "${workflow.name}" does not run on vhost "${params.vhost}"`,
      );
    }
    // The broker URL's own vhost is every namespace's; any other must be the namespace's to use.
    if (vhost !== null) await this.namespaces.checkVhost(workflow.name, vhost);
    const latest = params.version === undefined ? stored : undefined;
    const runningLimit = await this.runningLimitOf(workflow.name, latest);
    return {
      workflow,
      transition: createJob(
        workflow,
        {
          id,
          input,
          vhost,
          causedBy: params.causedBy,
          calledBy: params.calledBy,
          treeRoot: params.treeRoot,
          startAt: params.startAt,
          actor: params.actor,
          signals: params.signals,
        },
        { ...context, runningLimit, ...(params.refuseOversized ? { oversizedRequests: 'refuse' } : {}) },
      ),
    };
  }

  private sameJob(existing: JobRecord, workflow: string, input: JsonObject): JobRecord {
    if (!isSameStart(existing, workflow, input)) {
      throw new ManagerError(
        'conflict',
        `job ${existing.id} already exists with a different workflow or input`,
      );
    }
    return existing;
  }

  /** The reply handler's core: turns worker messages into events and stores their effects. */
  async handleReplies(replies: readonly InboundReply[]): Promise<void> {
    const events: JobEventInput[] = [];
    const taken = await this.trust.authenticated(replies);
    for (const reply of taken) {
      const parsed = this.readReply(reply);
      if (parsed.ok) {
        events.push({ jobId: parsed.jobId, event: parsed.event });
      } else {
        this.telemetry.metrics.count('replies_malformed_total');
        this.telemetry.logger.warn('malformed reply ignored', {
          correlationId: parsed.correlationId,
          reason: parsed.reason,
        });
      }
    }
    this.telemetry.metrics.observe('reply_batch_size', replies.length);
    // On the pump's stopwatch (performance.now): a step's overhead at low load is about a millisecond.
    const receivedAt = performance.now();
    const outcomes = await this.isolation.apply(events, (inputs) => this.apply(inputs, { receivedAt }));
    outcomes.forEach((outcome, index) => {
      // Undefined: dropped, and already logged and counted as such.
      const { jobId, event } = events[index] as JobEventInput;
      if (this.refresher && outcome && !outcome.missing && 'step' in event && event.step !== undefined) {
        const correlationId = `${jobId}:${event.step}`;
        if (event.type === 'heartbeat') this.refresher.touch(correlationId, event.attempt);
        else if (outcome.applied) this.refresher.forget(correlationId);
      }
      if (!outcome || outcome.applied) return;
      const reason = outcome.missing ? 'unknown job' : (outcome.ignored ?? 'not awaited');
      this.telemetry.metrics.count('replies_ignored_total', {
        reason: outcome.missing ? 'unknown_job' : 'not_awaited',
      });
      this.telemetry.logger.info('reply ignored', {
        jobId,
        step: 'step' in event ? event.step : undefined,
        attempt: 'attempt' in event ? event.attempt : undefined,
        reason,
      });
    });
  }

  /** A reply as an event; one that cannot even be read is malformed, never a reason to fail the batch. */
  private readReply(reply: InboundReply): ReplyEvent {
    try {
      return replyEvent(reply, this.maxReplyBytes);
    } catch (error) {
      return {
        ok: false,
        reason: `the reply cannot be read: ${String(error)}`,
        correlationId: reply.correlationId,
      };
    }
  }

  async fireTimers(timers: readonly Timer[]): Promise<void> {
    await this.apply(timers.map((timer) => ({ jobId: timer.jobId, event: { type: 'timer', timer } })));
  }

  /** A request that exhausted its queue's receive count fails its attempt (if it is still the current one). */
  async deadLettered(
    correlationId: string,
    attempt: number | undefined,
    detail: string,
    token?: string,
  ): Promise<void> {
    if (!(await this.trust.genuineDeadLetter(correlationId, attempt, token))) return;
    const parsed = replyEvent({
      correlationId,
      body: JSON.stringify({ error: detail }),
      type: 'error',
      attempt,
    });
    if (!parsed.ok) {
      this.telemetry.logger.warn('dead-lettered message without a usable correlation id', { correlationId });
      return;
    }
    const event: JobEvent =
      parsed.event.type === 'failure' ? { ...parsed.event, rejected: true } : parsed.event;
    await this.apply([{ jobId: parsed.jobId, event }]);
  }

  /**
   * A reply the manager died with in hand too often (reply-policy.ts): its attempt fails with
   * `reason`, not to be retried, and the reply itself is never read (reading it may be what killed
   * the process). One that names no job changes nothing.
   */
  async failPoisonedReply(
    correlationId: string | undefined,
    attempt: number | undefined,
    reason: string,
    token?: string,
  ): Promise<void> {
    // With reply authentication on, a forged reply that kills the manager is kept aside like any
    // other, but it fails no attempt: only the request's own token may answer it.
    if (correlationId === undefined || !(await this.trust.genuineDeadLetter(correlationId, attempt, token)))
      return;
    const parsed = replyEvent({
      correlationId,
      body: JSON.stringify({ error: reason }),
      type: 'error',
      attempt,
      retryable: false,
    });
    if (!parsed.ok) return;
    await this.apply([{ jobId: parsed.jobId, event: parsed.event }]);
  }

  /** The job of the attempt a callback token vouches for. */
  async callbackJobId(token: string): Promise<string> {
    await this.tokens.ready();
    const claim = this.tokens.verify(token);
    const target = claim && parseCorrelationId(claim.correlationId);
    if (!target) throw new ManagerError('not_found', 'no attempt has this callback token');
    return target.jobId;
  }

  /**
   * `POST /api/callback/{token}`: acts on the attempt the token vouches for exactly as its worker's
   * reply would (the same reading and the same engine event), from the moment the request was sent
   * until the attempt ends. A forged token names no attempt (`not_found`); a callback the attempt no
   * longer waits for (it ended, or another answer came first) is refused with the engine's reason.
   */
  async callback(token: string, callback: Callback, actor?: Actor): Promise<JobRecord> {
    await this.tokens.ready();
    const claim = this.tokens.verify(token);
    if (!claim) throw new ManagerError('not_found', 'no attempt has this callback token');
    const parsed = this.readReply(callbackReply(claim, token, callback));
    if (!parsed.ok) throw new ManagerError('invalid', parsed.reason);
    // A callback answers its own attempt only: a result for an attempt that ended completes nothing.
    const answered = actor && 'step' in parsed.event ? { ...parsed.event, actor } : parsed.event;
    const event: JobEvent = answered.type === 'reply' ? { ...answered, exactAttempt: true } : answered;
    const [outcome] = await this.apply([{ jobId: parsed.jobId, event }], { receivedAt: this.now() });
    if (!outcome || outcome.missing) throw new ManagerError('not_found', `no job ${parsed.jobId}`);
    if (outcome.rejected) throw new ManagerError(outcome.rejected.code, outcome.rejected.message);
    if (this.refresher && 'step' in event && event.step !== undefined) {
      if (event.type === 'heartbeat') this.refresher.touch(parsed.correlationId, claim.attempt);
      else if (outcome.applied) this.refresher.forget(parsed.correlationId);
    }
    if (!outcome.applied) {
      throw new ManagerError(
        'conflict',
        `attempt ${claim.attempt} of ${parsed.correlationId} does not take this callback: ${outcome.ignored ?? 'not awaited'}`,
      );
    }
    return outcome.job as JobRecord;
  }

  /** Cancelling a child cancels the whole top-level job it belongs to. */
  async cancel(id: string, actor?: Actor): Promise<JobRecord> {
    return this.command(await this.targetOf(id, 'cancel'), { type: 'cancel', actor });
  }

  /**
   * Pausing (or resuming) a child pauses (or resumes) the whole top-level job it belongs to, as
   * cancel and retry do: its children follow (follow-ups.ts), so no child runs under a paused job.
   */
  async pause(id: string, actor?: Actor): Promise<JobRecord> {
    return this.command(await this.targetOf(id, 'pause'), { type: 'pause', actor });
  }

  async resume(id: string, actor?: Actor): Promise<JobRecord> {
    return this.command(
      await this.targetOf(id, 'resume'),
      { type: 'resume', actor },
      { refuseOversized: true },
    );
  }

  /** An ended top-level job runs again from a step, with a new input for it if given (engine/job/rerun.ts). */
  async rerun(id: string, from: string, input?: JsonObject, actor?: Actor): Promise<JobRecord> {
    // A signal step's new input is its new signal: its schema applies.
    if (input !== undefined) await this.checkSignal(id, from, input);
    const event: JobEvent =
      input === undefined ? { type: 'rerun', from, actor } : { type: 'rerun', from, input, actor };
    return this.command(id, event, { refuseOversized: true });
  }

  async retry(id: string, actor?: Actor): Promise<JobRecord> {
    return this.command(
      await this.targetOf(id, 'retry'),
      { type: 'retry', actor },
      { refuseOversized: true },
    );
  }

  /**
   * A signal for `path`: a step of the job, or, through `workflow:` steps and fan-out children
   * (`publish/approve`, `review[2]/approve`), a step of a job beneath it (engine/job/step-path.ts).
   */
  async signal(id: string, path: string, output: JsonObject, actor?: Actor): Promise<SignalOutcome> {
    for (let round = 1; ; round++) {
      const target = await signalTargetOf(this.store, this.workflows, id, path);
      this.checkSchema(target.for.workflow, target.for.task, target.for.step, output);
      try {
        const outcome = await this.commandOutcome(
          target.jobId,
          { type: 'signal', step: target.step, output, actor },
          { refuseOversized: true },
        );
        const job = outcome.job as JobRecord;
        return outcome.kept === undefined ? { job } : { job, kept: outcome.kept };
      } catch (error) {
        // The workflow: step the path goes through started its called job since the path was read:
        // the signal goes there, read again (bounded: a step starts its job once per attempt).
        const moved =
          error instanceof ManagerError &&
          error.code === 'conflict' &&
          error.message.endsWith(STARTED_MEANWHILE) &&
          round < 3;
        if (!moved) throw error;
      }
    }
  }

  /** A signal step's `signal.schema`: a body that does not meet it is refused, naming each problem. */
  private async checkSignal(jobId: string, step: string, body: JsonObject): Promise<void> {
    const job = await this.store.getJob(jobId);
    const workflow = job && (await this.workflows.get(job.workflow, job.version));
    if (!job || !workflow) return; // the command says there is no such job
    this.checkSchema(workflow, job.task, step, body);
  }

  private checkSchema(workflow: CompiledWorkflow, task: string | null, step: string, body: JsonObject): void {
    const schema = this.signalSchemas.schemaOf(workflow, task, step);
    const problem = schema && this.signalSchemas.problem(schema, body);
    if (problem)
      throw new ManagerError('invalid', `the signal for step "${step}" does not meet its schema: ${problem}`);
  }

  /** The job a command acts on: the job's root for those that act on the whole tree (engine). */
  private async targetOf(id: string, command: 'cancel' | 'pause' | 'resume' | 'retry'): Promise<string> {
    if (!actsOnRoot(command)) return id;
    const job = await this.store.getJob(id);
    if (!job) throw new ManagerError('not_found', `no job ${id}`);
    return job.root;
  }

  private async command(
    jobId: string,
    event: JobEvent,
    options: { refuseOversized?: boolean } = {},
  ): Promise<JobRecord> {
    return (await this.commandOutcome(jobId, event, options)).job as JobRecord;
  }

  private async commandOutcome(
    jobId: string,
    event: JobEvent,
    options: { refuseOversized?: boolean } = {},
  ): Promise<EventOutcome> {
    const [outcome] = await this.apply([{ jobId, event, ...options }]);
    if (!outcome || outcome.missing) throw new ManagerError('not_found', `no job ${jobId}`);
    if (outcome.rejected) throw new ManagerError(outcome.rejected.code, outcome.rejected.message);
    return outcome;
  }

  /**
   * Applies events to jobs: the events of one job one after the other, as one conditional write; all
   * jobs' writes in one store call (one SQLite transaction). A job whose write lost a race is read
   * again and its events applied anew.
   */
  async apply(
    inputs: readonly JobEventInput[],
    options: { receivedAt?: number } = {},
  ): Promise<EventOutcome[]> {
    const outcomes: EventOutcome[] = new Array(inputs.length);
    let pending = inputs.map((input, index) => ({ ...input, index }));
    /** By job: ids its children found held by other jobs, in an earlier round. */
    const taken = new Map<string, Set<string>>();
    /** By job: its tree, read after a commit that grew it was refused (engine/job/tree-quota.ts). */
    const trees = new Map<string, TreeState>();
    const seed = randomUUID();
    for (let round = 0; pending.length; round++) {
      if (round >= MAX_ROUNDS) throw new Error(`events for ${pending.length} jobs kept conflicting`);
      const byJob = new Map<string, typeof pending>();
      for (const item of pending) {
        const list = byJob.get(item.jobId);
        if (list) list.push(item);
        else byJob.set(item.jobId, [item]);
      }
      const jobs = await this.store.getJobs([...byJob.keys()]);
      const limits = await this.runningLimitsFor(byJob, jobs);
      const planned: { items: typeof pending; transition: Transition; commit: Commit; afterSeq: number }[] =
        [];
      const later: typeof pending = [];
      for (const [jobId, items] of byJob) {
        let state = jobs.get(jobId);
        const workflow = state && (await this.workflows.get(state.workflow, state.version));
        if (!state || !workflow) {
          for (const item of items) outcomes[item.index] = { applied: false, missing: true };
          continue;
        }
        let combined: Transition | undefined;
        const afterSeq = state.history?.at(-1)?.seq ?? 0;
        const context = {
          ...this.context(taken.get(jobId), seed),
          runningLimit: limits.get(state.workflow),
          tree: trees.get(jobId) ?? items.find((item) => item.tree)?.tree,
        };
        for (const [n, item] of items.entries()) {
          const transition = applyEvent(
            workflow,
            state,
            item.event,
            item.refuseOversized ? { ...context, oversizedRequests: 'refuse' } : context,
          );
          if (combined?.limit && transition.limit) {
            // One commit checks one change to the counters: this event and the rest go in the next round.
            later.push(...items.slice(n));
            items.splice(n);
            break;
          }
          outcomes[item.index] = {
            applied: transition.changed,
            ignored: transition.ignored,
            rejected: transition.rejected,
            job: transition.job,
          };
          if (item.event.type === 'signal') {
            const kept = transition.notes.find(
              (note) => note.kind === 'signalBuffered' && note.jobId === jobId,
            );
            if (kept) (outcomes[item.index] as EventOutcome).kept = kept.message ?? 'kept';
          }
          if (!transition.changed) continue;
          combined = combined ? combineTransitions(combined, transition) : transition;
          state = transition.job;
        }
        if (combined)
          planned.push({ items, transition: combined, commit: this.toCommit(combined), afterSeq });
      }
      pending = later;
      if (!planned.length) continue;
      const committing = this.now();
      const results = await this.store.commit(planned.map((plan) => plan.commit));
      const created = planned.reduce((sum, plan) => sum + plan.commit.creates.length, 0);
      if (created) {
        const ms = this.now() - committing;
        this.pace.committed(created, ms);
        this.telemetry.logger.debug('children created', { children: created, commitMs: ms });
      }
      for (const [k, result] of results.entries()) {
        const plan = planned[k] as (typeof planned)[number];
        if (result.ok) {
          await this.afterCommit(
            plan.transition,
            plan.commit,
            result.leftOut,
            options.receivedAt,
            plan.afterSeq,
          );
          continue;
        }
        const jobId = plan.transition.job.id;
        if (!result.conflict) {
          const ids = taken.get(jobId) ?? new Set<string>();
          for (const id of result.taken) ids.add(id);
          taken.set(jobId, ids);
        } else if (plan.commit.tree) {
          trees.set(jobId, await this.store.getTree(plan.commit.tree.root));
        }
        pending.push(...plan.items);
      }
    }
    return outcomes;
  }

  /**
   * The `maxRunning` limits of the workflows of the top-level jobs that events may start (`promote`,
   * `retry`, a delayed start's `start` timer): read anew in every round, as the counters they hold
   * move with every start and end.
   */
  private async runningLimitsFor(
    byJob: ReadonlyMap<string, readonly JobEventInput[]>,
    jobs: ReadonlyMap<string, JobRecord>,
  ): Promise<Map<string, RunningLimit | undefined>> {
    const limits = new Map<string, RunningLimit | undefined>();
    for (const [jobId, items] of byJob) {
      const job = jobs.get(jobId);
      if (!job || job.parent !== null || limits.has(job.workflow)) continue;
      if (items.some(({ event }) => mayStartJob(event)))
        limits.set(job.workflow, await this.runningLimitOf(job.workflow));
    }
    return limits;
  }

  /**
   * What the engine needs from outside. `seed` (random, one per call that may retry) re-derives a
   * child id found `taken`: no caller can know it in advance, unlike the ids derived without it.
   */
  private context(taken: ReadonlySet<string> | undefined, seed: string): EngineContext {
    return {
      now: this.now(),
      takenIds: taken,
      childIdSeed: seed,
      maxFanOut: this.maxFanOut,
      // At least one child: a fan-out that starts near the deadline creates one, the rest in slices later.
      fanOutSlice: Math.max(1, this.pace.slice()),
      maxRequestBytes: this.maxReplyBytes,
      maxFanOutBytes: this.maxFanOutBytes,
      maxTreeJobs: this.maxTreeJobs,
      defaultNotify: this.defaultNotify,
    };
  }

  private toCommit(transition: Transition): Commit {
    const now = this.now();
    const prefix = `${transition.job.id}:${transition.job.rev}`;
    const outbox: OutboxEntry[] = [];
    transition.requests.forEach((request, n) => {
      outbox.push({
        id: entryId(prefix, 'r', n),
        kind: 'request',
        jobId: request.jobId,
        createdAt: now,
        request,
      });
    });
    transition.followUps.forEach((followUp, n) => {
      outbox.push({
        id: entryId(prefix, 'f', n),
        kind: 'followUp',
        jobId: transition.job.id,
        createdAt: now,
        followUp,
      });
    });
    return {
      job: transition.job,
      expectedRev: transition.expectedRev,
      patch: transition.patch,
      creates: transition.creates,
      outbox,
      timers: transition.timers,
      fanInits: transition.fanInits,
      childOutcome: transition.childOutcome,
      dropUnsent: transition.dropUnsent,
      limit: transition.limit,
      tree: transition.tree,
    };
  }

  /** The job's compiled workflow (cached: the transition just used it), for its metrics' queue labels. */
  private async workflowForLabels(job: JobRecord): Promise<CompiledWorkflow | undefined> {
    try {
      return await this.workflows.get(job.workflow, job.version);
    } catch {
      return undefined;
    }
  }

  /** `receivedAt`: when the replies that caused it arrived, to measure the manager's overhead per step. */
  private async afterCommit(
    transition: Transition,
    commit: Commit,
    leftOut: readonly string[] | undefined,
    receivedAt?: number,
    afterSeq = 0,
  ): Promise<void> {
    if (this.events?.listening) {
      this.events.publish(transition.job, afterSeq);
      for (const child of commit.creates) this.events.publish(child, 0);
    }
    recordNotes(
      this.telemetry,
      transition.notes,
      transition.job,
      await this.workflowForLabels(transition.job),
    );
    if (transition.dropUnsent) this.pump.drop(transition.job.id);
    const sets: Timer[] = [];
    const clears: { jobId: string; step: string | null }[] = [];
    for (const change of transition.timers) {
      if (change.op === 'set') sets.push(change.timer);
      else clears.push(change.key);
    }
    if (clears.length) await this.timers.disarm(clears);
    if (sets.length) await this.timers.arm(sets);
    const outbox = leftOut?.length
      ? commit.outbox.filter((entry) => !leftOut.includes(entry.id))
      : commit.outbox;
    this.pump.enqueue(outbox, receivedAt);
  }

  /** Loads what the store still has to send or do (after a crash), and hands it to the pump. */
  async recover(options: { createdBefore?: number } = {}): Promise<number> {
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await this.store.pendingOutbox({
        limit: 5000,
        cursor,
        createdBefore: options.createdBefore,
      });
      this.pump.enqueue(page.entries);
      count += page.entries.length;
      cursor = page.cursor;
    } while (cursor);
    if (count) this.telemetry.logger.info('recovered outbox entries', { count });
    return count;
  }

  /**
   * The deadline of the invocation this manager now serves (ms since the epoch, the margin for
   * answering taken off), or undefined (serve: no deadline). Fan-out slices are sized to fit before
   * it, and a slice that does not fit is held until a later call gives more time.
   */
  setDeadline(deadline: number | undefined): void {
    this.pace.setDeadline(deadline);
    this.pump.resume();
  }

  /** Resolves when every request is sent and every follow-up done (Lambda handlers await this). */
  drain(): Promise<void> {
    return this.pump.drain();
  }

  get outboxPending(): number {
    return this.pump.pending;
  }

  stop(): void {
    this.pump.stop();
    this.refresher?.stop();
  }
}

/**
 * `<job id>:<rev>:<r|f><n>` as one flat string: a template literal would keep a tree of pieces per
 * id, several times the size, and a 100,000-child fan-out holds that many entries until they are sent.
 */
function entryId(prefix: string, kind: 'r' | 'f', n: number): string {
  return [prefix, ':', kind, n].join('');
}

/** The store's delivery log, when it keeps one (a test's partial store may not). */
function deliveryLogOf(store: object): Pick<DeliveryLog, 'addDeliveries'> | undefined {
  return 'addDeliveries' in store ? (store as Pick<DeliveryLog, 'addDeliveries'>) : undefined;
}
