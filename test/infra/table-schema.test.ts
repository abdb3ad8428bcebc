import { describe, expect, test } from 'vitest';
import {
  switchyardTableInput,
  switchyardTimeToLiveInput,
} from '../../functions/adapters/dynamodb/table-schema.js';
import { synthStack } from './synth-stack.js';

const byName = <T extends { AttributeName?: string; IndexName?: string }>(items: T[]): T[] =>
  [...items].sort((a, b) =>
    String(a.IndexName ?? a.AttributeName).localeCompare(String(b.IndexName ?? b.AttributeName)),
  );

// The stack keeps its own copy of the table's names (infra imports no handler code); the store and
// DynamoDB Local's tables are built from functions/adapters/dynamodb/table-schema.ts. They must agree.
describe('the deployed table', () => {
  test('has the keys, indexes and time to live the DynamoDB store is written for', {
    timeout: 60_000,
  }, () => {
    // Prepare
    const expected = switchyardTableInput('any');
    const { template } = synthStack();

    // Act
    const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));

    // Assess
    expect(tables).toHaveLength(1);
    const table = tables[0]?.Properties as Record<string, unknown>;
    expect(table.KeySchema).toEqual(expected.KeySchema);
    expect(byName(table.AttributeDefinitions as { AttributeName: string }[])).toEqual(
      byName(expected.AttributeDefinitions ?? []),
    );
    const indexes = (table.GlobalSecondaryIndexes as Record<string, unknown>[]).map((index) => ({
      IndexName: index.IndexName as string,
      KeySchema: index.KeySchema,
      Projection: index.Projection,
    }));
    expect(byName(indexes)).toEqual(byName(expected.GlobalSecondaryIndexes ?? []));
    expect(table.TimeToLiveSpecification).toEqual(switchyardTimeToLiveInput('any').TimeToLiveSpecification);
  });
});
