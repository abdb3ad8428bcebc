import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DELIVERY_RETENTION_MS,
  type Delivery,
  type DeliveryLog,
  deliveryPageKey,
  newDeliveryRecord,
} from '../../engine/index.js';
import { aDeliveryWithEveryField } from '../support/every-field.js';
import { uuid } from '../support/factories.js';

/** A delivery with every optional field set, of `jobId` in `namespace`, recorded at `at`. */
function aFullDelivery(jobId: string, namespace: string, at: number): Required<Delivery> {
  const recorded = newDeliveryRecord({ ...aDeliveryWithEveryField(jobId), namespace }, at);
  return {
    ...recorded,
    lastStatus: 503,
    lastError: 'HTTP 503',
    deliveredAt: at + 5,
    takenAt: at + 1,
    attempts: 2,
  };
}

function pending(jobId: string, namespace: string, at: number, due = at): Delivery {
  const delivery = newDeliveryRecord({ ...aDeliveryWithEveryField(jobId), namespace }, at);
  return { ...delivery, id: uuid(), nextAttemptAt: due };
}

/** The delivery log (engine/ports/deliveries.ts) of every store. */
export function describeDeliveryLogContract(
  log: () => DeliveryLog,
  /** Where the store lets settled deliveries go through a TTL: when one expires (epoch seconds). */
  expiry?: (id: string) => Promise<number | undefined>,
): void {
  describe('delivery log', () => {
    it('keeps every field of a delivery, and adds an id only once', async () => {
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const jobId = uuid();
      const full = aFullDelivery(jobId, namespace, 1_700_000_000_000);
      await log().addDeliveries([full]);
      // A follow-up carried out again adds the same id: the first one stays.
      await log().addDeliveries([{ ...full, url: 'https://elsewhere.example.com/' }]);
      expect(await log().getDelivery(full.id)).toEqual(full);
      expect(await log().jobDeliveries(jobId)).toEqual([full]);
      expect(await log().getDelivery(uuid())).toBeUndefined();
      await log().addDeliveries([]);
      expect(await log().getDelivery(full.id)).toEqual(full);
    });

    it('hands out due pending deliveries, earliest first, and not those due later or settled', async () => {
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const now = 4_000_000_000_000 + Math.floor(Math.random() * 1_000_000);
      const jobId = uuid();
      const later = pending(jobId, namespace, now - 10, now + 60_000);
      const second = pending(jobId, namespace, now - 10, now - 5);
      const first = pending(jobId, namespace, now - 10, now - 8);
      const dead = { ...pending(jobId, namespace, now - 10, now - 9), state: 'dead' as const };
      await log().addDeliveries([later, second, first, dead]);
      const due = (await log().dueDeliveries(now, 1000)).filter((d) => d.jobId === jobId);
      expect(due.map((d) => d.id)).toEqual([first.id, second.id]);
    });

    it('writes an update only over the revision it read', async () => {
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const delivery = pending(uuid(), namespace, 1_700_000_000_000);
      await log().addDeliveries([delivery]);
      const taken = { ...delivery, nextAttemptAt: delivery.nextAttemptAt + 40_000, rev: delivery.rev + 1 };
      expect(await log().updateDelivery(taken)).toBe(true);
      // A second pump that read the same revision loses.
      expect(await log().updateDelivery({ ...taken, attempts: 5 })).toBe(false);
      const done = { ...taken, state: 'delivered' as const, attempts: 1, deliveredAt: 1, rev: taken.rev + 1 };
      expect(await log().updateDelivery(done)).toBe(true);
      expect(await log().getDelivery(delivery.id)).toEqual(done);
      expect(await log().updateDelivery({ ...pending(uuid(), namespace, 1), rev: 2 })).toBe(false);
      const due = await log().dueDeliveries(Number.MAX_SAFE_INTEGER, 10_000);
      expect(due.map((d) => d.id)).not.toContain(delivery.id);
    });

    it("lists a namespace's deliveries of one state, newest first, in pages", async () => {
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const dead = Array.from({ length: 5 }, (_, n) => ({
        ...pending(uuid(), namespace, 1_700_000_000_000 + n),
        state: 'dead' as const,
      }));
      const other = { ...pending(uuid(), `${namespace}-x`, 1_700_000_000_000), state: 'dead' as const };
      await log().addDeliveries([...dead, other, pending(uuid(), namespace, 1_700_000_000_009)]);
      const first = await log().listDeliveries({ state: 'dead', namespace, limit: 3 });
      expect(first.deliveries.map((d) => d.id)).toEqual(
        dead
          .slice(2)
          .reverse()
          .map((d) => d.id),
      );
      expect(first.cursor).toBeDefined();
      const second = await log().listDeliveries({ state: 'dead', namespace, limit: 3, cursor: first.cursor });
      expect(second.deliveries.map((d) => d.id)).toEqual(
        dead
          .slice(0, 2)
          .reverse()
          .map((d) => d.id),
      );
      expect(second.cursor).toBeUndefined();
      expect(deliveryPageKey(dead[0] as Delivery) < deliveryPageKey(dead[1] as Delivery)).toBe(true);
    });

    it('lets go of deliveries settled longer ago than the retention, keeping pending ones', async () => {
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const settledAt = 1_750_000_000_000;
      const settled = {
        ...pending(uuid(), namespace, settledAt - 5),
        state: 'dead' as const,
        updatedAt: settledAt,
      };
      const waiting = pending(uuid(), namespace, settledAt - 5);
      await log().addDeliveries([settled, waiting]);
      await log().addDeliveries([pending(uuid(), namespace, settledAt + DELIVERY_RETENTION_MS + 1)]);
      expect(await log().getDelivery(waiting.id)).toEqual(waiting);
      // DynamoDB's TTL: an item expires when its attribute (epoch seconds) is past, and is deleted
      // within about two days after (https://docs.aws.amazon.com/cli/v1/reference/dynamodb/update-time-to-live.html).
      const expiresAt = await expiry?.(settled.id);
      if (expiresAt === undefined) {
        expect(await log().getDelivery(settled.id)).toBeUndefined();
      } else {
        expect(expiresAt).toBe(Math.ceil((settledAt + DELIVERY_RETENTION_MS) / 1000));
        expect(await expiry?.(waiting.id)).toBeUndefined();
      }
    });

    it('lists a job’s deliveries oldest first', async () => {
      const jobId = uuid();
      const namespace = `dlv-${randomBytes(4).toString('hex')}`;
      const deliveries = [3, 1, 2].map((n) => pending(jobId, namespace, 1_700_000_000_000 + n));
      await log().addDeliveries(deliveries);
      expect((await log().jobDeliveries(jobId)).map((d) => d.createdAt)).toEqual([
        1_700_000_000_001, 1_700_000_000_002, 1_700_000_000_003,
      ]);
    });
  });
}
