import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryWorkerTransport } from '../../functions/adapters/memory/bus.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { demoFailed, endOnServeFailure, startDemoServe } from '../demo-serve.js';
import { startDocumentWorkers } from './workers.js';

/**
 * `npm run demo:documents`: starts `switchyard serve` and the document-approval workers (on
 * RabbitMQ when a broker answers, else on the in-memory bus), sends three invoice documents through
 * the flow (paid without approval; approved by a user, then paid; rejected by the customer server)
 * and prints what each job did. The "customer server" answers each review request with a signal.
 */
const here = dirname(fileURLToPath(import.meta.url));

const DOCUMENTS = [
  { filename: 'file-984.pdf', decision: 'process', note: '650: paid without approval' },
  { filename: 'file-985.pdf', decision: 'process', note: '6,500: approved by a user, then paid' },
  { filename: 'file-986.pdf', decision: 'reject', note: 'the customer server rejects it' },
];

async function main(): Promise<void> {
  const { serve, amqpUrl, queuePrefix } = await startDemoServe(
    'demo-documents',
    join(here, 'workflows.yaml'),
  );
  const broker = serve.broker;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  };
  const answers: Promise<unknown>[] = [];
  const workers = await startDocumentWorkers({
    amqpUrl,
    queuePrefix,
    transport: broker ? () => new MemoryWorkerTransport(broker) : undefined,
    onReviewRequested: (jobId, filename) => {
      const decision = DOCUMENTS.find((document) => document.filename === filename)?.decision ?? 'reject';
      // The customer server answers at once, while request-review has not replied yet: the job keeps
      // the early signal and hands it to `review` when that step becomes ready.
      answers.push(api('POST', `/api/job/${jobId}/signal/review`, { decision }));
    },
  });
  endOnServeFailure(serve, () => Promise.all(workers.map((worker) => worker.stop())));
  try {
    console.log(`switchyard serve is at ${serve.url} (dashboard: ${serve.url}/)\n`);
    const started = await Promise.all(
      DOCUMENTS.map(async (document) => ({
        ...document,
        id: (
          await api<{ id: string }>('POST', '/api/workflow/document-approval', {
            filename: document.filename,
          })
        ).id,
      })),
    );
    for (const document of started) {
      let job = await api<JobDocument>('GET', `/api/job/${document.id}`);
      while (job.status === 'running' || job.status === 'waiting') {
        if (job.waitingFor?.some((wait) => wait.step === 'approve-amount')) {
          console.log(`${document.filename}: over 1,000, waits for approval; approving as "ann"`);
          await api('POST', `/api/job/${document.id}/signal/approve-amount`, { approvedBy: 'ann' });
        }
        job = await api<JobDocument>('GET', `/api/job/${document.id}?wait=2`);
      }
      console.log(`\n${document.filename} (${document.note})\n  job ${document.id}: ${job.status}`);
      for (const [name, step] of Object.entries(job.steps)) {
        const detail =
          step.status === 'skipped'
            ? `skipped (${step.skipReason})`
            : `${step.status}${step.attempt > 1 ? ` after ${step.attempt} attempts` : ''}${step.iterations ? ` (${step.iterations} iterations)` : ''}`;
        console.log(`    ${name.padEnd(20)} ${detail}`);
      }
      if (job.result) console.log(`  result: ${JSON.stringify(job.result)}`);
      if (job.error) console.log(`  error: ${job.error.message}`);
    }
    await Promise.all(answers);
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await serve.close();
  }
}

main().catch(demoFailed);
