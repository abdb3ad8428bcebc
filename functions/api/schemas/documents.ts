import * as z from 'zod/mini';
import {
  AUDIT_ACTIONS,
  DELIVERY_STATES,
  HISTORY_KINDS,
  LISTED_STATUSES,
  STEP_STATUSES,
} from '../../../engine/index.js';

/*
 * The schemas of what the API answers. Each one given an `id` is a component of the API description
 * (`#/components/schemas/<id>`); the routes name them in their responses (routes/*.ts).
 */

const about = (description: string) => z.meta({ description });
const time = z.string().check(z.meta({ format: 'date-time' }));
const uuid = z.string().check(z.meta({ format: 'uuid' }));
const anyObject = z.record(z.string(), z.unknown());

/** Every refusal: `{"error": {"code", "message"}}`. */
export const ErrorDocument = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .register(z.globalRegistry, { id: 'Error' });

export const JobStatusName = z.enum(LISTED_STATUSES).register(z.globalRegistry, {
  id: 'JobStatus',
  description:
    '`waiting`: running, with a step waiting for someone (a signal step for its signal, or a step its worker suspended; `waitingFor` names them). `pending`: created, not started yet (a fan-out child waiting for its turn). `queued`: a job of a workflow with `maxRunning`, waiting for one of its running jobs to end. `scheduled`: a delayed start (`?at=`) waiting for its time.',
});

const Attempt = z.object({
  attempt: z.int(),
  sentAt: time,
  endedAt: z.optional(time),
  outcome: z.optional(
    z.enum(['completed', 'error', 'timeout', 'rejected', 'cancelled', 'suspended', 'repeated']),
  ),
  output: z.optional(
    anyObject.check(about("A `repeat:` iteration's output, when at most 512 bytes of JSON.")),
  ),
  error: z.optional(z.string()),
});

export const StepDocument = z
  .object({
    status: z.enum(STEP_STATUSES),
    attempt: z.int().check(about("The current attempt's number; 0 before the first.")),
    attempts: z.array(Attempt).check(about('Every attempt, oldest first: how each ended.')),
    startedAt: z.optional(time),
    endedAt: z.optional(time),
    retryAt: z.optional(time),
    deadline: z.optional(time),
    error: z.optional(z.string()),
    input: z.optional(
      anyObject.check(about('What the step was sent, when `input:` or `params` made it differ.')),
    ),
    handled: z.optional(z.literal(true).check(about('Failed with `continueOnError`.'))),
    skipReason: z.optional(z.string()),
    suspendNote: z.optional(
      z
        .string()
        .check(about("A suspended step: what it waits for, in its worker's words (at most 500 characters).")),
    ),
    sleepingUntil: z.optional(time.check(about('A `sleep:` step asleep: when it wakes.'))),
    iterations: z.optional(z.int().check(about('A `repeat:` step: the iterations that ended so far.'))),
    job: z.optional(uuid.check(about('A `workflow:` step: the job its latest attempt runs.'))),
    calledStatus: z.optional(JobStatusName),
    children: z.optional(z.int()),
    childrenDone: z.optional(z.int()),
    childrenFailed: z.optional(z.int()),
  })
  .register(z.globalRegistry, { id: 'Step' });

const WaitingFor = z
  .array(
    z.object({
      step: z.string(),
      kind: z.enum(['signal', 'suspended', 'paused-call']),
      since: time,
      note: z.optional(z.string()),
      job: z.optional(uuid.check(about('`paused-call`: the paused job the step waits for.'))),
    }),
  )
  .check(
    about(
      'Steps waiting for someone: a signal step, a step its worker suspended (both unblocked by POST /api/job/{id}/signal/{step}), a `workflow:` step whose job is paused (unblocked by resuming that job). Derived from the steps; the job stays running. Absent when none.',
    ),
  );

/** What the job document and the summaries say of a job beyond its status, derived from its steps. */
const derivedFacts = {
  startedAt: z.optional(
    time.check(about('When its first step was sent: the run began then (after a delayed start or a queue).')),
  ),
  pausedAt: z.optional(time.check(about('While paused: since when.'))),
  waitingFor: z.optional(WaitingFor),
  retries: z.optional(
    z.int().check(about('Attempts sent again after one failed, over all its steps. Absent when none.')),
  ),
};

export const JobDocument = z
  .object({
    uuid,
    workflow: z.string(),
    namespace: z.optional(z.string()),
    version: z.int(),
    parent: z.nullable(uuid),
    index: z.nullable(z.int()),
    task: z.nullable(z.string().check(about('The task a fan-out child runs.'))),
    status: JobStatusName,
    input: anyObject,
    result: z.optional(anyObject),
    error: z.optional(
      z.object({ step: z.nullable(z.string()), attempt: z.int(), message: z.string(), at: time }),
    ),
    createdAt: time,
    updatedAt: time,
    endedAt: z.optional(time),
    queuePosition: z.optional(
      z
        .number()
        .check(
          about(
            "A queued job: its place in its workflow's `maxRunning` queue (1 starts next); absent past the first 1,000.",
          ),
        ),
    ),
    startAt: z.optional(time.check(about('A delayed start (`?at=`).'))),
    followUp: z.optional(uuid.check(about("The `onFailure` job this job's latest failure started."))),
    causedBy: z.optional(uuid.check(about('For an `onFailure` job: the failed job that started it.'))),
    calledBy: z.optional(z.object({ id: uuid, step: z.string(), attempt: z.int() })),
    pendingSignals: z.optional(
      z
        .array(z.object({ step: z.string(), at: time, body: anyObject }))
        .check(
          about(
            'Signals that came before their step waited for them, oldest first: each is handed to its step when it waits (absent when none).',
          ),
        ),
    ),
    ...derivedFacts,
    steps: z.record(z.string(), StepDocument),
    running: z.array(
      z.object({
        name: z.string(),
        startTime: time,
        attempt: z.int(),
        tasks: z.optional(
          z.array(uuid).check(about('Child job ids of a fan-out step (at most the first 1,000).')),
        ),
      }),
    ),
    completed: z
      .array(
        z.object({
          name: z.string(),
          startTime: time,
          elapsed: z.optional(z.int().check(about('nanoseconds'))),
          message: z.unknown(),
        }),
      )
      .check(
        about(
          'Completion order: `__start__` (the input), each step, and `__end__` (the result) for a completed job.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'Job' });

export const JobSummaryDocument = z
  .object({
    uuid,
    workflow: z.string(),
    namespace: z.optional(z.string()),
    version: z.int(),
    status: JobStatusName,
    createdAt: time,
    updatedAt: time,
    endedAt: z.optional(time),
    startAt: z.optional(time.check(about('A delayed start (`?at=`).'))),
    ...derivedFacts,
    progress: z.object({
      steps: z.int(),
      stepsDone: z.int(),
      children: z.int(),
      childrenDone: z.int(),
    }),
    error: z.optional(
      z
        .object({ step: z.nullable(z.string()), message: z.string() })
        .check(about("A failed job's error; the message cut to 300 characters.")),
    ),
  })
  .register(z.globalRegistry, { id: 'JobSummary' });

const VersionEntry = z.object({ version: z.int(), createdAt: time });

export const WorkflowListingDocument = z.array(
  z.object({
    name: z.string(),
    vhost: z.string(),
    job_count: z.int().check(about('Running and paused top-level jobs.')),
    version: z.int(),
    enabled: z.boolean(),
    description: z.string(),
    jobs: z.record(z.string(), z.int()),
    versions: z.array(VersionEntry),
  }),
);

export const WorkflowJobIdsDocument = z.object({
  running: z.array(uuid),
  queued: z.array(uuid).check(about('Jobs waiting for a `maxRunning` slot, first to start first.')),
  completed: z.array(uuid),
});

export const DefinitionDocument = z.object({
  name: z.string(),
  version: z.int(),
  enabled: z.boolean(),
  createdAt: time,
  definition: anyObject.check(about('The definition as registered (its name plain).')),
  versions: z.array(VersionEntry),
});

export const RegisteredDocument = z.object({ name: z.string(), version: z.int(), created: z.boolean() });

export const DisabledDocument = z.object({ name: z.string(), enabled: z.literal(false) });

export const StartedDocument = z.object({ id: uuid });

export const SignalKeptDocument = z
  .object({
    buffered: z.literal(true),
    message: z.string().check(about('Why the step does not take the signal now.')),
    job: JobDocument,
  })
  .register(z.globalRegistry, { id: 'SignalKept' });

export const SchedulesDocument = z
  .object({
    name: z.string(),
    version: z.int(),
    enabled: z.boolean(),
    schedules: z.array(
      z.object({
        cron: z.string().check(about('5 fields: minute hour day-of-month month day-of-week')),
        timezone: z.string().check(about('IANA time zone')),
        catchUp: z.enum(['all', 'latest']),
        input: anyObject,
        key: z.string().check(about("Names the schedule in each tick's derived job id.")),
        nextTicks: z.array(time).check(about('None while the workflow is disabled.')),
      }),
    ),
    scheduled: z
      .array(z.object({ id: uuid, startAt: time, createdAt: time }))
      .check(about('Jobs waiting for their start time, soonest first (at most 100).')),
    scheduledCount: z.int(),
  })
  .register(z.globalRegistry, {
    id: 'Schedules',
    description: "A workflow's schedules (of its latest version) and its scheduled jobs.",
  });

export const JobPageDocument = z.object({
  jobs: z.array(z.union([uuid, JobSummaryDocument])).check(about('Ids, or summaries with `detail`.')),
  cursor: z.optional(z.string()),
});

export const ChildrenPageDocument = z.object({
  children: z.array(z.object({ uuid, index: z.int(), status: JobStatusName })),
  cursor: z.optional(z.string()),
});

/** Who sent a command, in a job's history and the audit log. */
export const ActorDocument = z
  .object({
    kind: z
      .enum(['root', 'token', 'schedule'])
      .check(
        about(
          '`root`: the root credential (or none, on an open serve); `token`: a scoped token; `schedule`: a cron schedule.',
        ),
      ),
    id: z.optional(z.string().check(about("The token's id (`token`)."))),
    description: z.optional(z.string().check(about("The token's description (`token`)."))),
    name: z.optional(z.string().check(about("The schedule's cron (`schedule`)."))),
  })
  .register(z.globalRegistry, { id: 'Actor' });

export const JobEventsDocument = z
  .object({
    events: z.array(
      z.object({
        seq: z.int().check(about("The entry's number in the job's history, from 1.")),
        at: time,
        kind: z.enum(HISTORY_KINDS),
        step: z.optional(z.string()),
        attempt: z.optional(z.int()),
        message: z.optional(z.string()),
        actor: z.optional(ActorDocument),
        worker: z.optional(z.string().check(about('The worker that replied (`x-worker`, AMQP `app_id`).'))),
      }),
    ),
    dropped: z
      .int()
      .check(
        about(
          'Entries left out of the history between its first and its latest (a job keeps its first entry and its latest 199).',
        ),
      ),
    cursor: z.optional(z.string().check(about('The next page: pass it as `cursor`.'))),
  })
  .register(z.globalRegistry, { id: 'JobEvents' });

export const AuditPageDocument = z
  .object({
    entries: z.array(
      z.object({
        id: z.string(),
        at: time,
        actor: ActorDocument,
        action: z.enum(AUDIT_ACTIONS),
        namespace: z.string(),
        target: z.string().check(about("A workflow's name, a token's id, a namespace.")),
        detail: z.optional(
          z.string().check(about("A registered workflow's version, a token's role, the settings changed.")),
        ),
      }),
    ),
    cursor: z.optional(z.string().check(about('The next page: pass it as `cursor`.'))),
  })
  .register(z.globalRegistry, { id: 'AuditPage' });

export const HealthDocument = z.object({
  status: z.enum(['ok', 'unavailable']),
  store: z.string().check(about('`ok`, or why the store cannot be reached.')),
  bus: z.string().check(about('`ok`, or why the bus cannot be reached.')),
});

export const QueuesDocument = z.object({
  queues: z.array(
    z.object({
      queue: z.string(),
      vhost: z.nullable(z.string()),
      exists: z.boolean().check(about('false: not declared yet (the look never creates it).')),
      ready: z.optional(z.int()),
      inFlight: z.optional(z.int().check(about('SQS'))),
      consumers: z.optional(z.union([z.int(), z.literal('unknown')])),
      error: z.optional(z.string().check(about('Why the broker could not be asked.'))),
      steps: z.array(z.object({ workflow: z.string(), task: z.optional(z.string()), step: z.string() })),
    }),
  ),
});

/** What the operator set for a namespace (workflows.md, "Namespaces"): only the keys set. */
export const NamespaceSettingsDocument = z.object({
  namespace: z.string(),
  queuePrefix: z.optional(z.string().check(about('Every step queue of the namespace starts with it.'))),
  vhosts: z.optional(
    z
      .array(z.string())
      .check(about("The vhosts its workflows may use; absent: the broker URL's (in `default`, any).")),
  ),
  updatedAt: z.optional(time),
});

export const NamespacesDocument = z.object({
  namespaces: z.array(z.string()),
  role: z.enum(['read', 'run', 'admin']),
  scope: z.string().check(about("The token's namespace, or `*`.")),
  settings: z
    .array(NamespaceSettingsDocument)
    .check(about('What the operator set for each namespace listed.')),
});

const TokenListing = z.object({
  id: z.string(),
  namespace: z.string(),
  role: z.enum(['read', 'run', 'admin']),
  description: z.string(),
  createdAt: time,
});

export const TokenCreatedDocument = z.extend(TokenListing, {
  secret: z.string().check(about('Answered here only.')),
});

export const TokensDocument = z.object({ tokens: z.array(TokenListing) });

export const RevokedDocument = z.object({ id: z.string(), revoked: z.literal(true) });

/** A webhook delivery as the API shows it (docs/notifications.md): never its secret's value. */
export const DeliveryDocument = z
  .object({
    id: uuid.check(about('Also the `Switchyard-Delivery` header: receivers dedupe on it.')),
    jobId: uuid,
    type: z.enum(HISTORY_KINDS),
    url: z.string(),
    secret: z.string().check(about('The name of the secret that signs it (never its value).')),
    state: z.enum(DELIVERY_STATES),
    attempts: z.int(),
    createdAt: time,
    updatedAt: time,
    nextAttemptAt: z.optional(time.check(about('While pending: when the next attempt is due.'))),
    deliveredAt: z.optional(time),
    lastStatus: z.optional(z.int().check(about("The receiver's HTTP status at the latest attempt."))),
    lastError: z.optional(z.string().check(about('Why the latest attempt failed.'))),
    posting: z.optional(z.boolean().check(about('A delivery pump is posting it now.'))),
    body: anyObject.check(about('What is posted (docs/notifications.md, "What is posted").')),
  })
  .register(z.globalRegistry, { id: 'Delivery' });

export const JobDeliveriesDocument = z.object({ deliveries: z.array(DeliveryDocument) });

export const DeliveryPageDocument = z.object({
  deliveries: z.array(DeliveryDocument),
  cursor: z.optional(z.string().check(about('The next page: pass it as `cursor`.'))),
});
