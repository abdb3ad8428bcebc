import { describe, expect, it } from 'vitest';
import type { Store } from '../../../engine/index.js';
import { StoreUnavailableError } from '../../../engine/ports/store.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const FULL = 'the SQLite store /data/s.db cannot write: database or disk is full (SQLITE_FULL)';

/** A memory store whose writes fail on storage while `full` is set. */
function fullStore(): Store & { full: boolean } {
  const inner = new MemoryStore();
  const state = { full: false };
  return new Proxy(inner as Store, {
    get(target, property, receiver) {
      if (property === 'full') return state.full;
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        state.full && property === 'commit'
          ? Promise.reject(new StoreUnavailableError(FULL))
          : value.apply(target, args);
    },
    set(_, property, value) {
      if (property !== 'full') return false;
      state.full = value;
      return true;
    },
  }) as unknown as Store & { full: boolean };
}

describe('A store that cannot write', () => {
  it('answers a start 503 store_unavailable with the cause and Retry-After, keeps no job, and logs a warning', async () => {
    // Prepare
    const store = fullStore();
    const world = new SimulatedWorld(store);
    await world.register('workflows:\n  - name: one\n    steps:\n      - name: a\n');
    const telemetry = recordingTelemetry();
    const deps = { ...worldApi(world, { maxBodyBytes: 64 * 1024 }), logger: telemetry.logger };
    store.full = true;

    // Act
    const response = await callApi(deps, { method: 'POST', path: '/api/workflow/one', body: '{}' });
    const listing = await callApi(deps, { method: 'GET', path: '/api/workflow/one' });

    // Assess
    expect(response.status).toBe(503);
    expect(response.headers?.['retry-after']).toBe('5');
    expect(JSON.parse(response.body)).toEqual({ error: { code: 'store_unavailable', message: FULL } });
    expect(listing.status).toBe(200);
    expect(JSON.parse(listing.body)).toEqual({ running: [], queued: [], completed: [] });
    // The operator learns of it from the log too, not only the caller.
    expect(telemetry.logs).toEqual([
      {
        level: 'warn',
        message: 'request refused: the store is unavailable',
        fields: { method: 'POST', path: '/api/workflow/one', error: FULL },
      },
    ]);
  });
});
