import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  ListTablesCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SWITCHYARD_TABLE } from '../../functions/adapters/dynamodb/table-schema.js';
import {
  createSwitchyardTable,
  dynamoDbClient,
  startDynamoDbLocal,
  uniqueTableName,
} from './dynamodb-local.js';
import { startSqsEmulator, uniqueQueuePrefix } from './fauxqs.js';

describe('Harness: fauxqs', () => {
  it('starts, creates a queue, sends and receives a message, and stops', async () => {
    // Prepare
    const sqs = await startSqsEmulator();
    console.info(`fauxqs started in ${sqs.startedInMs} ms`);

    try {
      // Act
      const { QueueUrl } = await sqs.client.send(
        new CreateQueueCommand({ QueueName: `${uniqueQueuePrefix()}q` }),
      );
      await sqs.client.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: '{"hello":"world"}',
          MessageAttributes: { correlation_id: { DataType: 'String', StringValue: 'abc' } },
        }),
      );
      const { Messages } = await sqs.client.send(
        new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }),
      );

      // Assess
      expect(Messages?.[0]?.Body).toBe('{"hello":"world"}');
      expect(Messages?.[0]?.MessageAttributes?.correlation_id?.StringValue).toBe('abc');
    } finally {
      await sqs.stop();
    }
    await expect(fetch(sqs.endpoint)).rejects.toThrow();
  });
});

describe('Harness: DynamoDB Local', () => {
  it('starts, creates the Switchyard table, runs a transaction, describes TTL, and stops', async () => {
    // Prepare
    const dynamo = await startDynamoDbLocal();
    console.info(`DynamoDB Local answered ${dynamo.startedInMs} ms after spawning Java`);
    const table = uniqueTableName();

    try {
      // Act
      await createSwitchyardTable(dynamo.client, table);
      await dynamo.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: table,
                Item: { pk: { S: 'job#1' }, sk: { S: 'job' }, gsi1pk: { S: 'w' }, gsi1sk: { S: '1' } },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: { TableName: table, Item: { pk: { S: 'job#1' }, sk: { S: 'outbox#1' } } } },
          ],
        }),
      );
      const described = await dynamo.client.send(new DescribeTableCommand({ TableName: table }));
      const ttl = await dynamo.client.send(new DescribeTimeToLiveCommand({ TableName: table }));
      const item = await dynamo.client.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: 'job#1' }, sk: { S: 'outbox#1' } } }),
      );

      // Assess
      expect(described.Table?.KeySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      expect(described.Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual([
        'gsi1',
        'gsi2',
        'gsi3',
      ]);
      expect(described.Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
      expect(ttl.TimeToLiveDescription).toMatchObject({
        AttributeName: SWITCHYARD_TABLE.timeToLiveAttribute,
        TimeToLiveStatus: 'ENABLED',
      });
      expect(item.Item).toBeDefined();
    } finally {
      await dynamo.stop();
    }
    expect(await probe(dynamo.endpoint)).toBe('unreachable');
  });
});

async function probe(endpoint: string): Promise<'unreachable' | 'answering'> {
  const client = dynamoDbClient(endpoint);
  try {
    await client.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
    return 'answering';
  } catch {
    return 'unreachable';
  } finally {
    client.destroy();
  }
}
