import { describe, expect, it } from 'vitest';
import type { JobDocument, JobSummary } from '../../../functions/api/job-document.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld, T0 } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: review
    steps:
      - name: fetch
        retries: 2
      - name: approve
        type: signal
        depends: [ fetch ]
      - name: check
      - name: publish
        depends: [ approve, check ]
  - name: caller
    steps:
      - name: pay
        workflow: payment
  - name: payment
    steps:
      - name: charge
`;

async function api() {
  const world = new SimulatedWorld();
  await world.register(WORKFLOWS);
  const deps = worldApi(world, { maxBodyBytes: 1024 });
  const get = async <T>(path: string, query: Record<string, string> = {}): Promise<T> => {
    const response = await callApi(deps, { method: 'GET', path, query });
    expect(response.status, response.body).toBe(200);
    return JSON.parse(response.body) as T;
  };
  const document = (id: string) => get<JobDocument>(`/api/job/${id}`);
  const summary = async (id: string) =>
    (await get<{ jobs: JobSummary[] }>('/api/jobs', { status: 'all', detail: '1' })).jobs.find(
      (job) => job.uuid === id,
    );
  const etag = async (id: string) =>
    (await callApi(deps, { method: 'GET', path: `/api/job/${id}` })).headers?.etag;
  return { world, document, summary, etag };
}

const at = (ms: number) => new Date(T0 + ms).toISOString();

describe('The job document: what its steps wait for, its retries, its run', () => {
  it('names the signal step and the suspended step waiting for someone, with the note, in the document and the summary', async () => {
    // Prepare
    const { world, document, summary } = await api();
    const id = await world.start('review');
    const [fetch, check] = world.take();

    // Act: fetch fails once, then completes; check's worker suspends its step.
    await world.advance(1_000);
    await world.reply(fetch!, { error: 'flaky' }, { type: 'error' });
    await world.reply(world.take()[0]!, {});
    await world.advance(1_000);
    await world.reply(check!, { reason: 'waiting for finance' }, { type: 'suspend' });

    // Assess
    const doc = await document(id);
    // A job with a step waiting for someone is listed and shown as waiting.
    expect(doc.status).toBe('waiting');
    expect(doc.waitingFor).toEqual([
      { step: 'approve', kind: 'signal', since: at(1_000) },
      { step: 'check', kind: 'suspended', since: at(2_000), note: 'waiting for finance' },
    ]);
    expect(doc.steps.check?.suspendNote).toBe('waiting for finance');
    expect(doc.retries).toBe(1);
    expect(doc.startedAt).toBe(at(0));
    expect(await summary(id)).toMatchObject({
      status: 'waiting',
      waitingFor: doc.waitingFor,
      retries: 1,
      startedAt: at(0),
    });

    // Both signalled: nothing waits, and the note is gone with the suspension.
    await world.manager.signal(id, 'approve', {});
    await world.manager.signal(id, 'check', {});
    await world.manager.drain();
    const after = await document(id);
    expect(after).not.toHaveProperty('waitingFor');
    expect(after.steps.check).not.toHaveProperty('suspendNote');
  });

  it('says when a paused job was paused, and nothing of it once resumed', async () => {
    const { world, document, summary } = await api();
    const id = await world.start('review');
    await world.advance(4_000);
    await world.manager.pause(id);
    expect(await document(id)).toMatchObject({ status: 'paused', pausedAt: at(4_000) });
    expect(await summary(id)).toMatchObject({ pausedAt: at(4_000) });
    await world.manager.resume(id);
    expect(await document(id)).not.toHaveProperty('pausedAt');
  });

  it("shows a caller held up by a paused called job: the call's status, the wait, and a new version to long polls", async () => {
    // Prepare
    const { world, document, etag } = await api();
    const caller = await world.start('caller');
    const callee = (await document(caller)).steps.pay?.job as string;
    expect((await document(caller)).steps.pay?.calledStatus).toBe('running');
    const before = await etag(caller);

    // Act: the called job is paused on its own (its caller runs on).
    await world.advance(3_000);
    await world.manager.pause(callee);
    await world.manager.drain();

    // Assess
    const doc = await document(caller);
    expect(doc.status).toBe('running');
    expect(doc.steps.pay?.calledStatus).toBe('paused');
    expect(doc.waitingFor).toEqual([{ step: 'pay', kind: 'paused-call', since: at(3_000), job: callee }]);
    expect(before).toBeDefined();
    expect(await etag(caller)).not.toBe(before);

    // A paused caller paused its call itself: resuming it is the one thing to do, not a wait of a step.
    await world.manager.resume(callee);
    await world.manager.pause(caller);
    await world.manager.drain();
    expect(await document(caller)).not.toHaveProperty('waitingFor');
  });
});
