import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { EveryField, FanCounts, FanInit } from '../../../engine/index.js';
import { fanWatch, type StoredFan } from './fan-watch.js';
import { keys, N, num, pad } from './items.js';
import type { PendingWrites } from './pending.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item } from './table.js';

/** Shards of one fan-out's counters: each is an item of its own, so finishing children rarely meet. */
export const MAX_COUNTER_SHARDS = 32;

/** About one shard per hundred children, at most 32: a hundred children seldom finish at the same moment. */
export const defaultCounterShards = (total: number): number => Math.ceil(total / 100);

const FIRST_SHARD = pad(0, 3);
const MAX_REMEMBERED = 10_000;

/** What a fan-out's counters keep of its `FanInit`, besides their key (`FAN#<parent>#<step>`). */
type KeptInit = Omit<FanInit, 'parentId' | 'step'>;

/** `ce` on shard 0: the step's `continueOnError`, absent when false. */
const continueOnErrorAttribute = (init: KeptInit): Item =>
  init.continueOnError ? { ce: { BOOL: true } } : {};

/**
 * A fan-out step's counters: partition `FAN#<parent>#<step>`, one item per shard. Shard 0 holds the
 * total and the number of shards (`tot`, `sh`) and the step's `continueOnError` (`ce`), which
 * the watcher needs; every shard counts `dn` (done) and `fl` (failed).
 * Child `i` adds to shard `i % sh`, in the same transaction as its final write, so it is counted
 * exactly once; a read sums the shards (one query, strongly consistent). When the counters were
 * written pending (a big commit creating a nested fan-out), shard 0's version carries the starting
 * values as `bt`/`bs`/`bd`/`bf` and the shards' own `dn`/`fl` only what children added since.
 * Shard 0 is also the fan-out's watcher in gsi3 until recovery finds its step ended
 * (fan-watch.ts), and says which commit took the fan-in (`fi`, `takeFanIn`).
 */
export class FanCounters {
  private readonly shards = new Map<string, number>();
  private readonly watched = new Set<string>();

  constructor(
    private readonly table: DynamoDbTable,
    private readonly pending: PendingWrites,
    private readonly counterShards: (total: number) => number,
  ) {}

  shardsFor(total: number): number {
    return Math.max(1, Math.min(MAX_COUNTER_SHARDS, Math.floor(this.counterShards(total)) || 1));
  }

  /** Committed items of fresh counters (they replace whatever a shard held). */
  items(parentId: string, step: string, init: KeptInit, shards: number): Item[] {
    this.remember(parentId, step, shards, true);
    return Array.from({ length: shards }, (_, shard) => {
      const item: Item = { ...keys.fanShard(parentId, step, shard), dn: N(0), fl: N(0) };
      if (shard === 0)
        Object.assign(item, {
          tot: N(init.total),
          sh: N(shards),
          dn: N(init.done),
          fl: N(init.failed),
          ...continueOnErrorAttribute(init),
          ...fanWatch(parentId, step),
        });
      return item;
    });
  }

  /** The version of shard 0 written pending. */
  pendingBase(init: KeptInit, shards: number): Item {
    return {
      bt: N(init.total),
      bs: N(shards),
      bd: N(init.done),
      bf: N(init.failed),
      ...continueOnErrorAttribute(init),
    };
  }

  /** Adds a finished child to its shard (one item of the child's final transaction). */
  outcome(
    parentId: string,
    step: string,
    index: number,
    status: 'completed' | 'failed',
    shards: number,
  ): TransactWriteItem {
    return {
      Update: {
        TableName: undefined,
        Key: keys.fanShard(parentId, step, index % shards),
        UpdateExpression: 'ADD #count :one',
        ExpressionAttributeNames: { '#count': status === 'completed' ? 'dn' : 'fl' },
        ExpressionAttributeValues: { ':one': N(1) },
      },
    };
  }

  /** The number of shards of existing counters, or undefined when the step has none. */
  async shardsOf(parentId: string, step: string): Promise<number | undefined> {
    const known = this.shards.get(`${parentId}\u0000${step}`);
    if (known !== undefined) return known;
    return (await this.readStored(parentId, step))?.shards;
  }

  async read(parentId: string, step: string): Promise<FanCounts | undefined> {
    return (await this.readStored(parentId, step))?.counts;
  }

  /** The counters summed over their shards, with what shard 0 keeps of the fan-out's `FanInit`. */
  async readStored(parentId: string, step: string): Promise<StoredFan | undefined> {
    const items = await this.table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: keys.fanPk(parentId, step) } },
      ConsistentRead: true,
    });
    const stored = items.find((item) => item.sk?.S === FIRST_SHARD);
    const first = stored && (await this.pending.resolve(stored));
    if (!first) return undefined;
    const shards = num(first, 'sh') ?? num(first, 'bs') ?? 1;
    // Shard 0 read back as the FanInit it was written from, less its key: every field of it, so a
    // field added to FanInit fails tsc here until the counters keep it.
    const init = {
      total: num(first, 'tot') ?? num(first, 'bt') ?? 0,
      done: num(first, 'bd') ?? 0,
      failed: num(first, 'bf') ?? 0,
      // Absent when false, and on counters written before it was kept.
      continueOnError: first.ce?.BOOL === true ? true : undefined,
    } satisfies EveryField<KeptInit>;
    const counts: FanCounts = { total: init.total, done: init.done, failed: init.failed };
    for (const item of items) {
      if (Number(item.sk?.S) >= shards) continue;
      counts.done += num(item, 'dn') ?? 0;
      counts.failed += num(item, 'fl') ?? 0;
    }
    this.remember(parentId, step, shards, stored?.wa !== undefined);
    return { counts, shards, continueOnError: init.continueOnError === true };
  }

  private remember(parentId: string, step: string, shards: number, watched: boolean): void {
    if (this.shards.size >= MAX_REMEMBERED) {
      this.shards.clear();
      this.watched.clear();
    }
    const id = `${parentId}\u0000${step}`;
    this.shards.set(id, shards);
    if (watched) this.watched.add(id);
    else this.watched.delete(id);
  }

  /**
   * Whether the fan-out has a watcher (fan-watch.ts), as far as this process knows (from
   * `shardsOf`): only then may a finishing child leave out a follow-up only the last one needs.
   */
  isWatched(parentId: string, step: string): boolean {
    return this.watched.has(`${parentId}\u0000${step}`);
  }

  /**
   * Takes the fan-out's fan-in for one commit: `fi` on shard 0, set once. Two reply batches that
   * finish the last children at the same time both read complete counters; only the one that takes
   * the fan-in writes its follow-up, so its children are gathered once (each gather reads every
   * child). Counters written anew (a new or retried fan-out) are put whole, without `fi`. A taker
   * that stops before writing its follow-up leaves the fan-in to the watcher (fan-watch.ts), as a
   * crash after the child's commit always did.
   */
  async takeFanIn(parentId: string, step: string, token: string): Promise<boolean> {
    try {
      await this.table.update({
        Key: keys.fanShard(parentId, step, 0),
        UpdateExpression: 'SET fi = :token',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(fi)',
        ExpressionAttributeValues: { ':token': { S: token } },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Counts a retried fan-out anew; its `continueOnError`, fixed when it was created, is kept. */
  async set(parentId: string, step: string, counts: FanCounts): Promise<void> {
    const stored = await this.readStored(parentId, step);
    const init: KeptInit = stored?.continueOnError ? { ...counts, continueOnError: true } : counts;
    await this.table.batchWrite(
      this.items(parentId, step, init, this.shardsFor(counts.total)).map((item) => ({ put: item })),
    );
  }
}
