import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  type ConsumedCapacity,
  type DynamoDBClient,
  type KeysAndAttributes,
} from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type Item, writeUnits } from './dynamodb-units.js';

/*
 * Counts what the simulated deployment asks of AWS, by SDK middleware on each client: every
 * DynamoDB command with the request units it would be billed, every SQS request with its 64 KB
 * chunks. Reads ask the emulator for ConsumedCapacity; writes are priced from the items before and
 * after (read through an uncounted probe client; see dynamodb-units.ts), which slows them down, so
 * durations are measured in another pass with the probing off.
 */

/** Everything counted, keyed by role (`api`, `replies`, `event-source`, `workers`, ...). */
export interface Counts {
  /** DynamoDB calls by command. */
  dynamoCalls: Record<string, number>;
  writeUnits: number;
  /** Of which global secondary index writes. */
  indexWriteUnits: number;
  readUnits: number;
  /**
   * Write units by item kind: the key's prefix (`JOB#…/J` a job head, `OUT#` an outbox entry,
   * `FAN#` fan-in counters, `KIDS#` child index entries, ...), `tx` when written in a transaction,
   * `index` for the global secondary index writes the item causes.
   */
  writeUnitsByKind: Record<string, number>;
  /** SQS requests by command; ReceiveMessage that returned nothing counts as `ReceiveMessage(empty)`. */
  sqsCalls: Record<string, number>;
  /** Billed SQS requests: each 64 KB chunk of a request's payload is one (empty receives left out). */
  sqsBilledRequests: number;
  emptyReceives: number;
}

export const emptyCounts = (): Counts => ({
  dynamoCalls: {},
  writeUnits: 0,
  indexWriteUnits: 0,
  readUnits: 0,
  writeUnitsByKind: {},
  sqsCalls: {},
  sqsBilledRequests: 0,
  emptyReceives: 0,
});

export function addCounts(into: Counts, from: Counts): Counts {
  for (const [k, v] of Object.entries(from.dynamoCalls)) into.dynamoCalls[k] = (into.dynamoCalls[k] ?? 0) + v;
  for (const [k, v] of Object.entries(from.sqsCalls)) into.sqsCalls[k] = (into.sqsCalls[k] ?? 0) + v;
  for (const [k, v] of Object.entries(from.writeUnitsByKind))
    into.writeUnitsByKind[k] = (into.writeUnitsByKind[k] ?? 0) + v;
  into.writeUnits += from.writeUnits;
  into.indexWriteUnits += from.indexWriteUnits;
  into.readUnits += from.readUnits;
  into.sqsBilledRequests += from.sqsBilledRequests;
  into.emptyReceives += from.emptyReceives;
  return into;
}

export function diffCounts(after: Counts, before: Counts): Counts {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(a)
        .map(([k, v]) => [k, v - (b[k] ?? 0)] as const)
        .filter(([, v]) => v !== 0),
    );
  return {
    dynamoCalls: minus(after.dynamoCalls, before.dynamoCalls),
    writeUnits: after.writeUnits - before.writeUnits,
    indexWriteUnits: after.indexWriteUnits - before.indexWriteUnits,
    readUnits: after.readUnits - before.readUnits,
    writeUnitsByKind: minus(after.writeUnitsByKind, before.writeUnitsByKind),
    sqsCalls: minus(after.sqsCalls, before.sqsCalls),
    sqsBilledRequests: after.sqsBilledRequests - before.sqsBilledRequests,
    emptyReceives: after.emptyReceives - before.emptyReceives,
  };
}

export const cloneCounts = (counts: Counts): Counts => addCounts(emptyCounts(), counts);

const bump = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

const READ_COMMANDS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

type KeyOf = (item: Item) => Item;
const keyOf: KeyOf = (item) => {
  const key: Item = {};
  for (const name of ['pk', 'sk']) if (item[name]) key[name] = item[name] as Item[string];
  return key;
};
/** `JOB#/J` (a job head), `JOB#/C` (a chunk), `OUT#`, `FAN#`, `KIDS#`, `CNT#`...: what an item is. */
function itemKind(key: Item): string {
  const pk = key.pk?.S ?? '';
  const prefix = pk.includes('#') ? pk.slice(0, pk.indexOf('#') + 1) : pk;
  if (prefix !== 'JOB#') return prefix;
  const sk = key.sk?.S ?? '';
  return `JOB#/${sk.includes('#') ? sk.slice(0, sk.indexOf('#') + 1) : sk}`;
}

const keyString = (key: Item) => `${key.pk?.S}\u0000${key.sk?.S}`;

interface WriteTarget {
  table: string;
  key: Item;
  /** The item a Put writes (known from the request); undefined for Update and Delete. */
  put?: Item;
  delete?: boolean;
  transactional: boolean;
}

interface WriteRequestShape {
  TableName?: string;
  Item?: Item;
  Key?: Item;
  RequestItems?: Record<string, { PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }[]>;
  TransactItems?: {
    Put?: { TableName?: string; Item?: Item };
    Update?: { TableName?: string; Key?: Item };
    Delete?: { TableName?: string; Key?: Item };
    ConditionCheck?: { TableName?: string; Key?: Item };
  }[];
}

function writeTargets(command: string, input: WriteRequestShape): WriteTarget[] {
  switch (command) {
    case 'PutItem':
      return input.Item
        ? [{ table: input.TableName ?? '', key: keyOf(input.Item), put: input.Item, transactional: false }]
        : [];
    case 'UpdateItem':
      return input.Key ? [{ table: input.TableName ?? '', key: input.Key, transactional: false }] : [];
    case 'DeleteItem':
      return input.Key
        ? [{ table: input.TableName ?? '', key: input.Key, delete: true, transactional: false }]
        : [];
    case 'BatchWriteItem':
      return Object.entries(input.RequestItems ?? {}).flatMap(([table, requests]) =>
        requests.flatMap((request): WriteTarget[] => {
          if (request.PutRequest?.Item)
            return [
              {
                table,
                key: keyOf(request.PutRequest.Item),
                put: request.PutRequest.Item,
                transactional: false,
              },
            ];
          if (request.DeleteRequest?.Key)
            return [{ table, key: request.DeleteRequest.Key, delete: true, transactional: false }];
          return [];
        }),
      );
    case 'TransactWriteItems':
      return (input.TransactItems ?? []).flatMap((entry): WriteTarget[] => {
        if (entry.Put?.Item)
          return [
            {
              table: entry.Put.TableName ?? '',
              key: keyOf(entry.Put.Item),
              put: entry.Put.Item,
              transactional: true,
            },
          ];
        if (entry.Update?.Key)
          return [{ table: entry.Update.TableName ?? '', key: entry.Update.Key, transactional: true }];
        if (entry.Delete?.Key)
          return [
            { table: entry.Delete.TableName ?? '', key: entry.Delete.Key, delete: true, transactional: true },
          ];
        // A condition check reads the item; AWS bills it as a transactional write of its size.
        if (entry.ConditionCheck?.Key)
          return [
            {
              table: entry.ConditionCheck.TableName ?? '',
              key: entry.ConditionCheck.Key,
              delete: false,
              transactional: true,
              put: undefined,
            },
          ];
        return [];
      });
    default:
      return [];
  }
}

/** Reads items by key, 100 at a time, strongly consistent, on the uncounted probe client. */
async function readItems(probe: DynamoDBClient, targets: WriteTarget[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  const byTable = new Map<string, Map<string, Item>>();
  for (const target of targets) {
    const keys = byTable.get(target.table) ?? new Map<string, Item>();
    keys.set(keyString(target.key), target.key);
    byTable.set(target.table, keys);
  }
  for (const [table, keys] of byTable) {
    const all = [...keys.values()];
    for (let i = 0; i < all.length; i += 100) {
      let request: Record<string, KeysAndAttributes> | undefined = {
        [table]: { Keys: all.slice(i, i + 100), ConsistentRead: true },
      };
      while (request && Object.keys(request).length) {
        const output: BatchGetItemCommandOutput = await probe.send(
          new BatchGetItemCommand({ RequestItems: request }),
        );
        for (const item of output.Responses?.[table] ?? [])
          found.set(`${table}\u0001${keyString(item)}`, item);
        request = output.UnprocessedKeys;
      }
    }
  }
  return found;
}

function sumCapacity(capacity: ConsumedCapacity | ConsumedCapacity[] | undefined): number {
  const list = Array.isArray(capacity) ? capacity : capacity ? [capacity] : [];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

/**
 * The read units AWS bills for a read DynamoDB Local reported as `reported`. A Query or Scan that finds
 * nothing is billed on AWS ("you'll still be charged additional read throughput based on read
 * consistency and the number of partitions searched to serve the request, even if no data exists",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html): at
 * least one 4 KB read, a unit strongly consistent and half a unit eventually consistent. DynamoDB
 * Local reports 0 for it (a GetItem of a missing item it reports as AWS bills it).
 */
export function billedReadUnits(command: string, consistentRead: boolean, reported: number): number {
  if (command !== 'Query' && command !== 'Scan') return reported;
  return Math.max(reported, consistentRead ? 1 : 0.5);
}

/**
 * Counts every call `client` makes into `counts`. Pricing writes reads the items before and after
 * each write (on `probe`), which slows the calls down: `probing()` false counts the calls only, for
 * a pass that measures durations.
 */
export function meterDynamoDb(
  client: DynamoDBClient,
  probe: DynamoDBClient,
  counts: Counts,
  probing: () => boolean = () => true,
): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      bump(counts.dynamoCalls, command);
      const input = args.input as Record<string, unknown>;
      if (READ_COMMANDS.has(command)) {
        input.ReturnConsumedCapacity = 'TOTAL';
        const output = await next(args);
        counts.readUnits += billedReadUnits(
          command,
          input.ConsistentRead === true,
          sumCapacity(
            (output.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity,
          ),
        );
        return output;
      }
      const targets = probing() ? writeTargets(command, input as WriteRequestShape) : [];
      if (!targets.length) return next(args);
      const before = await readItems(probe, targets);
      try {
        return await next(args);
      } finally {
        // Refused writes (a failed condition, a cancelled transaction) are billed too, at the old size.
        const needsAfter = targets.filter((t) => !t.put && !t.delete);
        const after = needsAfter.length ? await readItems(probe, needsAfter) : new Map<string, Item>();
        for (const target of targets) {
          const id = `${target.table}\u0001${keyString(target.key)}`;
          const old = before.get(id);
          const now = target.delete ? undefined : (target.put ?? after.get(id) ?? old);
          const units = writeUnits(old, now, target.transactional);
          counts.writeUnits += units.table + units.indexes;
          counts.indexWriteUnits += units.indexes;
          const kind = itemKind(target.key);
          bump(counts.writeUnitsByKind, `${kind}${target.transactional ? ' tx' : ''}`, units.table);
          if (units.indexes) bump(counts.writeUnitsByKind, `${kind} index`, units.indexes);
        }
      }
    },
    { step: 'initialize', name: 'benchDynamoDbMeter' },
  );
}

interface SqsMessageShape {
  MessageBody?: string;
  Body?: string;
  MessageAttributes?: Record<string, { StringValue?: string; DataType?: string }>;
}

function payloadBytes(message: SqsMessageShape): number {
  let bytes = Buffer.byteLength(message.MessageBody ?? message.Body ?? '');
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {}))
    bytes +=
      Buffer.byteLength(name) +
      Buffer.byteLength(value.DataType ?? '') +
      Buffer.byteLength(value.StringValue ?? '');
  return bytes;
}

const CHUNK = 64 * 1024;
const chunks = (bytes: number) => Math.max(1, Math.ceil(bytes / CHUNK));

/** Counts every SQS request `client` makes into `counts`, with its billed 64 KB chunks. */
export function meterSqs(client: SQSClient, counts: Counts): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const input = args.input as SqsMessageShape & { Entries?: SqsMessageShape[] };
      const output = await next(args);
      if (command === 'ReceiveMessage') {
        const messages = (output.output as { Messages?: SqsMessageShape[] }).Messages ?? [];
        if (!messages.length) {
          bump(counts.sqsCalls, 'ReceiveMessage(empty)');
          counts.emptyReceives++;
          return output;
        }
        bump(counts.sqsCalls, command);
        counts.sqsBilledRequests += chunks(messages.reduce((sum, m) => sum + payloadBytes(m), 0));
        return output;
      }
      bump(counts.sqsCalls, command);
      if (command === 'SendMessage') counts.sqsBilledRequests += chunks(payloadBytes(input));
      else if (command === 'SendMessageBatch')
        counts.sqsBilledRequests += chunks(
          (input.Entries ?? []).reduce((sum, m) => sum + payloadBytes(m), 0),
        );
      else counts.sqsBilledRequests += 1;
      return output;
    },
    { step: 'initialize', name: 'benchSqsMeter' },
  );
}
