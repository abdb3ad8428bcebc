import type Database from 'better-sqlite3';
import {
  DELIVERY_RETENTION_MS,
  type Delivery,
  type DeliveryPage,
  type DeliveryQuery,
  deliveryPageKey,
} from '../../../engine/index.js';

/**
 * The delivery log (engine/ports/deliveries.ts): one row per delivery, its record as JSON, with the
 * columns its three reads need indexed: due pending ones, a job's, and a state's newest first.
 * Synchronous: the store wraps each call.
 */
export class DeliveryTable {
  private readonly insert;
  private readonly prune;
  private readonly update;
  private readonly one;
  private readonly due;
  private readonly ofJob;
  private readonly page;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare<[string, string, string, string, number, string, number, number | null, string]>(
      `INSERT INTO deliveries (id, job_id, namespace, state, next_attempt_at, page_key, rev, settled_at, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    );
    this.update = db.prepare<[string, number, number, number | null, string, string, number]>(
      `UPDATE deliveries SET state = ?, next_attempt_at = ?, rev = ?, settled_at = ?, record = ?
       WHERE id = ? AND rev = ?`,
    );
    this.prune = db.prepare<[number]>('DELETE FROM deliveries WHERE settled_at < ?');
    this.one = db.prepare<[string], string>('SELECT record FROM deliveries WHERE id = ?').pluck();
    this.due = db
      .prepare<[number, number], string>(
        `SELECT record FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ?
         ORDER BY next_attempt_at LIMIT ?`,
      )
      .pluck();
    this.ofJob = db
      .prepare<[string], string>('SELECT record FROM deliveries WHERE job_id = ? ORDER BY page_key')
      .pluck();
    this.page = db
      .prepare<[string, string, string, number], string>(
        `SELECT record FROM deliveries WHERE state = ? AND namespace = ? AND page_key < ?
         ORDER BY page_key DESC LIMIT ?`,
      )
      .pluck();
  }

  add(deliveries: readonly Delivery[]): void {
    if (!deliveries.length) return;
    const newest = Math.max(...deliveries.map((delivery) => delivery.createdAt));
    this.db.transaction(() => {
      this.prune.run(newest - DELIVERY_RETENTION_MS);
      for (const d of deliveries) {
        const { id, jobId, namespace, state, nextAttemptAt, rev } = d;
        const page = deliveryPageKey(d);
        this.insert.run(
          id,
          jobId,
          namespace,
          state,
          nextAttemptAt,
          page,
          rev,
          settledAt(d),
          JSON.stringify(d),
        );
      }
    })();
  }

  dueBy(now: number, limit: number): Delivery[] {
    return this.due.all(now, limit).map(parse);
  }

  put(delivery: Delivery): boolean {
    const { state, nextAttemptAt, rev, id } = delivery;
    const record = JSON.stringify(delivery);
    return this.update.run(state, nextAttemptAt, rev, settledAt(delivery), record, id, rev - 1).changes > 0;
  }

  get(id: string): Delivery | undefined {
    const record = this.one.get(id);
    return record === undefined ? undefined : parse(record);
  }

  ofJobId(jobId: string): Delivery[] {
    return this.ofJob.all(jobId).map(parse);
  }

  list(query: DeliveryQuery): DeliveryPage {
    const limit = query.limit ?? 100;
    const before = query.cursor ?? '~';
    const records = this.page.all(query.state, query.namespace, before, limit + 1);
    const deliveries = records.slice(0, limit).map(parse);
    const last = deliveries.at(-1);
    return records.length > limit && last ? { deliveries, cursor: deliveryPageKey(last) } : { deliveries };
  }
}

/** When a delivered or dead delivery settled; null while it is pending. */
function settledAt(delivery: Delivery): number | null {
  return delivery.state === 'pending' ? null : delivery.updatedAt;
}

function parse(record: string): Delivery {
  return JSON.parse(record) as Delivery;
}
