import {
  type Actor,
  AUDIT_RETENTION_MS,
  type AuditAction,
  type AuditEntry,
  type AuditLog,
  type AuditPage,
  type EveryField,
} from '../../../engine/index.js';
import { keys, N, num, S, str } from './items.js';
import type { DynamoDbTable, Item } from './table.js';

/**
 * Who changed definitions, tokens and namespace settings: one item per entry in the namespace's
 * `AUDIT#<namespace>` partition, sorted by id (time first), so that a page, newest first, is one
 * query. Entries expire through the table's TTL (`expiresAt`) after the retention. A few admin
 * commands a day: one partition per namespace holds them easily.
 */
export class DynamoDbAuditLog implements AuditLog {
  constructor(private readonly table: DynamoDbTable) {}

  async recordAudit(entry: AuditEntry): Promise<void> {
    const item: Item = {
      ...keys.audit(entry.namespace, entry.id),
      at: N(entry.at),
      actor: S(JSON.stringify(entry.actor)),
      action: S(entry.action),
      target: S(entry.target),
      expiresAt: N(Math.ceil((entry.at + AUDIT_RETENTION_MS) / 1_000)),
    };
    if (entry.detail !== undefined) item.detail = S(entry.detail);
    await this.table.put({ Item: item });
  }

  async listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage> {
    const { items } = await this.table.queryPage({
      KeyConditionExpression: query.cursor === undefined ? 'pk = :pk' : 'pk = :pk AND sk < :before',
      ExpressionAttributeValues: {
        ':pk': S(keys.auditPk(query.namespace)),
        ...(query.cursor === undefined ? {} : { ':before': S(query.cursor) }),
      },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: query.limit + 1,
    });
    const entries = items.slice(0, query.limit).map((item) => auditEntry(item, query.namespace));
    const last = entries.at(-1);
    return items.length > query.limit && last ? { entries, cursor: last.id } : { entries };
  }
}

/** An entry back from its item, every field named: one added to AuditEntry fails tsc here until kept. */
function auditEntry(item: Item, namespace: string): AuditEntry {
  return {
    id: str(item, 'sk') ?? '',
    at: num(item, 'at') ?? 0,
    actor: JSON.parse(str(item, 'actor') ?? '{"kind":"root"}') as Actor,
    action: (str(item, 'action') ?? 'workflow.registered') as AuditAction,
    namespace,
    target: str(item, 'target') ?? '',
    detail: str(item, 'detail'),
  } satisfies EveryField<AuditEntry>;
}
