/**
 * Where the replies the manager gave up on are kept (functions/manager/reply-policy.ts), beside the
 * reply queue: `<reply queue>.poisoned`. Nothing consumes it: an operator reads it, and moves a reply
 * back to the reply queue to deliver it again (the management UI's "Move messages", a shovel).
 */
export function poisonQueueOf(replyQueue: string): string {
  return `${replyQueue}.poisoned`;
}
