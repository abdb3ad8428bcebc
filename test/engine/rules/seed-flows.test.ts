import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonObject, StepRequest } from '../../../engine/index.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

/* The TIBET and Windmill flows of the seeds (examples/seed-flows/), run with workers that echo. */

const ROOT = join(import.meta.dirname, '../../..');

async function world(file: string) {
  const w = new SimulatedWorld();
  await w.register(await readFile(join(ROOT, file), 'utf8'));
  return w;
}

/** Answers every request (`answer` may change a reply), moving the clock while timers wait, until the job ends. */
async function drive(
  w: SimulatedWorld,
  id: string,
  answer: (request: StepRequest) => { body: JsonObject; error?: true } = (request) => ({
    body: request.body,
  }),
) {
  for (let round = 0; round < 200; round++) {
    const requests = w.take();
    for (const request of requests) {
      const { body, error } = answer(request);
      await w.reply(request, body, error ? { type: 'error' } : {});
    }
    const job = await w.job(id);
    if (job.status !== 'running') return job;
    if (!requests.length) await w.advance(1_000);
  }
  return w.job(id);
}

describe('The seed flows (examples/seed-flows/)', () => {
  it('Windmill: the urgent branch, a for-loop over the items, a polling wait, a sleep and a nested flow', async () => {
    const w = await world('examples/seed-flows/windmill.yaml');
    const id = await w.start('windmill-flow', {});
    let polls = 0;
    const job = await drive(w, id, (request) => {
      if (request.step === 'fetch-batch') return { body: { kind: 'urgent', items: [1, 2, 3] } };
      if (request.step === 'process')
        return { body: { ...request.body, item: (request.body.item as number) * 10 } };
      if (request.step === 'wait-for-index') return { body: { indexed: ++polls === 3 } };
      return { body: request.body };
    });
    expect(job.error).toBeUndefined();
    expect(job.status).toBe('completed');
    const steps = stepsOf(job);
    expect(steps['urgent-batch']?.status).toBe('completed');
    expect(steps['large-batch']?.status).toBe('skipped');
    expect(steps['normal-batch']?.skipReason).toBe('"otherwise": a sibling\'s "when" held');
    expect(steps['each-item']?.output).toMatchObject({ items: [10, 20, 30] });
    expect(steps['wait-for-index']?.iterations).toBe(3);
    expect(steps.summary?.job).toBeDefined();
  });

  it('TIBET: mail, archive and a sub-flow; a mailer that keeps failing runs the error task and fails the job', async () => {
    const w = await world('examples/seed-flows/tibet.yaml');
    const happy = await drive(w, await w.start('sample', { to: 'ann@example.com' }));
    expect(happy.status).toBe('completed');
    expect(stepsOf(happy)['mail-failed']?.status).toBe('skipped');

    const id = await w.start('sample', { to: 'nobody' });
    const job = await drive(w, id, (request) =>
      request.step === 'mailer' ? { body: { error: 'SMTP refused' }, error: true } : { body: request.body },
    );
    expect(job.status).toBe('failed');
    expect(stepsOf(job).mailer?.attempts).toBe(3);
    expect(stepsOf(job)['mail-failed']?.status).toBe('completed');
    expect(job.error?.message).toBe('mailer failed: SMTP refused');
  });
});
