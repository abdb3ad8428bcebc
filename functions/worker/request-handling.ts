import { describeJsonType, isJsonObject, type JsonObject, parseCorrelationId } from '../../engine/index.js';
import type { ReplyOptions, WorkerDelivery } from '../transport/worker-transport.js';
import { AbortJob, ControlReply, SuspendStep } from './control-replies.js';
import { DeliveryCounter } from './delivery-counter.js';
import type { HeldRequest } from './in-hand.js';
import { WorkerError } from './worker-error.js';
import {
  messageOf,
  type WorkerContext,
  type WorkerHandler,
  type WorkerLogger,
  type WorkerResult,
} from './worker-types.js';

export interface RequestHandlingOptions<In extends JsonObject, Out extends WorkerResult> {
  /** The step queue, for the logs. */
  queue: string;
  handler: WorkerHandler<In, Out>;
  /** Deliveries of a request whose handler fails before it is answered with an error reply. */
  maxDeliveries: number;
  logger: WorkerLogger;
  /** Who replies (`x-worker` on every reply; the job's history names it). Empty: no name is sent. */
  worker: string;
  /** Publishes a reply; resolves once the broker has it. */
  send(replyTo: string, correlationId: string, body: string, options: ReplyOptions): Promise<void>;
  /** What `context.heartbeat()` does besides sending the heartbeat reply (Lambda: keep the message hidden). */
  onHeartbeat?(delivery: WorkerDelivery): Promise<void>;
}

/** Handles one request from parse to acknowledgement; what every worker runtime shares. */
export type HandleRequest = (delivery: HeldRequest) => Promise<void>;

/**
 * The SDK's semantics for one request (protocol.md, "The worker SDK"): parses it, calls the handler,
 * and replies with the same correlation id and attempt (a result, an error reply, `abort`/`suspend`),
 * acknowledging the request only once the reply is with the broker. A handler that throws anything
 * else gets the request again (reject) until `maxDeliveries`, then an error reply.
 */
export function requestHandling<In extends JsonObject, Out extends WorkerResult>(
  options: RequestHandlingOptions<In, Out>,
): HandleRequest {
  const { queue, logger, maxDeliveries } = options;
  const failures = new DeliveryCounter();

  function reply(delivery: WorkerDelivery, body: string, says: ReplyOptions = {}): Promise<void> {
    return options.send(delivery.replyTo, delivery.correlationId, body, {
      ...says,
      ...(options.worker !== '' ? { worker: options.worker } : {}),
      ...(delivery.attempt !== undefined ? { attempt: delivery.attempt } : {}),
      ...(delivery.token !== undefined ? { token: delivery.token } : {}),
    });
  }

  /** Replies, then acknowledges; a reply that cannot be sent hands the request back instead. */
  async function answer(delivery: HeldRequest, body: string, says: ReplyOptions = {}): Promise<void> {
    if (delivery.handedBack) {
      logger.warn(
        `${queue}: ${delivery.correlationId} finished after it was handed back; dropping its reply`,
      );
      return;
    }
    try {
      await reply(delivery, body, says);
    } catch (error) {
      logger.error(`${queue}: could not send the reply for ${delivery.correlationId}; handing it back`, {
        error: messageOf(error),
      });
      await delivery.reject().catch(() => {});
      return;
    }
    await delivery.ack();
  }

  function answerError(delivery: HeldRequest, message: string, retryable = true): Promise<void> {
    logger.warn(
      `${queue}: ${delivery.correlationId} failed${retryable ? '' : ' (not retryable)'}: ${message}`,
    );
    return answer(
      delivery,
      JSON.stringify({ error: message }),
      retryable ? { type: 'error' } : { type: 'error', retryable: false },
    );
  }

  function contextOf(delivery: WorkerDelivery): WorkerContext {
    const parsed = parseCorrelationId(delivery.correlationId);
    const colon = delivery.correlationId.indexOf(':');
    return {
      jobId: parsed?.jobId ?? (colon >= 0 ? delivery.correlationId.slice(0, colon) : delivery.correlationId),
      step: parsed?.step ?? (colon >= 0 ? delivery.correlationId.slice(colon + 1) : ''),
      correlationId: delivery.correlationId,
      attempt: delivery.attempt ?? 1,
      heartbeat: async () => {
        await reply(delivery, '', { type: 'heartbeat' });
        await options.onHeartbeat?.(delivery);
      },
      ...(delivery.token !== undefined ? { callbackToken: delivery.token } : {}),
    };
  }

  return async function handle(delivery: HeldRequest): Promise<void> {
    if (delivery.replyTo === '') {
      logger.error(`${queue}: a request without reply_to cannot be answered; dropping it`, {
        correlationId: delivery.correlationId,
      });
      await delivery.ack();
      return;
    }
    const input = parseInput(delivery.body);
    if (typeof input === 'string') return answerError(delivery, input);

    let result: WorkerResult;
    try {
      // The input is a JSON object; that it has In's shape is the handler's claim (see WorkerHandler).
      result = await options.handler(input as In, contextOf(delivery));
    } catch (error) {
      if (error instanceof WorkerError) {
        failures.forget(delivery.correlationId, delivery.attempt);
        return answerError(delivery, error.message, error.retryable);
      }
      if (error instanceof AbortJob || error instanceof SuspendStep) {
        failures.forget(delivery.correlationId, delivery.attempt);
        const abort = error instanceof AbortJob;
        logger.warn(
          `${queue}: ${delivery.correlationId} ${abort ? 'aborts its job' : 'suspends'}: ${error.message}`,
        );
        return answer(delivery, JSON.stringify(abort ? { reason: error.reason } : { reason: error.why }), {
          type: abort ? 'abort' : 'suspend',
        });
      }
      const counted = failures.recordFailure(delivery.correlationId, delivery.attempt);
      const deliveries = Math.max(counted, delivery.deliveryCount ?? 0);
      if (deliveries >= maxDeliveries) {
        failures.forget(delivery.correlationId, delivery.attempt);
        return answerError(delivery, `${messageOf(error)} (failed ${deliveries} times)`);
      }
      logger.warn(
        `${queue}: ${delivery.correlationId} failed (${deliveries} of ${maxDeliveries}); retrying`,
        {
          error: messageOf(error),
        },
      );
      await delivery.reject();
      return;
    }
    failures.forget(delivery.correlationId, delivery.attempt);
    if (result instanceof ControlReply) {
      const { type, reason } = result;
      if (type === 'callback') {
        // Someone else answers the attempt with its token: no reply, the request is done here.
        logger.info(`${queue}: ${delivery.correlationId} awaits a callback: ${reason}`);
        if (!delivery.handedBack) await delivery.ack();
        return;
      }
      logger.warn(
        `${queue}: ${delivery.correlationId} ${type === 'abort' ? 'aborts its job' : 'suspends'}: ${reason}`,
      );
      return answer(delivery, JSON.stringify({ reason }), { type });
    }
    const output = result ?? {};
    if (!isJsonObject(output)) {
      return answerError(delivery, `the handler returned a ${describeJsonType(output)}, not a JSON object`);
    }
    let body: string;
    try {
      body = JSON.stringify(output);
    } catch (error) {
      return answerError(delivery, `the handler's result is not JSON: ${messageOf(error)}`);
    }
    await answer(delivery, body);
  };
}

/** The JSON object in a request body, or why there is none. */
function parseInput(body: string): JsonObject | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'the request body is not JSON';
  }
  if (!isJsonObject(parsed)) return `the request body is a ${describeJsonType(parsed)}, not a JSON object`;
  return parsed;
}
