import { fileURLToPath } from 'node:url';
import {
  AbortJob,
  createWorker,
  type Worker,
  WorkerError,
  type WorkerTransport,
} from '../../functions/worker/index.js';
import { DECLINED_CARD, ORDERS, type OrderLine } from './orders.js';

export interface OrderWorkersOptions {
  /** A transport per worker (the in-memory bus, SQS); default RabbitMQ at `amqpUrl`. */
  transport?: () => WorkerTransport;
  amqpUrl?: string;
  /** Put before each queue's name, as `serve --queue-prefix` puts it before the workflow's. */
  queuePrefix?: string;
  /** Told of each alert-operations job (the onFailure workflow's worker). */
  onAlert?: (input: Record<string, unknown>) => void;
}

const quiet = { info() {}, warn() {}, error: console.error };
const money = (amount: number) => Math.round(amount * 100) / 100;

/** The order pipeline's workers, one per queue of examples/order-pipeline/workflows.yaml. */
export async function startOrderWorkers(options: OrderWorkersOptions = {}): Promise<Worker[]> {
  const worker = (queue: string, handler: Parameters<typeof createWorker>[0]['handler']) =>
    createWorker({
      queue: `${options.queuePrefix ?? ''}${queue}`,
      handler,
      amqpUrl: options.amqpUrl,
      logger: quiet,
      ...(options.transport ? { transport: options.transport() } : {}),
    });

  const workers = [
    worker('load-order', async (input) => {
      const order = ORDERS[String(input.orderId)];
      // Nothing downstream can help an order that does not exist: end the whole job.
      if (!order) throw new AbortJob(`there is no order ${JSON.stringify(input.orderId)}`);
      return { ...order, lines: order.lines.map((line) => ({ ...line })) };
    }),
    worker('price-line', async (input) => {
      const line = input.line as unknown as OrderLine;
      const net = money(line.quantity * line.unitPrice);
      return { line: { ...line, net, gross: money(net * (1 + Number(input.taxRate))) } };
    }),
    worker('total', async (input) => {
      const lines = input.lines as { gross: number }[];
      return {
        total: money(lines.reduce((sum, line) => sum + line.gross, 0)),
        currency: input.currency ?? 'EUR',
      };
    }),
    worker('charge-card', async (input) => {
      // A declined card stays declined: no retry will change that.
      if (input.card === DECLINED_CARD) throw new WorkerError('card declined', { retryable: false });
      return { chargeId: `ch-${input.orderId}`, charged: input.amount ?? 0 };
    }),
    worker('refund-and-cancel', async (input) => ({
      orderId: input.orderId ?? null,
      refunded: true,
      reason: input.reason ?? null,
    })),
    worker('book-courier', async (input) => ({
      orderId: input.orderId ?? null,
      tracking: `TRK-${input.orderId}`,
    })),
    worker('print-label', async (input) => ({
      tracking: input.tracking ?? null,
      label: `label-${input.orderId}.pdf`,
    })),
    worker('send-receipt', async (input) => ({ receipt: `receipt for ${input.orderId}: ${input.amount}` })),
    worker('notify-customer', async (input) => ({ notified: input.outcome ?? null })),
    worker('alert-operations', async (input) => {
      options.onAlert?.(input);
      return { alerted: true };
    }),
  ];
  await Promise.all(workers.map((w) => w.start()));
  return workers;
}

// `node --import tsx examples/order-pipeline/workers.ts`: the workers on RabbitMQ until Ctrl-C.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const workers = await startOrderWorkers({ amqpUrl: process.env.AMQP_URL });
  console.log(`order pipeline workers running (${workers.length} queues); Ctrl-C stops them`);
  const stop = () => void Promise.all(workers.map((w) => w.stop())).then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
