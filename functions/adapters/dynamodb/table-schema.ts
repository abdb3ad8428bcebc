import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The one DynamoDB table Switchyard keeps everything in. The DynamoDB store and the tests build it
 * from these names; the CDK stack keeps a copy (infra imports no handler code), and
 * test/infra/table-schema.test.ts checks that the deployed table agrees with this one.
 */
export const SWITCHYARD_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /**
   * Both indexes project keys only: an update that keeps an item's index keys then writes nothing to
   * the index, and every entry is a small one (1 write unit). Readers fetch the items from the table.
   */
  indexes: {
    gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'KEYS_ONLY' },
    gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'KEYS_ONLY' },
    /** Job heads holding requests not yet sent (inline-outbox.ts). */
    gsi3: { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'KEYS_ONLY' },
  },
  /** Epoch seconds after which DynamoDB may delete the item (old finished jobs). */
  timeToLiveAttribute: 'expiresAt',
} as const;

/** CreateTable input: string keys `pk`/`sk`, GSIs `gsi1`, `gsi2` and `gsi3` projecting keys only, on-demand billing. */
export function switchyardTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey, sortKey, indexes } = SWITCHYARD_TABLE;
  const indexList = [indexes.gsi1, indexes.gsi2, indexes.gsi3];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: sortKey, KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      partitionKey,
      sortKey,
      ...indexList.flatMap((index) => [index.partitionKey, index.sortKey]),
    ].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    GlobalSecondaryIndexes: indexList.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: index.projection },
    })),
  };
}

/** TTL is not part of CreateTable: it is switched on by UpdateTimeToLive once the table exists. */
export function switchyardTimeToLiveInput(tableName: string): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: SWITCHYARD_TABLE.timeToLiveAttribute, Enabled: true },
  };
}
