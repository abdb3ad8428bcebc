import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryWorkerTransport } from '../../functions/adapters/memory/bus.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { demoFailed, endOnServeFailure, startDemoServe } from '../demo-serve.js';
import { startWordCountWorkers } from './workers.js';

/**
 * `npm run demo`: starts `switchyard serve` and the example's workers (on RabbitMQ when a broker
 * answers, else on the in-memory bus), counts the words of Alice's Adventures in Wonderland, and
 * prints the result and the top words. Its queues are its own (examples/demo-serve.ts): it runs
 * beside the README's walkthrough on the same broker.
 */
const here = dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const { serve, amqpUrl, onRabbit, work, queuePrefix } = await startDemoServe(
    'demo',
    join(here, 'workflows.yaml'),
  );
  const broker = serve.broker;
  const workers = await startWordCountWorkers({
    dataDir: join(work, 'data'),
    amqpUrl,
    queuePrefix,
    transport: broker ? () => new MemoryWorkerTransport(broker) : undefined,
  });
  endOnServeFailure(serve, () => Promise.all(workers.map((worker) => worker.stop())));
  try {
    console.log(
      `switchyard serve is at ${serve.url} (${onRabbit ? 'RabbitMQ' : 'in-memory bus'}, SQLite at ${join(work, 'switchyard.db')})`,
    );
    const started = Date.now();
    const response = await fetch(`${serve.url}/api/workflow/book-word-counts`, {
      method: 'POST',
      body: '{}',
    });
    const { id } = (await response.json()) as { id: string };
    console.log(`started job ${id}`);
    let job = (await (await fetch(`${serve.url}/api/job/${id}`)).json()) as JobDocument;
    while (job.status === 'running') {
      job = (await (await fetch(`${serve.url}/api/job/${id}?wait=10`)).json()) as JobDocument;
      const fan = job.steps['section-counts'];
      if (fan?.children) console.log(`  sections counted: ${fan.childrenDone ?? 0}/${fan.children}`);
    }
    if (job.status !== 'completed') throw new Error(`the job ${job.status}: ${job.error?.message ?? ''}`);
    const result = job.result as {
      title: string;
      chapters: number;
      tokens: number;
      distinct: number;
      countsFile: string;
      top: { word: string; count: number }[];
    };
    console.log(
      `\n${result.title}: ${result.chapters} chapters, ${result.tokens.toLocaleString('en-US')} words, ${result.distinct.toLocaleString('en-US')} distinct (${Date.now() - started} ms)`,
    );
    console.log(`all counts: ${result.countsFile}`);
    console.log('top words:');
    for (const { word, count } of result.top)
      console.log(`  ${word.padEnd(6)} ${count.toLocaleString('en-US')}`);
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await serve.close();
  }
}

main().catch(demoFailed);
