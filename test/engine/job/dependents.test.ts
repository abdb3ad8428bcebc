import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  type CompiledWorkflow,
  createJob,
  type EngineContext,
  type JobJson,
  type JobRecord,
  jobFromJson,
  type Transition,
} from '../../../engine/index.js';
import { compiled, T0 } from '../../support/simulated-world.js';

const ID = '3b0d7c1e-5f2a-4e8b-9c6d-1a2b3c4d5e6f';
const context: EngineContext = { now: T0 };

/** root, then m0…m4 after it, then sink after all five. */
const WIDE = compiled(`workflows:
  - name: wide
    steps:
      - name: root
${[0, 1, 2, 3, 4].map((i) => `      - name: m${i}\n        depends: [ root ]`).join('\n')}
      - name: sink
        depends: [ m0, m1, m2, m3, m4 ]
`);

function reply(workflow: CompiledWorkflow, job: JobRecord, step: string, now = T0): Transition {
  const t = applyEvent(workflow, job, { type: 'reply', step, output: { [step]: true } }, { now });
  expect(t.ignored).toBeUndefined();
  return t;
}

/** Replies to the middle steps in `order`, noting after which reply the sink was requested. */
function completeMiddles(job: JobRecord, order: readonly number[]): { job: JobRecord; sinkAfter: number[] } {
  const sinkAfter: number[] = [];
  for (const [position, i] of order.entries()) {
    const t = reply(WIDE, job, `m${i}`);
    job = t.job;
    if (t.requests.some((request) => request.step === 'sink')) sinkAfter.push(position);
  }
  return { job, sinkAfter };
}

/** A job as the code before `waitingOn` stored it: without the field, through JSON. */
function storedWithoutCounts(job: JobRecord): JobRecord {
  const stored = JSON.parse(JSON.stringify(job)) as JobJson;
  for (const state of stored.steps) delete state.waitingOn;
  return jobFromJson(stored);
}

describe('A step with several dependencies', () => {
  it.each([
    ['in order', [0, 1, 2, 3, 4]],
    ['in reverse', [4, 3, 2, 1, 0]],
    ['shuffled', [3, 0, 4, 1, 2]],
  ])('starts once, when the last of them completes (%s), with their merged outputs', (_, order) => {
    const root = reply(WIDE, createJob(WIDE, { id: ID, input: {} }, context).job, 'root');
    const { job, sinkAfter } = completeMiddles(root.job, order);
    expect(sinkAfter).toEqual([4]);
    const done = reply(WIDE, job, 'sink');
    expect(done.job.status).toBe('completed');
    expect(done.job.result).toEqual({ sink: true });
  });

  it('runs on in a job stored before steps counted their unfinished dependencies', () => {
    const root = reply(WIDE, createJob(WIDE, { id: ID, input: {} }, context).job, 'root');
    const halfway = completeMiddles(root.job, [2, 0]);
    const stored = storedWithoutCounts(halfway.job);
    expect(stored.steps.some((state) => 'waitingOn' in state)).toBe(false);

    const { job, sinkAfter } = completeMiddles(stored, [4, 1, 3]);
    expect(sinkAfter).toEqual([2]);
    const sink = job.steps.find((state) => state.name === 'sink');
    expect(sink?.status).toBe('running');
    expect(reply(WIDE, job, 'sink').job.status).toBe('completed');
  });

  it('keeps its count when the job stops in the transition that completed one of its dependencies', () => {
    // a completes: "each" (declared first) fans out over too long a list and fails the job in the
    // same transition in which "joined" counts a as done; after the retry, b completes and
    // "joined" must start.
    const workflow = compiled(`workflows:
  - name: stops
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
    steps:
      - name: a
      - name: b
      - name: c
      - name: each
        task: per-item
        depends: [ a ]
      - name: joined
        depends: [ a, b, c ]
`);
    let job = createJob(workflow, { id: ID, input: {} }, context).job;
    job = reply(workflow, job, 'c').job;
    const failed = applyEvent(
      workflow,
      job,
      { type: 'reply', step: 'a', output: { items: [1, 2] } },
      { now: T0, maxFanOut: 1 },
    );
    expect(failed.job.status).toBe('failed');

    const retried = applyEvent(workflow, failed.job, { type: 'retry' }, context);
    expect(retried.job.status).toBe('running');
    const ownRequests = (t: Transition) =>
      t.requests.filter((request) => request.jobId === ID).map((request) => request.step);
    expect(ownRequests(retried)).toEqual(['b']);
    const joined = reply(workflow, retried.job, 'b');
    expect(ownRequests(joined)).toEqual(['joined']);
  });
});
