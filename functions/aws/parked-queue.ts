/** Where replies that could not be handled wait for the manager to drain them: `<reply queue>.parked`. */
export function parkedQueueOf(replyQueue: string): string {
  return `${replyQueue}.parked`;
}
