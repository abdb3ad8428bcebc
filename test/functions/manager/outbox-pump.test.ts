import { describe, expect, it } from 'vitest';
import type { Bus, OutboxEntry, StepRequest, Store } from '../../../engine/index.js';
import { OutboxPump } from '../../../functions/manager/outbox-pump.js';
import { silentLogger } from '../../../functions/telemetry/telemetry.js';

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;

function requestEntry(jobId: string, step: string): RequestEntry {
  const request: StepRequest = {
    jobId,
    step,
    queue: step,
    vhost: null,
    correlationId: `${jobId}:${step}`,
    attempt: 1,
    body: {},
  };
  return { id: `${jobId}/${step}`, kind: 'request', jobId, createdAt: 0, request };
}

/** A bus whose first send waits until released; every send is recorded. */
function heldBus() {
  const sent: string[] = [];
  let release: () => void = () => {};
  const firstSendReleased = new Promise<void>((resolve) => {
    release = resolve;
  });
  let sends = 0;
  let firstSendStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    firstSendStarted = resolve;
  });
  const bus = {
    async send(requests: readonly StepRequest[]) {
      sends++;
      if (sends === 1) {
        firstSendStarted();
        await firstSendReleased;
      }
      sent.push(...requests.map((request) => request.correlationId));
    },
  } as unknown as Bus;
  return { bus, sent, started, release };
}

function pumpWith(bus: Bus, acked: string[]): OutboxPump {
  const store = {
    async ackOutbox(ids: readonly string[]) {
      acked.push(...ids);
    },
  } as unknown as Store;
  return new OutboxPump({
    store,
    bus,
    logger: silentLogger,
    sendBatch: 1,
    runFollowUps: async () => {},
    onUndeliverable: async () => {},
  });
}

describe('OutboxPump', () => {
  it("still sends the other jobs' requests when a job is dropped while its request is being sent", async () => {
    // Prepare: job a's request is on its way to the broker; b's and c's wait behind it.
    const { bus, sent, started, release } = heldBus();
    const acked: string[] = [];
    const pump = pumpWith(bus, acked);
    pump.enqueue([requestEntry('a', 's1'), requestEntry('b', 's1'), requestEntry('c', 's1')]);
    await started;

    // Act: job a stops (cancelled) mid-send, then the broker confirms.
    pump.drop('a');
    release();
    await pump.drain();

    // Assess: what was in flight went out; nothing behind it was lost.
    expect(sent).toEqual(['a:s1', 'b:s1', 'c:s1']);
    expect(acked).toEqual(['a/s1', 'b/s1', 'c/s1']);
    expect(pump.pending).toBe(0);
  });

  it('does not send the requests of a dropped job that were still waiting', async () => {
    const { bus, sent, started, release } = heldBus();
    const acked: string[] = [];
    const pump = pumpWith(bus, acked);
    pump.enqueue([requestEntry('a', 's1'), requestEntry('b', 's1'), requestEntry('b', 's2')]);
    await started;

    pump.drop('b');
    release();
    await pump.drain();

    expect(sent).toEqual(['a:s1']);
    expect(pump.pending).toBe(0);
  });
});

describe('Outbox pump: follow-ups and a backlog of requests', () => {
  it('runs follow-ups once fewer than a send batch of requests wait, so that a fan-out slice is sent before the next is made', async () => {
    const events: string[] = [];
    const bus = {
      async send(requests: readonly StepRequest[]) {
        events.push(`send ${requests.map((request) => request.jobId).join(',')}`);
      },
    } as unknown as Bus;
    const store = { async ackOutbox() {} } as unknown as Store;
    const pump = new OutboxPump({
      store,
      bus,
      logger: silentLogger,
      sendBatch: 2,
      runFollowUps: async (entries) => {
        events.push(`follow-up ${entries.map((entry) => entry.id).join(',')}`);
      },
      onUndeliverable: async () => {},
    });
    const followUp: OutboxEntry = {
      id: 'f1',
      kind: 'followUp',
      jobId: 'p',
      createdAt: 0,
      followUp: { kind: 'createChildren', jobId: 'p', step: 'each', from: 5 },
    };
    pump.enqueue([...['a', 'b', 'c', 'd', 'e'].map((job) => requestEntry(job, 's')), followUp]);
    await pump.drain();
    expect(events).toEqual(['send a,b', 'send c,d', 'follow-up f1', 'send e']);
  });
});
