import { useState } from 'preact/hooks';
import type {
  JobDocument,
  JsonObject,
  StepDefinition,
  StepStatus,
  StepView,
  TaskDefinition,
} from '../api-types.js';
import { absoluteTime, elapsedBetween, formatDuration, shortId } from '../format.js';
import { callLabel } from '../graph-model.js';
import { type HistoryEntry, who } from '../history-entries.js';
import { useAction, useApi } from '../hooks.js';
import { JsonView } from '../json-view.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { type SignalField, signalBodyOf, signalFieldsOf } from '../signal-fields.js';
import { StatusBadge } from '../status-badge.js';
import { sentInput, stepOutput } from '../step-data.js';
import { ChildrenList } from './children-list.js';
import { ErrorNote } from './notes.js';

interface StepPanelProps {
  job: JobDocument;
  step: string;
  definition?: StepDefinition;
  tasks: readonly TaskDefinition[];
  /** The signals sent to the step, oldest first, from the job's history. */
  signals?: readonly HistoryEntry[];
  now: number;
  onJob(job: JobDocument): void;
}

/**
 * One step of a job: its state, timings, attempts, error, children, input and output, and what its
 * definition adds: its condition, input mapping, defaults, whether it continues on error, what it calls.
 */
export function StepPanel({ job, step, definition, tasks, signals, now, onJob }: StepPanelProps) {
  const view = job.steps[step];
  if (!view) return null;
  const task = definition?.task ? tasks.find((candidate) => candidate.name === definition.task) : undefined;
  const queue =
    definition && definition.type !== 'signal' && !definition.task && !definition.workflow
      ? (definition.queue ?? step)
      : undefined;
  const input = definition ? sentInput(job, definition) : undefined;
  // Before it runs, a step with `input:` or `params` is sent something other than the merged input.
  const reshaped = !!(definition?.input || definition?.params) && !input?.recorded;
  const output = stepOutput(job, step);
  const wait = job.waitingFor?.find((candidate) => candidate.step === step);
  const duration = view.startedAt ? elapsedBetween(view.startedAt, view.endedAt, now) : undefined;
  const ongoing = view.status === 'running' || view.status === 'suspended';
  return (
    <section class="card step-panel" data-step-panel={step} aria-label={`Step ${step}`}>
      <header class="step-head">
        <h2>{step}</h2>
        <StatusBadge status={view.status} />
        {wait && (
          <span class="tag tag-waiting" data-wait={wait.kind}>
            {wait.kind === 'signal'
              ? 'waiting for its signal'
              : wait.kind === 'suspended'
                ? 'waiting for a signal'
                : 'its called job is paused'}
          </span>
        )}
        {definition?.task && (
          <span class="tag">
            fan-out: task {definition.task}
            {task ? ` over ${task.itemListKey}` : ''}
          </span>
        )}
        {definition?.type === 'signal' && <span class="tag">signal</span>}
        {definition?.workflow && <span class="tag tag-call">{callLabel(definition)}</span>}
        {view.handled && (
          <span class="tag tag-handled" title="It failed; the steps after it went on with its error.">
            handled: the job went on
          </span>
        )}
      </header>
      {definition?.description && <p class="muted">{definition.description}</p>}
      {view.status === 'skipped' && (
        <p class="note step-skipped" data-skip-reason={view.skipReason}>
          Skipped, nothing was sent: {view.skipReason ?? 'its condition was false'}.
        </p>
      )}
      <dl class="facts">
        {queue && <Fact name="Queue" value={<code>{queue}</code>} />}
        {definition?.workflow && (
          <Fact
            name="Calls"
            value={
              <>
                {definition.workflow}{' '}
                <span class="muted">
                  {definition.version ? `v${definition.version}` : '(latest version)'}
                </span>
              </>
            }
          />
        )}
        {view.job && (
          <Fact
            name="Called job"
            value={
              <>
                <a class="mono step-called-job" href={routeHref({ view: 'job', id: view.job })}>
                  {shortId(view.job)}
                </a>
                {view.calledStatus && view.status === 'running' && (
                  <>
                    {' '}
                    <StatusBadge status={view.calledStatus} job />
                  </>
                )}
              </>
            }
          />
        )}
        {definition?.when && <Fact name="When" value={<code class="step-when">{definition.when}</code>} />}
        {definition?.input && <Fact name="Input mapping" value={<code>{definition.input}</code>} />}
        {definition?.continueOnError && <Fact name="On error" value="continues: dependents get the error" />}
        <Fact
          name="Attempts"
          value={`${view.attempt}${definition?.retries ? ` of ${definition.retries + 1}` : ''}`}
        />
        {definition?.repeat && (
          <Fact
            name="Iterations"
            value={
              <span class="step-iterations" data-iterations={view.iterations ?? 0}>
                {iterationText(view, definition.repeat.max)} <span class="muted">until</span>{' '}
                <code>{definition.repeat.until}</code>
              </span>
            }
          />
        )}
        {signals?.length ? <SignalledBy signals={signals} now={now} /> : null}
        <Fact name="Started" value={<RelativeTime iso={view.startedAt} now={now} />} />
        {view.endedAt && <Fact name="Ended" value={<RelativeTime iso={view.endedAt} now={now} />} />}
        {wait && wait.kind !== 'paused-call' ? (
          <Fact
            name={wait.kind === 'suspended' ? 'Suspended for' : 'Waiting for'}
            value={elapsedBetween(wait.since, undefined, now)}
          />
        ) : (
          duration && <Fact name={ongoing ? 'Running for' : 'Took'} value={duration} />
        )}
        {view.retryAt && <Fact name="Next attempt" value={<RelativeTime iso={view.retryAt} now={now} />} />}
        {view.sleepingUntil && view.status === 'running' && (
          <Fact
            name="Sleeping until"
            value={
              <span title={absoluteTime(view.sleepingUntil)}>
                {absoluteTime(view.sleepingUntil)} (<RelativeTime iso={view.sleepingUntil} now={now} />)
              </span>
            }
          />
        )}
        {view.deadline && view.status === 'running' && !view.sleepingUntil && (
          <Fact
            name="Reply due"
            value={
              <span title={absoluteTime(view.deadline)}>
                <RelativeTime iso={view.deadline} now={now} />
              </span>
            }
          />
        )}
        {definition?.timeout && <Fact name="Timeout" value={definition.timeout} />}
      </dl>
      {view.status === 'suspended' && (
        <div class="note note-waiting step-suspended" data-suspend-note={view.suspendNote ?? ''}>
          <strong>Suspended by its worker{view.suspendNote ? ':' : ''}</strong>
          {view.suspendNote && <q class="wait-quote">{view.suspendNote}</q>}
          <span class="muted">
            Nothing runs until the signal below: it sends the step to its worker again, with the signal's body
            under <code>signal</code> in its input.
          </span>
        </div>
      )}
      {view.attempts?.length > 0 && <AttemptList view={view} now={now} />}
      {view.error &&
        (view.status === 'completed' ? (
          // An earlier attempt's error, kept by the step: it completed all the same.
          <div class="note note-retried step-error" data-retried="true">
            <strong>
              Completed on attempt {view.attempt}, after the attempts before it failed. The last error:
            </strong>
            <pre>{view.error}</pre>
          </div>
        ) : (
          <div class={`note ${view.handled ? 'note-handled' : 'note-error'} step-error`}>
            <strong>{view.handled ? 'Error (handled: handed on to the steps after it)' : 'Error'}</strong>
            <pre>{view.error}</pre>
          </div>
        ))}
      {view.children !== undefined && (
        <ChildrenList
          jobId={job.uuid}
          step={step}
          total={view.children}
          done={view.childrenDone ?? 0}
          failed={view.childrenFailed ?? 0}
          refreshKey={`${job.updatedAt}|${view.childrenDone}|${view.status}`}
        />
      )}
      {(job.status === 'running' || job.status === 'waiting' || job.status === 'paused') &&
        ((definition?.type === 'signal' && view.status === 'running') || view.status === 'suspended') && (
          <SignalForm
            jobId={job.uuid}
            step={step}
            resends={view.status === 'suspended'}
            schema={definition?.signal?.schema}
            onJob={onJob}
          />
        )}
      {definition?.params && (
        <div class="step-params">
          <h3>Params (defaults under the input)</h3>
          <JsonView value={definition.params} label={`Params of ${step}`} />
        </div>
      )}
      <div class="io-grid">
        <div>
          <h3>{input?.recorded ? 'Input, as sent' : 'Input'}</h3>
          {input === undefined ? (
            <p class="muted">
              {view.status === 'skipped'
                ? 'None: the step was skipped.'
                : view.status === 'waiting'
                  ? 'Known once the steps it depends on have completed.'
                  : 'Not known: the steps it depends on did not all complete.'}
            </p>
          ) : (
            <>
              {input.recorded && <p class="muted">What it was sent, after its input mapping and params.</p>}
              {reshaped && (
                <p class="muted">The merged input: its input mapping and params apply when it is sent.</p>
              )}
              <JsonView value={input.value} label={`Input of ${step}`} />
            </>
          )}
        </div>
        <div>
          <h3>{view.handled ? 'Output, handed on' : 'Output'}</h3>
          {output === undefined ? (
            <p class="muted">{noOutput(view.status)}</p>
          ) : (
            <JsonView value={output} label={`Output of ${step}`} />
          )}
        </div>
      </div>
    </section>
  );
}

function noOutput(status: StepStatus): string {
  switch (status) {
    case 'completed':
      return 'No output recorded.';
    case 'failed':
    case 'cancelled':
      return `None: the step ${status === 'failed' ? 'failed' : 'was cancelled'}.`;
    case 'skipped':
      return 'None: the step was skipped.';
    default:
      return 'Known once the step completes.';
  }
}

const OUTCOMES: Record<string, string> = {
  completed: 'completed',
  error: 'error',
  timeout: 'timed out',
  rejected: 'rejected by the worker',
  cancelled: 'cancelled',
  suspended: 'suspended',
  repeated: 'repeated: "until" did not hold',
};

/** Every attempt of the step, oldest first: when it was sent and ended, how it ended, its error. */
function AttemptList({ view, now }: { view: StepView; now: number }) {
  return (
    <div class="attempts">
      <h3>Attempts</h3>
      <table class="attempts-table">
        <thead>
          <tr>
            <th>#</th>
            <th>Sent</th>
            <th>Took</th>
            <th>Outcome</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {view.attempts.map((attempt) => {
            const outcome = attempt.outcome ?? (attempt.endedAt ? 'ended' : 'in flight');
            return (
              <tr
                key={attempt.attempt}
                data-attempt={attempt.attempt}
                data-outcome={attempt.outcome ?? 'running'}
              >
                <td>{attempt.attempt}</td>
                <td>
                  <RelativeTime iso={attempt.sentAt} now={now} />
                </td>
                <td title={attempt.endedAt ? `ended ${absoluteTime(attempt.endedAt)}` : undefined}>
                  {/* The page's clock may trail the server's by a moment: never a negative time. */}
                  {attempt.endedAt
                    ? elapsedBetween(attempt.sentAt, attempt.endedAt, now)
                    : formatDuration(Math.max(0, now - Date.parse(attempt.sentAt)))}
                  {!attempt.endedAt && <span class="muted"> so far</span>}
                </td>
                <td>
                  <span class={`attempt-outcome outcome-${attempt.outcome ?? 'running'}`}>
                    {OUTCOMES[outcome] ?? outcome}
                  </span>
                </td>
                <td class="attempt-error">
                  {attempt.error ? <pre>{attempt.error}</pre> : <span class="muted">—</span>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A loop's progress: the iterations that ended, the one running, its bound. */
function iterationText(view: StepView, max: number): string {
  const ended = view.iterations ?? 0;
  if (view.status === 'completed') return `${ended} of at most ${max}, the last met the condition`;
  if (view.status === 'running') return `iteration ${ended + 1} of at most ${max}`;
  return `${ended} ended, at most ${max}`;
}

/** Who sent the step its signal (the latest, when several came): the history's actor. */
function SignalledBy({ signals, now }: { signals: readonly HistoryEntry[]; now: number }) {
  const latest = signals[signals.length - 1] as HistoryEntry;
  return (
    <Fact
      name="Signalled by"
      value={
        <span class="step-signalled-by" data-signalled-by={who(latest)}>
          {who(latest) || 'unknown'} <span class="muted">·</span> <RelativeTime iso={latest.at} now={now} />
          {signals.length > 1 && <span class="muted"> ({signals.length} signals in all)</span>}
        </span>
      }
    />
  );
}

function Fact({ name, value }: { name: string; value: preact.ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

/**
 * Completes a `type: signal` step with a JSON object as its output; or, for a step its worker
 * suspended (`resends`), sends it to its worker again with the object under `signal` in its input.
 * A step with a `signal.schema` of plain fields gets a form drawn from it (labels, choices, required
 * marks); otherwise the body is written as JSON.
 */
function SignalForm({
  jobId,
  step,
  resends,
  schema,
  onJob,
}: {
  jobId: string;
  step: string;
  resends: boolean;
  schema?: JsonObject;
  onJob(job: JobDocument): void;
}) {
  const client = useApi();
  const action = useAction();
  const fields = signalFieldsOf(schema);
  const [text, setText] = useState('{\n  \n}');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [invalid, setInvalid] = useState<string>();
  const readText = (): JsonObject | undefined => {
    try {
      const parsed: unknown = JSON.parse(text.trim() || '{}');
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        setInvalid('The signal must be a JSON object, such as {"approved": true}.');
        return undefined;
      }
      return parsed as JsonObject;
    } catch (error) {
      setInvalid(`That is not JSON: ${(error as Error).message}`);
      return undefined;
    }
  };
  const send = () =>
    action.run(async () => {
      const body = fields ? signalBodyOf(fields, values) : readText();
      if (!body) return;
      setInvalid(undefined);
      const answer = await client.request<JobDocument | { buffered: true; job: JobDocument }>(
        `api/job/${jobId}/signal/${encodeURIComponent(step)}`,
        { method: 'POST', body },
      );
      // 202: the step did not wait yet after all; the job keeps the signal until it does.
      onJob('buffered' in answer ? answer.job : answer);
    });
  const set = (name: string, value: string | boolean) =>
    setValues((current) => ({ ...current, [name]: value }));
  return (
    <form
      class="signal-form"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <h3>Send the signal</h3>
      <p class="muted">
        {resends
          ? 'Its worker asked to wait for this signal: the step is sent to it again, with the body (a JSON object) under "signal" in its input.'
          : "This step waits for a signal; its body (a JSON object) becomes the step's output."}
      </p>
      {fields ? (
        <div class="signal-fields">
          {fields.map((field) => (
            <SignalFieldInput key={field.name} field={field} value={values[field.name]} onChange={set} />
          ))}
        </div>
      ) : (
        <textarea
          class="mono"
          rows={5}
          spellcheck={false}
          aria-label="Signal body (JSON)"
          value={text}
          onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        />
      )}
      {invalid && <p class="text-failed">{invalid}</p>}
      {action.error && <ErrorNote error={action.error} />}
      <button type="submit" class="button-primary" disabled={action.busy}>
        {action.busy ? 'Sending…' : 'Send signal'}
      </button>
    </form>
  );
}

/** One field of a signal form: a choice, text, a number or a yes/no, labelled, marked when required. */
function SignalFieldInput({
  field,
  value,
  onChange,
}: {
  field: SignalField;
  value: string | boolean | undefined;
  onChange(name: string, value: string | boolean): void;
}) {
  const id = `signal-field-${field.name}`;
  const label = (
    <label for={id}>
      {field.label}
      {field.required && (
        <span class="required-mark" aria-hidden="true">
          {' '}
          *
        </span>
      )}
    </label>
  );
  const input =
    field.kind === 'choice' ? (
      <select
        id={id}
        required={field.required}
        value={typeof value === 'string' ? value : ''}
        onChange={(event) => onChange(field.name, (event.target as HTMLSelectElement).value)}
      >
        <option value="">{field.required ? 'Choose…' : '(none)'}</option>
        {(field.choices ?? []).map((choice, index) => (
          <option key={String(index)} value={String(index)}>
            {typeof choice === 'string' ? choice : JSON.stringify(choice)}
          </option>
        ))}
      </select>
    ) : field.kind === 'boolean' ? (
      <input
        id={id}
        type="checkbox"
        checked={value === true}
        onChange={(event) => onChange(field.name, (event.target as HTMLInputElement).checked)}
      />
    ) : field.kind === 'text' ? (
      <input
        id={id}
        type="text"
        required={field.required}
        value={typeof value === 'string' ? value : ''}
        onInput={(event) => onChange(field.name, (event.target as HTMLInputElement).value)}
      />
    ) : (
      <input
        id={id}
        type="number"
        step={field.kind === 'integer' ? 1 : 'any'}
        required={field.required}
        value={typeof value === 'string' ? value : ''}
        onInput={(event) => onChange(field.name, (event.target as HTMLInputElement).value)}
      />
    );
  return (
    <div class="signal-field" data-signal-field={field.name}>
      {label}
      {input}
      {field.help && <p class="muted">{field.help}</p>}
    </div>
  );
}
