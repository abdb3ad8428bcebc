import * as crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const TOKEN = 'the-token-of-this-server';

describe('the bearer token check', () => {
  afterEach(() => vi.mocked(crypto.timingSafeEqual).mockClear());

  it('compares equal-length digests whatever the length of the token given, so its time tells nothing of the length', async () => {
    const deps = worldApi(new SimulatedWorld(), { maxBodyBytes: 1024, token: TOKEN });
    for (const given of ['x', TOKEN.slice(0, -1), `${TOKEN}x`, 'y'.repeat(TOKEN.length), 'z'.repeat(500)]) {
      vi.mocked(crypto.timingSafeEqual).mockClear();
      const response = await callApi(deps, {
        method: 'GET',
        path: '/api/workflows',
        headers: { authorization: `Bearer ${given}` },
      });
      expect(response.status, given).toBe(401);
      const compared = vi.mocked(crypto.timingSafeEqual).mock.calls;
      expect(compared.length, `${given}: compared with timingSafeEqual`).toBe(1);
      expect(compared.map(([a, b]) => [a.byteLength, b.byteLength])).toEqual([[32, 32]]);
    }
  });

  it('lets the right token through', async () => {
    const deps = worldApi(new SimulatedWorld(), { maxBodyBytes: 1024, token: TOKEN });
    const response = await callApi(deps, {
      method: 'GET',
      path: '/api/workflows',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
  });
});
