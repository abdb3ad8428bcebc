import {
  type InboundReply,
  type JobEvent,
  parseCorrelationId,
  parseJsonObjectBody,
} from '../../engine/index.js';

export const DEFAULT_MAX_REPLY_BYTES = 1024 * 1024;

export type ReplyEvent =
  | { ok: true; jobId: string; event: JobEvent; correlationId: string }
  | { ok: false; reason: string; correlationId?: string };

/**
 * A worker's message as the engine sees it. A message without a usable correlation id cannot name a
 * job: it is refused here (logged and counted by the caller). A body that is not a JSON object fails
 * the attempt, as workflows.md says, and so does one over the size limit.
 */
export function replyEvent(reply: InboundReply, maxBytes = DEFAULT_MAX_REPLY_BYTES): ReplyEvent {
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
  const size = Buffer.byteLength(reply.body);
  if (size > maxBytes) {
    return {
      ...base,
      event: {
        type: 'failure',
        step,
        attempt,
        message: `the reply is ${size} bytes; replies may be at most ${maxBytes}`,
      },
    };
  }
  if (reply.type === 'error')
    return { ...base, event: { type: 'failure', step, attempt, message: errorMessage(reply.body) } };
  const parsed = parseJsonObjectBody(reply.body);
  if (!parsed.ok)
    return { ...base, event: { type: 'failure', step, attempt, message: `invalid reply: ${parsed.error}` } };
  return { ...base, event: { type: 'reply', step, attempt, output: parsed.value } };
}

function errorMessage(body: string): string {
  const parsed = parseJsonObjectBody(body);
  if (parsed.ok) {
    const error = parsed.value.error ?? parsed.value.message;
    if (typeof error === 'string' && error) return error.slice(0, 4000);
    if (error !== undefined) return JSON.stringify(error).slice(0, 4000);
  }
  const text = body.trim();
  return text ? text.slice(0, 4000) : 'the worker replied with an error';
}
