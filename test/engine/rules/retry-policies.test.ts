import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/index.js';
import { retryDelayMs } from '../../../engine/job/retry-policy.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

async function world(step: string) {
  const w = new SimulatedWorld();
  await w.register(`workflows:\n  - name: f\n    steps:\n      - name: work\n${step}`);
  return w;
}

/** Fails each attempt with `message` and records the delay before the next one, until the step fails for good. */
async function delays(w: SimulatedWorld, message = 'down'): Promise<number[]> {
  const seen: number[] = [];
  for (let [request] = w.take(); request; [request] = w.take()) {
    await w.reply(request, { error: message }, { type: 'error' });
    const timers = [...w.timers.values()].filter((timer) => timer.kind === 'retry');
    if (!timers.length) break;
    const at = Math.min(...timers.map((timer) => timer.at));
    seen.push(at - w.now);
    await w.advance(at - w.now);
  }
  return seen;
}

describe('Rules: retry policies', () => {
  it('backoffRate multiplies each delay and maxRetryDelay caps them', async () => {
    const w = await world(
      '        retries: 5\n        retryDelay: 1s\n        backoffRate: 3\n        maxRetryDelay: 20s\n',
    );
    await w.start('f', {});
    expect(await delays(w)).toEqual([1_000, 3_000, 9_000, 20_000, 20_000]);
  });

  it('the default rate doubles, as before', async () => {
    const w = await world('        retries: 3\n        retryDelay: 1s\n');
    await w.start('f', {});
    expect(await delays(w)).toEqual([1_000, 2_000, 4_000]);
  });

  it('full jitter draws each delay between 0 and the computed one, the same for the same attempt', () => {
    const policy = { delayMs: 1_000, backoffRate: 2, jitter: 'full' as const, maxDelayMs: 60_000 };
    const drawn = Array.from({ length: 200 }, (_, i) => retryDelayMs(policy, 3, `job-${i}:work:4`));
    for (const delay of drawn) expect(delay).toBeGreaterThanOrEqual(0);
    for (const delay of drawn) expect(delay).toBeLessThanOrEqual(8_000);
    expect(new Set(drawn).size).toBeGreaterThan(150);
    expect(retryDelayMs(policy, 3, 'job-7:work:4')).toBe(drawn[7]);
    expect(retryDelayMs({ delayMs: 1_000, backoffRate: 10, jitter: 'none' }, 1_000, 'x')).toBe(
      365 * 24 * 3_600_000,
    );
  });

  it('retryOn: [timeout] retries a timeout but not an error, which fails the step saying why', async () => {
    const w = await world('        timeout: 5s\n        retries: 3\n        retryOn: [ timeout ]\n');
    const id = await w.start('f', {});
    w.take();
    await w.advance(5_000);
    const [second] = w.take();
    expect(second?.attempt).toBe(2);
    await w.reply(second as never, { error: 'bad input' }, { type: 'error' });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(stepsOf(job).work?.error).toBe('bad input (not retried: "retryOn" does not match it)');
  });

  it('retryOn: errorMatches retries only the errors whose text matches', async () => {
    const w = await world('        retries: 3\n        retryOn: [ { errorMatches: "503|(?i)throttl" } ]\n');
    const id = await w.start('f', {});
    await w.reply(w.take()[0] as never, { error: 'HTTP 503' }, { type: 'error' });
    await w.reply(w.take()[0] as never, { error: 'Throttled' }, { type: 'error' });
    await w.reply(w.take()[0] as never, { error: 'HTTP 404' }, { type: 'error' });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(stepsOf(job).work?.attempts).toBe(3);
  });

  it('validation names each mistake', () => {
    const errors = (step: string) =>
      loadWorkflows(`workflows:\n  - name: f\n    steps:\n      - name: work\n${step}`).errors.map(
        (e) => e.message,
      );
    expect(errors('        retries: 2\n        backoffRate: 2\n')).toEqual([
      '"backoffRate" applies only with "retryDelay" (the first retry\'s delay)',
    ]);
    expect(errors('        retries: 2\n        retryDelay: 1s\n        backoffRate: 0.5\n')[0]).toMatch(
      /"backoffRate" must be a number from 1/,
    );
    expect(errors('        retries: 2\n        retryDelay: 1m\n        maxRetryDelay: 10s\n')).toEqual([
      '"maxRetryDelay" (10s) is shorter than "retryDelay" (1m)',
    ]);
    expect(errors('        retries: 2\n        retryDelay: 1s\n        jitter: some\n')[0]).toMatch(
      /"jitter" must be "full" or "none"/,
    );
    expect(errors('        retryOn: [ timeout ]\n')[0]).toMatch(/"retryOn" applies only with "retries"/);
    expect(errors('        retries: 1\n        retryOn: [ crash ]\n')[0]).toMatch(/"crash" is none of them/);
    expect(errors('        retries: 1\n        retryOn: [ { errorMatches: "(a)\\\\1" } ]\n')[0]).toMatch(
      /RE2 refuses/,
    );
    expect(errors('        type: signal\n        retryOn: [ timeout ]\n')).toContain(
      '"retryOn" does not apply to a signal step: it is completed through the API, not by a worker',
    );
  });
});
