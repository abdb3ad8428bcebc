import {
  type Commit,
  type JobRecord,
  type OutboxEntry,
  PersistentList,
  type StepRequest,
  type StepState,
  type WorkflowDefinition,
} from '../../engine/index.js';

let counter = 0;

/** A fresh random v4 UUID (tests only). */
export function uuid(): string {
  return crypto.randomUUID();
}

export function aWorkflow(name = `wf-${++counter}`, steps = ['a', 'b']): WorkflowDefinition {
  return {
    name,
    steps: steps.map((step, index) =>
      index === 0 ? { name: step } : { name: step, depends: [steps[index - 1] as string] },
    ),
  };
}

/** Fields of a test job to set; `steps` given as an array, as stored. */
export type JobOverrides = Partial<Omit<JobRecord, 'steps'>> & { steps?: readonly StepState[] };

/** A running job of steps `a` (running) and `b` (waiting). */
export function aJob(overrides: JobOverrides = {}): JobRecord {
  const id = overrides.id ?? uuid();
  const { steps, ...fields } = overrides;
  return {
    id,
    workflow: 'wf',
    version: 1,
    task: null,
    parent: null,
    root: id,
    vhost: null,
    status: 'running',
    input: { hello: 'world' },
    createdAt: 1_000,
    updatedAt: 1_000,
    rev: 1,
    seq: 0,
    ...fields,
    steps: PersistentList.of(
      steps ?? [
        { name: 'a', status: 'running', attempts: 1, firstAttempt: 1, startedAt: 1_000 },
        { name: 'b', status: 'waiting', attempts: 0, firstAttempt: 1 },
      ],
    ),
  };
}

export function aChild(
  parent: JobRecord,
  step: string,
  index: number,
  overrides: JobOverrides = {},
): JobRecord {
  return aJob({
    task: 'task',
    parent: { id: parent.id, step, index },
    root: parent.root,
    input: { item: index },
    ...overrides,
  });
}

export function aRequest(job: JobRecord, step = 'a', attempt = 1): StepRequest {
  return {
    jobId: job.id,
    step,
    queue: step,
    vhost: null,
    correlationId: `${job.id}:${step}`,
    attempt,
    body: job.input,
  };
}

/** A request to `queue` for a job of its own, as a bus sends it. */
export function aRequestTo(queue: string, overrides: Partial<StepRequest> = {}): StepRequest {
  const jobId = uuid();
  const step = overrides.step ?? 'count';
  return {
    jobId,
    step,
    queue,
    vhost: null,
    correlationId: `${jobId}:${step}`,
    attempt: 1,
    body: { text: 'hello' },
    ...overrides,
  };
}

export function requestEntry(job: JobRecord, id = `${job.id}:${job.rev}:r0`, createdAt = 1_000): OutboxEntry {
  return { id, kind: 'request', jobId: job.id, createdAt, request: aRequest(job) };
}

/** A commit that creates `job` (rev 1). */
export function creating(job: JobRecord, extra: Partial<Commit> = {}): Commit {
  return {
    job,
    expectedRev: 0,
    patch: {
      fields: { ...job, steps: undefined } as Commit['patch']['fields'],
      steps: Object.fromEntries(job.steps.map((step) => [step.name, step])),
    },
    creates: [],
    outbox: [],
    timers: [],
    fanInits: [],
    dropUnsent: false,
    ...extra,
  };
}

/** A commit that moves `before` to `after` (after.rev must be before.rev + 1). */
export function updating(before: JobRecord, after: JobRecord, extra: Partial<Commit> = {}): Commit {
  const steps: Commit['patch']['steps'] = {};
  for (const state of after.steps) {
    const old = before.steps.find((step) => step.name === state.name);
    if (JSON.stringify(state) !== JSON.stringify(old)) steps[state.name] = state;
  }
  const fields: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === 'steps') continue;
    const a = (before as unknown as Record<string, unknown>)[key];
    const b = (after as unknown as Record<string, unknown>)[key];
    if (JSON.stringify(a) !== JSON.stringify(b)) fields[key] = b;
  }
  return {
    job: after,
    expectedRev: before.rev,
    patch: { fields: fields as Commit['patch']['fields'], steps },
    creates: [],
    outbox: [],
    timers: [],
    fanInits: [],
    dropUnsent: false,
    ...extra,
  };
}
