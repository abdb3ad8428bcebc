import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { ManagerKeys, NamespaceSettings, NamespaceSettingsStore } from '../../../engine/index.js';
import { keys, N, num, S, str } from './items.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item } from './table.js';

/** The attribute that holds each field of `NamespaceSettings`: a new field fails tsc until it has one. */
const ATTRIBUTES: Record<keyof NamespaceSettings, string> = {
  namespace: 'sk',
  queuePrefix: 'qp',
  vhosts: 'vh',
  updatedAt: 'ua',
};

function itemOf(settings: NamespaceSettings): Item {
  const item: Record<string, AttributeValue> = { ...keys.namespaceSettings(settings.namespace) };
  if (settings.queuePrefix !== undefined) item[ATTRIBUTES.queuePrefix] = S(settings.queuePrefix);
  // A list, not a string set: an empty list is a setting (no vhost allowed), and order is kept.
  if (settings.vhosts !== undefined) item[ATTRIBUTES.vhosts] = { L: settings.vhosts.map(S) };
  item[ATTRIBUTES.updatedAt] = N(settings.updatedAt);
  return item;
}

function settingsOf(item: Item): NamespaceSettings {
  const queuePrefix = str(item, ATTRIBUTES.queuePrefix);
  const vhosts = item[ATTRIBUTES.vhosts]?.L?.map((value) => value.S ?? '');
  return {
    namespace: str(item, ATTRIBUTES.namespace) ?? '',
    ...(queuePrefix === undefined ? {} : { queuePrefix }),
    ...(vhosts === undefined ? {} : { vhosts }),
    updatedAt: num(item, ATTRIBUTES.updatedAt) ?? 0,
  };
}

/**
 * The operator's namespace settings, one item each in the `NAMESPACES` partition sorted by name, and
 * the manager's keys in `KEYS`. A handful of namespaces per deployment: one partition holds them, and
 * listing them all is one query.
 */
export class DynamoDbNamespaceSettings implements NamespaceSettingsStore, ManagerKeys {
  constructor(private readonly table: DynamoDbTable) {}

  async getNamespaceSettings(namespace: string): Promise<NamespaceSettings | undefined> {
    const item = await this.table.get(keys.namespaceSettings(namespace));
    return item && settingsOf(item);
  }

  async listNamespaceSettings(): Promise<NamespaceSettings[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(keys.namespaceSettingsPk()) },
    });
    return items.map(settingsOf);
  }

  async saveNamespaceSettings(settings: NamespaceSettings): Promise<void> {
    await this.table.put({ Item: itemOf(settings) });
  }

  async managerKey(name: string, candidate: string): Promise<string> {
    try {
      await this.table.put({
        Item: { ...keys.managerKey(name), v: S(candidate) },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return candidate;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const stored = str(await this.table.get(keys.managerKey(name)), 'v');
    if (stored === undefined) throw new Error(`the manager key "${name}" is stored but cannot be read`);
    return stored;
  }
}
