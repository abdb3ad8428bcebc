import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/index.js';
import { createRegisterWorkflowsHandler } from '../../../functions/handlers/register-workflows.js';
import { aCustomResourceEvent } from '../../support/aws-events.js';
import { memoryManager } from '../../support/memory-manager.js';

async function wordCounts() {
  const text = await readFile('examples/word-counts/workflows.yaml', 'utf8');
  return loadWorkflows(text).workflows;
}

describe('Handler: register-workflows', () => {
  it('registers every definition on Create, declares its step queues, and answers with a physical id', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler(harness);

    // Act
    const response = await handler(aCustomResourceEvent('Create', await wordCounts()));

    // Assess
    expect(response).toEqual({
      PhysicalResourceId: 'switchyard-workflows',
      Data: { Versions: 'book-word-counts@1' },
    });
    expect((await harness.store.getWorkflow('book-word-counts'))?.version).toBe(1);
    expect(harness.bus.ensured.map((queue) => queue.queue).sort()).toEqual([
      'book-split',
      'segment-word-counts',
      'store-title',
      'sum-splits',
    ]);
  });

  it("registers in the Namespace property's namespace, and refuses one that cannot be a namespace", async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler(harness);
    const event = aCustomResourceEvent('Create', await wordCounts());

    // Act
    const response = await handler({
      ...event,
      ResourceProperties: { ...event.ResourceProperties, Namespace: 'team-a' },
    });

    // Assess
    expect(response.Data).toEqual({ Versions: 'team-a/book-word-counts@1' });
    expect(await harness.store.getWorkflow('book-word-counts')).toBeUndefined();
    expect((await harness.store.getWorkflow('team-a/book-word-counts'))?.version).toBe(1);
    await expect(
      handler({ ...event, ResourceProperties: { ...event.ResourceProperties, Namespace: 'a/b' } }),
    ).rejects.toThrow(/the Namespace property: namespace "a\/b" holds a "\/"/);
  });

  it('keeps the version of an unchanged definition on Update, and makes the next for a changed one', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler(harness);
    const [definition] = await wordCounts();
    await handler(aCustomResourceEvent('Create', [definition]));

    // Act
    const unchanged = await handler(aCustomResourceEvent('Update', [definition], 'switchyard-workflows'));
    const changed = await handler(
      aCustomResourceEvent(
        'Update',
        [{ ...definition, description: 'counts words' }],
        'switchyard-workflows',
      ),
    );

    // Assess
    expect(unchanged).toEqual({
      PhysicalResourceId: 'switchyard-workflows',
      Data: { Versions: 'book-word-counts@1' },
    });
    expect(changed.Data).toEqual({ Versions: 'book-word-counts@2' });
  });

  it('declares the reply queue when the bus is RabbitMQ (the event source mapping does not)', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler({ ...harness, replyQueue: 'workflow-manager' });

    // Act
    await handler(aCustomResourceEvent('Create', await wordCounts()));

    // Assess
    expect(harness.bus.ensured[0]).toEqual({ queue: 'workflow-manager', vhost: null });
  });

  it('leaves the store alone on Delete', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler(harness);
    await handler(aCustomResourceEvent('Create', await wordCounts()));

    // Act
    const response = await handler(
      aCustomResourceEvent('Delete', await wordCounts(), 'switchyard-workflows'),
    );

    // Assess
    expect(response).toEqual({ PhysicalResourceId: 'switchyard-workflows' });
    expect(await harness.store.getWorkflow('book-word-counts')).toBeDefined();
  });

  it('fails the deploy with the validation messages of an invalid definition', async () => {
    // Prepare
    const handler = createRegisterWorkflowsHandler(memoryManager());
    const invalid = [{ name: 'broken', steps: [{ name: 'a', depends: ['missing'] }] }];

    // Act
    const result = handler(aCustomResourceEvent('Create', invalid));

    // Assess
    await expect(result).rejects.toThrow(/invalid workflow definitions:\n.*missing/);
    await expect(handler(aCustomResourceEvent('Create', 'not json'))).rejects.toThrow(
      'the Definitions property is not JSON',
    );
  });
});
