import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  createJob,
  type FollowUp,
  HISTORY_KINDS,
  loadWorkflows,
  MAX_NOTIFIED_RESULT_BYTES,
  type NotifyTarget,
  replyEvent,
  type Transition,
} from '../../../engine/index.js';
import { compiled, T0 } from '../../support/simulated-world.js';

const ID = '5a0f9c3e-1b2d-4c8e-9f6a-7b8c9d0e1f2a';
const TARGET = 'https://hooks.example.com/switchyard';

const WORKFLOW = compiled(`workflows:
  - name: orders
    notify:
      - url: ${TARGET}
        events: [job.completed, job.failed, step.waiting]
        secret: HOOK_KEY
      - url: https://audit.example.com/in
        events: [job.completed]
        secret: AUDIT_KEY
    steps:
      - name: charge
      - name: approve
        type: signal
        depends: [ charge ]
      - name: fan
        task: item
        depends: [ approve ]
    tasks:
      - name: item
        itemListKey: items
        steps:
          - name: work
`);

const notified = (transition: Transition) =>
  transition.followUps.filter((f): f is Extract<FollowUp, { kind: 'notify' }> => f.kind === 'notify');

function reply(step: string, output: object, jobId = ID) {
  const event = replyEvent({ correlationId: `${jobId}:${step}`, body: JSON.stringify(output) });
  if (!event.ok) throw new Error(event.reason);
  return event.event;
}

describe('Rule: a job notifies the targets of its workflow of the events they name, with the transition', () => {
  it('records one delivery per event and target that names it, in the transition that caused it', () => {
    const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
    expect(notified(start)).toEqual([]);
    const charged = applyEvent(WORKFLOW, start.job, reply('charge', { items: [] }), { now: T0 + 1 });
    const [waiting] = notified(charged);
    expect(waiting?.deliveries).toHaveLength(1);
    expect(waiting?.deliveries[0]).toMatchObject({
      jobId: ID,
      namespace: 'default',
      url: TARGET,
      secret: 'HOOK_KEY',
      body: { type: 'step.waiting', jobId: ID, workflow: 'orders', status: 'running', step: 'approve' },
    });
    expect(waiting?.deliveries[0]?.body.time).toBe(new Date(T0 + 1).toISOString());
    expect(waiting?.deliveries[0]?.body.id).toBe(waiting?.deliveries[0]?.id);

    const approved = applyEvent(
      WORKFLOW,
      charged.job,
      { type: 'signal', step: 'approve', output: { ok: 1 } },
      {
        now: T0 + 2,
      },
    );
    const [ended] = notified(approved);
    // An empty fan-out completes the job at once: both targets hear of it, each with its own delivery.
    expect(ended?.deliveries.map((d) => [d.url, d.body.type, d.body.status])).toEqual([
      [TARGET, 'job.completed', 'completed'],
      ['https://audit.example.com/in', 'job.completed', 'completed'],
    ]);
    expect(new Set(ended?.deliveries.map((d) => d.id)).size).toBe(2);
    expect(ended?.deliveries[0]?.body.result).toEqual(approved.job.result);
  });

  it('derives the same delivery ids when the same transition is decided again (a lost race)', () => {
    const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
    const once = applyEvent(WORKFLOW, start.job, reply('charge', { items: [] }), { now: T0 + 1 });
    const again = applyEvent(WORKFLOW, start.job, reply('charge', { items: [] }), { now: T0 + 1 });
    expect(notified(again)).toEqual(notified(once));
  });

  it('names the failure, and leaves out a result larger than the limit', () => {
    const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
    const failed = applyEvent(
      WORKFLOW,
      start.job,
      { type: 'failure', step: 'charge', attempt: 1, message: 'card declined', retryable: false },
      { now: T0 + 1 },
    );
    expect(notified(failed)[0]?.deliveries[0]?.body).toMatchObject({
      type: 'job.failed',
      status: 'failed',
      error: { step: 'charge', message: expect.stringContaining('card declined') },
    });

    const big = 'x'.repeat(MAX_NOTIFIED_RESULT_BYTES);
    const charged = applyEvent(WORKFLOW, start.job, reply('charge', { items: [], big }), { now: T0 + 1 });
    const done = applyEvent(
      WORKFLOW,
      charged.job,
      { type: 'signal', step: 'approve', output: {} },
      { now: T0 + 2 },
    );
    const body = notified(done)[0]?.deliveries[0]?.body;
    expect(body?.resultOmitted).toBe(true);
    expect(body?.result).toBeUndefined();
  });

  it("notifies for top-level jobs only: a fan-out's children send nothing", () => {
    const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
    const charged = applyEvent(WORKFLOW, start.job, reply('charge', { items: [1, 2] }), { now: T0 + 1 });
    const fanned = applyEvent(
      WORKFLOW,
      charged.job,
      { type: 'signal', step: 'approve', output: {} },
      { now: T0 + 2 },
    );
    const child = fanned.creates[0];
    if (!child) throw new Error('no child');
    const childDone = applyEvent(WORKFLOW, child, reply('work', {}, child.id), { now: T0 + 3 });
    expect(childDone.job.status).toBe('completed');
    expect(notified(childDone)).toEqual([]);
  });

  it("uses the host's default targets for a workflow without notify:, and none for notify: []", () => {
    const target: NotifyTarget = { url: TARGET, events: ['job.created'], secret: 'HOOK_KEY' };
    const plain = compiled('workflows:\n  - name: plain\n    steps:\n      - name: a\n');
    const silent = compiled('workflows:\n  - name: silent\n    notify: []\n    steps:\n      - name: a\n');
    const context = { now: T0, defaultNotify: [target] };
    expect(notified(createJob(plain, { id: ID, input: {} }, context))[0]?.deliveries[0]?.body.type).toBe(
      'job.created',
    );
    expect(notified(createJob(silent, { id: ID, input: {} }, context))).toEqual([]);
  });
});

describe('Rule: notify: is checked when a definition is loaded', () => {
  const problems = (notify: string) =>
    loadWorkflows(`workflows:\n  - name: w\n    notify: ${notify}\n    steps:\n      - name: a\n`).errors.map(
      (error) => error.message,
    );

  it('takes one target or a list, and refuses each problem with its reason', () => {
    expect(problems(`{ url: ${TARGET}, events: [job.failed], secret: K }`)).toEqual([]);
    expect(problems(`[{ url: ${TARGET}, events: [job.failed], secret: K }]`)).toEqual([]);
    expect(problems('{ url: "mailto:ops@example.com", events: [job.failed], secret: K }')).toEqual([
      '"url" "mailto:ops@example.com" must use http or https, not mailto',
    ]);
    expect(problems('{ url: "https://u:p@example.com/", events: [job.failed], secret: K }')[0]).toContain(
      'must not hold credentials',
    );
    expect(problems(`{ url: ${TARGET}, events: [job.faild], secret: K }`)[0]).toContain(
      'unknown event "job.faild" (did you mean "job.failed"?)',
    );
    expect(problems(`{ url: ${TARGET}, events: [], secret: K }`)[0]).toContain('"events" must be a list');
    expect(problems(`{ url: ${TARGET}, events: [job.failed] }`)[0]).toContain(
      '"secret" must name the secret',
    );
    expect(problems(`{ url: ${TARGET}, events: [job.failed], secret: K, retries: 3 }`)).toEqual([
      'unknown key "retries" in "notify" (it takes url, events and secret)',
    ]);
    expect(problems('[1, 2, 3, 4, 5, 6]')[0]).toContain('at most 5');
  });
});

describe('docs/notifications.md', () => {
  it('names every event a target may ask for', () => {
    const page = readFileSync(join(import.meta.dirname, '../../../docs/notifications.md'), 'utf8');
    const listed = /- `events`:([\s\S]*?)\n- `secret`/.exec(page)?.[1] ?? '';
    expect([...listed.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((match) => match[1])).toEqual([
      ...HISTORY_KINDS,
    ]);
  });
});
