import { describe, expect, it } from 'vitest';
import type { NamespaceSettings, Store } from '../../engine/index.js';
import { uuid } from '../support/factories.js';

/**
 * The namespace settings and manager keys part of the Store contract: what the operator sets for a
 * namespace is read back whole (an empty vhost list is a setting, not its absence), replaced whole,
 * and listed; a manager key is made once, whoever asks first.
 */
export function describeNamespaceSettingsContract(
  current: () => Store,
  another: (() => Promise<Store>) | undefined,
): void {
  describe('namespace settings and manager keys', () => {
    const name = () => `ns${uuid().slice(0, 8)}`;

    it('keeps every field, and tells an empty vhost list from none', async () => {
      const store = current();
      const full: NamespaceSettings = {
        namespace: name(),
        queuePrefix: 'team-x.',
        vhosts: ['/', 'billing'],
        updatedAt: 1_700_000_000_123,
      };
      const none: NamespaceSettings = { namespace: name(), vhosts: [], updatedAt: 5 };
      const bare: NamespaceSettings = { namespace: name(), updatedAt: 6 };
      for (const settings of [full, none, bare]) await store.saveNamespaceSettings(settings);
      expect(await store.getNamespaceSettings(full.namespace)).toEqual(full);
      expect(await store.getNamespaceSettings(none.namespace)).toEqual(none);
      expect(await store.getNamespaceSettings(bare.namespace)).toEqual(bare);
      expect(await store.getNamespaceSettings(name())).toBeUndefined();
      const listed = await store.listNamespaceSettings();
      for (const settings of [full, none, bare]) expect(listed).toContainEqual(settings);
    });

    it('replaces a namespace’s settings whole', async () => {
      const store = current();
      const namespace = name();
      await store.saveNamespaceSettings({ namespace, queuePrefix: 'a.', vhosts: ['/'], updatedAt: 1 });
      await store.saveNamespaceSettings({ namespace, updatedAt: 2 });
      expect(await store.getNamespaceSettings(namespace)).toEqual({ namespace, updatedAt: 2 });
    });

    it('makes a manager key once: the first candidate stays, for this store and another on the same data', async () => {
      const store = current();
      const key = `key-${uuid()}`;
      expect(await store.managerKey(key, 'first')).toBe('first');
      expect(await store.managerKey(key, 'second')).toBe('first');
      const other = another ? await another() : store;
      expect(await other.managerKey(key, 'third')).toBe('first');
    });
  });
}
