import { afterEach, describe, expect, it } from 'vitest';
import { type Delivery, newDeliveryRecord } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { DeliveryPump, type DeliveryPumpOptions } from '../../../functions/manager/delivery-pump.js';
import {
  FIRST_RETRY_DELAY_MS,
  MAX_DELIVERY_ATTEMPTS,
  MAX_RETRY_DELAY_MS,
  retryDelayMs,
} from '../../../functions/manager/delivery-rules.js';
import { silentLogger } from '../../../functions/telemetry/telemetry.js';
import { aDeliveryWithEveryField } from '../../support/every-field.js';
import { uuid } from '../../support/factories.js';
import { documentedVerifier, startReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const SECRET = 'whsec_7c1d9e0f-the-receivers-key';
const secrets = {
  resolve: async (names: readonly string[]) =>
    new Map(names.filter((n) => n === 'HOOK_KEY').map((n) => [n, SECRET])),
};

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<WebhookReceiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

/** A store holding one due delivery to `url`, and a pump on it whose clock the test moves. */
async function setUp(url: string, options: Partial<DeliveryPumpOptions> = {}, secret = 'HOOK_KEY') {
  const store = new MemoryStore();
  const clock = { now: 1_800_000_000_000 };
  const delivery: Delivery = newDeliveryRecord(
    { ...aDeliveryWithEveryField(uuid()), url, secret },
    clock.now,
  );
  await store.addDeliveries([delivery]);
  const pump = new DeliveryPump({
    log: store,
    secrets,
    rules: {},
    logger: silentLogger,
    clock: () => clock.now,
    ...options,
  });
  return { store, clock, delivery, pump };
}

describe('DeliveryPump', () => {
  it('posts a due delivery signed as docs/notifications.md says, which the documented code verifies', async () => {
    const hooks = await receiver({ status: 204 });
    const { store, clock, delivery, pump } = await setUp(hooks.url);
    expect(await pump.runOnce()).toBe(1);
    const [post] = await hooks.received(1);
    expect(post?.headers['switchyard-delivery']).toBe(delivery.id);
    expect(post?.headers['switchyard-event']).toBe('job.failed');
    expect(post?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post?.body ?? '')).toEqual(delivery.body);
    const verify = await documentedVerifier();
    expect(verify(post?.headers['switchyard-signature'], post?.body ?? '', SECRET, 300, clock.now)).toBe(
      true,
    );
    // Not with another key, another body, or long after (a replay).
    expect(
      verify(post?.headers['switchyard-signature'], post?.body ?? '', 'another key', 300, clock.now),
    ).toBe(false);
    expect(verify(post?.headers['switchyard-signature'], `${post?.body} `, SECRET, 300, clock.now)).toBe(
      false,
    );
    expect(
      verify(post?.headers['switchyard-signature'], post?.body ?? '', SECRET, 300, clock.now + 301_000),
    ).toBe(false);
    const stored = await store.getDelivery(delivery.id);
    expect(stored).toMatchObject({
      state: 'delivered',
      attempts: 1,
      lastStatus: 204,
      deliveredAt: clock.now,
    });
    expect(stored?.takenAt).toBeUndefined();
    expect(await pump.runOnce()).toBe(0);
  });

  it('retries a receiver that answers 500 with capped, jittered backoff, and dead-letters it after the last attempt', async () => {
    const hooks = await receiver({ status: 500 });
    const outcomes: string[] = [];
    const metrics = {
      count: (_: string, labels?: Record<string, string>) => outcomes.push(labels?.outcome ?? ''),
      observe() {},
    };
    const { store, clock, delivery, pump } = await setUp(hooks.url, { metrics });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      expect(await pump.runOnce()).toBe(1);
      const stored = (await store.getDelivery(delivery.id)) as Delivery;
      expect(stored).toMatchObject({ attempts: attempt, lastStatus: 500, lastError: 'HTTP 500' });
      if (attempt < MAX_DELIVERY_ATTEMPTS) {
        expect(stored.state).toBe('pending');
        delays.push(stored.nextAttemptAt - clock.now);
        // Not due a moment before its time.
        clock.now = stored.nextAttemptAt - 1;
        expect(await pump.runOnce()).toBe(0);
        clock.now = stored.nextAttemptAt;
      } else expect(stored.state).toBe('dead');
    }
    expect(hooks.posts).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    expect(outcomes).toEqual([...Array(MAX_DELIVERY_ATTEMPTS - 1).fill('failed'), 'dead']);
    delays.forEach((delay, n) => {
      const full = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** n);
      expect(delay).toBeGreaterThanOrEqual(full / 2);
      expect(delay).toBeLessThanOrEqual(full);
    });
    // A dead letter is never taken again, however late.
    clock.now += 365 * 24 * 3_600_000;
    expect(await pump.runOnce()).toBe(0);
    expect(hooks.posts).toHaveLength(MAX_DELIVERY_ATTEMPTS);
  });

  it('fails an attempt the receiver does not answer within the timeout, and one it cannot reach', async () => {
    const hanging = await receiver('hang');
    const slow = await setUp(hanging.url, { timeoutMs: 300 });
    expect(await slow.pump.runOnce()).toBe(1);
    expect(await slow.store.getDelivery(slow.delivery.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: 'no answer within 0.3 s',
    });

    const gone = await startReceiver();
    await gone.close();
    const down = await setUp(gone.url);
    expect(await down.pump.runOnce()).toBe(1);
    const stored = await down.store.getDelivery(down.delivery.id);
    expect(stored).toMatchObject({ state: 'pending', attempts: 1, lastError: 'ECONNREFUSED' });
    expect(stored?.lastStatus).toBeUndefined();
  });

  it('waits for a slow receiver that answers within the timeout: delivered', async () => {
    const slow = await receiver({ status: 202, afterMs: 400 });
    const { store, delivery, pump } = await setUp(slow.url, { timeoutMs: 5_000 });
    await pump.runOnce();
    expect(await store.getDelivery(delivery.id)).toMatchObject({
      state: 'delivered',
      attempts: 1,
      lastStatus: 202,
    });
  });

  it('does not follow a redirect', async () => {
    const hooks = await receiver({ status: 302 });
    const { store, delivery, pump } = await setUp(hooks.url);
    await pump.runOnce();
    expect(await store.getDelivery(delivery.id)).toMatchObject({ state: 'pending', lastError: 'HTTP 302' });
    expect(hooks.posts).toHaveLength(1);
  });

  it('dead-letters at once, unposted, a delivery to a host the rules do not allow', async () => {
    const hooks = await receiver();
    const { store, delivery, pump } = await setUp(hooks.url, {
      rules: { allowHosts: ['hooks.example.com'] },
    });
    await pump.runOnce();
    const stored = await store.getDelivery(delivery.id);
    expect(stored?.state).toBe('dead');
    expect(stored?.lastError).toContain('host "127.0.0.1" is not among the hosts deliveries may go to');
    expect(hooks.posts).toHaveLength(0);
  });

  it('fails, unposted, an attempt whose secret is not set, naming it', async () => {
    const hooks = await receiver();
    const { store, delivery, pump } = await setUp(hooks.url, {}, 'NOT_SET');
    await pump.runOnce();
    expect(await store.getDelivery(delivery.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: 'secret "NOT_SET" is not set',
    });
    expect(hooks.posts).toHaveLength(0);
  });

  it('fails, unposted, the attempts of a round whose secrets service fails, saying so', async () => {
    const hooks = await receiver();
    const failing = { resolve: async () => Promise.reject(new TypeError('connect ECONNREFUSED')) };
    const { store, delivery, pump } = await setUp(hooks.url, { secrets: failing });
    await pump.runOnce();
    expect(await store.getDelivery(delivery.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: 'secrets could not be read (TypeError)',
    });
    expect(hooks.posts).toHaveLength(0);
  });

  it('posts a delivery once when two pumps take the same due ones', async () => {
    const hooks = await receiver({ status: 200, afterMs: 50 });
    const { store, clock, pump } = await setUp(hooks.url);
    const other = new DeliveryPump({
      log: store,
      secrets,
      rules: {},
      logger: silentLogger,
      clock: () => clock.now,
    });
    const counts = await Promise.all([pump.runOnce(), other.runOnce()]);
    expect(counts.sort()).toEqual([0, 1]);
    expect(hooks.posts).toHaveLength(1);
  });

  it('releases at start the deliveries a dead process had taken, keeping their attempts', async () => {
    const hooks = await receiver('hang');
    const { store, clock, delivery, pump } = await setUp(hooks.url, { timeoutMs: 60_000 });
    const round = pump.runOnce();
    await hooks.received(1);
    // The process "dies" here: the delivery stays taken until its lease ends.
    const taken = (await store.getDelivery(delivery.id)) as Delivery;
    expect(taken.takenAt).toBe(clock.now);
    expect(taken.nextAttemptAt).toBeGreaterThan(clock.now + 60_000);
    const restarted = new DeliveryPump({
      log: store,
      secrets,
      rules: {},
      logger: silentLogger,
      clock: () => clock.now,
    });
    expect(await restarted.releaseTaken()).toBe(1);
    expect(await store.getDelivery(delivery.id)).toMatchObject({ attempts: 0, nextAttemptAt: clock.now });
    hooks.mode = { status: 200 };
    expect(await restarted.runOnce()).toBe(1);
    await pump.stop();
    await round;
    expect(hooks.posts.map((post) => post.headers['switchyard-delivery'])).toEqual([
      delivery.id,
      delivery.id,
    ]);
  });

  it('running, keeps posting to others while one receiver holds its post unanswered', async () => {
    const hanging = await receiver('hang');
    const hooks = await receiver({ status: 204 });
    const store = new MemoryStore();
    const first = newDeliveryRecord(
      { ...aDeliveryWithEveryField(uuid()), url: hanging.url, secret: 'HOOK_KEY' },
      Date.now(),
    );
    await store.addDeliveries([first]);
    const pump = new DeliveryPump({ log: store, secrets, rules: {}, logger: silentLogger, pollMs: 20 });
    pump.start();
    try {
      await hanging.received(1);
      const later = newDeliveryRecord(
        { ...aDeliveryWithEveryField(uuid()), url: hooks.url, secret: 'HOOK_KEY' },
        Date.now(),
      );
      await store.addDeliveries([later]);
      await hooks.received(1);
      await expect.poll(async () => (await store.getDelivery(later.id))?.state).toBe('delivered');
      expect((await store.getDelivery(first.id))?.takenAt).toBeDefined();
    } finally {
      await pump.stop();
    }
    // Stopping aborted the held post: not counted as an attempt, it stays taken until released.
    const held = await store.getDelivery(first.id);
    expect(held).toMatchObject({ state: 'pending', attempts: 0 });
    expect(held?.takenAt).toBeDefined();
  });

  it('draws every delay between half and all of its capped doubling', () => {
    expect(retryDelayMs(1, () => 0)).toBe(15_000);
    expect(retryDelayMs(1, () => 1)).toBe(30_000);
    expect(retryDelayMs(7, () => 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(20, () => 0)).toBe(MAX_RETRY_DELAY_MS / 2);
    // docs/notifications.md: the 8 attempts span 31 to 62 minutes.
    const span = (draw: number) =>
      Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, n) => retryDelayMs(n + 1, () => draw)).reduce(
        (sum, delay) => sum + delay,
      );
    expect(Math.round(span(0) / 60_000)).toBe(31);
    expect(Math.round(span(1) / 60_000)).toBe(62);
  });
});
