import { parseJsonObjectBody } from '../json.js';
import type { InboundReply } from '../ports/bus.js';
import type { JobEvent } from './events.js';
import { workerName } from './history.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './message-size.js';
import { parseCorrelationId } from './types.js';

export const DEFAULT_MAX_REPLY_BYTES = DEFAULT_MAX_MESSAGE_BYTES;

/** Error messages taken from a worker's reply are cut to this many characters. */
const MAX_ERROR_MESSAGE = 4000;
/**
 * A `suspend` reply's note is kept in the step's state, and shown in lists and on the graph: a
 * sentence, not a document. Longer ones are cut to this many characters.
 */
export const MAX_SUSPEND_NOTE = 500;

export type ReplyEvent =
  | { ok: true; jobId: string; event: JobEvent; correlationId: string }
  | { ok: false; reason: string; correlationId?: string };

/**
 * A worker's message as the engine sees it. A message without a usable correlation id cannot name a
 * job: it is refused (the caller logs and counts it). A body that is not a JSON object fails the
 * attempt, as workflows.md says, and so does one over the size limit or nested too deep.
 *
 * The type (protocol.md's table) is matched exactly, in lower case, as the spec and the worker SDK
 * spell it; the original's workers send none. Any other type fails the attempt, naming it: a
 * worker's "Error" or "failed" must never complete its step with the error as the output.
 */
export function replyEvent(reply: InboundReply, maxBytes = DEFAULT_MAX_REPLY_BYTES): ReplyEvent {
  const read = readReplyEvent(reply, maxBytes);
  const worker = workerName(reply.worker);
  if (!read.ok || worker === undefined || read.event.type === 'heartbeat') return read;
  return { ...read, event: { ...read.event, worker } as JobEvent };
}

function readReplyEvent(reply: InboundReply, maxBytes: number): ReplyEvent {
  const correlationId = reply.correlationId?.trim();
  if (!correlationId) return { ok: false, reason: 'the reply has no correlation id' };
  const target = parseCorrelationId(correlationId);
  if (!target) {
    return { ok: false, reason: 'the correlation id is not "<job uuid>:<step>"', correlationId };
  }
  const { jobId, step } = target;
  const attempt = reply.attempt !== undefined && Number.isInteger(reply.attempt) ? reply.attempt : undefined;
  const base = { ok: true as const, jobId, correlationId };
  if (reply.type === 'heartbeat') return { ...base, event: { type: 'heartbeat', step, attempt } };
  const tooLarge = oversizedReply(reply.body, maxBytes);
  if (tooLarge) return { ...base, event: { type: 'failure', step, attempt, message: tooLarge } };
  if (reply.type === 'error') {
    const message = errorReplyMessage(reply.body);
    const event: JobEvent =
      reply.retryable === false
        ? { type: 'failure', step, attempt, message, retryable: false }
        : { type: 'failure', step, attempt, message };
    return { ...base, event };
  }
  if (reply.type === 'abort')
    return { ...base, event: { type: 'abort', step, attempt, reason: abortReason(reply.body) } };
  if (reply.type === 'suspend') {
    const note = replyReason(reply.body, MAX_SUSPEND_NOTE);
    return {
      ...base,
      event: note ? { type: 'suspend', step, attempt, note } : { type: 'suspend', step, attempt },
    };
  }
  if (reply.type !== undefined && reply.type !== 'result')
    return { ...base, event: { type: 'failure', step, attempt, message: unknownTypeMessage(reply.type) } };
  const parsed = parseJsonObjectBody(reply.body);
  if (!parsed.ok)
    return { ...base, event: { type: 'failure', step, attempt, message: `invalid reply: ${parsed.error}` } };
  return { ...base, event: { type: 'reply', step, attempt, output: parsed.value } };
}

/**
 * An `abort` or `suspend` reply's reason: the body's `reason` (the protocol's shape, which the SDK
 * sends), else its `error` or `message`; a body that is not a JSON object is its own reason. Cut to
 * `most` characters; undefined when the body names none (a JSON object without those keys, or nothing).
 */
function replyReason(body: string, most: number): string | undefined {
  const parsed = parseJsonObjectBody(body);
  if (parsed.ok) {
    const reason = parsed.value.reason ?? parsed.value.error ?? parsed.value.message;
    if (typeof reason === 'string' && reason) return reason.slice(0, most);
    if (reason !== undefined) return JSON.stringify(reason).slice(0, most);
    return undefined;
  }
  const text = body.trim();
  return text ? text.slice(0, most) : undefined;
}

/** An `abort` reply's reason, else its body's text, else a fixed sentence. */
function abortReason(body: string): string {
  return (
    replyReason(body, MAX_ERROR_MESSAGE) ?? (body.trim().slice(0, MAX_ERROR_MESSAGE) || 'no reason given')
  );
}

/** Types are cut in the message, as a worker could send any text. */
const MAX_TYPE_IN_MESSAGE = 100;

function unknownTypeMessage(type: string): string {
  return `unknown reply type ${JSON.stringify(type.slice(0, MAX_TYPE_IN_MESSAGE))}`;
}

/** A reply over the size limit fails its attempt, saying why; undefined when it is within the limit. */
function oversizedReply(body: string, maxBytes: number): string | undefined {
  const size = Buffer.byteLength(body);
  return size > maxBytes ? `the reply is ${size} bytes; replies may be at most ${maxBytes}` : undefined;
}

/**
 * An error reply's message: the body's `error` (or `message`) when the body is a JSON object that
 * has one, else the body's text, else a fixed sentence; cut to 4000 characters.
 */
export function errorReplyMessage(body: string): string {
  const parsed = parseJsonObjectBody(body);
  if (parsed.ok) {
    const error = parsed.value.error ?? parsed.value.message;
    if (typeof error === 'string' && error) return error.slice(0, MAX_ERROR_MESSAGE);
    if (error !== undefined) return JSON.stringify(error).slice(0, MAX_ERROR_MESSAGE);
  }
  const text = body.trim();
  return text ? text.slice(0, MAX_ERROR_MESSAGE) : 'the worker replied with an error';
}
