import type { JsonObject } from '../json.js';
import type { NotifyTarget } from './notify.js';

/**
 * A workflow definition as written by users (YAML or JSON), after validation and normalisation:
 * defaults are left out so that two files meaning the same thing compare equal.
 */
export interface WorkflowDefinition {
  name: string;
  description?: string;
  /** RabbitMQ virtual hosts the workflow runs on; jobs use the first unless started on another. */
  vhosts?: string[];
  /** Deadline for a whole job, e.g. `1h`. */
  timeout?: string;
  /** Defaults for every step's request body: under the step's own `params`, under its input. */
  params?: JsonObject;
  /** A workflow started, once per failure, when a job of this one fails, times out or is aborted. */
  onFailure?: string;
  /**
   * At most this many of the workflow's top-level jobs run at once; more wait as `queued`, in the
   * order they were started (engine/job/running-limit.ts). The latest version's value applies.
   * @minimum 1
   * @default no limit
   */
  maxRunning?: number;
  steps: StepDefinition[];
  tasks?: TaskDefinition[];
  /** Start a job at each tick of these cron schedules (engine/schedule/). */
  schedules?: ScheduleDefinition[];
  /**
   * Names of CEL expressions over the job's input (`{ customer: input.customer }`), evaluated and
   * stored when a top-level job starts, for `GET /api/jobs?attr.customer=c-42`.
   */
  searchAttributes?: Record<string, string>;
  /**
   * Webhooks for the job's events (docs/notifications.md): each target's URL gets a signed POST for
   * each event it names. Replaces the host's default; `[]` sends none.
   */
  notify?: NotifyTarget[];
}

/** `schedules:` entry: a job at each tick, with this input. */
export interface ScheduleDefinition {
  /** 5 fields: minute hour day-of-month month day-of-week, e.g. `0 6 * * 1-5`. */
  cron: string;
  /** An IANA time zone the cron is read in. @default UTC */
  timezone?: string;
  /** The input of each tick's job. @default {} */
  input?: JsonObject;
  /** Ticks missed while the manager was down: each starts once (`all`), or only the latest. @default all */
  catchUp?: 'latest';
}

export interface StepDefinition {
  name: string;
  description?: string;
  /** The queue requests go to. @default the step name */
  queue?: string;
  /** Steps that must complete first. @default [] (starts with the job) */
  depends?: string[];
  /**
   * What the step waits for among its dependencies: `all_completed` (every one settled, not all
   * skipped), `none_failed` (every one completed or skipped; a skipped one passes its own input on),
   * `any_completed` (the first to complete). @default all_completed
   */
  join?: 'none_failed' | 'any_completed';
  /** Runs this task once per element of the input's `itemListKey` list. */
  task?: string;
  /** `signal`: completed through the API instead of by a worker. @default worker */
  type?: 'signal';
  /**
   * A signal step: `schema`, a JSON Schema every signal's body must meet (checked before the
   * signal is taken or kept; the dashboard draws its form from it).
   */
  signal?: { schema: JsonObject };
  /** Per attempt: no reply by then counts as a failed attempt. */
  timeout?: string;
  /** Extra attempts after a failed one. @default 0 */
  retries?: number;
  /** Delay before a retry, doubling each time. @default immediate */
  retryDelay?: string;
  /** With `retryDelay`: no delay is longer than this. */
  maxRetryDelay?: string;
  /** With `retryDelay`: each delay is the one before times this (at least 1). @default 2 */
  backoffRate?: number;
  /** With `retryDelay`: `full` draws each delay between 0 and the computed one. @default none */
  jitter?: 'full';
  /** Which failures are retried: `timeout`, `error`, `{ errorMatches: RE2 }`. @default all of them */
  retryOn?: ('timeout' | 'error' | { errorMatches: string })[];
  /** CEL, boolean: evaluated when the step becomes ready; false skips it. */
  when?: string;
  /** CEL, map: replaces the merged input the step is sent. */
  input?: string;
  /** Defaults for the request body, under the input. */
  params?: JsonObject;
  /** A step that fails for good hands `{"error": …}` to its dependents instead of failing the job. */
  continueOnError?: true;
  /**
   * CEL, map: what the step completes with, from its `output` (a worker's reply; a step with no
   * worker: its input) and `input`. A step with `output:` and no queue, task, workflow or type is a
   * pass step: it sends nothing and completes at once.
   */
  output?: string;
  /**
   * Do-until: runs the step again while `until` (CEL, bool, seeing `output`) is false, at most `max`
   * times, `delay` apart.
   */
  repeat?: { until: string; max: number; delay?: string };
  /** Sends nothing: waits this long (a duration), or `until` a CEL time, then completes with its input. */
  sleep?: string | { until: string };
  /** Sends nothing: fails the step (and the job) with this CEL text as the reason. */
  fail?: { message: string };
  /**
   * Runs when none of the `when:` of its siblings (the steps with the same `depends`) held: the
   * default branch of a switch.
   */
  otherwise?: true;
  /** Runs a job of this registered workflow with the step's input, and completes with its result. */
  workflow?: string;
  /** With `workflow`: the version to run. @default the latest when the step starts */
  version?: number;
}

export interface TaskDefinition {
  name: string;
  description?: string;
  itemListKey: string;
  /** The key each child receives its element under. @default itemListKey minus one trailing `s` */
  itemKey?: string;
  /** The most children in flight at once. @default all */
  concurrency?: number;
  steps: StepDefinition[];
}

/** A problem found in a definition file; every field that is known is filled. */
export interface DefinitionError {
  file?: string;
  line?: number;
  workflow?: string;
  task?: string;
  step?: string;
  message: string;
}

export function formatDefinitionError(error: DefinitionError): string {
  const where = error.file
    ? `${error.file}${error.line ? `:${error.line}` : ''}: `
    : error.line
      ? `line ${error.line}: `
      : '';
  const context: string[] = [];
  if (error.workflow) context.push(`workflow "${error.workflow}"`);
  if (error.task) context.push(`task "${error.task}"`);
  if (error.step) context.push(`step "${error.step}"`);
  return `${where}${context.length ? `${context.join(', ')}: ` : ''}${error.message}`;
}
