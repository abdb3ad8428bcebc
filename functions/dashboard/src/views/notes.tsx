import { ApiRequestError } from '../api-client.js';

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

/** An error in words, with a way to try again. */
export function ErrorNote({ error, onRetry }: { error: Error; onRetry?: () => void }) {
  const detail =
    error instanceof ApiRequestError
      ? `${error.message} (${error.status}${error.code ? ` ${error.code}` : ''})`
      : error.name === 'TypeError'
        ? `The API cannot be reached (${error.message}).`
        : error.message;
  return (
    <div class="note note-error" role="alert">
      <span>{detail}</span>
      {onRetry && (
        <button type="button" class="button-ghost" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function NotFoundView({ hash }: { hash: string }) {
  return (
    <section class="view">
      <div class="card empty">
        <h1>Nothing here</h1>
        <p>
          The page <code>#{hash}</code> does not exist. Go to the <a href="#/">workflows</a> or the{' '}
          <a href="#/jobs">jobs</a>.
        </p>
      </div>
    </section>
  );
}
