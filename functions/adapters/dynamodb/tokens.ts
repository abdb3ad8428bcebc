import type { EveryField, Role, StoredToken, TokenStore } from '../../../engine/index.js';
import { keys, N, num, S, str } from './items.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item } from './table.js';

/**
 * Scoped tokens: one item each in the `TOKENS` partition, sorted by id (`TOKENS` / `<id>`), holding
 * the secret's SHA-256 and the scope, never the secret. A request's token is one consistent read by
 * its id (the hash's first 16 hex digits); listing them all is one query. A few tokens per
 * deployment: one partition holds them easily.
 */
export class DynamoDbTokens implements TokenStore {
  constructor(private readonly table: DynamoDbTable) {}

  async saveToken(token: StoredToken): Promise<boolean> {
    try {
      await this.table.put({
        Item: {
          ...keys.token(token.id),
          hash: S(token.hash),
          ns: S(token.namespace),
          role: S(token.role),
          desc: S(token.description),
          ca: N(token.createdAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async getToken(id: string): Promise<StoredToken | undefined> {
    const item = await this.table.get(keys.token(id));
    return item && storedToken(item);
  }

  async listTokens(): Promise<StoredToken[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(keys.tokensPk()) },
    });
    return items.map(storedToken).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  async deleteToken(id: string): Promise<boolean> {
    try {
      await this.table.delete({ Key: keys.token(id), ConditionExpression: 'attribute_exists(pk)' });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/** A token back from its item, every field of it named: one added to StoredToken fails tsc here until kept. */
function storedToken(item: Item): StoredToken {
  return {
    id: str(item, 'sk') ?? '',
    hash: str(item, 'hash') ?? '',
    namespace: str(item, 'ns') ?? '',
    role: (str(item, 'role') ?? 'read') as Role,
    description: str(item, 'desc') ?? '',
    createdAt: num(item, 'ca') ?? 0,
  } satisfies EveryField<StoredToken>;
}
