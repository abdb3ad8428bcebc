import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite-store.js';
import type { ApiResponse } from '../../../functions/api/http.js';
import { callApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: pipeline
    steps:
      - name: a
      - name: b
        depends: [ a ]
`;

/** A wait far longer than any test waits for an answer: answering within it says the wait ended early. */
const LONG_WAIT_SECONDS = 25;

async function world(): Promise<SimulatedWorld> {
  const simulated = new SimulatedWorld(SqliteStore.open(':memory:'));
  await simulated.register(WORKFLOWS);
  return simulated;
}

function waitFor(simulated: SimulatedWorld, id: string): Promise<ApiResponse> {
  return callApi(
    { manager: simulated.manager, maxBodyBytes: 1024, waitPollMs: 5 },
    { method: 'GET', path: `/api/job/${id}`, query: { wait: String(LONG_WAIT_SECONDS) } },
  );
}

/** Whether `promise` settles within `ms` (real time). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('GET /api/job/{id}?wait=S', () => {
  it('answers a job that has ended at once, instead of waiting for a change that cannot come', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    for (const request of simulated.take()) await simulated.reply(request, {});
    for (const request of simulated.take()) await simulated.reply(request, { done: true });
    expect((await simulated.job(id)).status).toBe('completed');

    const answer = waitFor(simulated, id);
    expect(await settlesWithin(answer, 5_000), `?wait=${LONG_WAIT_SECONDS} on a completed job`).toBe(true);
    const response = await answer;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({
      uuid: id,
      status: 'completed',
      result: { done: true },
    });
  });

  it('holds a running job until it changes, then answers with the change', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    const answer = waitFor(simulated, id);
    expect(await settlesWithin(answer, 300), 'answered before anything changed').toBe(false);

    const [first] = simulated.take();
    if (!first) throw new Error('no request for step a');
    await simulated.reply(first, {});
    expect(await settlesWithin(answer, 5_000), 'answered once step a completed').toBe(true);
    const document = JSON.parse((await answer).body) as {
      status: string;
      steps: Record<string, { status: string }>;
    };
    expect(document.status).toBe('running');
    expect(document.steps.a?.status).toBe('completed');
  });
});
