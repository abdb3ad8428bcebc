import { describe, expect, it } from 'vitest';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const ID = '3f2a9c1e-7b44-4c1d-9e8f-0a1b2c3d4e5f';
/** An object holding lists nested `depth` levels in all. */
const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('Bodies nested deeper than the limit, on every route that reads one', () => {
  it.each([
    ['POST', '/api/workflow/approval'],
    ['PUT', '/api/workflow/approval'],
    ['POST', `/api/job/${ID}/signal/approve`],
  ])(
    '%s %s answers 400 at 65 levels and changes nothing; 64 levels is not a server error',
    async (method, path) => {
      // Prepare
      const world = new SimulatedWorld();
      await world.register(
        'workflows:\n  - name: approval\n    steps:\n      - name: prep\n      - name: approve\n        type: signal\n        depends: [ prep ]\n',
      );
      await world.start('approval', {}, ID);
      const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
      const send = (body: string) =>
        callApi(deps, { method, path, body, headers: { 'content-type': 'application/json' } });
      const jobsBefore = (await callApi(deps, { method: 'GET', path: '/api/workflow/approval' })).body;

      // Act
      const tooDeep = await send(nested(65));
      const jobsAfter = (await callApi(deps, { method: 'GET', path: '/api/workflow/approval' })).body;
      const deepest = await send(nested(64));

      // Assess
      expect(tooDeep.status).toBe(400);
      expect(JSON.parse(tooDeep.body).error.code).toBe('bad_request');
      expect(jobsAfter).toBe(jobsBefore);
      expect(deepest.status).toBeLessThan(500);
    },
  );
});
