import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { failingStore } from '../../support/memory-manager.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

describe('GET /healthz', () => {
  it('is 200 while the store and the bus answer', async () => {
    // Prepare
    const world = new SimulatedWorld();

    // Act
    const response = await callApi(worldApi(world, { maxBodyBytes: 1024 }), {
      method: 'GET',
      path: '/healthz',
    });

    // Assert
    expect([response.status, JSON.parse(response.body)]).toEqual([
      200,
      { status: 'ok', store: 'ok', bus: 'ok' },
    ]);
  });

  it('is 503 naming why while the store cannot be reached', async () => {
    // Prepare
    const world = new SimulatedWorld(failingStore(new MemoryStore(), ['ping']));

    // Act
    const response = await callApi(worldApi(world, { maxBodyBytes: 1024 }), {
      method: 'GET',
      path: '/healthz',
    });

    // Assert
    expect([response.status, JSON.parse(response.body)]).toEqual([
      503,
      { status: 'unavailable', store: 'the store is unavailable (ping)', bus: 'ok' },
    ]);
  });
});
