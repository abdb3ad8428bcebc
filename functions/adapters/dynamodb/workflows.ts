import {
  definitionText,
  type EveryField,
  type StoredWorkflow,
  versionToSave,
  type WorkflowDefinition,
  type WorkflowSummary,
} from '../../../engine/index.js';
import { keys, N, num, S, str } from './items.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item } from './table.js';

/**
 * Workflow definitions: one immutable item per version (`WF#<name>` / `<version>`), and one registry
 * item per workflow in the `WFS` partition with the latest definition, the enabled flag and the list
 * of versions, so that listing every workflow is one query and reading the latest one is one read.
 * A new version is the version item and the registry item in one transaction, conditional on the
 * latest version it read: two registrations at once cannot take the same number.
 */
export class DynamoDbWorkflows {
  /** Names this process has seen in the registry (a workflow, once registered, stays there). */
  private readonly seen = new Set<string>();

  constructor(private readonly table: DynamoDbTable) {}

  /** Whether this process has seen `name` in the registry (false: not registered, or not seen yet). */
  isRegistered(name: string): boolean {
    return this.seen.has(name);
  }

  async save(definition: WorkflowDefinition, now: number): Promise<{ version: number; created: boolean }> {
    const text = definitionText(definition);
    for (let attempt = 0; attempt < 20; attempt++) {
      const registry = await this.table.get(keys.workflowRegistry(definition.name));
      const latest = num(registry, 'latest') ?? 0;
      const { version, created } = versionToSave(
        registry && { version: latest, text: str(registry, 'def') ?? '' },
        text,
      );
      if (!created) {
        await this.table.update({
          Key: keys.workflowRegistry(definition.name),
          UpdateExpression: 'SET en = :on',
          ExpressionAttributeValues: { ':on': { BOOL: true } },
        });
        this.seen.add(definition.name);
        return { version, created };
      }
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
        this.seen.add(definition.name);
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
    this.seen.add(name);
    const enabled = registry.en?.BOOL ?? true;
    if (version === undefined || version === num(registry, 'latest')) {
      const latest = num(registry, 'latest') ?? 1;
      const createdAt = versionsOf(registry).find((v) => v.version === latest)?.createdAt ?? 0;
      return {
        name,
        version: latest,
        definition: JSON.parse(str(registry, 'def') ?? '{}') as WorkflowDefinition,
        createdAt,
        enabled,
      } satisfies EveryField<StoredWorkflow>;
    }
    const item = await this.table.get(keys.workflowVersion(name, version));
    if (!item) return undefined;
    return {
      name,
      version,
      definition: JSON.parse(str(item, 'def') ?? '{}') as WorkflowDefinition,
      createdAt: num(item, 'ca') ?? 0,
      enabled,
    } satisfies EveryField<StoredWorkflow>;
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
        this.seen.add(summary.name);
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

/** The names of every registered workflow (one query of the registry, reading no definition back). */
export async function registeredWorkflows(table: DynamoDbTable): Promise<string[]> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': S(keys.workflowRegistryPk()) },
    ProjectionExpression: 'sk',
  });
  return items.flatMap((item) => (item.sk?.S === undefined ? [] : [item.sk.S]));
}
