import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AuditEntry, type AuditLog, auditIdOf } from '../../engine/index.js';

/** An entry with every optional field set, in `namespace`, at `at`. */
export function anAuditEntryWithEveryField(namespace: string, at: number): Required<AuditEntry> {
  return {
    id: auditIdOf(at, randomBytes(4).toString('hex')),
    at,
    actor: { kind: 'token', id: 'a1b2c3d4e5f60718', description: 'the ops team’s deploys' },
    action: 'workflow.registered',
    namespace,
    target: 'billing',
    detail: 'version 3',
  };
}

/** The audit log (engine/ports/audit-log.ts) of every store: kept whole, by namespace, newest first. */
export function describeAuditLogContract(log: () => AuditLog): void {
  describe('audit log', () => {
    it('keeps every field of an entry and the actor of each kind', async () => {
      const namespace = `audit-${randomBytes(4).toString('hex')}`;
      const full = anAuditEntryWithEveryField(namespace, 1_700_000_000_000);
      const plain: AuditEntry = {
        id: auditIdOf(1_700_000_000_001, 'ffffffff'),
        at: 1_700_000_000_001,
        actor: { kind: 'root' },
        action: 'token.revoked',
        namespace,
        target: 'a1b2c3d4e5f60718',
      };
      await log().recordAudit(full);
      await log().recordAudit(plain);
      const page = await log().listAudit({ namespace, limit: 10 });
      expect(page.entries.map((entry) => JSON.parse(JSON.stringify(entry)))).toEqual([plain, full]);
      expect(page.cursor).toBeUndefined();
    });

    it('pages a namespace newest first, and shows no other namespace', async () => {
      const namespace = `audit-${randomBytes(4).toString('hex')}`;
      const other = `audit-${randomBytes(4).toString('hex')}`;
      const entries = Array.from({ length: 5 }, (_, n) =>
        anAuditEntryWithEveryField(namespace, 1_700_000_000_000 + n * 1_000),
      );
      for (const entry of [...entries].reverse()) await log().recordAudit(entry);
      await log().recordAudit(anAuditEntryWithEveryField(other, 1_700_000_000_500));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await log().listAudit({ namespace, limit: 2, cursor });
        expect(page.entries.length).toBeLessThanOrEqual(2);
        seen.push(...page.entries.map((entry) => entry.id));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(entries.map((entry) => entry.id).reverse());
    });
  });
}
