import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  type Bus,
  type QueueHealth,
  RetryableSendError,
  type SendOptions,
  type StepRequest,
  UndeliverableError,
} from '../../../engine/index.js';
import {
  isQueueDoesNotExist,
  isValidSqsQueueName,
  SQS_MAX_BATCH_ENTRIES,
  SQS_MAX_MESSAGE_BYTES,
  sqsMessageSize,
} from '../../transport/sqs/message.js';
import { requestMessage } from './request-message.js';
import { SqsSendError } from './send-error.js';

/** The settings of step queues created after deploy: the same the stack gives the queues it creates. */
export interface SqsQueueSettings {
  visibilityTimeoutSeconds?: number;
  messageRetentionSeconds?: number;
  /** The step queues' shared dead-letter queue. */
  deadLetter?: { targetArn: string; maxReceiveCount: number };
  encryption?: { kind: 'sqs-managed' } | { kind: 'kms'; keyId: string; dataKeyReusePeriodSeconds?: number };
  /**
   * Refuse requests that do not use TLS, as the stack's own queues do: a queue policy denying
   * `aws:SecureTransport` false. The ARN of queue `q` is this prefix plus `q`
   * (`arn:aws:sqs:<region>:<account>:`).
   */
  tlsOnly?: { queueArnPrefix: string };
}

export interface SqsBusOptions {
  client: SQSClient;
  /** Step queue `q` is the SQS queue `<queuePrefix>q`, e.g. `switchyard-`. */
  queuePrefix: string;
  /** Goes to workers as the `reply_to` attribute. */
  replyQueueUrl: string;
  /** When set, `ensureQueues` creates missing step queues with these settings; otherwise it fails on them. */
  createMissingQueues?: SqsQueueSettings;
  /** SendMessageBatch calls in flight at once. @default 8 */
  maxConcurrentBatches?: number;
  /** Entries SQS failed for a reason not of the sender's making are sent again this many times in all. @default 4 */
  sendAttempts?: number;
  /** First backoff between attempts, doubled each time, with jitter. @default 100 */
  retryBaseDelayMs?: number;
  /** `ping` gives up after this long. @default 5_000 */
  pingTimeoutMs?: number;
}

/** One request, encoded: what goes into a SendMessageBatch entry. */
interface Encoded {
  request: StepRequest;
  entry: SendMessageBatchRequestEntry;
  size: number;
}

type SendFailure = UndeliverableError | RetryableSendError;

const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'RequestThrottled',
  'KmsThrottled',
  'TooManyRequestsException',
]);

/**
 * The SQS bus (protocol.md, "SQS"): one standard queue per step queue, requests sent in batches.
 *
 * Failures are per request: `send` sends every request it can, then rejects with an `SqsSendError`
 * listing the ones that were not sent, each marked undeliverable (never worth retrying: too large,
 * invalid queue name, refused as the sender's fault) or retryable (kept in the caller's outbox).
 * One bad request never holds back the others of its call. SQS has no virtual hosts: a step's
 * `vhost` plays no part in its queue's name.
 */
export class SqsBus implements Bus {
  private readonly client: SQSClient;
  private readonly queuePrefix: string;
  private readonly replyQueueUrl: string;
  private readonly settings: SqsQueueSettings | undefined;
  private readonly maxConcurrentBatches: number;
  private readonly sendAttempts: number;
  private readonly retryBaseDelayMs: number;
  private readonly pingTimeoutMs: number;
  private readonly queueUrls = new Map<string, Promise<string>>();
  private closed = false;

  constructor(options: SqsBusOptions) {
    this.client = options.client;
    this.queuePrefix = options.queuePrefix;
    this.replyQueueUrl = options.replyQueueUrl;
    this.settings = options.createMissingQueues;
    this.maxConcurrentBatches = Math.max(1, options.maxConcurrentBatches ?? 8);
    this.sendAttempts = Math.max(1, options.sendAttempts ?? 4);
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 100;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
  }

  async send(requests: readonly StepRequest[], options: SendOptions = {}): Promise<void> {
    this.assertOpen();
    const failures: SendFailure[] = [];
    const byQueue = new Map<string, Encoded[]>();
    requests.forEach((request, index) => {
      const queueName = this.queueName(request.queue);
      const encoded = this.encode(request, index, queueName, options.tokenOf);
      if (encoded instanceof UndeliverableError) {
        failures.push(encoded);
        return;
      }
      const group = byQueue.get(queueName) ?? [];
      group.push(encoded);
      byQueue.set(queueName, group);
    });

    const batches = await Promise.all(
      [...byQueue].map(async ([queueName, encoded]) => {
        try {
          const url = await this.queueUrl(queueName);
          return splitIntoBatches(encoded).map((batch) => ({ url, queueName, batch }));
        } catch (error) {
          failures.push(
            ...encoded.map((item) => retryable(item.request, error, `resolving queue ${queueName}`)),
          );
          return [];
        }
      }),
    );
    const batchFailures = await mapWithConcurrency(batches.flat(), this.maxConcurrentBatches, (batch) =>
      this.sendBatch(batch.url, batch.queueName, batch.batch),
    );
    failures.push(...batchFailures.flat());
    if (failures.length > 0) throw new SqsSendError(failures, requests.length);
  }

  async ensureQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<void> {
    this.assertOpen();
    const names = [...new Set(queues.map((queue) => this.queueName(queue.queue)))];
    for (const name of names) {
      if (!isValidSqsQueueName(name)) throw new Error(invalidQueueNameMessage(name));
    }
    await Promise.all(names.map((name) => this.queueUrl(name, { create: true })));
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: this.replyQueueUrl, AttributeNames: ['QueueArn'] }),
      { abortSignal: AbortSignal.timeout(this.pingTimeoutMs) },
    );
  }

  /**
   * Each step queue's ApproximateNumberOfMessages (ready) and ApproximateNumberOfMessagesNotVisible
   * (in flight), through GetQueueAttributes; SQS does not count consumers (`unknown`). A queue that
   * does not exist is reported so, never created.
   */
  async inspectQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<QueueHealth[]> {
    this.assertOpen();
    return mapWithConcurrency(
      queues,
      this.maxConcurrentBatches,
      async ({ queue, vhost }): Promise<QueueHealth> => {
        const name = this.queueName(queue);
        try {
          const url = await this.queueUrl(name);
          const { Attributes = {} } = await this.client.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          );
          return {
            queue,
            vhost,
            exists: true,
            ready: Number(Attributes.ApproximateNumberOfMessages ?? 0),
            inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
            consumers: 'unknown',
          };
        } catch (error) {
          const missing = isQueueDoesNotExist(error) || isQueueDoesNotExist((error as Error).cause);
          if (missing) this.queueUrls.delete(name);
          return missing
            ? { queue, vhost, exists: false, consumers: 'unknown' }
            : { queue, vhost, exists: false, error: (error as Error).message };
        }
      },
    );
  }

  /** Stops taking calls. The SQS client belongs to whoever created it, and stays open. */
  async close(): Promise<void> {
    this.closed = true;
    this.queueUrls.clear();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the SQS bus is closed');
  }

  private queueName(queue: string): string {
    return `${this.queuePrefix}${queue}`;
  }

  private encode(
    request: StepRequest,
    index: number,
    queueName: string,
    tokenOf: SendOptions['tokenOf'],
  ): Encoded | UndeliverableError {
    if (!isValidSqsQueueName(queueName)) {
      return new UndeliverableError(invalidQueueNameMessage(queueName), request.correlationId);
    }
    const { body, attributes } = requestMessage(request, this.replyQueueUrl, tokenOf);
    const size = sqsMessageSize(body, attributes);
    if (size > SQS_MAX_MESSAGE_BYTES) {
      return new UndeliverableError(
        `the request ${request.correlationId} for queue ${queueName} is ${size} bytes (body and message ` +
          `attributes), over the SQS limit of ${SQS_MAX_MESSAGE_BYTES} bytes (1 MiB); it was not sent`,
        request.correlationId,
      );
    }
    // The index keeps entry ids unique within any batch of this call.
    return { request, size, entry: { Id: `r${index}`, MessageBody: body, MessageAttributes: attributes } };
  }

  /** Queue URLs are cached; a failed lookup is not, so the next call asks again. */
  private queueUrl(queueName: string, options: { create?: boolean } = {}): Promise<string> {
    const create = options.create ?? false;
    const cached = this.queueUrls.get(queueName);
    if (cached && !create) return cached;
    // A lookup already under way may be one that does not create: if it fails, look again, creating.
    const lookup = cached
      ? cached.catch(() => this.lookUpQueueUrl(queueName, create))
      : this.lookUpQueueUrl(queueName, create);
    this.queueUrls.set(queueName, lookup);
    lookup.catch(() => {
      if (this.queueUrls.get(queueName) === lookup) this.queueUrls.delete(queueName);
    });
    return lookup;
  }

  private async lookUpQueueUrl(queueName: string, create: boolean): Promise<string> {
    try {
      return await this.getQueueUrl(queueName);
    } catch (error) {
      if (!isQueueDoesNotExist(error)) throw error;
      if (!create || !this.settings) {
        throw new Error(
          `the SQS queue ${queueName} does not exist` +
            (create ? ' and this bus is not configured to create missing queues' : ''),
          { cause: error },
        );
      }
    }
    try {
      const { QueueUrl } = await this.client.send(
        new CreateQueueCommand({
          QueueName: queueName,
          Attributes: queueAttributes(this.settings, queueName),
        }),
      );
      if (!QueueUrl) throw new Error(`CreateQueue returned no URL for ${queueName}`);
      return QueueUrl;
    } catch (error) {
      // Created meanwhile by another instance, with settings that differ from ours: use it as it is.
      if (error instanceof Error && error.name === 'QueueNameExists') return this.getQueueUrl(queueName);
      throw error;
    }
  }

  private async getQueueUrl(queueName: string): Promise<string> {
    const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: queueName }));
    if (!QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${queueName}`);
    return QueueUrl;
  }

  /** Sends one batch; entries failed by SQS for reasons not of the sender's making are sent again with backoff. */
  private async sendBatch(url: string, queueName: string, batch: readonly Encoded[]): Promise<SendFailure[]> {
    const failures: SendFailure[] = [];
    let pending = [...batch];
    let lastFailure = new Map<string, { code: string; message: string }>();
    for (let attempt = 1; pending.length > 0 && attempt <= this.sendAttempts; attempt++) {
      if (attempt > 1) await delay(backoff(this.retryBaseDelayMs, attempt - 1));
      try {
        const result = await this.client.send(
          new SendMessageBatchCommand({ QueueUrl: url, Entries: pending.map((item) => item.entry) }),
        );
        const failed = new Map((result.Failed ?? []).map((entry) => [entry.Id, entry]));
        lastFailure = new Map();
        const stillPending: Encoded[] = [];
        for (const item of pending) {
          const failure = failed.get(item.entry.Id);
          if (!failure) continue;
          const code = failure.Code ?? 'Unknown';
          const message = failure.Message ?? 'no message';
          if (failure.SenderFault) {
            failures.push(
              new UndeliverableError(
                `SQS refused the request ${item.request.correlationId} for queue ${queueName}: ${code}: ${message}`,
                item.request.correlationId,
              ),
            );
          } else {
            lastFailure.set(item.entry.Id ?? '', { code, message });
            stillPending.push(item);
          }
        }
        pending = stillPending;
      } catch (error) {
        if (isQueueDoesNotExist(error)) this.queueUrls.delete(queueName);
        if (!isTransient(error)) {
          failures.push(...pending.map((item) => retryable(item.request, error, `sending to ${queueName}`)));
          return failures;
        }
        lastFailure = new Map(pending.map((item) => [item.entry.Id ?? '', describeError(error)]));
      }
    }
    for (const item of pending) {
      const { code, message } = lastFailure.get(item.entry.Id ?? '') ?? {
        code: 'Unknown',
        message: 'not sent',
      };
      failures.push(
        new RetryableSendError(
          `SQS did not take the request ${item.request.correlationId} for queue ${queueName} after ` +
            `${this.sendAttempts} attempts: ${code}: ${message}`,
          item.request.correlationId,
          code,
        ),
      );
    }
    return failures;
  }
}

/** Groups a queue's requests into SendMessageBatch calls of at most ten entries and 1 MiB in all. */
function splitIntoBatches(encoded: readonly Encoded[]): Encoded[][] {
  const batches: Encoded[][] = [];
  let current: Encoded[] = [];
  let currentSize = 0;
  for (const item of encoded) {
    if (current.length === SQS_MAX_BATCH_ENTRIES || currentSize + item.size > SQS_MAX_MESSAGE_BYTES) {
      batches.push(current);
      current = [];
      currentSize = 0;
    }
    current.push(item);
    currentSize += item.size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function queueAttributes(
  settings: SqsQueueSettings,
  queueName: string,
): Partial<Record<QueueAttributeName, string>> {
  const attributes: Partial<Record<QueueAttributeName, string>> = {};
  if (settings.tlsOnly) {
    attributes.Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'DenyInsecureTransport',
          Effect: 'Deny',
          Principal: '*',
          Action: 'sqs:*',
          Resource: `${settings.tlsOnly.queueArnPrefix}${queueName}`,
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ],
    });
  }
  if (settings.visibilityTimeoutSeconds !== undefined) {
    attributes.VisibilityTimeout = String(settings.visibilityTimeoutSeconds);
  }
  if (settings.messageRetentionSeconds !== undefined) {
    attributes.MessageRetentionPeriod = String(settings.messageRetentionSeconds);
  }
  if (settings.deadLetter) {
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: settings.deadLetter.targetArn,
      maxReceiveCount: settings.deadLetter.maxReceiveCount,
    });
  }
  if (settings.encryption?.kind === 'sqs-managed') attributes.SqsManagedSseEnabled = 'true';
  if (settings.encryption?.kind === 'kms') {
    attributes.KmsMasterKeyId = settings.encryption.keyId;
    if (settings.encryption.dataKeyReusePeriodSeconds !== undefined) {
      attributes.KmsDataKeyReusePeriodSeconds = String(settings.encryption.dataKeyReusePeriodSeconds);
    }
  }
  return attributes;
}

function invalidQueueNameMessage(queueName: string): string {
  return (
    `${JSON.stringify(queueName)} is not a valid SQS queue name (1 to 80 letters, digits, hyphens ` +
    `and underscores, prefix included)`
  );
}

function retryable(request: StepRequest, error: unknown, doing: string): RetryableSendError {
  const { code, message } = describeError(error);
  return new RetryableSendError(
    `the request ${request.correlationId} was not sent: ${doing} failed: ${message}`,
    request.correlationId,
    code,
  );
}

function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof Error) return { code: error.name, message: error.message };
  return { code: 'Unknown', message: String(error) };
}

/** Worth another try now: throttling, a server fault, or no answer at all (network). */
function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (THROTTLING.has(error.name)) return true;
  const fault = (error as { $fault?: string }).$fault;
  if (fault === 'server') return true;
  if (fault === 'client') return (error as { $retryable?: unknown }).$retryable !== undefined;
  return !isQueueDoesNotExist(error);
}

function backoff(baseMs: number, retry: number): number {
  const ceiling = baseMs * 2 ** (retry - 1);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
