import { useEffect, useState } from 'preact/hooks';
import type { JobDocument } from '../api-types.js';
import { absoluteTime } from '../format.js';
import { useAction, useApi, useResource } from '../hooks.js';
import { ErrorNote } from './notes.js';

interface Delivery {
  id: string;
  type: string;
  url: string;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  createdAt: string;
  nextAttemptAt?: string;
  lastStatus?: number;
  lastError?: string;
  posting?: boolean;
}

/** How a delivery stands, in words: delivered, posting, due again at…, dead. */
function standing(delivery: Delivery): string {
  if (delivery.state === 'delivered') return 'delivered';
  if (delivery.state === 'dead') return 'dead';
  if (delivery.posting) return 'posting';
  return delivery.nextAttemptAt ? `next try ${absoluteTime(delivery.nextAttemptAt)}` : 'pending';
}

/**
 * The job's webhook deliveries (`notify:`, `GET /api/job/{id}/deliveries`), each with how it went; a
 * delivered or dead one can be posted again. Shown only for a job that has some; read again as the
 * job changes, and every 5 seconds while one is pending.
 */
export function DeliveriesView({ job }: { job: JobDocument }) {
  const client = useApi();
  const action = useAction();
  // Read again every 5 s only while one is pending: an attempt's outcome does not change the job.
  const [watching, setWatching] = useState(false);
  const deliveries = useResource(
    (api, signal) => api.request<{ deliveries: Delivery[] }>(`api/job/${job.uuid}/deliveries`, { signal }),
    `${job.uuid}@${job.updatedAt}`,
    watching ? 5_000 : undefined,
  );
  const list = deliveries.data?.deliveries ?? [];
  const pending = list.some((delivery) => delivery.state === 'pending');
  useEffect(() => setWatching(pending), [pending]);
  if (!list.length) return null;
  const redeliver = (id: string) =>
    action.run(async () => {
      await client.request(`api/deliveries/${id}/redeliver`, { method: 'POST' });
      deliveries.reload();
    });
  return (
    <section class="card history-card" aria-label="Deliveries">
      <h2>Deliveries</h2>
      {action.error && <ErrorNote error={action.error} />}
      <div class="history-scroll">
        <table class="attempts-table history-table">
          <thead>
            <tr>
              <th>Recorded</th>
              <th>Event</th>
              <th>State</th>
              <th>Tries</th>
              <th>HTTP</th>
              <th>Detail</th>
              <th>URL</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((delivery) => (
              <tr key={delivery.id} data-delivery={delivery.id} data-state={delivery.state}>
                <td>{absoluteTime(delivery.createdAt)}</td>
                <td>{delivery.type}</td>
                <td class="delivery-state">{standing(delivery)}</td>
                <td>{delivery.attempts}</td>
                <td>{delivery.lastStatus ?? ''}</td>
                <td class="attempt-error">{delivery.lastError ?? ''}</td>
                <td class="delivery-url">{delivery.url}</td>
                <td>
                  {delivery.state !== 'pending' && (
                    <button
                      type="button"
                      class="button-ghost"
                      disabled={action.busy}
                      onClick={() => redeliver(delivery.id)}
                    >
                      Redeliver
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
