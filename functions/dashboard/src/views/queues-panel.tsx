import type { QueueReport } from '../../../api/api-service.js';
import { useResource } from '../hooks.js';
import { unattended } from '../queue-health.js';
import { ErrorNote, Loading } from './notes.js';

/** The step queues of one workflow as the broker sees them: ready requests and consumers. */
export function QueuesPanel({ workflow }: { workflow: string }) {
  const queues = useResource(
    (client, signal) =>
      client.request<{ queues: QueueReport[] }>(`api/queues?workflow=${encodeURIComponent(workflow)}`, {
        signal,
      }),
    `queues:${workflow}`,
    5_000,
  );
  return (
    <section class="card table-card queues-panel" aria-label="Step queues">
      <div class="card-head">
        <h2>Step queues</h2>
      </div>
      {queues.error && <ErrorNote error={queues.error} onRetry={queues.reload} />}
      {!queues.data && !queues.error && <Loading what="queues" />}
      {queues.data &&
        (queues.data.queues.length === 0 ? (
          <p class="empty-row">No step sends to a queue (signals, fan-outs and calls only).</p>
        ) : (
          <table class="jobs-table">
            <thead>
              <tr>
                <th>Queue</th>
                <th>Ready</th>
                <th>Consumers</th>
                <th>Steps</th>
              </tr>
            </thead>
            <tbody>
              {queues.data.queues.map((queue) => (
                <tr
                  key={`${queue.vhost ?? ''}|${queue.queue}`}
                  data-queue={queue.queue}
                  class={unattended(queue) ? 'queue-unattended' : undefined}
                >
                  <td class="mono">{queue.queue}</td>
                  <td>{queue.exists ? (queue.ready ?? '—') : 'not declared yet'}</td>
                  <td>
                    {queue.consumers ?? '—'}
                    {unattended(queue) && <span class="tag tag-warn"> no worker is listening</span>}
                  </td>
                  <td>
                    {queue.steps
                      .map((step) => (step.task ? `${step.task}/${step.step}` : step.step))
                      .join(', ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </section>
  );
}
