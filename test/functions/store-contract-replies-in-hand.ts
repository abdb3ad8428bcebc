import { describe, expect, it } from 'vitest';
import type { Store } from '../../engine/index.js';
import { uuid } from '../support/factories.js';

/**
 * The crash journal part of the Store contract (engine/ports/reply-intake.ts): a note left held by
 * another holder is a death, the reply's own when that holder had it alone; the same holder taking a
 * reply again is none; a released note is gone, one let go of with `keep` keeps its deaths.
 */
export function describeRepliesInHandContract(current: () => Store): void {
  describe('replies in hand (the crash journal)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const clean = { alone: 0, amongOthers: false };

    it('counts no death for a reply taken for the first time, or again by its holder', async () => {
      const store = current();
      const key = `reply-${uuid()}`;
      expect(await store.holdReply(key, 'process-1', now, false)).toEqual(clean);
      expect(await store.holdReply(key, 'process-1', now + 1, true)).toEqual(clean);
    });

    it('counts a holder that died with the reply alone in hand as its own death, one among others as a suspicion', async () => {
      const store = current();
      const key = `reply-${uuid()}`;
      await store.holdReply(key, 'process-1', now, false);
      expect(await store.holdReply(key, 'process-2', now + 1, true)).toEqual({ alone: 0, amongOthers: true });
      expect(await store.holdReply(key, 'process-3', now + 2, true)).toEqual({ alone: 1, amongOthers: true });
      expect(await store.holdReply(key, 'process-4', now + 3, false)).toEqual({
        alone: 2,
        amongOthers: true,
      });
      expect(await store.holdReply(key, 'process-5', now + 4, false)).toEqual({
        alone: 2,
        amongOthers: true,
      });
    });

    it('forgets a released reply, but not when another holder took it meanwhile', async () => {
      const store = current();
      const released = `reply-${uuid()}`;
      await store.holdReply(released, 'process-1', now, true);
      await store.releaseReply(released, 'process-1');
      const retaken = `reply-${uuid()}`;
      await store.holdReply(retaken, 'process-1', now, true);
      await store.holdReply(retaken, 'process-2', now + 1, true);
      await store.releaseReply(retaken, 'process-1');

      expect(await store.holdReply(released, 'process-2', now + 2, true)).toEqual(clean);
      expect(await store.holdReply(retaken, 'process-3', now + 2, true)).toEqual({
        alone: 2,
        amongOthers: false,
      });
    });

    it('keeps the deaths of a reply let go of with keep, and counts none when it is taken again', async () => {
      const store = current();
      const key = `reply-${uuid()}`;
      await store.holdReply(key, 'process-1', now, true);
      expect(await store.holdReply(key, 'process-2', now + 1, true)).toEqual({
        alone: 1,
        amongOthers: false,
      });
      await store.releaseReply(key, 'process-2', true);

      expect(await store.holdReply(key, 'process-3', now + 2, true)).toEqual({
        alone: 1,
        amongOthers: false,
      });
      expect(await store.holdReply(key, 'process-4', now + 3, true)).toEqual({
        alone: 2,
        amongOthers: false,
      });
    });

    it('keeps the notes of different replies apart', async () => {
      const store = current();
      const [first, second] = [`reply-${uuid()}`, `reply-${uuid()}`];
      await store.holdReply(first, 'process-1', now, true);
      await store.holdReply(second, 'process-1', now, true);
      await store.releaseReply(second, 'process-1');

      expect(await store.holdReply(first, 'process-2', now + 1, true)).toEqual({
        alone: 1,
        amongOthers: false,
      });
      expect(await store.holdReply(second, 'process-2', now + 1, true)).toEqual(clean);
    });
  });
}
