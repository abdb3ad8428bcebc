import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryWorkerTransport } from '../../functions/adapters/memory/bus.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { demoFailed, endOnServeFailure, startDemoServe } from '../demo-serve.js';
import { startOrderWorkers } from './workers.js';

/**
 * `npm run demo:orders`: starts `switchyard serve` and the order pipeline's workers (on RabbitMQ
 * when a broker answers, else on the in-memory bus), runs four orders that take four paths (shipped,
 * approved by a manager then shipped, card declined and refunded, unknown order aborted with an
 * onFailure alert) and prints what each job did. Its queues are its own (examples/demo-serve.ts).
 */
const here = dirname(fileURLToPath(import.meta.url));

const ORDERS = [
  { orderId: 'o-1001', note: 'a small order: charged and shipped' },
  { orderId: 'o-1002', note: 'over 1,000: waits for a manager, then shipped' },
  { orderId: 'o-1003', note: 'the card is declined: refunded and cancelled' },
  { orderId: 'o-9999', note: 'no such order: load-order aborts the job, order-failed alerts' },
];

async function main(): Promise<void> {
  const { serve, amqpUrl, queuePrefix } = await startDemoServe('demo-orders', join(here, 'workflows.yaml'));
  const broker = serve.broker;
  const alerts: unknown[] = [];
  const workers = await startOrderWorkers({
    amqpUrl,
    queuePrefix,
    transport: broker ? () => new MemoryWorkerTransport(broker) : undefined,
    onAlert: (input) => alerts.push(input),
  });
  endOnServeFailure(serve, () => Promise.all(workers.map((worker) => worker.stop())));
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  };
  try {
    console.log(`switchyard serve is at ${serve.url} (dashboard: ${serve.url}/)\n`);
    const started = await Promise.all(
      ORDERS.map(async (order) => ({
        ...order,
        id: (await api<{ id: string }>('POST', '/api/workflow/order-pipeline', { orderId: order.orderId }))
          .id,
      })),
    );
    for (const order of started) {
      let job = await api<JobDocument>('GET', `/api/job/${order.id}`);
      while (job.status === 'running' || job.status === 'waiting') {
        if (job.steps['manager-approval']?.status === 'running') {
          console.log(`${order.orderId}: waits for approval; approving as "the manager"`);
          await api('POST', `/api/job/${order.id}/signal/manager-approval`, { approvedBy: 'the manager' });
        }
        job = await api<JobDocument>('GET', `/api/job/${order.id}?wait=5`);
      }
      console.log(`\n${order.orderId} (${order.note})\n  job ${order.id}: ${job.status}`);
      for (const [name, step] of Object.entries(job.steps)) {
        const detail = step.handled
          ? `failed, handled: ${step.error}`
          : step.status === 'skipped'
            ? `skipped (${step.skipReason})`
            : step.status;
        console.log(`    ${name.padEnd(18)} ${detail}${step.job ? ` -> shipping job ${step.job}` : ''}`);
      }
      if (job.result) console.log(`  result: ${JSON.stringify(job.result)}`);
      if (job.error) console.log(`  error: ${job.error.message}`);
      if (job.followUp) {
        let alert = await api<JobDocument>('GET', `/api/job/${job.followUp}`);
        while (alert.status === 'running')
          alert = await api<JobDocument>('GET', `/api/job/${job.followUp}?wait=5`);
        console.log(`  onFailure: job ${job.followUp} (order-failed) ${alert.status}`);
      }
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await serve.close();
  }
}

main().catch(demoFailed);
