import { describe, expect, it } from 'vitest';
import { drainOutbox } from '../../../functions/aws/drain-outbox.js';
import { aLambdaContext } from '../../support/aws-events.js';
import { memoryManager } from '../../support/memory-manager.js';

describe('Function: drainOutbox', () => {
  it('resolves true once everything queued is sent', async () => {
    // Prepare
    const harness = memoryManager();
    await harness.manager.registerWorkflow({ name: 'greet', steps: [{ name: 'hello' }] });
    await harness.manager.startJob({ workflow: 'greet' });

    // Act
    const drained = await drainOutbox(harness.manager, harness.telemetry.logger, aLambdaContext());

    // Assess
    expect(drained).toBe(true);
    expect(harness.bus.sent).toHaveLength(1);
  });

  it('gives up before the deadline while the bus is down, leaving the entries in the store for the sweep', async () => {
    // Prepare
    const harness = memoryManager();
    harness.bus.send = () => Promise.reject(new Error('the broker is down'));
    await harness.manager.registerWorkflow({ name: 'greet', steps: [{ name: 'hello' }] });
    await harness.manager.startJob({ workflow: 'greet' });
    const context = aLambdaContext(3_200);

    // Act
    const started = Date.now();
    const drained = await drainOutbox(harness.manager, harness.telemetry.logger, context);
    const waited = Date.now() - started;
    harness.manager.stop();

    // Assess
    expect(drained).toBe(false);
    expect(waited).toBeLessThan(1_000);
    expect(
      harness.telemetry.logged('outbox not drained before the deadline; the sweep sends the rest'),
    ).toHaveLength(1);
    expect((await harness.store.pendingOutbox({ limit: 10 })).entries).toHaveLength(1);
  });

  it('waits no longer than its maximum when the invocation has more time', async () => {
    // Prepare
    const harness = memoryManager();
    harness.bus.send = () => Promise.reject(new Error('the broker is down'));
    await harness.manager.registerWorkflow({ name: 'greet', steps: [{ name: 'hello' }] });
    await harness.manager.startJob({ workflow: 'greet' });

    // Act
    const started = Date.now();
    const drained = await drainOutbox(harness.manager, harness.telemetry.logger, aLambdaContext(60_000), 100);
    harness.manager.stop();

    // Assess
    expect(drained).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
