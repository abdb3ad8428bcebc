import {
  createWorker,
  type Worker,
  WorkerError,
  type WorkerTransport,
} from '../../functions/worker/index.js';

export interface DocumentWorkersOptions {
  /** A transport per worker (the in-memory bus); default RabbitMQ at `amqpUrl`. */
  transport?: () => WorkerTransport;
  amqpUrl?: string;
  /** Put before each queue's name, as `serve --queue-prefix` puts it before the workflow's. */
  queuePrefix?: string;
  /** The customer server: told of each review request (the workflow's job id and the file). */
  onReviewRequested: (jobId: string, filename: string) => void;
}

/** The invoices the demo's documents hold: amount and IBAN, by file name. */
export const INVOICES: Record<string, { amount: number; iban: string }> = {
  'file-984.pdf': { amount: 650, iban: 'NL02ABNA0674855481' },
  'file-985.pdf': { amount: 6500, iban: 'NL91ABNA0417164300' },
  'file-986.pdf': { amount: 120, iban: 'DE89370400440532013000' },
};

const quiet = { info() {}, warn() {}, error: console.error };

/** The workers of examples/document-approval/workflows.yaml: each does real work, none is a no-op. */
export async function startDocumentWorkers(options: DocumentWorkersOptions): Promise<Worker[]> {
  const worker = (queue: string, handler: Parameters<typeof createWorker>[0]['handler']) =>
    createWorker({
      queue: `${options.queuePrefix ?? ''}${queue}`,
      handler,
      amqpUrl: options.amqpUrl,
      logger: quiet,
      ...(options.transport ? { transport: options.transport() } : {}),
    });
  const payments = new Map<string, { polls: number; attempts: number }>();
  const workers = [
    worker('request-review', async (input, context) => {
      options.onReviewRequested(context.jobId, String(input.filename));
      return { ...input, reviewRequested: true };
    }),
    worker('parse-document', async (input) => {
      const invoice = INVOICES[String(input.filename)];
      if (!invoice) throw new WorkerError(`cannot parse ${input.filename}`, { retryable: false });
      return { ...input, ...invoice };
    }),
    worker('pay-invoice', async (input, context) => {
      const payment = payments.get(context.jobId) ?? { polls: 0, attempts: 0 };
      payments.set(context.jobId, payment);
      // The payment API is unavailable at the first call of each job: retryOn heals it.
      if (payment.attempts++ === 0) throw new WorkerError('payment API: 503 Service Unavailable');
      return { ...input, paymentId: `pay-${context.jobId.slice(0, 8)}` };
    }),
    worker('payment-status', async (input, context) => {
      const payment = payments.get(context.jobId) ?? { polls: 0, attempts: 0 };
      payment.polls++;
      return { ...input, settled: payment.polls >= 2 };
    }),
  ];
  await Promise.all(workers.map((w) => w.start()));
  return workers;
}
