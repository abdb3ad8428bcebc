import type { NewDelivery } from '../job/notifications.js';

export type DeliveryState = 'pending' | 'delivered' | 'dead';

/**
 * A delivered or dead delivery is kept this long after it settled, then a store lets it go (pruned
 * at each add locally, the table's TTL deployed); a pending one is kept until it settles.
 */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'dead'];

/** A webhook delivery as the delivery log keeps it: what to post, and how its attempts went. */
export interface Delivery extends NewDelivery {
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** While pending: when the next attempt is due (ms); a pump that takes it moves it past its timeout. */
  nextAttemptAt: number;
  createdAt: number;
  updatedAt: number;
  /** The HTTP status of the latest attempt, when the receiver answered. */
  lastStatus?: number;
  /** Why the latest attempt failed (a status, a timeout, a refused connection). */
  lastError?: string;
  deliveredAt?: number;
  /** While a pump posts it: when that pump took it (its due time is then the end of its lease). */
  takenAt?: number;
  /** Incremented by every change: `updateDelivery` writes only over the revision it read. */
  rev: number;
}

export interface DeliveryQuery {
  state: DeliveryState;
  /** Every listing is of one namespace's deliveries (the API's routes are namespaced). */
  namespace: string;
  /** @default 100 */
  limit?: number;
  /** Opaque: from the previous page. */
  cursor?: string;
}

export interface DeliveryPage {
  /** Newest first. */
  deliveries: Delivery[];
  cursor?: string;
}

/**
 * The delivery log: webhook deliveries recorded by a transition's `notify` follow-up, taken by the
 * hosts' delivery pump (functions/manager/delivery-pump.ts), listed by the API.
 */
export interface DeliveryLog {
  /**
   * Adds each delivery whose id is not stored yet (a follow-up carried out twice adds them once), and
   * lets go of those settled more than `DELIVERY_RETENTION_MS` before the newest one added.
   */
  addDeliveries(deliveries: readonly Delivery[]): Promise<void>;
  /** Pending deliveries due by `now`, earliest first. */
  dueDeliveries(now: number, limit: number): Promise<Delivery[]>;
  /** Writes `delivery` (its `rev` one above the stored one) only if the stored rev is `delivery.rev - 1`. */
  updateDelivery(delivery: Delivery): Promise<boolean>;
  getDelivery(id: string): Promise<Delivery | undefined>;
  /** A job's deliveries, oldest first. */
  jobDeliveries(jobId: string): Promise<Delivery[]>;
  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage>;
}

/** Where a delivery sorts in a listing (newest first) and what a cursor holds: its time, then its id. */
export function deliveryPageKey(delivery: Pick<Delivery, 'createdAt' | 'id'>): string {
  return `${String(Math.trunc(delivery.createdAt)).padStart(13, '0')}-${delivery.id}`;
}

/** A pending delivery as the log first records it: due at once. */
export function newDeliveryRecord(delivery: NewDelivery, now: number): Delivery {
  return {
    ...delivery,
    state: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
    rev: 1,
  };
}
