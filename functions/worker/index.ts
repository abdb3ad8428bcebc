export {
  amqpUrlFrom,
  createWorker,
  runWorker,
  type Worker,
  type WorkerContext,
  type WorkerHandler,
  type WorkerLogger,
  type WorkerOptions,
  type WorkerResult,
} from './create-worker.js';
export type { ReplyType, WorkerDelivery, WorkerTransport } from './transport.js';
export { WorkerError } from './worker-error.js';
