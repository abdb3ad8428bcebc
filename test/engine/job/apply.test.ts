import { describe, expect, it } from 'vitest';
import { applyEvent, createJob, type JobRecord } from '../../../engine/index.js';
import { NESTED_WORKFLOW } from '../../support/nested-workflow.js';
import { compiled, T0 } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const ID = '6a1f9d3e-0c55-4c4e-9a0b-5d2f8e7c1b20';
const WORKFLOW = compiled(`workflows:
  - name: diamond
    timeout: 1h
    steps:
      - name: s1
        timeout: 30s
      - name: s2
        depends: [ s1 ]
      - name: s3
        depends: [ s1 ]
      - name: s4
        depends: [ s2, s3 ]
`);

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

describe('Function: createJob', () => {
  it('creates the job (expected revision 0) with requests for its first steps and its timers', () => {
    const transition = createJob(WORKFLOW, { id: ID, input: { a: 1 } }, { now: T0 });
    expect(transition.expectedRev).toBe(0);
    expect(transition.job).toMatchObject({
      id: ID,
      root: ID,
      rev: 1,
      status: 'running',
      deadline: T0 + 3_600_000,
    });
    expect(Object.keys(transition.patch.steps)).toEqual(['s1', 's2', 's3', 's4']);
    expect(transition.requests).toEqual([
      {
        jobId: ID,
        step: 's1',
        queue: 's1',
        vhost: null,
        correlationId: `${ID}:s1`,
        attempt: 1,
        body: { a: 1 },
        deadline: T0 + 30_000,
      },
    ]);
    expect(transition.timers).toEqual([
      { op: 'set', timer: { jobId: ID, step: null, kind: 'job', attempt: 0, at: T0 + 3_600_000 } },
      { op: 'set', timer: { jobId: ID, step: 's1', kind: 'attempt', attempt: 1, at: T0 + 30_000 } },
    ]);
  });
});

describe('Function: applyEvent', () => {
  const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
  const job: JobRecord = deepFreeze(start.job);

  it('returns a delta conditional on the revision it read, without touching its input', () => {
    const transition = applyEvent(
      WORKFLOW,
      job,
      { type: 'reply', step: 's1', output: { x: 1 } },
      { now: T0 + 5 },
    );
    expect(transition.changed).toBe(true);
    expect(transition.expectedRev).toBe(1);
    expect(transition.job.rev).toBe(2);
    expect(Object.keys(transition.patch.steps).sort()).toEqual(['s1', 's2', 's3']);
    const { history, ...fields } = transition.patch.fields;
    expect(fields).toEqual({ rev: 2, seq: 1, updatedAt: T0 + 5 });
    expect(history?.map((entry) => entry.kind).slice(-3)).toEqual([
      'step.completed',
      'step.requested',
      'step.requested',
    ]);
    expect(transition.requests.map((request) => request.step)).toEqual(['s2', 's3']);
    expect(transition.timers).toEqual([{ op: 'clear', key: { jobId: ID, step: 's1' } }]);
    expect(stepsOf(job).s1?.status).toBe('running');
  });

  it('is deterministic: the same state and event give the same transition', () => {
    const event = { type: 'reply' as const, step: 's1', output: { x: 1 } };
    expect(applyEvent(WORKFLOW, job, event, { now: T0 + 5 })).toEqual(
      applyEvent(WORKFLOW, job, event, { now: T0 + 5 }),
    );
  });

  it('changes nothing, and says why, for a reply that is not awaited', () => {
    const transition = applyEvent(WORKFLOW, job, { type: 'reply', step: 's4', output: {} }, { now: T0 });
    expect(transition).toMatchObject({
      changed: false,
      ignored: 'step is waiting',
      requests: [],
      timers: [],
      creates: [],
    });
    expect(transition.job).toBe(job);
  });

  it('refuses commands that do not fit the state', () => {
    const transition = applyEvent(WORKFLOW, job, { type: 'retry' }, { now: T0 });
    expect(transition.changed).toBe(false);
    expect(transition.rejected).toEqual({
      code: 'conflict',
      message: 'only a failed, cancelled or aborted job can be retried; this one is running',
    });
  });

  it('ignores a timer that no longer matches the state', () => {
    const timer = { jobId: ID, step: 's1', kind: 'attempt' as const, attempt: 1, at: T0 + 30_000 };
    expect(applyEvent(WORKFLOW, job, { type: 'timer', timer }, { now: T0 + 29_999 }).ignored).toBe(
      'stale attempt timer',
    );
    expect(
      applyEvent(WORKFLOW, job, { type: 'timer', timer: { ...timer, attempt: 7 } }, { now: T0 + 40_000 })
        .ignored,
    ).toBe('stale step timer');
    expect(applyEvent(WORKFLOW, job, { type: 'timer', timer }, { now: T0 + 30_000 }).changed).toBe(true);
  });

  it('drops what it dispatched when the job stops in the same transition', () => {
    const cancel = applyEvent(WORKFLOW, job, { type: 'cancel' }, { now: T0 + 1 });
    expect(cancel.dropUnsent).toBe(true);
    expect(cancel.requests).toEqual([]);
    expect(cancel.timers).toEqual([
      { op: 'clear', key: { jobId: ID, step: null } },
      { op: 'clear', key: { jobId: ID, step: 's1' } },
    ]);
  });
});

describe('Fan-out children: which finished child the parent must hear of', () => {
  const fanOut = (concurrency: string) =>
    compiled(`workflows:
  - name: fan
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
${concurrency}        steps:
          - name: work
`);
  const finishChildren = (workflow: ReturnType<typeof compiled>, outcome: 'reply' | 'failure') => {
    const parent = createJob(workflow, { id: ID, input: { items: [1, 2, 3] } }, { now: T0 });
    return parent.creates
      .filter((child) => child.status === 'running')
      .flatMap((child) => {
        const event =
          outcome === 'reply'
            ? ({ type: 'reply', step: 'work', output: {} } as const)
            : ({ type: 'failure', step: 'work', message: 'broken' } as const);
        return applyEvent(workflow, child, event, { now: T0 + 1 }).followUps;
      });
  };

  it('marks a completed child of a fan-out that started all its children as needed only if it is the last', () => {
    const followUps = finishChildren(fanOut(''), 'reply');
    expect(followUps).toHaveLength(3);
    expect(followUps.every((f) => f.kind === 'childFinished' && f.onlyIfLast === true)).toBe(true);
  });

  it('always needs a failed child, and every child of a limited fan-out (it starts the next one)', () => {
    expect(
      finishChildren(fanOut(''), 'failure').map((f) => f.kind === 'childFinished' && f.onlyIfLast),
    ).toEqual([undefined, undefined, undefined]);
    const limited = finishChildren(fanOut('        concurrency: 2\n'), 'reply');
    expect(limited).toHaveLength(2);
    expect(limited.map((f) => f.kind === 'childFinished' && f.onlyIfLast)).toEqual([undefined, undefined]);
  });
});

describe('Fan-out children: a large fan-out creates them slice by slice', () => {
  const workflow = compiled(`workflows:
  - name: fan
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`);
  const context = { now: T0, fanOutSlice: 2 };
  const start = () => createJob(workflow, { id: ID, input: { items: [10, 11, 12, 13, 14] } }, context);
  const next = (job: JobRecord, from: number) =>
    applyEvent(workflow, job, { type: 'createChildren', step: 'each', from }, context);

  it('creates the first slice with the counters for every child, then one slice per createChildren event', () => {
    const first = start();
    expect(first.creates.map((child) => [child.parent?.index, child.status, child.input])).toEqual([
      [0, 'running', { item: 10 }],
      [1, 'running', { item: 11 }],
    ]);
    expect(first.requests.map((request) => request.jobId)).toEqual(first.creates.map((child) => child.id));
    expect(first.fanInits).toEqual([{ parentId: ID, step: 'each', total: 5, done: 0, failed: 0 }]);
    expect(first.followUps).toEqual([{ kind: 'createChildren', jobId: ID, step: 'each', from: 2 }]);
    expect(stepsOf(first.job).each?.children).toEqual({ total: 5, concurrency: 5, created: 2 });

    const second = next(first.job, 2);
    expect(second.creates.map((child) => [child.parent?.index, child.status])).toEqual([
      [2, 'running'],
      [3, 'running'],
    ]);
    expect(second.fanInits).toEqual([]);
    expect(second.followUps).toEqual([{ kind: 'createChildren', jobId: ID, step: 'each', from: 4 }]);
    expect(second.patch.steps.each?.children).toEqual({ total: 5, concurrency: 5, created: 4 });

    const last = next(second.job, 4);
    expect(last.creates.map((child) => child.parent?.index)).toEqual([4]);
    expect(last.followUps).toEqual([]);
    expect(stepsOf(last.job).each?.children).toEqual({ total: 5, concurrency: 5 });
  });

  it("gives a continueOnError fan-out's counters its continueOnError, for a store that tells a fan-in by them", () => {
    const tolerant = compiled(`workflows:
  - name: fan
    steps:
      - name: each
        task: per-item
        continueOnError: true
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`);
    const created = createJob(tolerant, { id: ID, input: { items: [10, 11] } }, context);
    expect(created.fanInits).toEqual([
      { parentId: ID, step: 'each', total: 2, done: 0, failed: 0, continueOnError: true },
    ]);
  });

  it('creates the same children, with the same ids, as one transition would', () => {
    const whole = createJob(workflow, { id: ID, input: { items: [10, 11, 12, 13, 14] } }, { now: T0 });
    const first = start();
    const second = next(first.job, 2);
    const last = next(second.job, 4);
    const sliced = [...first.creates, ...second.creates, ...last.creates];
    expect(sliced).toEqual(whole.creates);
    expect([...first.requests, ...second.requests, ...last.requests]).toEqual(whole.requests);
  });

  it('ignores a slice asked for again, or for a fan-out that no longer runs', () => {
    const first = start();
    const second = next(first.job, 2);
    expect(next(second.job, 2)).toMatchObject({ changed: false, creates: [], ignored: expect.any(String) });
    const cancelled = applyEvent(workflow, second.job, { type: 'cancel' }, context);
    expect(next(cancelled.job, 4)).toMatchObject({
      changed: false,
      creates: [],
      ignored: 'job is cancelled',
    });
  });

  it('goes on creating the missing slices when a fan-out stopped half-created is retried', () => {
    const first = start();
    const cancelled = applyEvent(workflow, first.job, { type: 'cancel' }, context);
    const retried = applyEvent(workflow, cancelled.job, { type: 'retry' }, context);
    expect(retried.creates).toEqual([]);
    expect(retried.followUps).toEqual([
      { kind: 'resumeChildren', jobId: ID, step: 'each' },
      { kind: 'createChildren', jobId: ID, step: 'each', from: 2 },
    ]);
    expect(next(retried.job, 2).creates.map((child) => child.parent?.index)).toEqual([2, 3]);
  });

  it('creates a later slice child that would finish as it starts waiting, for a follow-up to start', () => {
    const nested = compiled(NESTED_WORKFLOW);
    const first = createJob(nested, { id: ID, input: { groups: [[], [1], [], [2]] } }, context);
    // In the first slice, the empty group's child completes at once and is counted in the counters.
    expect(first.creates.filter((job) => job.parent?.id === ID).map((child) => child.status)).toEqual([
      'completed',
      'running',
    ]);
    expect(first.fanInits.find((init) => init.parentId === ID)).toMatchObject({ total: 4, done: 1 });
    const second = applyEvent(nested, first.job, { type: 'createChildren', step: 'outer', from: 2 }, context);
    const children = second.creates.filter((job) => job.parent?.id === ID);
    expect(children.map((child) => child.status)).toEqual(['waiting', 'running']);
    expect(second.fanInits.map((init) => init.parentId)).toEqual([children[1]?.id]);
    expect(second.followUps).toEqual([
      { kind: 'startChildren', jobId: ID, step: 'outer', ids: [children[0]?.id] },
    ]);
    const started = applyEvent(nested, children[0] as JobRecord, { type: 'start' }, context);
    expect(started.job.status).toBe('completed');
    expect(started.childOutcome).toEqual({ parentId: ID, step: 'outer', index: 2, status: 'completed' });
  });
});
