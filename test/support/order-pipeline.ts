import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { calledJobId } from '../../engine/job/calls.js';
import { onFailureJobId } from '../../engine/job/on-failure.js';
import { DECLINED_CARD, ORDERS } from '../../examples/order-pipeline/orders.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { eventually } from './original-worker.js';

/**
 * The order pipeline example (examples/order-pipeline) as a test drives it on any runtime: its
 * definitions, the four orders of its demo, and what each order's job documents must show.
 */
const here = dirname(fileURLToPath(import.meta.url));
export const ORDER_PIPELINE_YAML = join(here, '../../examples/order-pipeline/workflows.yaml');

export function orderPipelineYaml(): Promise<string> {
  return readFile(ORDER_PIPELINE_YAML, 'utf8');
}

/** How a test reaches the API: the local serve's HTTP, or the Lambda API handler. */
export type OrderApi = <T>(
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: T }>;

export type OrderId = 'o-1001' | 'o-1002' | 'o-1003' | 'o-9999';

export interface OrderRun {
  orderId: OrderId;
  id: string;
  job: JobDocument;
}

const money = (amount: number) => Math.round(amount * 100) / 100;

/** What the example's workers make of an order: the total its lines come to, with 20% tax. */
export function expectedTotal(orderId: string): number {
  const order = ORDERS[orderId];
  if (!order) throw new Error(`no order ${orderId}`);
  return money(
    order.lines.reduce((sum, line) => sum + money(money(line.quantity * line.unitPrice) * 1.2), 0),
  );
}

async function waitFinished(
  api: OrderApi,
  id: string,
  ms: number,
  onRunning?: (job: JobDocument) => Promise<void>,
) {
  return eventually(
    async () => {
      const { status, body } = await api<JobDocument>('GET', `/api/job/${id}`);
      if (status !== 200) throw new Error(`GET /api/job/${id}: ${status} ${JSON.stringify(body)}`);
      if (body.status === 'running' || body.status === 'waiting' || body.status === 'pending') {
        await onRunning?.(body);
        return false;
      }
      return body;
    },
    ms,
    100,
  );
}

/**
 * Starts a job of order-pipeline per order, signals `manager-approval` where an order waits for it,
 * and returns each job's document once finished.
 */
export async function runOrders(
  api: OrderApi,
  orderIds: readonly OrderId[],
  options: { timeoutMs?: number } = {},
): Promise<Map<OrderId, OrderRun>> {
  const started = await Promise.all(
    orderIds.map(async (orderId) => {
      const { status, body } = await api<{ id: string }>('POST', '/api/workflow/order-pipeline', { orderId });
      expect(status, JSON.stringify(body)).toBeLessThan(300);
      return { orderId, id: body.id };
    }),
  );
  const runs = new Map<OrderId, OrderRun>();
  await Promise.all(
    started.map(async ({ orderId, id }) => {
      let signalled = false;
      const job = await waitFinished(api, id, options.timeoutMs ?? 60_000, async (running) => {
        if (!signalled && running.steps['manager-approval']?.status === 'running') {
          const answer = await api('POST', `/api/job/${id}/signal/manager-approval`, {
            approvedBy: 'the manager',
          });
          expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
          signalled = true;
        }
      });
      runs.set(orderId, { orderId, id, job });
    }),
  );
  return runs;
}

const outputOf = (job: JobDocument, step: string) =>
  job.completed.find((entry) => entry.name === step)?.message;

/** Asserts what the demo prints for each order, read from the job documents of its jobs. */
export async function expectOrderOutcomes(
  api: OrderApi,
  runs: Map<OrderId, OrderRun>,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const shipped = async (run: OrderRun) => {
    const { job, id, orderId } = run;
    const order = ORDERS[orderId];
    if (!order) throw new Error(`no order ${orderId}`);
    const total = expectedTotal(orderId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.result).toEqual({ notified: 'shipped' });
    expect(job.steps['refund-and-cancel']).toMatchObject({ status: 'skipped' });
    expect(job.steps['refund-and-cancel']?.skipReason).toContain('has(input.error)');
    expect(outputOf(job, 'total')).toEqual({ total, currency: 'EUR' });
    // What charge-card was sent: its `input:` mapping, with the workflow's params under it.
    expect(job.steps['charge-card']).toMatchObject({ status: 'completed', attempt: 1 });
    expect(job.steps['charge-card']?.input).toEqual({
      orderId,
      card: order.card,
      amount: total,
      currency: 'EUR',
    });
    expect(outputOf(job, 'charge-card')).toEqual({ chargeId: `ch-${orderId}`, charged: total });
    // The called shipping job: derived id, linked back, its result the ship step's output.
    const shippingId = calledJobId(id, 'ship', 1);
    expect(job.steps.ship).toMatchObject({ status: 'completed', attempt: 1, job: shippingId });
    const shipping = (await api<JobDocument>('GET', `/api/job/${shippingId}`)).body;
    expect(shipping).toMatchObject({
      workflow: 'shipping',
      status: 'completed',
      parent: null,
      calledBy: { id, step: 'ship', attempt: 1 },
      input: { orderId, address: order.address },
      result: { tracking: `TRK-${orderId}`, label: `label-${orderId}.pdf` },
    });
    expect(outputOf(job, 'ship')).toEqual(shipping.result);
    expect(outputOf(job, 'send-receipt')).toEqual({ receipt: `receipt for ${orderId}: ${total}` });
    expect(job.followUp).toBeUndefined();
  };

  const small = runs.get('o-1001');
  if (small) {
    await shipped(small);
    expect(small.job.steps['manager-approval']?.status).toBe('skipped');
    expect(small.job.steps['manager-approval']?.skipReason).toContain('input.total > 1000.0');
  }

  const large = runs.get('o-1002');
  if (large) {
    await shipped(large);
    expect(large.job.steps['manager-approval']?.status).toBe('completed');
    expect(outputOf(large.job, 'manager-approval')).toMatchObject({ approvedBy: 'the manager' });
  }

  const declined = runs.get('o-1003');
  if (declined) {
    const { job, orderId } = declined;
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.result).toEqual({ notified: 'cancelled' });
    // Not retryable: one attempt although retries is 2; handled, so the job went on.
    expect(job.steps['charge-card']).toMatchObject({
      status: 'failed',
      attempt: 1,
      handled: true,
      error: 'card declined',
      input: { orderId, card: DECLINED_CARD, amount: expectedTotal(orderId), currency: 'EUR' },
    });
    expect(job.steps['refund-and-cancel']).toMatchObject({
      status: 'completed',
      input: { orderId, reason: 'card declined', currency: 'EUR' },
    });
    expect(outputOf(job, 'refund-and-cancel')).toEqual({ orderId, refunded: true, reason: 'card declined' });
    expect(job.steps.ship?.status).toBe('skipped');
    expect(job.steps.ship?.job).toBeUndefined();
    expect(job.steps['send-receipt']?.status).toBe('skipped');
    expect(job.followUp).toBeUndefined();
    expect((await api('GET', `/api/job/${calledJobId(declined.id, 'ship', 1)}`)).status).toBe(404);
  }

  const unknown = runs.get('o-9999');
  if (unknown) {
    const { job, id } = unknown;
    expect(job.status, JSON.stringify(job)).toBe('aborted');
    expect(job.error?.step).toBe('load-order');
    expect(job.error?.message).toContain('there is no order "o-9999"');
    expect(job.steps['load-order']?.status).toBe('failed');
    for (const step of ['price-lines', 'total', 'charge-card', 'ship', 'notify-customer'])
      expect(job.steps[step]?.status).toBe('waiting');
    // Exactly one order-failed job, with the derived id, linked both ways.
    expect(job.followUp).toBe(onFailureJobId(id, 1));
    const alert = await waitFinished(api, job.followUp as string, options.timeoutMs ?? 60_000);
    expect(alert).toMatchObject({
      workflow: 'order-failed',
      status: 'completed',
      causedBy: id,
      result: { alerted: true },
      input: {
        job: { id, workflow: 'order-pipeline', input: { orderId: 'o-9999' } },
        error: { step: 'load-order' },
      },
    });
    expect(String((alert.input.error as { message?: unknown }).message)).toContain('there is no order');
  }
}

/** Every top-level job of a workflow, whatever its status (`GET /api/jobs?status=all`, all pages). */
export async function jobIdsOf(api: OrderApi, workflow: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const query = `workflow=${encodeURIComponent(workflow)}&status=all&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { status, body } = await api<{ jobs: string[]; cursor?: string }>('GET', `/api/jobs?${query}`);
    if (status !== 200) throw new Error(`GET /api/jobs?${query}: ${status} ${JSON.stringify(body)}`);
    ids.push(...body.jobs);
    cursor = body.cursor;
  } while (cursor);
  return ids;
}
