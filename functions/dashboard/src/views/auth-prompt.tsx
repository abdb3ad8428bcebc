import { useState } from 'preact/hooks';
import type { AuthRequiredError } from '../api-client.js';
import { CREDENTIAL_LABELS } from '../credentials.js';

/** Asks for the one credential the API wants; it is kept in session storage for this tab. */
export function AuthPrompt({
  request,
  onSubmit,
}: {
  request: AuthRequiredError;
  onSubmit(value: string): void;
}) {
  const [value, setValue] = useState('');
  const labels = CREDENTIAL_LABELS[request.kind];
  return (
    <section class="view auth-view">
      <form
        class="card auth-card"
        data-auth-kind={request.kind}
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim()) onSubmit(value.trim());
        }}
      >
        <h1>{labels.name} required</h1>
        <p>{labels.hint}</p>
        {request.rejected && (
          <p class="note note-error" role="alert">
            The {labels.name.toLowerCase()} was not accepted: {request.message}
          </p>
        )}
        <label class="field">
          <span>{labels.name}</span>
          <input
            name="credential"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={value}
            onInput={(event) => setValue((event.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="button-primary">
          Continue
        </button>
        <p class="muted small">Kept in this tab's session storage only, and sent with each API call.</p>
      </form>
    </section>
  );
}
