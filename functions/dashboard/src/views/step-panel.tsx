import { useState } from 'preact/hooks';
import type { JobDocument, JsonObject, StepDefinition, StepStatus, TaskDefinition } from '../api-types.js';
import { absoluteTime, elapsedBetween } from '../format.js';
import { useAction, useApi } from '../hooks.js';
import { JsonView } from '../json-view.js';
import { RelativeTime } from '../relative-time.js';
import { StatusBadge } from '../status-badge.js';
import { stepInput, stepOutput } from '../step-data.js';
import { ChildrenList } from './children-list.js';
import { ErrorNote } from './notes.js';

interface StepPanelProps {
  job: JobDocument;
  step: string;
  definition?: StepDefinition;
  tasks: readonly TaskDefinition[];
  now: number;
  onJob(job: JobDocument): void;
}

/** One step of a job: its state, timings, attempts, error, children, input and output. */
export function StepPanel({ job, step, definition, tasks, now, onJob }: StepPanelProps) {
  const view = job.steps[step];
  if (!view) return null;
  const task = definition?.task ? tasks.find((candidate) => candidate.name === definition.task) : undefined;
  const queue =
    definition && definition.type !== 'signal' && !definition.task ? (definition.queue ?? step) : undefined;
  const input = definition ? stepInput(job, definition) : undefined;
  const output = stepOutput(job, step);
  const duration = view.startedAt ? elapsedBetween(view.startedAt, view.endedAt, now) : undefined;
  return (
    <section class="card step-panel" data-step-panel={step} aria-label={`Step ${step}`}>
      <header class="step-head">
        <h2>{step}</h2>
        <StatusBadge status={view.status} />
        {definition?.task && (
          <span class="tag">
            fan-out: task {definition.task}
            {task ? ` over ${task.itemListKey}` : ''}
          </span>
        )}
        {definition?.type === 'signal' && <span class="tag">signal</span>}
      </header>
      {definition?.description && <p class="muted">{definition.description}</p>}
      <dl class="facts">
        {queue && <Fact name="Queue" value={<code>{queue}</code>} />}
        <Fact
          name="Attempts"
          value={`${view.attempts}${definition?.retries ? ` of ${definition.retries + 1}` : ''}`}
        />
        <Fact name="Started" value={<RelativeTime iso={view.startedAt} now={now} />} />
        {view.endedAt && <Fact name="Ended" value={<RelativeTime iso={view.endedAt} now={now} />} />}
        {duration && <Fact name={view.status === 'running' ? 'Running for' : 'Took'} value={duration} />}
        {view.retryAt && <Fact name="Next attempt" value={<RelativeTime iso={view.retryAt} now={now} />} />}
        {view.deadline && view.status === 'running' && (
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
      {view.error && (
        <div class="note note-error step-error">
          <strong>Error</strong>
          <pre>{view.error}</pre>
        </div>
      )}
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
      {definition?.type === 'signal' &&
        view.status === 'running' &&
        (job.status === 'running' || job.status === 'paused') && (
          <SignalForm jobId={job.uuid} step={step} onJob={onJob} />
        )}
      <div class="io-grid">
        <div>
          <h3>Input</h3>
          {input === undefined ? (
            <p class="muted">
              {view.status === 'waiting'
                ? 'Known once the steps it depends on have completed.'
                : 'Not known: the steps it depends on did not all complete.'}
            </p>
          ) : (
            <JsonView value={input} label={`Input of ${step}`} />
          )}
        </div>
        <div>
          <h3>Output</h3>
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
    default:
      return 'Known once the step completes.';
  }
}

function Fact({ name, value }: { name: string; value: preact.ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

/** Completes a `type: signal` step with a JSON object as its output. */
function SignalForm({ jobId, step, onJob }: { jobId: string; step: string; onJob(job: JobDocument): void }) {
  const client = useApi();
  const action = useAction();
  const [text, setText] = useState('{\n  \n}');
  const [invalid, setInvalid] = useState<string>();
  const send = () =>
    action.run(async () => {
      let body: JsonObject;
      try {
        const parsed: unknown = JSON.parse(text.trim() || '{}');
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          setInvalid('The signal must be a JSON object, such as {"approved": true}.');
          return;
        }
        body = parsed as JsonObject;
      } catch (error) {
        setInvalid(`That is not JSON: ${(error as Error).message}`);
        return;
      }
      setInvalid(undefined);
      onJob(
        await client.request<JobDocument>(`api/job/${jobId}/signal/${encodeURIComponent(step)}`, {
          method: 'POST',
          body,
        }),
      );
    });
  return (
    <form
      class="signal-form"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <h3>Send the signal</h3>
      <p class="muted">This step waits for a signal; its body (a JSON object) becomes the step's output.</p>
      <textarea
        class="mono"
        rows={5}
        spellcheck={false}
        aria-label="Signal body (JSON)"
        value={text}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
      />
      {invalid && <p class="text-failed">{invalid}</p>}
      {action.error && <ErrorNote error={action.error} />}
      <button type="submit" class="button-primary" disabled={action.busy}>
        {action.busy ? 'Sending…' : 'Send signal'}
      </button>
    </form>
  );
}
