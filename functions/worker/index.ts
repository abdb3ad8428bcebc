export type { Json, JsonObject } from '../../engine/index.js';
export type {
  ReplyOptions,
  ReplyType,
  WorkerDelivery,
  WorkerTransport,
} from '../transport/worker-transport.js';
export { AbortJob, abort, awaitCallback, ControlReply, SuspendStep, suspend } from './control-replies.js';
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
export { WorkerError, type WorkerErrorOptions } from './worker-error.js';
