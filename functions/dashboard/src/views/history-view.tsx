import { absoluteTime } from '../format.js';
import { type EventsPage, who } from '../history-entries.js';
import type { Resource } from '../hooks.js';
import { ErrorNote, Loading } from './notes.js';

/** What happened to the job, oldest first, and who did it (`GET /api/job/{id}/events`); read again as the job changes. */
export function HistoryView({ history }: { history: Resource<EventsPage> }) {
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
                    <td class="history-time">{absoluteTime(entry.at)}</td>
                    <td class="history-kind">{entry.kind}</td>
                    <td class="history-step">
                      {entry.step ? `${entry.step}${entry.attempt ? ` #${entry.attempt}` : ''}` : ''}
                    </td>
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
