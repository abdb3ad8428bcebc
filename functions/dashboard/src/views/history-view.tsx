import type { JobDocument } from '../api-types.js';
import { absoluteTime } from '../format.js';
import { useResource } from '../hooks.js';
import { ErrorNote, Loading } from './notes.js';

interface Actor {
  kind: 'root' | 'token' | 'schedule';
  id?: string;
  description?: string;
  name?: string;
}

interface HistoryEntry {
  seq: number;
  at: string;
  kind: string;
  step?: string;
  attempt?: number;
  message?: string;
  actor?: Actor;
  worker?: string;
}

interface EventsPage {
  events: HistoryEntry[];
  dropped: number;
  cursor?: string;
}

/** Who an entry names: the actor of a command, the worker of a reply. */
function who(entry: HistoryEntry): string {
  const actor = entry.actor;
  if (actor?.kind === 'token')
    return `token ${actor.id}${actor.description ? ` (${actor.description})` : ''}`;
  if (actor?.kind === 'schedule') return `schedule ${actor.name}`;
  if (actor?.kind === 'root') return 'root';
  return entry.worker ? `worker ${entry.worker}` : '';
}

/** What happened to the job, oldest first, and who did it (`GET /api/job/{id}/events`); read again as the job changes. */
export function HistoryView({ job }: { job: JobDocument }) {
  const history = useResource(
    (client, signal) => client.request<EventsPage>(`api/job/${job.uuid}/events?limit=500`, { signal }),
    `${job.uuid}@${job.updatedAt}`,
  );
  const page = history.data;
  return (
    <section class="card history-card" aria-label="History">
      <h2>History</h2>
      {history.error && !page ? (
        <ErrorNote error={history.error} />
      ) : !page ? (
        <Loading what="the history" />
      ) : (
        <>
          {page.dropped > 0 && (
            <p class="muted small">
              {page.dropped} entries between the first and the latest {page.events.length - 1} are not kept.
            </p>
          )}
          <div class="history-scroll">
            <table class="attempts-table history-table">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>What</th>
                  <th>Step</th>
                  <th>Who</th>
                  <th>Detail</th>
                </tr>
              </thead>
              <tbody>
                {page.events.map((entry) => (
                  <tr key={entry.seq} data-kind={entry.kind}>
                    <td>{absoluteTime(entry.at)}</td>
                    <td>{entry.kind}</td>
                    <td>{entry.step ? `${entry.step}${entry.attempt ? ` #${entry.attempt}` : ''}` : ''}</td>
                    <td class="history-who">{who(entry)}</td>
                    <td class="attempt-error">{entry.message ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
