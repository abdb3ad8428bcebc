import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SimulatedWorld, T0, workflowsFrom } from '../../support/simulated-world.js';

const APPROVAL = `workflows:
  - name: approval
    notify: { url: "https://hooks.example.com/in", events: [step.waiting, job.completed], secret: HOOK_KEY }
    steps:
      - name: approve
        type: signal
`;

describe('Webhook deliveries are stored with the transition that caused them', () => {
  it('are recorded after a crash between the commit and the delivery log, by the next manager’s recovery', async () => {
    // A manager whose delivery log cannot be written: it "dies" with the notify follow-up in the outbox.
    const store = new MemoryStore();
    const add = store.addDeliveries.bind(store);
    let logDown = true;
    store.addDeliveries = async (deliveries: readonly Delivery[]) => {
      if (logDown) throw new Error('the process died here');
      return add(deliveries);
    };
    for (const workflow of workflowsFrom(APPROVAL)) await store.saveWorkflow(workflow, T0);
    const first = new SimulatedWorld(store);
    const { job } = await first.manager.startJob({ workflow: 'approval', input: {} });
    expect((await store.getJob(job.id))?.status).toBe('running');
    expect(await store.jobDeliveries(job.id)).toEqual([]);
    const pending = await store.pendingOutbox({ limit: 10 });
    expect(pending.entries.map((entry) => entry.kind === 'followUp' && entry.followUp.kind)).toEqual([
      'notify',
    ]);
    first.manager.stop();

    // The next start recovers the outbox: the delivery is in the log, due, once.
    logDown = false;
    const second = new SimulatedWorld(store);
    second.now = T0 + 60_000;
    await second.manager.recover();
    await second.manager.drain();
    await second.manager.recover();
    await second.manager.drain();
    const logged = await store.jobDeliveries(job.id);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      state: 'pending',
      attempts: 0,
      url: 'https://hooks.example.com/in',
      secret: 'HOOK_KEY',
      body: { type: 'step.waiting', jobId: job.id, step: 'approve', workflow: 'approval' },
    });
    expect((await store.pendingOutbox({ limit: 10 })).entries).toEqual([]);
  });
});
