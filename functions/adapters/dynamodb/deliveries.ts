import {
  DELIVERY_RETENTION_MS,
  type Delivery,
  type DeliveryLog,
  type DeliveryPage,
  type DeliveryQuery,
  deliveryPageKey,
} from '../../../engine/index.js';
import { keys, N, S, shardOf, str, time } from './items.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit, type Item, mapLimit } from './table.js';

/** Pending deliveries are spread over this many partitions of gsi2, each read by the pump. */
const DUE_SHARDS = 4;

/**
 * The delivery log (engine/ports/deliveries.ts): one item per delivery (`DLV#<id>` / `D`), its
 * record as JSON, with three index entries. gsi1: its namespace's listing of its state, newest
 * first (`DLV#<state>#<namespace>` / page key); gsi2, only while pending: when it is due
 * (`DLVDUE#<shard>` / due time); gsi3: its job's (`DLVJOB#<job id>` / page key). A settled one
 * expires through the TTL (`expiresAt`) after `DELIVERY_RETENTION_MS`. A few deliveries per job:
 * small items, each written a few times.
 */
export class DynamoDbDeliveries implements DeliveryLog {
  constructor(private readonly table: DynamoDbTable) {}

  async addDeliveries(deliveries: readonly Delivery[]): Promise<void> {
    await forEachLimit(deliveries, 8, async (delivery) => {
      try {
        await this.table.put({ Item: itemOf(delivery), ConditionExpression: 'attribute_not_exists(pk)' });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    });
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    const shards = Array.from({ length: DUE_SHARDS }, (_, shard) => shard);
    const pages = await mapLimit(shards, DUE_SHARDS, (shard) =>
      this.table.queryPage({
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :p AND gsi2sk <= :now',
        ExpressionAttributeValues: { ':p': S(dueShard(shard)), ':now': S(`${time(now)}~`) },
        Limit: limit,
      }),
    );
    const found = await this.read(pages.flatMap((page) => page.items));
    return found
      .filter((delivery) => delivery.state === 'pending' && delivery.nextAttemptAt <= now)
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
      .slice(0, limit);
  }

  async updateDelivery(delivery: Delivery): Promise<boolean> {
    try {
      await this.table.put({
        Item: itemOf(delivery),
        ConditionExpression: 'rev = :expected',
        ExpressionAttributeValues: { ':expected': N(delivery.rev - 1) },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const item = await this.table.get(keys.delivery(id));
    return item && deliveryOf(item);
  }

  async jobDeliveries(jobId: string): Promise<Delivery[]> {
    const entries = await this.table.queryAll({
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :p',
      ExpressionAttributeValues: { ':p': S(`DLVJOB#${jobId}`) },
    });
    const found = await this.read(entries);
    return found.sort((a, b) => (deliveryPageKey(a) < deliveryPageKey(b) ? -1 : 1));
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    const limit = query.limit ?? 100;
    const { items } = await this.table.queryPage({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p AND gsi1sk < :before',
      ExpressionAttributeValues: {
        ':p': S(listing(query.state, query.namespace)),
        ':before': S(query.cursor ?? '~'),
      },
      ScanIndexForward: false,
      Limit: limit + 1,
    });
    // The index is read eventually: an item that changed state since is left out of this page.
    const found = (await this.read(items.slice(0, limit))).filter(
      (delivery) => delivery.state === query.state,
    );
    const deliveries = found.sort((a, b) => (deliveryPageKey(a) < deliveryPageKey(b) ? 1 : -1));
    const lastKey = str(items[Math.min(limit, items.length) - 1], 'gsi1sk');
    return items.length > limit && lastKey ? { deliveries, cursor: lastKey } : { deliveries };
  }

  /** The deliveries whose index entries these are, read from the table. */
  private async read(entries: readonly Item[]): Promise<Delivery[]> {
    if (entries.length === 0) return [];
    const items = await this.table.batchGet(entries.map((entry) => keys.delivery(idOf(entry))));
    return items.map(deliveryOf);
  }
}

const dueShard = (shard: number) => `DLVDUE#${shard}`;
const listing = (state: string, namespace: string) => `DLV#${state}#${namespace}`;

function idOf(entry: Item): string {
  return (str(entry, 'pk') ?? '').slice('DLV#'.length);
}

function itemOf(delivery: Delivery): Item {
  const pageKey = deliveryPageKey(delivery);
  const item: Item = {
    ...keys.delivery(delivery.id),
    rev: N(delivery.rev),
    j: S(JSON.stringify(delivery)),
    gsi1pk: S(listing(delivery.state, delivery.namespace)),
    gsi1sk: S(pageKey),
    gsi3pk: S(`DLVJOB#${delivery.jobId}`),
    gsi3sk: S(pageKey),
  };
  // A settled delivery expires through the table's TTL after the retention.
  if (delivery.state !== 'pending')
    item.expiresAt = N(Math.ceil((delivery.updatedAt + DELIVERY_RETENTION_MS) / 1_000));
  if (delivery.state === 'pending') {
    item.gsi2pk = S(dueShard(shardOf(delivery.id, DUE_SHARDS)));
    item.gsi2sk = S(`${time(delivery.nextAttemptAt)}#${delivery.id}`);
  }
  return item;
}

function deliveryOf(item: Item): Delivery {
  return JSON.parse(str(item, 'j') ?? '{}') as Delivery;
}
