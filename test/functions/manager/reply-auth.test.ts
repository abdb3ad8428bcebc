import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { RequestTokens } from '../../../functions/manager/request-tokens.js';
import { memoryManager } from '../../support/memory-manager.js';

const workflow = { name: 'greet', steps: [{ name: 'hello' }, { name: 'bye', depends: ['hello'] }] };

async function started(replyAuth: boolean, requestTtlMs?: number) {
  const harness = memoryManager({ replyAuth, requestTtlMs });
  await harness.manager.registerWorkflow(workflow);
  const { job } = await harness.manager.startJob({ workflow: 'greet' });
  await harness.manager.drain();
  const correlationId = `${job.id}:hello`;
  const status = async (step: number) => (await harness.store.getJob(job.id))?.steps.get(step)?.status;
  return { harness, job, correlationId, status };
}

describe('RequestTokens: one attempt of one step, signed with the store’s key', () => {
  it('vouches for the attempt it was made for, and for nothing else', async () => {
    const store = new MemoryStore();
    const tokens = new RequestTokens(store);
    await tokens.ready();
    const token = tokens.mint('job-1:charge', 2);
    expect(tokens.verify(token)).toEqual({ correlationId: 'job-1:charge', attempt: 2 });
    expect(tokens.verify(token, 'job-1:charge', 2)).toBeDefined();
    expect(tokens.verify(token, 'job-1:charge')).toBeDefined();
    expect(tokens.verify(token, 'job-2:charge')).toBeUndefined();
    expect(tokens.verify(token, 'job-1:charge', 3)).toBeUndefined();
    const [version, claim, mac] = token.split('.') as [string, string, string];
    const other = Buffer.from('job-2:charge\n2').toString('base64url');
    for (const forged of [
      `${version}.${other}.${mac}`,
      `${version}.${claim}.${mac.slice(0, -2)}AA`,
      `${version}.${claim}`,
      `swt0.${claim}.${mac}`,
      `${token}.x`,
      '',
      'garbage',
    ]) {
      expect(tokens.verify(forged), forged).toBeUndefined();
    }
    // Another manager on the same store uses the same key; one on another store does not.
    const same = new RequestTokens(store);
    await same.ready();
    expect(same.verify(token)).toBeDefined();
    const elsewhere = new RequestTokens(new MemoryStore());
    await elsewhere.ready();
    expect(elsewhere.verify(token)).toBeUndefined();
  });
});

describe('Manager with reply authentication on', () => {
  it('sends every request with its token, and takes a reply that echoes it', async () => {
    const { harness, correlationId, status } = await started(true);
    const token = harness.bus.tokens.get(correlationId);
    expect(token).toMatch(/^swt1\./);
    await harness.manager.handleReplies([{ correlationId, body: '{"ok": true}', token }]);
    expect(await status(0)).toBe('completed');
  });

  it('ignores and counts a forged reply (none, or another step’s token), an abort included: the job goes on', async () => {
    const { harness, job, correlationId, status } = await started(true);
    const tokenOfHello = harness.bus.tokens.get(correlationId);
    await harness.manager.handleReplies([
      { correlationId, body: '{"reason": "forged"}', type: 'abort' },
      { correlationId, body: '{}', token: 'swt1.AAAA.AAAA' },
      { correlationId: `${job.id}:bye`, body: '{}', token: tokenOfHello },
    ]);
    expect(await status(0)).toBe('running');
    expect((await harness.store.getJob(job.id))?.status).toBe('running');
    expect(harness.telemetry.counted('replies_ignored_total', { reason: 'unauthenticated' })).toBe(3);
  });

  it('ignores a forged dead letter; acts on one carrying the request’s token', async () => {
    const { harness, correlationId, status } = await started(true);
    await harness.manager.deadLettered(correlationId, 1, 'rejected by the worker');
    expect(await status(0)).toBe('running');
    expect(harness.telemetry.counted('dead_letters_ignored_total', { reason: 'unauthenticated' })).toBe(1);
    await harness.manager.deadLettered(
      correlationId,
      1,
      'rejected by the worker',
      harness.bus.tokens.get(correlationId),
    );
    expect(await status(0)).toBe('failed');
  });
});

describe('Manager with reply authentication off (the default: the original’s workers echo no token)', () => {
  it('takes a reply without a token, and still sends each request with one', async () => {
    const { harness, correlationId, status } = await started(false);
    expect(harness.bus.tokens.get(correlationId)).toMatch(/^swt1\./);
    await harness.manager.handleReplies([{ correlationId, body: '{}' }]);
    expect(await status(0)).toBe('completed');
  });
});

describe('Forged "expired" dead letters (anyone who can publish on the broker can send one)', () => {
  const TTL = 60_000;
  const sentFor = (harness: Awaited<ReturnType<typeof started>>['harness'], correlationId: string) =>
    harness.bus.sent.filter((request) => request.correlationId === correlationId).length;

  it('send a request again at most once per half TTL, and never before its copy can have expired', async () => {
    const { harness, correlationId } = await started(false, TTL);
    for (let n = 0; n < 500; n++) await harness.manager.requestExpired(correlationId, 1);
    await harness.manager.drain();
    expect(sentFor(harness, correlationId)).toBe(1);

    harness.now.value += TTL;
    for (let n = 0; n < 500; n++) await harness.manager.requestExpired(correlationId, 1);
    await harness.manager.drain();
    expect(sentFor(harness, correlationId)).toBe(2);
    expect(harness.telemetry.counted('dead_letters_ignored_total', { reason: 'not_expired' })).toBe(999);
  });

  it('with reply authentication on, send nothing again for one without the request’s token', async () => {
    const { harness, correlationId } = await started(true, TTL);
    harness.now.value += TTL;
    for (let n = 0; n < 500; n++) await harness.manager.requestExpired(correlationId, 1);
    await harness.manager.drain();
    expect(sentFor(harness, correlationId)).toBe(1);
    await harness.manager.requestExpired(correlationId, 1, harness.bus.tokens.get(correlationId));
    await harness.manager.drain();
    expect(sentFor(harness, correlationId)).toBe(2);
  });
});
