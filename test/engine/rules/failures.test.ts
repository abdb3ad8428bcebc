import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const flow = (stepKeys: string, workflowKeys = '') => `workflows:
  - name: flaky
${workflowKeys}    steps:
      - name: fetch
${stepKeys}      - name: store
        depends: [ fetch ]
`;

async function started(stepKeys = '', workflowKeys = '') {
  const world = new SimulatedWorld();
  await world.register(flow(stepKeys, workflowKeys));
  const id = await world.start('flaky', { url: 'x' });
  return { world, id };
}

describe('Rules: replies and failures', () => {
  it.each([
    ['an array', '[1, 2]', 'invalid reply: body must be a JSON object, got list'],
    ['a scalar', '"done"', 'invalid reply: body must be a JSON object, got string'],
    ['text that is not JSON', 'all good!', 'invalid reply: body is not JSON'],
  ])('fails the attempt on a reply body that is %s', async (_, body, message) => {
    const { world, id } = await started();
    await world.reply(world.take()[0]!, body);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message.startsWith(message)).toBe(true);
  });

  it('fails the job on an error reply when no retries are left, recording step, attempt and error', async () => {
    const { world, id } = await started();
    await world.reply(world.take()[0]!, { error: 'upstream said no' }, { type: 'error' });
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(stepsOf(job).fetch?.status).toBe('failed');
    expect(stepsOf(job).store?.status).toBe('waiting');
    expect(job.error).toEqual({ step: 'fetch', attempt: 1, message: 'upstream said no', at: world.now });
  });

  it('retries a failed attempt after retryDelay, doubling each time, then fails', async () => {
    const { world, id } = await started('        retries: 2\n        retryDelay: 1s\n');
    const first = world.take()[0]!;
    await world.reply(first, { error: 'e1' }, { type: 'error' });
    expect(world.take()).toEqual([]);
    await world.advance(999);
    expect(world.take()).toEqual([]);
    await world.advance(1);
    const second = world.take();
    expect(second.map((request) => request.attempt)).toEqual([2]);
    await world.reply(second[0]!, { error: 'e2' }, { type: 'error', attempt: 2 });
    await world.advance(1_999);
    expect(world.take()).toEqual([]);
    await world.advance(1);
    const third = world.take();
    expect(third.map((request) => request.attempt)).toEqual([3]);
    await world.reply(third[0]!, { error: 'e3' }, { type: 'error', attempt: 3 });
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'fetch', attempt: 3, message: 'e3' });
  });

  it('fails the step and the job at once on an error reply marked not retryable, whatever its retries', async () => {
    const { world, id } = await started('        retries: 3\n        retryDelay: 1s\n');
    await world.reply(
      world.take()[0]!,
      { error: 'the invoice is malformed' },
      { type: 'error', retryable: false },
    );
    await world.advance(60_000);
    expect(world.take()).toEqual([]);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(stepsOf(job).fetch).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'the invoice is malformed',
    });
    expect(job.error).toEqual({
      step: 'fetch',
      attempt: 1,
      message: 'the invoice is malformed',
      at: world.now - 60_000,
    });
  });

  it('retries an error reply marked retryable, as one without the mark', async () => {
    const { world, id } = await started('        retries: 3\n');
    await world.reply(world.take()[0]!, { error: 'try again' }, { type: 'error', retryable: true });
    expect(world.take().map((request) => request.attempt)).toEqual([2]);
    expect(stepsOf(await world.job(id)).fetch).toMatchObject({ status: 'running', error: 'try again' });
  });

  it('takes a success from a reply marked not retryable: the mark only means something on an error', async () => {
    const { world } = await started('        retries: 3\n');
    await world.reply(world.take()[0]!, { ok: true }, { retryable: false });
    expect(world.take().map((request) => request.step)).toEqual(['store']);
  });

  it('retries at once without a retryDelay', async () => {
    const { world } = await started('        retries: 1\n');
    await world.reply(world.take()[0]!, { error: 'flaky' }, { type: 'error' });
    expect(world.take().map((request) => request.attempt)).toEqual([2]);
  });

  it('counts a missing reply by the timeout as a failed attempt, then retries', async () => {
    const { world, id } = await started('        timeout: 30s\n        retries: 1\n');
    world.take();
    await world.advance(30_000);
    expect(world.take().map((request) => request.attempt)).toEqual([2]);
    await world.advance(30_000);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toBe('no reply within 30s (attempt 2)');
  });

  it('waits as long as it takes without a timeout', async () => {
    const { world, id } = await started();
    const [request] = world.take();
    await world.advance(30 * 24 * 3600 * 1000);
    expect((await world.job(id)).status).toBe('running');
    await world.reply(request!, {});
    expect(world.take().map((next) => next.step)).toEqual(['store']);
  });

  it("moves the attempt's deadline on a heartbeat", async () => {
    const { world, id } = await started('        timeout: 10s\n');
    const [request] = world.take();
    await world.advance(8_000);
    await world.reply(request!, '', { type: 'heartbeat', attempt: 1 });
    await world.advance(8_000);
    expect((await world.job(id)).status).toBe('running');
    await world.advance(2_000);
    expect((await world.job(id)).status).toBe('failed');
  });

  it('ignores an error or heartbeat from an attempt that is no longer current, but takes a success from any attempt', async () => {
    const { world, id } = await started('        timeout: 10s\n        retries: 3\n');
    const [first] = world.take();
    await world.advance(10_000);
    expect(world.take().map((request) => request.attempt)).toEqual([2]);
    await world.reply(first!, { error: 'late failure of attempt 1' }, { type: 'error', attempt: 1 });
    expect(stepsOf(await world.job(id)).fetch?.attempts).toBe(2);
    expect(world.take()).toEqual([]);
    await world.reply(first!, { late: 'success' }, { attempt: 1 });
    expect(world.take().map((request) => [request.step, request.body])).toEqual([
      ['store', { late: 'success' }],
    ]);
  });

  it('fails the job at its deadline (workflow timeout)', async () => {
    const { world, id } = await started('', '    timeout: 1m\n');
    await world.reply(world.take()[0]!, {});
    await world.advance(60_000);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: null, message: 'the job did not finish within 1m' });
    expect(stepsOf(job).store?.status).toBe('cancelled');
  });
});

describe('Rules: cancel and retry', () => {
  it('cancels a job: nothing more is dispatched, replies are ignored, children are cancelled', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: c
    steps:
      - name: fan
        task: t
      - name: solo
      - name: after
        depends: [ fan, solo ]
    tasks:
      - name: t
        itemListKey: xs
        steps: [ { name: w } ]
`);
    const id = await world.start('c', { xs: [1, 2] });
    const requests = world.take();
    const child = requests.find((request) => request.step === 'w')!;
    const cancelled = await world.manager.cancel(child.jobId);
    await world.manager.drain();
    expect(cancelled.id).toBe(id);
    expect(cancelled.status).toBe('cancelled');
    for (const request of requests) await world.reply(request, {});
    expect(world.take()).toEqual([]);
    const { children } = await world.store.listChildren(id, 'fan', { limit: 10 });
    expect(children.map((c) => c.status)).toEqual(['cancelled', 'cancelled']);
    expect(stepsOf(await world.job(id))).toMatchObject({
      fan: { status: 'cancelled' },
      solo: { status: 'cancelled' },
      after: { status: 'waiting' },
    });
    await expect(world.manager.cancel(id)).rejects.toThrow(
      new ManagerError('conflict', 'the job is already cancelled'),
    );
  });

  it('retries a failed job: failed, cancelled and never-dispatched steps run; completed ones keep their outputs', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: r
    steps:
      - name: a
      - name: b
      - name: c
        depends: [ a, b ]
`);
    const id = await world.start('r');
    const [a, b] = world.take();
    await world.reply(a!, { a: 1 });
    await world.reply(b!, { error: 'b broke' }, { type: 'error' });
    expect((await world.job(id)).status).toBe('failed');
    await expect(world.manager.retry(crypto.randomUUID())).rejects.toThrow(ManagerError);
    const retried = await world.manager.retry(id);
    await world.manager.drain();
    expect(retried.status).toBe('running');
    expect(retried.error).toBeUndefined();
    const again = world.take();
    expect(again.map((request) => [request.step, request.attempt])).toEqual([['b', 2]]);
    await world.reply(again[0]!, { b: 2 });
    await world.reply(world.take()[0]!, { c: 3 });
    const job = await world.job(id);
    expect(job.status).toBe('completed');
    expect(stepsOf(job).a?.output).toEqual({ a: 1 });
    await expect(world.manager.retry(id)).rejects.toThrow(
      'only a failed, cancelled or aborted job can be retried; this one is completed',
    );
  });

  it('retries a step up to its retries again after a job retry', async () => {
    const { world, id } = await started('        retries: 1\n');
    await world.reply(world.take()[0]!, '', { type: 'error' });
    await world.reply(world.take()[0]!, '', { type: 'error', attempt: 2 });
    expect((await world.job(id)).status).toBe('failed');
    await world.manager.retry(id);
    await world.manager.drain();
    const third = world.take();
    expect(third.map((request) => request.attempt)).toEqual([3]);
    await world.reply(third[0]!, '', { type: 'error', attempt: 3 });
    expect(world.take().map((request) => request.attempt)).toEqual([4]);
  });
});

describe('Rules: signal steps', () => {
  const SIGNALS = `workflows:
  - name: approval
    steps:
      - name: prepare
      - name: approve
        type: signal
        timeout: 1h
        depends: [ prepare ]
      - name: publish
        depends: [ approve ]
`;

  it('completes a ready signal step with its input and the body over it; nothing is sent to a queue', async () => {
    const world = new SimulatedWorld();
    await world.register(SIGNALS);
    const id = await world.start('approval');
    await world.reply(world.take()[0]!, { doc: 1 });
    expect(world.take()).toEqual([]);
    await world.manager.signal(id, 'approve', { approvedBy: 'ana' });
    await world.manager.drain();
    expect(world.take().map((request) => [request.step, request.body])).toEqual([
      ['publish', { doc: 1, approvedBy: 'ana' }],
    ]);
    await expect(world.manager.signal(id, 'approve', {})).rejects.toThrow(
      'step "approve" is already completed',
    );
    // A worker step may still answer `suspend`: the job keeps the signal for it.
    expect((await world.manager.signal(id, 'publish', {})).kept).toBe(
      'step "publish" has not been suspended by its worker (yet)',
    );
  });

  it("outputs the step's input with the signal body's keys over it: the job's data upstream is kept", async () => {
    const world = new SimulatedWorld();
    await world.register(SIGNALS);
    const id = await world.start('approval');
    await world.reply(world.take()[0]!, { doc: 1, state: 'draft' });
    await world.manager.signal(id, 'approve', { state: 'approved', by: 'ana' });
    await world.manager.drain();
    expect(stepsOf(await world.job(id)).approve?.output).toEqual({ doc: 1, state: 'approved', by: 'ana' });
    await world.reply(world.take()[0]!);
    expect(await world.job(id)).toMatchObject({
      status: 'completed',
      result: { doc: 1, state: 'approved', by: 'ana' },
    });
  });

  it('outputs the job input under the signal body for a signal step without depends', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: gate
    steps:
      - name: open
        type: signal
`);
    const id = await world.start('gate', { order: 7, note: 'before' });
    await world.manager.signal(id, 'open', { note: 'after' });
    await world.manager.drain();
    expect((await world.job(id)).result).toEqual({ order: 7, note: 'after' });
  });

  it('fails a signal step that waits longer than its timeout', async () => {
    const world = new SimulatedWorld();
    await world.register(SIGNALS);
    const id = await world.start('approval');
    await world.reply(world.take()[0]!, {});
    await world.advance(3_600_000);
    expect((await world.job(id)).error?.message).toBe('no signal within 1h');
  });

  it('signals a signal step inside a task on the child job id', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: per-item-approval
    steps:
      - name: each
        task: t
    tasks:
      - name: t
        itemListKey: items
        steps:
          - name: ok
            type: signal
`);
    const id = await world.start('per-item-approval', { items: ['x'] });
    const { children } = await world.store.listChildren(id, 'each', { limit: 1 });
    await world.manager.signal(children[0]!.id, 'ok', { item: 'X' });
    await world.manager.drain();
    expect((await world.job(id)).result).toEqual({ items: ['X'] });
  });
});

describe('Rules: the size of a request', () => {
  it('fails the step, whatever its retries, when its input is larger than the limit, pointing to input: mapping', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: big
    steps:
      - name: left
      - name: right
      - name: summarise
        depends: [ left, right ]
        retries: 3
`);
    const id = await world.start('big', {});
    const [left, right] = world.take();
    await world.reply(left!, { left: 'é'.repeat(300_000) });
    await world.reply(right!, { right: 'é'.repeat(300_000) });
    expect(world.take()).toEqual([]);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({
      step: 'summarise',
      message:
        'step "summarise": the request is more than 1048576 bytes of JSON, the most a request may have (the manager\'s maxReplyBytes): give the step only what its worker needs with an "input:" mapping',
    });
  });

  // Issue 28: the mapping's N × N copy ran the manager out of memory while it took the reply.
  it('fails the step whose input: mapping is too large, naming it and the limit, not the step whose reply made it ready', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: square
    steps:
      - name: load
      - name: expand
        depends: [ load ]
        input: '{"x": input.l.map(e, input.l)}'
`);
    const id = await world.start('square', {});
    await world.reply(world.take()[0]!, { l: Array.from({ length: 20_000 }, (_, i) => i) });
    expect(world.take()).toEqual([]);
    const job = await world.job(id);
    expect(stepsOf(job).load?.status).toBe('completed');
    expect(stepsOf(job).expand?.status).toBe('failed');
    expect(job.status).toBe('failed');
    expect(job.error?.step).toBe('expand');
    expect(job.error?.message).toMatch(
      /^step "expand": "input" expression .*gives more than 1048576 bytes of JSON, the most a request may have \(the manager's maxReplyBytes\)$/,
    );
  });

  // Issue 28: the natural fan-out mapping, from a 120 KB input a run token may start a job with.
  it('fails the first step of a job whose input: mapping gives every item the same large options', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: batch
    steps:
      - name: plan
        input: '{"jobs": input.items.map(i, {"item": i, "opts": input.opts})}'
`);
    const numbers = Array.from({ length: 10_000 }, (_, i) => i);
    const id = await world.start('batch', { items: numbers, opts: { values: numbers } });
    expect(world.take()).toEqual([]);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'plan', message: expect.stringContaining('step "plan": ') });
  });

  it('sends the step once an input: mapping leaves the large value out', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: big
    steps:
      - name: left
      - name: right
      - name: summarise
        depends: [ left, right ]
        input: '{"size": size(input.left) + size(input.right)}'
`);
    await world.start('big', {});
    const [left, right] = world.take();
    await world.reply(left!, { left: 'é'.repeat(300_000) });
    await world.reply(right!, { right: 'é'.repeat(300_000) });
    expect(world.take().map((request) => request.body)).toEqual([{ size: 600_000 }]);
  });
});
