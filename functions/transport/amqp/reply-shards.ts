/**
 * Replies spread over several reply queues, by job id: on RabbitMQ, Lambda gives each Amazon MQ event
 * source mapping one execution environment (https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html,
 * "Concurrency"), so one reply queue is one serial lane for the whole system. With `shards` queues, each with its own mapping,
 * that many invocations run at once; a job's replies all go to one queue, so they keep their order.
 * The first queue keeps the plain name (requests sent before the queues were split still reply to it);
 * the others are `<reply queue>-<n>`. Their parked and poison queues are the first queue's.
 */
export function replyQueuesOf(replyQueue: string, shards: number): string[] {
  const queues = [replyQueue];
  for (let n = 1; n < shards; n++) queues.push(`${replyQueue}-${n}`);
  return queues;
}

/** The reply queue of a job's requests: its id's FNV-1a hash, modulo `shards`. */
export function replyQueueFor(replyQueue: string, shards: number, jobId: string): string {
  if (shards <= 1) return replyQueue;
  let hash = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) {
    hash ^= jobId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const shard = hash % shards;
  return shard === 0 ? replyQueue : `${replyQueue}-${shard}`;
}

/** The most reply queues a stack may have (each is a mapping, an invocation at a time). */
export const MAX_REPLY_SHARDS = 16;
