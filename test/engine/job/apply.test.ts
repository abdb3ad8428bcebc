import { describe, expect, it } from 'vitest';
import { applyEvent, createJob, type JobRecord } from '../../../engine/index.js';
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
    expect(transition.patch.fields).toEqual({ rev: 2, seq: 1, updatedAt: T0 + 5 });
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
      message: 'only a failed or cancelled job can be retried; this one is running',
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
