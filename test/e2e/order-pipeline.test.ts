import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrderWorkers } from '../../examples/order-pipeline/workers.js';
import type { Worker } from '../../functions/worker/index.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import {
  expectOrderOutcomes,
  jobIdsOf,
  type OrderApi,
  orderPipelineYaml,
  runOrders,
} from '../support/order-pipeline.js';
import { AMQP_URL } from '../support/rabbitmq.js';

/**
 * The order pipeline example (when:, input:, params, a signal, continueOnError, a workflow: step,
 * abort, onFailure) on the real parts: `serve` on RabbitMQ and a SQLite file, the example's workers
 * on RabbitMQ, the four orders of its demo.
 */
describe('The order pipeline on RabbitMQ and SQLite', { timeout: 90_000 }, () => {
  let serve: TestServe;
  let workers: Worker[] = [];
  const alerts: Record<string, unknown>[] = [];
  let api: OrderApi;

  beforeAll(async () => {
    serve = await startTestServe(await orderPipelineYaml());
    workers = await startOrderWorkers({ amqpUrl: AMQP_URL, onAlert: (input) => alerts.push(input) });
    api = async (method, path, body) => {
      const answer = await serve.api(
        method,
        path,
        body === undefined ? undefined : JSON.stringify(body),
        body === undefined ? {} : { 'content-type': 'application/json' },
      );
      return answer as never;
    };
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await serve?.stop();
  });

  it('ships o-1001 and o-1002 (after a signal), refunds o-1003, aborts o-9999 with one order-failed job', async () => {
    const runs = await runOrders(api, ['o-1001', 'o-1002', 'o-1003', 'o-9999']);
    await expectOrderOutcomes(api, runs);

    // One shipping job per shipped order, each called by its order's job; one alert, for o-9999.
    const shipping = await jobIdsOf(api, 'shipping');
    expect(shipping.sort()).toEqual(
      [runs.get('o-1001')?.job.steps.ship?.job, runs.get('o-1002')?.job.steps.ship?.job].sort(),
    );
    const failed = await jobIdsOf(api, 'order-failed');
    expect(failed).toEqual([runs.get('o-9999')?.job.followUp]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ job: { id: runs.get('o-9999')?.id } });
    // The workflow's own listing: the aborted job counts with the finished ones.
    const pipeline = await jobIdsOf(api, 'order-pipeline');
    expect(pipeline).toHaveLength(4);
    const aborted = await api<{ jobs: string[] }>('GET', '/api/jobs?workflow=order-pipeline&status=aborted');
    expect(aborted.body.jobs).toEqual([runs.get('o-9999')?.id]);
  });
});
