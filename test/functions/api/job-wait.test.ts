import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import type { ApiResponse } from '../../../functions/api/http.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: pipeline
    steps:
      - name: a
      - name: b
        depends: [ a ]
  - name: fan
    steps:
      - name: list
      - name: each
        task: item
        depends: [ list ]
    tasks:
      - name: item
        itemListKey: items
        steps:
          - name: work
`;

/** A wait far longer than any test waits for an answer: answering within it says the wait ended early. */
const LONG_WAIT_SECONDS = 25;

async function world(): Promise<SimulatedWorld> {
  const simulated = new SimulatedWorld(SqliteStore.open(':memory:'));
  await simulated.register(WORKFLOWS);
  return simulated;
}

function waitFor(
  simulated: SimulatedWorld,
  id: string,
  headers: Record<string, string> = {},
  waitSeconds = LONG_WAIT_SECONDS,
): Promise<ApiResponse> {
  return callApi(worldApi(simulated, { maxBodyBytes: 1024, waitPollMs: 5 }), {
    method: 'GET',
    path: `/api/job/${id}`,
    query: { wait: String(waitSeconds) },
    headers,
  });
}

function read(simulated: SimulatedWorld, id: string, headers: Record<string, string> = {}) {
  return callApi(worldApi(simulated, { maxBodyBytes: 1024 }), {
    method: 'GET',
    path: `/api/job/${id}`,
    headers,
  });
}

function etagOf(response: ApiResponse): string {
  const etag = response.headers?.etag;
  if (!etag) throw new Error(`no ETag on a ${response.status} answer`);
  return etag;
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

describe('GET /api/job/{id} with If-None-Match', () => {
  it('answers a long poll at once when the job moved on from the version the caller holds', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    const seen = etagOf(await read(simulated, id));
    // The change lands between the caller's answer and its next long poll.
    const [first] = simulated.take();
    if (!first) throw new Error('no request for step a');
    await simulated.reply(first, {});

    const answer = waitFor(simulated, id, { 'if-none-match': seen });
    expect(await settlesWithin(answer, 5_000), 'answered the change made before the poll').toBe(true);
    const response = await answer;
    expect(response.status).toBe(200);
    expect(etagOf(response)).not.toBe(seen);
    expect(JSON.parse(response.body).steps.a.status).toBe('completed');
  });

  it('answers 304 with the same tag while the job stays at the version held', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    const seen = etagOf(await read(simulated, id));

    const plain = await read(simulated, id, { 'if-none-match': seen });
    expect(plain.status).toBe(304);
    expect(plain.body).toBe('');
    expect(etagOf(plain)).toBe(seen);

    const waited = await waitFor(simulated, id, { 'if-none-match': seen }, 1);
    expect(waited.status).toBe(304);
    expect(etagOf(waited)).toBe(seen);
  });

  it('matches weakly, in a list of tags, and for *', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    const seen = etagOf(await read(simulated, id));
    const strong = seen.replace(/^W\//, '');

    expect((await read(simulated, id, { 'if-none-match': strong })).status).toBe(304);
    expect((await read(simulated, id, { 'if-none-match': `"other", ${seen}` })).status).toBe(304);
    expect((await read(simulated, id, { 'if-none-match': '*' })).status).toBe(304);
    expect((await read(simulated, id, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it("moves the version when a fan-out child finishes, which leaves the parent's revision alone", async () => {
    const simulated = await world();
    const id = await simulated.start('fan');
    const [list] = simulated.take();
    if (!list) throw new Error('no request for step list');
    await simulated.reply(list, { items: [1, 2, 3] });
    const before = await read(simulated, id);
    const rev = (await simulated.job(id)).rev;

    const [child] = simulated.take();
    if (!child) throw new Error('no request for a child');
    await simulated.reply(child, {});
    expect((await simulated.job(id)).rev).toBe(rev);

    const waiting = waitFor(simulated, id, { 'if-none-match': etagOf(before) });
    expect(await settlesWithin(waiting, 5_000), 'answered the finished child at once').toBe(true);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).steps.each.childrenDone).toBe(1);
    expect(etagOf(answer)).not.toBe(etagOf(before));
  });
});

describe('GET /api/job/{id}?wait=S where the host caps the wait at 0 (deployed on Lambda)', () => {
  it('answers at once, 304 while the job is at the version held, instead of holding the invocation', async () => {
    const simulated = await world();
    const id = await simulated.start('pipeline');
    const seen = etagOf(await read(simulated, id));
    const api = worldApi(simulated, { maxBodyBytes: 1024, waitPollMs: 5, maxWaitSeconds: 0 });

    const waiting = callApi(api, {
      method: 'GET',
      path: `/api/job/${id}`,
      query: { wait: String(LONG_WAIT_SECONDS) },
      headers: { 'if-none-match': seen },
    });

    expect(await settlesWithin(waiting, 5_000), 'answered without waiting').toBe(true);
    expect((await waiting).status).toBe(304);
  });
});

describe('GET /api/jobs?ids=… (one conditional request for the jobs of a page)', () => {
  function list(simulated: SimulatedWorld, ids: readonly string[], headers: Record<string, string> = {}) {
    return callApi(worldApi(simulated, { maxBodyBytes: 1024 }), {
      method: 'GET',
      path: '/api/jobs',
      query: { ids: ids.join(',') },
      headers,
    });
  }

  it('answers their summaries in the order asked, tagged; 304 while none changed; 200 with a new tag once one moved', async () => {
    // Prepare
    const simulated = await world();
    const first = await simulated.start('pipeline');
    const second = await simulated.start('pipeline');
    const unknown = '00000000-0000-4000-8000-000000000000';

    // Act
    const answer = await list(simulated, [second, unknown, first]);
    const unchanged = await list(simulated, [second, unknown, first], { 'if-none-match': etagOf(answer) });
    const [request] = simulated.take().filter((r) => r.jobId === first);
    if (!request) throw new Error('no request for the first job');
    await simulated.reply(request, {});
    const moved = await list(simulated, [second, unknown, first], { 'if-none-match': etagOf(answer) });

    // Assess
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body).jobs as { uuid: string }[]).map((job) => job.uuid)).toEqual([
      second,
      first,
    ]);
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBe('');
    expect(moved.status).toBe(200);
    expect(etagOf(moved)).not.toBe(etagOf(answer));
  });

  it('refuses more than 100 ids, and ids that are not UUIDs, naming the problem', async () => {
    const simulated = await world();
    const many = Array.from(
      { length: 101 },
      (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    );

    const tooMany = await list(simulated, many);
    const notIds = await list(simulated, ['abc']);

    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatch(/ids/);
    expect(notIds.status).toBe(400);
    expect(notIds.body).toMatch(/ids/);
  });
});
