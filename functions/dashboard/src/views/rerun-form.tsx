import { useState } from 'preact/hooks';
import type { JobDocument, JsonObject } from '../api-types.js';
import { useAction, useApi } from '../hooks.js';
import { ErrorNote } from './notes.js';

/** Only an ended top-level job runs again from a step (api.md, `POST /api/job/{id}/rerun`). */
export function canRerun(job: JobDocument): boolean {
  const ended =
    job.status === 'completed' ||
    job.status === 'failed' ||
    job.status === 'cancelled' ||
    job.status === 'aborted';
  return ended && !job.parent && !job.calledBy;
}

/**
 * Runs an ended job again from a chosen step (it and the steps after it; earlier outputs kept), with
 * a new input for that step if one is written: a worker step's input, a signal step's new signal.
 */
export function RerunForm({
  job,
  step,
  onJob,
  onClose,
}: {
  job: JobDocument;
  step?: string;
  onJob(job: JobDocument): void;
  onClose(): void;
}) {
  const client = useApi();
  const action = useAction();
  const steps = Object.keys(job.steps);
  const [from, setFrom] = useState(step && job.steps[step] ? step : (steps[0] ?? ''));
  const [text, setText] = useState('');
  const [invalid, setInvalid] = useState<string>();
  const readInput = (): JsonObject | undefined | false => {
    if (!text.trim()) return undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        return parsed as JsonObject;
      setInvalid('The new input must be a JSON object, such as {"amount": 10}.');
    } catch (error) {
      setInvalid(`That is not JSON: ${(error as Error).message}`);
    }
    return false;
  };
  const rerun = () =>
    action.run(async () => {
      const input = readInput();
      if (input === false) return;
      setInvalid(undefined);
      const body = input === undefined ? { from } : { from, input };
      onJob(await client.request<JobDocument>(`api/job/${job.uuid}/rerun`, { method: 'POST', body }));
      onClose();
    });
  return (
    <form
      class="rerun-form"
      aria-label="Rerun the job"
      onSubmit={(event) => {
        event.preventDefault();
        void rerun();
      }}
    >
      <h3>Rerun from a step</h3>
      <p class="muted">
        The step and every step after it run again; the steps before it keep their outputs, and the old
        attempts stay in the history.
      </p>
      <label class="field">
        From step
        <select value={from} onChange={(event) => setFrom((event.target as HTMLSelectElement).value)}>
          {steps.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        New input (JSON, optional)
        <textarea
          class="mono"
          rows={4}
          spellcheck={false}
          placeholder="Empty: the step's input as it would be computed (a signal step's: its new signal)"
          value={text}
          onInput={(event) => {
            setText((event.target as HTMLTextAreaElement).value);
            setInvalid(undefined);
          }}
        />
      </label>
      {invalid && <p class="text-failed">{invalid}</p>}
      {action.error && <ErrorNote error={action.error} />}
      <div class="rerun-actions">
        <button type="submit" class="button-primary" disabled={action.busy || !from}>
          {action.busy ? 'Rerunning…' : `Rerun from ${from}`}
        </button>
        <button type="button" class="button-ghost" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
