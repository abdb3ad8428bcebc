import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqsQueueNameRule } from '../../../functions/adapters/sqs/queue-names.js';
import { createApiHandler } from '../../../functions/handlers/api.js';
import { createRegisterWorkflowsHandler } from '../../../functions/handlers/register-workflows.js';
import { readWorkflowFiles } from '../../../functions/local/serve.js';
import { aCustomResourceEvent, anApiEvent } from '../../support/aws-events.js';
import { memoryManager } from '../../support/memory-manager.js';

const withQueue = (queue: string) => ({ name: 'w', steps: [{ name: 'a', queue }] });
const PREFIX = 'switchyard-prod-';

describe('Queue names the deployment cannot have are refused where workflows are registered', () => {
  it('deploy on SQS: refuses a step queue over 80 characters with the prefix, or with a dot', async () => {
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler({
      ...harness,
      queueRules: { queueNames: sqsQueueNameRule(PREFIX) },
    });
    const long = 'q'.repeat(80 - PREFIX.length + 1);

    await expect(handler(aCustomResourceEvent('Create', [withQueue(long)]))).rejects.toThrow(
      `workflow "w", step "a": queue "${long}" cannot be an SQS queue: "${PREFIX}${long}" has 81 characters`,
    );
    await expect(handler(aCustomResourceEvent('Create', [withQueue('orders.v2')]))).rejects.toThrow(
      `queue "orders.v2" cannot be an SQS queue: SQS takes only letters, digits, "-" and "_"`,
    );
    await handler(aCustomResourceEvent('Create', [withQueue('q'.repeat(80 - PREFIX.length))]));
    expect(await harness.store.listWorkflows()).toHaveLength(1);
  });

  it('deploy: refuses a step queue named like the configured reply queue', async () => {
    const harness = memoryManager();
    const handler = createRegisterWorkflowsHandler({
      ...harness,
      replyQueue: 'replies',
      queueRules: { replyQueue: 'replies' },
    });

    await expect(handler(aCustomResourceEvent('Create', [withQueue('replies')]))).rejects.toThrow(
      `queue "replies" is the manager's reply queue`,
    );
    expect(await harness.store.listWorkflows()).toEqual([]);
  });

  it('the deployed API: PUT answers 400 for a queue SQS cannot have and for the reply queue', async () => {
    const harness = memoryManager();
    const handler = createApiHandler({
      ...harness,
      maxBodyBytes: 4096,
      queueRules: { queueNames: sqsQueueNameRule(PREFIX), replyQueue: 'replies' },
    });
    const put = (queue: string) =>
      handler(anApiEvent('PUT', '/api/workflow/w', { body: JSON.stringify(withQueue(queue)) }));

    const tooLong = await put('q'.repeat(70));
    const reply = await put('replies');

    expect([tooLong.statusCode, JSON.parse(tooLong.body).error.message]).toEqual([
      400,
      expect.stringContaining('cannot be an SQS queue'),
    ]);
    expect([reply.statusCode, JSON.parse(reply.body).error.message]).toEqual([
      400,
      expect.stringContaining(`queue "replies" is the manager's reply queue`),
    ]);
    expect((await put('fine')).statusCode).toBe(201);
  });

  it('checks the step queues with their queue prefix: a prefix SQS cannot take is refused, nothing registered', async () => {
    const harness = memoryManager({ queueRules: { queueNames: sqsQueueNameRule(PREFIX) } });
    const handler = createApiHandler({
      ...harness,
      maxBodyBytes: 4096,
      queueRules: { queueNames: sqsQueueNameRule(PREFIX) },
    });
    const setPrefix = (queuePrefix: string) =>
      handler(anApiEvent('PUT', '/api/namespaces/team-a', { body: JSON.stringify({ queuePrefix }) }));
    const put = (body: object) =>
      handler(anApiEvent('PUT', '/api/ns/team-a/workflow/w', { body: JSON.stringify(body) }));

    const dotted = await setPrefix('team.a.');
    expect([dotted.statusCode, JSON.parse(dotted.body).error.message]).toEqual([
      400,
      expect.stringContaining('cannot be part of an SQS queue name'),
    ]);
    expect((await setPrefix('team-a-')).statusCode).toBe(200);
    const stated = await put({ queuePrefix: 'team.a.', workflows: [withQueue('orders')] });
    expect([stated.statusCode, JSON.parse(stated.body).error.message]).toEqual([
      400,
      expect.stringContaining(`namespace "team-a"'s is "team-a-"`),
    ]);
    expect(await harness.store.listWorkflows()).toEqual([]);
    expect((await put({ workflows: [withQueue('orders')] })).statusCode).toBe(201);
    expect((await harness.store.getWorkflow('team-a/w'))?.definition.steps[0]?.queue).toBe('team-a-orders');
  });

  it('serve --config with --reply-queue: refuses a step queue named like it, with file and line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-queue-rules-'));
    try {
      const file = join(dir, 'workflows.yaml');
      await writeFile(file, 'workflows:\n  - name: w\n    steps:\n      - name: a\n        queue: replies\n');

      await expect(readWorkflowFiles([file], { replyQueue: 'replies' })).rejects.toThrow(
        `${file}:5: workflow "w", step "a": queue "replies" is the manager's reply queue`,
      );
      expect((await readWorkflowFiles([file])).definitions).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
