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
