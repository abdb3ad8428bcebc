import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';

/** The item layout the DynamoDB store writes (the same names as functions/adapters/dynamodb/table-schema.ts). */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  ],
  timeToLiveAttribute: 'expiresAt',
} as const;

export interface SwitchyardTableProps {
  /** Delete the table with the stack (test stacks); otherwise it is retained and protected. */
  destroy: boolean;
  /**
   * The table's stream, with old and new images (NEW_AND_OLD_IMAGES): what its readers compare (the
   * job-events function, `-c jobEvents`) and a TTL deletion's record carries the item it deleted (the
   * archive, `-c archive=true`). Every reader uses this one view type.
   */
  stream?: boolean;
}

/**
 * The one table: on demand, point-in-time recovery, encrypted with the AWS managed key (aws/dynamodb),
 * TTL on `expiresAt` for old finished jobs.
 */
export class SwitchyardTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: SwitchyardTableProps) {
    super(scope, id);
    const text = dynamodb.AttributeType.STRING;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: text },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: text },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: TABLE_SCHEMA.timeToLiveAttribute,
      stream: props.stream ? dynamodb.StreamViewType.NEW_AND_OLD_IMAGES : undefined,
      deletionProtection: !props.destroy,
      removalPolicy: props.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    for (const index of TABLE_SCHEMA.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: text },
        sortKey: { name: index.sortKey, type: text },
        // Keys only: an update that keeps the index keys writes nothing to the index.
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }
  }

  /** The table and each index by name: no `index/*` wildcard in policies. */
  get resourceArns(): string[] {
    return [
      this.table.tableArn,
      ...TABLE_SCHEMA.indexes.map((index) => `${this.table.tableArn}/index/${index.name}`),
    ];
  }
}
