import type { WorkflowDefinition } from '../../engine/definition/types.js';
import type { StoredWorkflow, WorkflowSummary } from '../../engine/ports/store.js';
import { keys, N, num, S, str } from './dynamodb-items.js';
import { isConditionFailure } from './dynamodb-retry.js';
import type { DynamoDbTable, Item } from './dynamodb-table.js';

/**
 * Workflow definitions: one immutable item per version (`WF#<name>` / `<version>`), and one registry
 * item per workflow in the `WFS` partition with the latest definition, the enabled flag and the list
 * of versions, so that listing every workflow is one query and reading the latest one is one read.
 * A new version is the version item and the registry item in one transaction, conditional on the
 * latest version it read: two registrations at once cannot take the same number.
 */
export class DynamoDbWorkflows {
  constructor(private readonly table: DynamoDbTable) {}

  async save(definition: WorkflowDefinition, now: number): Promise<{ version: number; created: boolean }> {
    const text = JSON.stringify(definition);
    for (let attempt = 0; attempt < 20; attempt++) {
      const registry = await this.table.get(keys.workflowRegistry(definition.name));
      const latest = num(registry, 'latest') ?? 0;
      if (registry && str(registry, 'def') === text) {
        await this.table.update({
          Key: keys.workflowRegistry(definition.name),
          UpdateExpression: 'SET en = :on',
          ExpressionAttributeValues: { ':on': { BOOL: true } },
        });
        return { version: latest, created: false };
      }
      const version = latest + 1;
      const versions = [...versionsOf(registry), { version, createdAt: now }];
      try {
        await this.table.transact([
          {
            Put: {
              TableName: undefined,
              Item: { ...keys.workflowVersion(definition.name, version), def: S(text), ca: N(now) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: undefined,
              Item: {
                ...keys.workflowRegistry(definition.name),
                latest: N(version),
                def: S(text),
                en: { BOOL: true },
                versions: S(JSON.stringify(versions)),
              },
              ConditionExpression: registry ? 'latest = :latest' : 'attribute_not_exists(pk)',
              ...(registry ? { ExpressionAttributeValues: { ':latest': N(latest) } } : {}),
            },
          },
        ]);
        return { version, created: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error(`workflow "${definition.name}" kept changing while being saved`);
  }

  async get(name: string, version?: number): Promise<StoredWorkflow | undefined> {
    const registry = await this.table.get(keys.workflowRegistry(name));
    if (!registry) return undefined;
    const enabled = registry.en?.BOOL ?? true;
    if (version === undefined || version === num(registry, 'latest')) {
      const latest = num(registry, 'latest') ?? 1;
      const createdAt = versionsOf(registry).find((v) => v.version === latest)?.createdAt ?? 0;
      return {
        name,
        version: latest,
        definition: JSON.parse(str(registry, 'def') ?? '{}'),
        createdAt,
        enabled,
      };
    }
    const item = await this.table.get(keys.workflowVersion(name, version));
    if (!item) return undefined;
    return {
      name,
      version,
      definition: JSON.parse(str(item, 'def') ?? '{}'),
      createdAt: num(item, 'ca') ?? 0,
      enabled,
    };
  }

  async list(): Promise<WorkflowSummary[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(keys.workflowRegistryPk()) },
      ConsistentRead: true,
    });
    return items
      .map((item) => {
        const definition = JSON.parse(str(item, 'def') ?? '{}') as WorkflowDefinition;
        const summary: WorkflowSummary = {
          name: str(item, 'sk') ?? definition.name,
          latestVersion: num(item, 'latest') ?? 1,
          enabled: item.en?.BOOL ?? true,
          vhosts: definition.vhosts ?? [],
          versions: versionsOf(item),
        };
        if (definition.description) summary.description = definition.description;
        return summary;
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async setEnabled(name: string, enabled: boolean): Promise<boolean> {
    try {
      await this.table.update({
        Key: keys.workflowRegistry(name),
        UpdateExpression: 'SET en = :en',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':en': { BOOL: enabled } },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

function versionsOf(registry: Item | undefined): { version: number; createdAt: number }[] {
  const text = str(registry, 'versions');
  return text ? (JSON.parse(text) as { version: number; createdAt: number }[]) : [];
}
