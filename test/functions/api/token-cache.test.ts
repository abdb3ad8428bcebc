import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { DEPLOYED_TOKEN_CACHE_MS, ScopedTokens } from '../../../functions/api/scoped-tokens.js';

describe('Class: ScopedTokens', () => {
  describe('Method: principalOf (the deployed cache and its revocation delay)', () => {
    it('keeps trusting a token revoked by another instance until its cache entry is 30 s old, then refuses it', async () => {
      // Prepare: two API instances (two Lambda containers) on one table, a fake clock.
      let now = 1_000_000;
      const clock = () => now;
      const store = new MemoryStore();
      const first = new ScopedTokens({ store, cacheMs: DEPLOYED_TOKEN_CACHE_MS, clock });
      const second = new ScopedTokens({ store, cacheMs: DEPLOYED_TOKEN_CACHE_MS, clock });
      const { token, secret } = await first.create({ namespace: 'team-a', role: 'run', description: '' });
      expect(await first.principalOf(secret)).toEqual({
        namespace: 'team-a',
        role: 'run',
        tokenId: token.id,
      });
      // Act: the second instance revokes it.
      expect(await second.revoke(token.id)).toBe(true);
      // Assess: the revoking instance refuses it at once; the first within the stated delay.
      expect(await second.principalOf(secret)).toBeUndefined();
      now += DEPLOYED_TOKEN_CACHE_MS - 1;
      expect(await first.principalOf(secret)).toMatchObject({ tokenId: token.id });
      now += 1;
      expect(await first.principalOf(secret)).toBeUndefined();
      expect(DEPLOYED_TOKEN_CACHE_MS).toBe(30_000);
    });

    it('refuses a revoked token at once without a cache (serve), and never caches an unknown secret', async () => {
      const store = new MemoryStore();
      const tokens = new ScopedTokens({ store });
      const { token, secret } = await tokens.create({ namespace: '*', role: 'read', description: '' });
      expect(await tokens.principalOf(secret)).toMatchObject({ namespace: '*' });
      await store.deleteToken(token.id);
      expect(await tokens.principalOf(secret)).toBeUndefined();

      let now = 0;
      const cached = new ScopedTokens({ store, cacheMs: DEPLOYED_TOKEN_CACHE_MS, clock: () => now });
      const other = new ScopedTokens({ store });
      const later = 'swy_created-by-another-instance-later';
      expect(await cached.principalOf(later)).toBeUndefined();
      const created = await other.create({ namespace: 'team-b', role: 'admin', description: '' });
      now += 1;
      expect(await cached.principalOf(created.secret)).toMatchObject({ namespace: 'team-b', role: 'admin' });
    });

    it('stores only the SHA-256 of the secret, and a secret whose hash shares the id prefix is refused', async () => {
      const store = new MemoryStore();
      const tokens = new ScopedTokens({ store });
      const { token, secret } = await tokens.create({ namespace: 'team-a', role: 'read', description: 'ci' });
      const stored = await store.getToken(token.id);
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(stored?.hash).toMatch(/^[0-9a-f]{64}$/);
      await store.deleteToken(token.id);
      await store.saveToken({
        ...(stored as NonNullable<typeof stored>),
        hash: `${token.id}${'0'.repeat(48)}`,
      });
      expect(await tokens.principalOf(secret)).toBeUndefined();
    });
  });
});
