import { randomBytes } from 'node:crypto';
import {
  type AttemptRecord,
  type CallLink,
  type FanInit,
  type FollowUp,
  type HistoryEntry,
  type JobRecord,
  type NamespaceSettings,
  type NewDelivery,
  type NotificationBody,
  type OutboxEntry,
  PersistentList,
  type StepRequest,
  type StepState,
  type StoredToken,
  type Timer,
  type TimerKind,
} from '../../engine/index.js';
import { uuid } from './factories.js';

// Values with every optional field set, for the round trips of the store and bus contracts. Each is
// typed `Required<…>` (its nested values too): a field added to one of these types fails tsc here
// until it is given a value, and the contracts then check that every codec carries it.

type ParentLink = NonNullable<JobRecord['parent']>;
type JobError = NonNullable<JobRecord['error']>;

/** One of each variant of a union, by `kind`, each with every optional field set. */
type EveryKind<U extends { kind: string }> = { [K in U['kind']]: Required<Extract<U, { kind: K }>> };

export function aRequestWithEveryField(
  fields: Pick<StepRequest, 'jobId' | 'queue' | 'vhost'>,
): Required<StepRequest> {
  return {
    ...fields,
    step: 'charge',
    correlationId: `${fields.jobId}:charge`,
    attempt: 3,
    body: { orderId: 'o-1001', amount: 12.5, lines: [{ sku: 'pen', qty: 2 }], note: 'é', none: null },
    deadline: 1_900_000_030_000,
    secrets: [{ path: ['auth', 'apiKey'], name: 'payments/api-key' }],
  };
}

/** A child job (it has a parent, so that every field is set) in a state no transition makes: only for round trips. */
export function aJobWithEveryField(parentId: string): Required<JobRecord> {
  const id = uuid();
  const pastAttempt: Required<AttemptRecord> = {
    attempt: 1,
    sentAt: 1_500,
    endedAt: 1_600,
    outcome: 'timeout',
    error: 'no reply within 100ms',
    output: { status: 'pending' },
  };
  const children: Required<NonNullable<StepState['children']>> = { total: 3, concurrency: 2, created: 2 };
  const step: Required<StepState> = {
    name: 'charge',
    status: 'running',
    attempts: 2,
    firstAttempt: 1,
    startedAt: 1_500,
    attemptStartedAt: 1_700,
    endedAt: 1_650,
    deadline: 31_700,
    retryAt: 1_690,
    output: { error: { message: 'card declined' } },
    input: { amount: 12.5 },
    rerunInput: { amount: 13 },
    error: 'card declined',
    handled: true,
    skipReason: 'when was false',
    suspendNote: 'waiting for approval by finance',
    sleepUntil: 61_700,
    iterations: 3,
    job: uuid(),
    pastAttempts: [pastAttempt],
    children,
    seq: 4,
    waitingOn: 1,
  };
  const parent: Required<ParentLink> = { id: parentId, step: 'fan', index: 7, allAtOnce: true };
  const error: Required<JobError> = { step: 'charge', attempt: 1, message: 'card declined', at: 1_650 };
  const calledBy: Required<CallLink> = { id: uuid(), step: 'ship', attempt: 2, chain: ['orders', 'billing'] };
  return {
    id,
    formatVersion: 1,
    treeRoot: uuid(),
    workflow: 'billing',
    version: 3,
    task: 'per-order',
    parent,
    root: parentId,
    vhost: 'tenant-a',
    status: 'aborted',
    input: { orderId: 'o-1001', nested: { list: [1, null, 'x'] } },
    result: { charged: false },
    error,
    createdAt: 1_000,
    updatedAt: 2_000,
    endedAt: 2_000,
    deadline: 3_601_000,
    startAt: 1_200,
    pausedAt: 1_800,
    parentInput: { orders: ['o-1001'] },
    failures: 2,
    followUp: uuid(),
    causedBy: uuid(),
    calledBy,
    holdsSlot: true,
    waitsForSomeone: true,
    attributes: { customer: 'c-42', region: 'eu' },
    queueSeq: 12,
    pendingSignals: [{ step: 'approve', body: { decision: 'yes', note: 'é' }, at: 1_750, bytes: 34 }],
    history: [
      {
        seq: 1,
        at: 1_000,
        kind: 'job.created',
        actor: { kind: 'token', id: 'a1b2c3d4e5f60718', description: 'ci é' },
      },
      {
        seq: 7,
        at: 1_650,
        kind: 'step.attempt_failed',
        step: 'charge',
        attempt: 1,
        message: 'card declined',
        worker: 'billing-7f9c:4242',
      } satisfies Required<Omit<HistoryEntry, 'actor'>>,
      { seq: 8, at: 1_800, kind: 'job.paused', actor: { kind: 'schedule', name: 'nightly' } },
    ],
    rev: 1,
    seq: 4,
    steps: PersistentList.of([step]),
  };
}

/** One follow-up of each kind, for `jobId`, each with every optional field set. */
export function everyFollowUp(jobId: string): FollowUp[] {
  const calledBy: Required<CallLink> = { id: jobId, step: 'ship', attempt: 1, chain: ['orders'] };
  const followUps: EveryKind<FollowUp> = {
    childFinished: {
      kind: 'childFinished',
      parentId: jobId,
      step: 'fan',
      index: 2,
      status: 'completed',
      onlyIfLast: true,
    },
    cancelChildren: { kind: 'cancelChildren', jobId, step: 'fan' },
    pauseChildren: { kind: 'pauseChildren', jobId, step: 'fan' },
    unpauseChildren: { kind: 'unpauseChildren', jobId, step: 'fan' },
    resumeChildren: { kind: 'resumeChildren', jobId, step: 'fan' },
    createChildren: { kind: 'createChildren', jobId, step: 'fan', from: 100 },
    startChildren: { kind: 'startChildren', jobId, step: 'fan', ids: [uuid(), uuid()] },
    startJob: {
      kind: 'startJob',
      jobId,
      treeRoot: uuid(),
      workflow: 'shipping',
      version: 2,
      id: uuid(),
      input: { orderId: 'o-1001' },
      causedBy: jobId,
      calledBy,
      signals: [{ step: 'approve', body: { decision: 'yes' }, at: 1_750, bytes: 18 }],
    },
    callFinished: { kind: 'callFinished', jobId: uuid(), callerId: jobId, step: 'ship', attempt: 1 },
    cancelJob: { kind: 'cancelJob', jobId: uuid() },
    pauseJob: { kind: 'pauseJob', jobId: uuid() },
    resumeJob: { kind: 'resumeJob', jobId: uuid() },
    promoteQueued: { kind: 'promoteQueued', jobId, workflow: 'billing' },
    abortJob: { kind: 'abortJob', jobId, root: uuid(), reason: 'there is no order "o-9999"' },
    notify: { kind: 'notify', jobId, deliveries: [aDeliveryWithEveryField(jobId)] },
  };
  return Object.values(followUps);
}

/** The outbox entries of `job`'s commit: its own request (first), one follow-up of each kind. */
export function everyOutboxEntry(job: JobRecord): OutboxEntry[] {
  const request: Required<Extract<OutboxEntry, { kind: 'request' }>> = {
    id: `${job.id}:${job.rev}:r0`,
    kind: 'request',
    jobId: job.id,
    createdAt: job.updatedAt,
    request: aRequestWithEveryField({ jobId: job.id, queue: 'charge', vhost: job.vhost }),
  };
  return [
    request,
    ...everyFollowUp(job.id).map(
      (followUp, n): Required<Extract<OutboxEntry, { kind: 'followUp' }>> => ({
        id: `${job.id}:${job.rev}:f${n}`,
        kind: 'followUp',
        jobId: job.id,
        createdAt: job.updatedAt,
        followUp,
      }),
    ),
  ];
}

/** One timer of each kind: steps' own, and the job's (step null). */
export function everyTimer(jobId: string): Timer[] {
  const timers: Record<TimerKind, Required<Timer>> = {
    attempt: { jobId, step: 'charge', kind: 'attempt', attempt: 2, at: 31_700 },
    retry: { jobId, step: 'refund', kind: 'retry', attempt: 1, at: 5_000 },
    job: { jobId, step: null, kind: 'job', attempt: 0, at: 3_601_000 },
    start: { jobId: uuid(), step: null, kind: 'start', attempt: 0, at: 1_200 },
  };
  return Object.values(timers);
}

export function aFanInitWithEveryField(parentId: string): Required<FanInit> {
  return { parentId, step: 'fan', total: 5, done: 1, failed: 1, continueOnError: true };
}

export function aTokenWithEveryField(): Required<StoredToken> {
  const hash = randomBytes(32).toString('hex');
  return {
    id: hash.slice(0, 16),
    hash,
    namespace: 'tenant-a',
    role: 'run',
    description: 'the billing team’s workers',
    createdAt: 1_234,
  };
}

export function aNamespaceSettingsWithEveryField(): Required<NamespaceSettings> {
  return {
    namespace: `team-${uuid().slice(0, 8)}`,
    queuePrefix: 'team-a.',
    vhosts: ['team-a', 'shared'],
    updatedAt: 1_234,
  };
}

/** A delivery a transition records, with every optional field of its body set. */
export function aDeliveryWithEveryField(jobId: string): NewDelivery {
  const id = uuid();
  const body: Required<NotificationBody> = {
    id,
    type: 'job.failed',
    time: '2026-11-28T02:00:00.000Z',
    namespace: 'team-b',
    jobId,
    workflow: 'billing',
    version: 3,
    status: 'failed',
    step: 'charge',
    attempt: 2,
    message: 'card declined',
    result: { total: 42 },
    resultOmitted: true,
    error: { step: 'charge', message: 'card declined' },
  };
  return {
    id,
    jobId,
    namespace: 'team-b',
    url: 'https://hooks.example.com/switchyard',
    secret: 'HOOK_KEY',
    body,
  };
}
