import { describe, expect, it, vi } from 'vitest';
import {
  type Bus,
  type OutboxEntry,
  RetryableSendError,
  type StepRequest,
  type Store,
} from '../../../engine/index.js';
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

/** A bus that refuses every request to `full` while `isFull()` says so (as a full queue's nack), taking the rest. */
function busWithAFullQueue(isFull: () => boolean) {
  const delivered: string[] = [];
  const calls: string[][] = [];
  const bus = {
    async send(requests: readonly StepRequest[]) {
      calls.push(requests.map((request) => request.correlationId));
      const refused: RetryableSendError[] = [];
      for (const request of requests) {
        if (request.queue === 'full' && isFull()) {
          refused.push(new RetryableSendError(`refused by queue full`, request.correlationId, 'nacked'));
        } else delivered.push(request.correlationId);
      }
      if (refused.length) throw new AggregateError(refused, `${refused.length} not sent`);
    },
  } as unknown as Bus;
  return { bus, delivered, calls };
}

function requestTo(jobId: string, queue: string): RequestEntry {
  const entry = requestEntry(jobId, queue);
  return { ...entry, request: { ...entry.request, queue } };
}

const within = (ms: number, work: Promise<void>) =>
  Promise.race([work, new Promise<void>((resolve) => setTimeout(resolve, ms))]);

describe('Outbox pump: a queue that refuses requests (full, reject-publish)', () => {
  function pumpFor(bus: Bus, options: Partial<ConstructorParameters<typeof OutboxPump>[0]> = {}) {
    const acked: string[] = [];
    const failed: { id: string; message: string }[] = [];
    const store = {
      async ackOutbox(ids: readonly string[]) {
        acked.push(...ids);
      },
    } as unknown as Store;
    const pump = new OutboxPump({
      store,
      bus,
      logger: silentLogger,
      runFollowUps: async () => {},
      onUndeliverable: async (entry, message) => {
        failed.push({ id: entry.id, message });
      },
      refusedBackoff: { firstDelayMs: 20, maxDelayMs: 50 },
      ...options,
    });
    return { pump, acked, failed };
  }

  it('sends each request to a healthy queue once, and the refused one once its queue has room', async () => {
    // Prepare: the queue refuses for its first 5 sends.
    let refusals = 0;
    const { bus, delivered } = busWithAFullQueue(() => refusals++ < 5);
    const { pump, acked } = pumpFor(bus);

    // Act
    pump.enqueue([requestTo('a', 'ok'), requestTo('b', 'full'), requestTo('c', 'ok')]);
    await within(3000, pump.drain());

    // Assess
    expect(delivered).toEqual(['a:ok', 'c:ok', 'b:full']);
    expect(acked.sort()).toEqual(['a/ok', 'b/full', 'c/ok']);
    expect(pump.pending).toBe(0);
  });

  it('sends requests to other queues at once while a full queue waits out its backoff', async () => {
    // Prepare: the full queue refused once and now waits 10 s before it is tried again.
    const { bus, delivered, calls } = busWithAFullQueue(() => true);
    const { pump } = pumpFor(bus, { refusedBackoff: { firstDelayMs: 10_000 } });
    pump.enqueue([requestTo('a', 'full')]);
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Act
    const started = Date.now();
    pump.enqueue([requestTo('b', 'ok')]);
    while (!delivered.includes('b:ok') && Date.now() - started < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    // Assess: sent within a moment, alone; the full queue was tried once.
    expect(delivered).toEqual(['b:ok']);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(calls).toEqual([['a:full'], ['b:ok']]);
    pump.stop();
    await within(1000, pump.drain());
  });

  it('gives a refused request up after giveUpAfterMs: its attempt fails with the reason, and nothing is sent again', async () => {
    // On vitest's fake timers the backoff's waits and the 200 ms are the pump's own time: the tries
    // counted are the backoff's, not how many a loaded machine fitted into 200 ms of its own.
    const { bus, calls } = busWithAFullQueue(() => true);
    const { pump, acked, failed } = pumpFor(bus, { giveUpAfterMs: 200 });

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      pump.enqueue([requestTo('a', 'full')]);
      await vi.advanceTimersByTimeAsync(3000);
    } finally {
      vi.useRealTimers();
    }
    await within(3000, pump.drain());

    expect(failed).toEqual([
      {
        id: 'a/full',
        message: expect.stringMatching(/^not sent: refused for \d+ s; last: refused by queue full/),
      },
    ]);
    expect(acked).toEqual(['a/full']);
    expect(pump.pending).toBe(0);
    // 200 ms of backoff at 20, 40, 50, 50… ms: a handful of tries, not a loop.
    expect(calls.length).toBeGreaterThan(2);
    expect(calls.length).toBeLessThan(12);
  });

  it("drops a stopped job's refused requests", async () => {
    const { bus, calls } = busWithAFullQueue(() => true);
    const { pump, acked } = pumpFor(bus);
    pump.enqueue([requestTo('a', 'full')]);
    await new Promise((resolve) => setTimeout(resolve, 30));

    pump.drop('a');
    await within(2000, pump.drain());

    expect(pump.pending).toBe(0);
    expect(acked).toEqual([]);
    const tries = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls.length).toBe(tries);
  });

  it('stops at once on stop() while a full queue waits, leaving its request in the store', async () => {
    const { bus } = busWithAFullQueue(() => true);
    const { pump, acked } = pumpFor(bus, { refusedBackoff: { firstDelayMs: 60_000 } });
    pump.enqueue([requestTo('a', 'full')]);
    await new Promise((resolve) => setTimeout(resolve, 30));

    const started = Date.now();
    pump.stop();
    await pump.drain();

    expect(Date.now() - started).toBeLessThan(1_000);
    expect(acked).toEqual([]);
  });
});

describe('Outbox pump: a queue with room for one request at a time', () => {
  it('counts one refusal per send, not per refused request: the queue is tried again soon', async () => {
    // Prepare: each send, the queue takes the first of its requests and refuses the rest.
    const delivered: string[] = [];
    const bus = {
      async send(requests: readonly StepRequest[]) {
        const [first, ...rest] = requests;
        if (first) delivered.push(first.correlationId);
        if (rest.length) {
          throw new AggregateError(
            rest.map((request) => new RetryableSendError('refused', request.correlationId, 'nacked')),
          );
        }
      },
    } as unknown as Bus;
    const store = { async ackOutbox() {} } as unknown as Store;
    const pump = new OutboxPump({
      store,
      bus,
      logger: silentLogger,
      runFollowUps: async () => {},
      onUndeliverable: async () => {},
      refusedBackoff: { firstDelayMs: 20, maxDelayMs: 5_000 },
    });

    // Act
    pump.enqueue(Array.from({ length: 10 }, (_, n) => requestTo(`j${n}`, 'full')));
    await within(3_000, pump.drain());

    // Assess: ten sends, each a short wait apart.
    expect(delivered).toHaveLength(10);
    expect(new Set(delivered).size).toBe(10);
  });
});

describe('Outbox pump: a refused request no longer awaited', () => {
  it('sends a later attempt of the step instead of the earlier one (the step timed out and is retried)', async () => {
    // Prepare: attempt 1 to the full queue has been refused.
    let full = true;
    const { bus, delivered } = busWithAFullQueue(() => full);
    const acked: string[] = [];
    const store = {
      async ackOutbox(ids: readonly string[]) {
        acked.push(...ids);
      },
    } as unknown as Store;
    const pump = new OutboxPump({
      store,
      bus,
      logger: silentLogger,
      runFollowUps: async () => {},
      onUndeliverable: async () => {},
      refusedBackoff: { firstDelayMs: 20, maxDelayMs: 20 },
    });
    const first = requestTo('a', 'full');
    pump.enqueue([first]);
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Act: attempt 2 comes, then the queue has room.
    pump.enqueue([{ ...first, id: 'a/full#2', request: { ...first.request, attempt: 2 } }]);
    full = false;
    await within(2_000, pump.drain());

    // Assess: only attempt 2 went out; attempt 1 left the outbox unsent.
    expect(delivered).toEqual(['a:full']);
    expect(acked.sort()).toEqual(['a/full', 'a/full#2']);
    expect(pump.pending).toBe(0);
  });
});

describe('OutboxPump: a long send', () => {
  /**
   * A pump of 2-request batches on a broker that confirms each batch only as its send ends (the
   * recorder's 10 ms rounds catch none of it), logging its sends and the store's writes in order.
   * `duringFirstSend` runs while the first batch is out.
   */
  function loggedPump(duringFirstSend: (pump: OutboxPump) => void = () => {}) {
    const events: string[] = [];
    let sends = 0;
    const bus = {
      async send(requests: readonly StepRequest[], options?: { onSent?: (request: StepRequest) => void }) {
        events.push(`send ${requests.map((request) => request.step).join(',')}`);
        if (++sends === 1) duringFirstSend(pump);
        await new Promise((resolve) => setTimeout(resolve, 1));
        for (const request of requests) options?.onSent?.(request);
      },
    } as unknown as Bus;
    const pump = new OutboxPump({
      store: {
        async ackOutbox(ids: readonly string[], options?: { urgent?: boolean }) {
          const steps = ids.map((id) => id.split('/')[1]).join(',');
          events.push(`${options?.urgent ? 'write' : 'defer'} ${steps}`);
        },
      },
      bus,
      logger: silentLogger,
      sendBatch: 2,
      runFollowUps: async () => {},
      onUndeliverable: async () => {},
    });
    return { pump, events };
  }

  it('records a batch as sent before the next batch goes when more wait, and defers the record of the last', async () => {
    const { pump, events } = loggedPump();

    pump.enqueue(['a', 'b', 'c', 'd', 'e'].map((step) => requestEntry('job', step)));
    await pump.drain();

    // A crash while a batch is out re-sends that batch alone. The last batch, after which nothing
    // waits, is recorded with the next write (a request at low load costs no sync of its own).
    expect(events).toEqual(['send a,b', 'write a,b', 'send c,d', 'write c,d', 'send e', 'defer e']);
  });

  it('leaves the record of a batch to the next write while requests keep coming (commits do too)', async () => {
    // While the first batch is out, a commit enqueues another request.
    const { pump, events } = loggedPump((pump) => pump.enqueue([requestEntry('job', 'z')]));

    pump.enqueue(['a', 'b', 'c', 'd'].map((step) => requestEntry('job', step)));
    await pump.drain();

    // A sync of its own after each send of a steady load cost diamonds 6 to 8% of serve's CPU.
    expect(events).toEqual(['send a,b', 'defer a,b', 'send c,d', 'write c,d', 'send z', 'defer z']);
  });

  it('records requests as the broker confirms them, before the send ends, and each only once', async () => {
    const acked: string[] = [];
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const bus = {
      async send(requests: readonly StepRequest[], options?: { onSent?: (request: StepRequest) => void }) {
        // The broker confirms the first half at once; the rest only when the test says so.
        for (const request of requests.slice(0, requests.length / 2)) options?.onSent?.(request);
        await finished;
        for (const request of requests.slice(requests.length / 2)) options?.onSent?.(request);
      },
    } as unknown as Bus;
    const pump = new OutboxPump({
      store: {
        async ackOutbox(ids: readonly string[]) {
          acked.push(...ids);
        },
      },
      bus,
      logger: silentLogger,
      runFollowUps: async () => {},
      onUndeliverable: async () => {},
    });
    const entries = Array.from({ length: 10 }, (_, i) => requestEntry('job', `s${i}`));
    pump.enqueue(entries);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A crash now would re-send only the five not yet confirmed.
    expect(acked.sort()).toEqual(
      entries
        .slice(0, 5)
        .map((entry) => entry.id)
        .sort(),
    );
    finish();
    await pump.drain();
    expect(acked.sort()).toEqual(entries.map((entry) => entry.id).sort());
  });
});
