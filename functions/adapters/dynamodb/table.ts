import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  type DeleteItemCommandInput,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand,
  type QueryCommandInput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
  type UpdateItemCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETRY_POLICY, errorName, type RetryPolicy, untilProcessed, withRetries } from './retry.js';

export type Item = Record<string, AttributeValue>;
export type Key = { pk: AttributeValue; sk: AttributeValue };

export type WriteOp = { put: Item } | { delete: Key };

type Tableless<T> = Omit<T, 'TableName'>;

const BATCH_GET_LIMIT = 100;
const BATCH_WRITE_LIMIT = 25;
/** Parallel requests of one batch read or write. */
const BATCH_PARALLELISM = 16;

export function keyOf(pk: string, sk: string): Key {
  return { pk: { S: pk }, sk: { S: sk } };
}

function keyString(key: Key | Item): string {
  return `${key.pk?.S}\u0000${key.sk?.S}`;
}

/**
 * The one table, with every call retried (throttling, server errors, unprocessed batch items) and
 * batch calls split to their limits. Callers see whole results or an error.
 */
export class DynamoDbTable {
  constructor(
    readonly client: DynamoDBClient,
    readonly name: string,
    readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async get(key: Key, consistent = true): Promise<Item | undefined> {
    const output = await withRetries(
      'GetItem',
      () =>
        this.client.send(new GetItemCommand({ TableName: this.name, Key: key, ConsistentRead: consistent })),
      this.retry,
    );
    return output.Item;
  }

  async put(input: Tableless<PutItemCommandInput>): Promise<void> {
    await withRetries(
      'PutItem',
      () => this.client.send(new PutItemCommand({ ...input, TableName: this.name })),
      this.retry,
    );
  }

  async update(input: Tableless<UpdateItemCommandInput>): Promise<UpdateItemCommandOutput> {
    return withRetries(
      'UpdateItem',
      () => this.client.send(new UpdateItemCommand({ ...input, TableName: this.name })),
      this.retry,
    );
  }

  async delete(input: Tableless<DeleteItemCommandInput>): Promise<void> {
    await withRetries(
      'DeleteItem',
      () => this.client.send(new DeleteItemCommand({ ...input, TableName: this.name })),
      this.retry,
    );
  }

  /** One page of a query. */
  async queryPage(input: Tableless<QueryCommandInput>): Promise<{ items: Item[]; next?: Item }> {
    const output = await withRetries(
      'Query',
      () => this.client.send(new QueryCommand({ ...input, TableName: this.name })),
      this.retry,
    );
    return { items: output.Items ?? [], next: output.LastEvaluatedKey };
  }

  /** Every item a query matches (all pages). */
  async queryAll(input: Tableless<QueryCommandInput>): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.queryPage({ ...input, ExclusiveStartKey: start });
      items.push(...page.items);
      start = page.next;
    } while (start);
    return items;
  }

  /** How many items a query matches (all pages), reading none of them back. */
  async count(input: Tableless<QueryCommandInput>): Promise<number> {
    let total = 0;
    let start: Item | undefined;
    do {
      const output = await withRetries(
        'Query',
        () =>
          this.client.send(
            new QueryCommand({ ...input, Select: 'COUNT', TableName: this.name, ExclusiveStartKey: start }),
          ),
        this.retry,
      );
      total += output.Count ?? 0;
      start = output.LastEvaluatedKey;
    } while (start);
    return total;
  }

  /** The items that exist among `keys`, in no particular order. */
  async batchGet(keys: readonly Key[], consistent = true): Promise<Item[]> {
    const unique = [...new Map(keys.map((key) => [keyString(key), key])).values()];
    const groups = chunk(unique, BATCH_GET_LIMIT);
    const found: Item[] = [];
    await forEachLimit(groups, BATCH_PARALLELISM, (group) =>
      untilProcessed(
        'BatchGetItem',
        group,
        async (left) => {
          const output = await this.client.send(
            new BatchGetItemCommand({
              RequestItems: { [this.name]: { Keys: [...left], ConsistentRead: consistent } },
            }),
          );
          found.push(...(output.Responses?.[this.name] ?? []));
          return (output.UnprocessedKeys?.[this.name]?.Keys ?? []) as Key[];
        },
        this.retry,
      ),
    );
    return found;
  }

  /** Puts and deletes, 25 a call, in parallel; the last operation on a key wins. */
  async batchWrite(ops: readonly WriteOp[]): Promise<void> {
    const byKey = new Map<string, WriteRequest>();
    for (const op of ops) {
      if ('put' in op) byKey.set(keyString(op.put), { PutRequest: { Item: op.put } });
      else byKey.set(keyString(op.delete), { DeleteRequest: { Key: op.delete } });
    }
    const groups = chunk([...byKey.values()], BATCH_WRITE_LIMIT);
    await forEachLimit(groups, BATCH_PARALLELISM, (group) =>
      untilProcessed(
        'BatchWriteItem',
        group,
        async (left) => {
          const output = await this.client.send(
            new BatchWriteItemCommand({ RequestItems: { [this.name]: [...left] } }),
          );
          return output.UnprocessedItems?.[this.name] ?? [];
        },
        this.retry,
      ),
    );
  }

  /**
   * One transaction. Its token makes a retry after a lost answer idempotent (DynamoDB remembers it
   * for ten minutes); a cancelled transaction wrote nothing, so its retry takes a fresh token.
   * Conflicts with other transactions and throttling are retried; a failed condition is thrown as
   * the TransactionCanceledException with its reasons.
   */
  async transact(items: readonly TransactWriteItem[], token: string = randomUUID()): Promise<void> {
    const named = items.map((item) => withTableName(item, this.name));
    let requestToken = token;
    await withRetries(
      'TransactWriteItems',
      async () => {
        try {
          await this.client.send(
            new TransactWriteItemsCommand({ TransactItems: named, ClientRequestToken: requestToken }),
          );
        } catch (error) {
          if (errorName(error) === 'TransactionCanceledException') requestToken = randomUUID();
          throw error;
        }
      },
      this.retry,
    );
  }
}

function withTableName(item: TransactWriteItem, table: string): TransactWriteItem {
  if (item.Put) return { Put: { ...item.Put, TableName: table } };
  if (item.Update) return { Update: { ...item.Update, TableName: table } };
  if (item.Delete) return { Delete: { ...item.Delete, TableName: table } };
  if (item.ConditionCheck) return { ConditionCheck: { ...item.ConditionCheck, TableName: table } };
  return item;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const groups: T[][] = [];
  for (let start = 0; start < items.length; start += size) groups.push(items.slice(start, start + size));
  return groups;
}

/** Runs `run` on every item, at most `limit` at a time; the first error is thrown once all settle. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const item = items[next++] as T;
      try {
        await run(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}

/** `forEachLimit` that keeps the results, in the order of `items`. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const indexed = items.map((item, index) => ({ item, index }));
  await forEachLimit(indexed, limit, async ({ item, index }) => {
    results[index] = await run(item);
  });
  return results;
}
