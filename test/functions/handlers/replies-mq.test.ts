import { describe, expect, it } from 'vitest';
import { createRepliesMqHandler } from '../../../functions/handlers/replies-mq.js';
import {
  aLambdaContext,
  amazonMqBytes,
  anAmazonMqEvent,
  anAmazonMqMessage,
} from '../../support/aws-events.js';
import { failingStore, memoryManager, storeRefusing } from '../../support/memory-manager.js';

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
    expect(failed?.steps[0]).toMatchObject({
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
    expect(harness.telemetry.logged('reply batch failed; the broker delivers it again')).toHaveLength(1);
    expect(harness.telemetry.flushes).toBe(3);
  });
});
