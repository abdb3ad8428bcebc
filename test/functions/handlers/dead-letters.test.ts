import { describe, expect, it } from 'vitest';
import { createDeadLettersHandler, deadLetterDetail } from '../../../functions/handlers/dead-letters.js';
import { anSqsEvent, anSqsRecord } from '../../support/aws-events.js';
import { failingStore, type MemoryManager, memoryManager } from '../../support/memory-manager.js';

const DLQ = 'Switchyard-switchyard-steps-dlq';

async function startedJob(harness: MemoryManager, retries = 0): Promise<string> {
  await harness.manager.registerWorkflow({ name: 'count', steps: [{ name: 'count-words', retries }] });
  const { job } = await harness.manager.startJob({ workflow: 'count' });
  await harness.manager.drain();
  return job.id;
}

function deadLetter(correlationId: string | undefined, attempt?: number, receiveCount = 6) {
  const attributes: Record<string, string | number> = {};
  if (correlationId) attributes.correlation_id = correlationId;
  if (attempt !== undefined) attributes.attempt = attempt;
  attributes.reply_to = 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-workflow-manager';
  return anSqsRecord({
    body: '{"text":"hello"}',
    attributes,
    queue: DLQ,
    receiveCount,
    deadLetterSourceQueue: 'Switchyard-count-words',
  });
}

describe('Handler: dead-letters', () => {
  it('fails the attempt with a message naming the queues and the receive count', async () => {
    // Prepare
    const harness = memoryManager();
    const jobId = await startedJob(harness);
    const handler = createDeadLettersHandler(harness);

    // Act
    const response = await handler(anSqsEvent([deadLetter(`${jobId}:count-words`, 1)]));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    const job = await harness.store.getJob(jobId);
    expect(job?.status).toBe('failed');
    expect(job?.error?.message).toBe(
      'no worker answered the request: SQS received it from step queue Switchyard-count-words as many ' +
        `times as the queue allows and moved it to the dead-letter queue ${DLQ} (receive count 6)`,
    );
  });

  it('retries the step when retries remain, and ignores a dead letter of an attempt that is over', async () => {
    // Prepare
    const harness = memoryManager();
    const jobId = await startedJob(harness, 1);
    const handler = createDeadLettersHandler(harness);

    // Act
    await handler(anSqsEvent([deadLetter(`${jobId}:count-words`, 1)]));
    await handler(anSqsEvent([deadLetter(`${jobId}:count-words`, 1)]));

    // Assess
    const attempts = harness.bus.sent.filter((request) => request.jobId === jobId).map((r) => r.attempt);
    expect(attempts).toEqual([1, 2]);
    expect((await harness.store.getJob(jobId))?.status).toBe('running');
  });

  it('drops a message without a correlation id', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createDeadLettersHandler(harness);

    // Act
    const response = await handler(anSqsEvent([deadLetter(undefined)]));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(harness.telemetry.logged('dead-lettered message without a correlation_id; dropped')).toHaveLength(
      1,
    );
  });

  it('reports the message when the store cannot take the failure', async () => {
    // Prepare
    const base = memoryManager();
    const jobId = await startedJob(base);
    const harness = memoryManager({ store: failingStore(base.store, ['getJobs']) });
    const record = deadLetter(`${jobId}:count-words`, 1);

    // Act
    const response = await createDeadLettersHandler(harness)(anSqsEvent([record]));

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
  });

  it('says "its step queue" when SQS does not name the source queue', () => {
    // Prepare
    const record = anSqsRecord({ queue: DLQ, receiveCount: 1 });

    // Act
    const detail = deadLetterDetail(record);

    // Assess
    expect(detail).toContain('from its step queue as many times');
  });
});
