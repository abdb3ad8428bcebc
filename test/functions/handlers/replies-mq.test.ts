import { describe, expect, it } from 'vitest';
import type { AmazonMqRabbitMessage } from '../../../functions/aws/amazon-mq-event.js';
import type { ReplyParking } from '../../../functions/aws/mq-reply-queues.js';
import { createRepliesMqHandler } from '../../../functions/handlers/replies-mq.js';
import {
  MAX_CRASHES_IN_HAND,
  MAX_UNSTORABLE_TRIES,
  MIN_HAND_BACK_MS,
  poisonedReason,
} from '../../../functions/manager/reply-policy.js';
import {
  aLambdaContext,
  amazonMqBytes,
  anAmazonMqEvent,
  anAmazonMqMessage,
} from '../../support/aws-events.js';
import { failingStore, managerDyingOn, memoryManager, storeRefusing } from '../../support/memory-manager.js';

const workflow = {
  name: 'greet',
  steps: [
    { name: 'hello', retries: 1 },
    { name: 'bye', depends: ['hello'] },
  ],
};

async function startedJobs(harness: ReturnType<typeof memoryManager>, count: number): Promise<string[]> {
  await harness.manager.registerWorkflow(workflow);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push((await harness.manager.startJob({ workflow: 'greet' })).job.id);
  await harness.manager.drain();
  return ids;
}

describe('Handler: replies-mq', () => {
  it('applies the good replies of a batch with a poison reply in it, and does not send the batch back', async () => {
    // Prepare
    const base = memoryManager();
    const [good, poisoned] = (await startedJobs(base, 2)) as [string, string];
    const harness = memoryManager({ store: storeRefusing(base.store, new Set()) });
    const handler = createRepliesMqHandler(harness);
    const event = anAmazonMqEvent({
      'workflow-manager': [
        anAmazonMqMessage('{"poison": true}', { correlationId: `${poisoned}:hello` }),
        anAmazonMqMessage('{"n": 1}', { correlationId: `${good}:hello` }),
      ],
    });

    // Act
    await handler(event, aLambdaContext());

    // Assess
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([good]);
    const failed = await base.store.getJob(poisoned);
    expect(failed?.steps.get(0)).toMatchObject({
      status: 'running',
      attempts: 2,
      error: 'the reply could not be stored: RangeError: Maximum call stack size exceeded',
    });
  });

  it('reads every queue of the event: base64 bodies, correlation ids, types and x-attempt headers', async () => {
    // Prepare
    const harness = memoryManager();
    const [replied, errored] = await startedJobs(harness, 2);
    const handler = createRepliesMqHandler(harness);
    const event = anAmazonMqEvent({
      'workflow-manager': [
        anAmazonMqMessage('{"greeting":"hi"}', {
          correlationId: `${replied}:hello`,
          headers: { 'x-attempt': 1 },
        }),
      ],
      'other-replies': [
        anAmazonMqMessage('{"error":"no greeting today"}', {
          correlationId: `${errored}:hello`,
          type: 'error',
          headers: { 'x-attempt': amazonMqBytes('1') },
        }),
      ],
    });

    // Act
    await handler(event, aLambdaContext());

    // Assess
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([
      replied,
    ]);
    const retried = harness.bus.sent.filter((request) => request.jobId === errored && request.attempt === 2);
    expect(retried.map((request) => request.step)).toEqual(['hello']);
    expect(harness.manager.outboxPending).toBe(0);
    expect(harness.telemetry.flushes).toBe(1);
  });

  it('drops malformed messages without failing the batch, and counts them', async () => {
    // Prepare
    const harness = memoryManager();
    const [job] = await startedJobs(harness, 1);
    const handler = createRepliesMqHandler(harness);
    const event = anAmazonMqEvent({
      'workflow-manager': [
        anAmazonMqMessage('{}'),
        anAmazonMqMessage('{}', { correlationId: 'nonsense' }),
        anAmazonMqMessage('{}', { correlationId: `${job}:hello` }),
      ],
    });

    // Act
    await handler(event);

    // Assess
    expect(harness.telemetry.counted('replies_malformed_total')).toBe(2);
    expect(harness.bus.sent.filter((request) => request.step === 'bye')).toHaveLength(1);
  });

  it('throws while the store is down, so the broker delivers the batch again, which then applies once', async () => {
    // Prepare
    const base = memoryManager();
    const [job] = await startedJobs(base, 1);
    const store = failingStore(base.store, ['getJobs']);
    const harness = memoryManager({ store });
    const handler = createRepliesMqHandler(harness);
    const event = anAmazonMqEvent({
      'workflow-manager': [anAmazonMqMessage('{}', { correlationId: `${job}:hello` })],
    });

    // Act
    const during = handler(event);
    await expect(during).rejects.toThrow(/the store is unavailable/);
    store.outage = false;
    await handler(event);
    await handler(event);

    // Assess
    expect(harness.bus.sent.filter((request) => request.step === 'bye')).toHaveLength(1);
    expect(
      harness.telemetry.logged('no reply of the batch could be handled; the broker delivers it again'),
    ).toHaveLength(1);
    expect(harness.telemetry.flushes).toBe(3);
  });

  it('parks a reply that fails even alone when others of the batch succeed, and acknowledges the batch', async () => {
    // Prepare: the store cannot read the poisoned job (not even to record a failed attempt).
    const base = memoryManager();
    const [good, poisoned] = (await startedJobs(base, 2)) as [string, string];
    const store = failingStore(base.store, ['getJobs', 'getJob'], (args) =>
      JSON.stringify(args).includes(poisoned),
    );
    const harness = memoryManager({ store });
    const parking = recordingParking();
    const handler = createRepliesMqHandler({ ...harness, parking });
    const poison = anAmazonMqMessage('{}', { correlationId: `${poisoned}:hello` });
    const event = anAmazonMqEvent({
      'workflow-manager': [poison, anAmazonMqMessage('{"n": 1}', { correlationId: `${good}:hello` })],
    });

    // Act
    await handler(event, aLambdaContext());

    // Assess
    expect(parking.parked).toEqual([poison]);
    expect(parking.reasons[0]).toMatch(/the store is unavailable/);
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([good]);
    expect(harness.telemetry.logged('reply parked: it could not be handled')).toHaveLength(1);
  });

  it('hands back a batch whose every reply fails, until one has failed its bounded tries, then parks it', async () => {
    // Prepare
    const base = memoryManager();
    const [poisoned] = (await startedJobs(base, 1)) as [string];
    const store = failingStore(base.store, ['getJobs', 'getJob']);
    const harness = memoryManager({ store });
    const parking = recordingParking();
    const clock = { now: 0 };
    const handler = createRepliesMqHandler({ ...harness, parking, clock: () => clock.now });
    const event = anAmazonMqEvent({
      'workflow-manager': [anAmazonMqMessage('{}', { correlationId: `${poisoned}:hello` })],
    });

    // Act
    let handedBack = 0;
    for (let n = 0; n < MAX_UNSTORABLE_TRIES; n++) {
      clock.now = (n * MIN_HAND_BACK_MS) / (MAX_UNSTORABLE_TRIES - 1);
      await handler(event).catch(() => handedBack++);
    }

    // Assess
    expect(handedBack).toBe(MAX_UNSTORABLE_TRIES - 1);
    expect(parking.parked).toHaveLength(1);
  });

  it('drains the parked queue: applies a reply that now succeeds, fails the attempt of one that does not', async () => {
    // Prepare
    const base = memoryManager();
    const [late, poisoned] = (await startedJobs(base, 2)) as [string, string];
    const harness = memoryManager({ store: storeRefusing(base.store, new Set()) });
    const handler = createRepliesMqHandler({ ...harness, parking: recordingParking() });
    const event = anAmazonMqEvent({
      'workflow-manager.parked': [
        anAmazonMqMessage('{"n": 1}', { correlationId: `${late}:hello`, headers: { 'x-attempt': 1 } }),
        anAmazonMqMessage('{"poison": true}', {
          correlationId: `${poisoned}:hello`,
          headers: { 'x-attempt': 1, 'x-parked-reason': amazonMqBytes('no room') },
        }),
      ],
    });

    // Act
    await handler(event, aLambdaContext());

    // Assess
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([late]);
    const failed = await base.store.getJob(poisoned);
    expect(failed?.steps.get(0)).toMatchObject({ status: 'running', attempts: 2 });
  });

  it('drops a parked reply nothing can be stored for when others of the batch could be', async () => {
    // Prepare
    const base = memoryManager();
    const [good, poisoned] = (await startedJobs(base, 2)) as [string, string];
    const store = failingStore(base.store, ['getJobs', 'getJob'], (args) =>
      JSON.stringify(args).includes(poisoned),
    );
    const harness = memoryManager({ store });
    const handler = createRepliesMqHandler({ ...harness, parking: recordingParking() });
    const event = anAmazonMqEvent({
      'workflow-manager.parked': [
        anAmazonMqMessage('{}', { correlationId: `${poisoned}:hello` }),
        anAmazonMqMessage('{}', { correlationId: `${good}:hello` }),
      ],
    });

    // Act
    await handler(event, aLambdaContext());

    // Assess
    expect(harness.telemetry.counted('replies_dropped_total')).toBe(1);
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([good]);
  });
});

describe('Handler: replies-mq, when invocations die with a reply in hand', () => {
  it('poisons the reply the dead invocations had alone: fails its attempt, moves it to the poison queue, applies the rest of the batch', async () => {
    // Prepare: the batch that brought it died, then the batch it came back in (suspected, both are
    // handled alone from then on); alone, it died in two more invocations.
    const harness = memoryManager();
    const [victim, bystander] = (await startedJobs(harness, 2)) as [string, string];
    const killer = (redelivered: boolean) =>
      anAmazonMqMessage(
        '{"explode": true}',
        { correlationId: `${victim}:hello`, headers: { 'x-attempt': 1 } },
        redelivered,
      );
    const other = (redelivered: boolean) =>
      anAmazonMqMessage('{"n": 1}', { correlationId: `${bystander}:hello` }, redelivered);
    const dying = {
      ...harness,
      manager: managerDyingOn(harness.manager, (reply) => reply.body.includes('explode')),
    };
    const parking = recordingParking();
    void createRepliesMqHandler(dying)(
      anAmazonMqEvent({ 'workflow-manager': [killer(false), other(false)] }),
    );
    for (let run = 0; run < MAX_CRASHES_IN_HAND + 1; run++) {
      void createRepliesMqHandler(dying)(
        anAmazonMqEvent({ 'workflow-manager': [killer(true), other(true)] }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    // Act
    await createRepliesMqHandler({ ...dying, parking })(
      anAmazonMqEvent({ 'workflow-manager': [killer(true), other(true)] }),
      aLambdaContext(),
    );

    // Assess
    expect(parking.poisoned).toEqual([
      { message: killer(true), reason: poisonedReason(MAX_CRASHES_IN_HAND) },
    ]);
    expect(parking.parked).toEqual([]);
    expect(await harness.store.getJob(victim)).toMatchObject({
      status: 'failed',
      error: { step: 'hello', attempt: 1, message: poisonedReason(MAX_CRASHES_IN_HAND) },
    });
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([
      bystander,
    ]);
  });
});

function recordingParking(): ReplyParking & {
  parked: AmazonMqRabbitMessage[];
  reasons: string[];
  poisoned: { message: AmazonMqRabbitMessage; reason: string }[];
} {
  const parked: AmazonMqRabbitMessage[] = [];
  const reasons: string[] = [];
  const poisoned: { message: AmazonMqRabbitMessage; reason: string }[] = [];
  return {
    parked,
    reasons,
    poisoned,
    async park(messages, reason) {
      parked.push(...messages);
      reasons.push(reason);
    },
    async poison(messages) {
      poisoned.push(...messages);
    },
    async close() {},
  };
}
