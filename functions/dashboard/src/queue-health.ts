import type { QueueReport } from '../../api/api-service.js';

/** Whether a queue holds requests that no worker takes: the usual reason a job does not move. */
export function unattended(queue: Pick<QueueReport, 'ready' | 'consumers'>): boolean {
  return (queue.ready ?? 0) > 0 && queue.consumers === 0;
}
