import { type StepDefinition, type StepKind, sentQueueOf, stepKindOf } from '../../engine/index.js';
import type { QueueReport } from '../api/api-service.js';
import type { JobDocument, StepView } from '../api/job-document.js';
import type { WorkflowDefinitionDocument } from '../api/workflow-documents.js';
import type { ApiClient } from './client.js';
import { describeWait, unblockCommand } from './job-waits.js';
import { humanDuration } from './terminal.js';

/** What a step is, from its definition: what `status` and `watch` need to say more than its state. */
export interface StepInfo {
  kind: StepKind;
  /** A worker step's queue. */
  queue?: string;
  /** A fan-out's task. */
  task?: string;
}

/**
 * When the step's current (or last) attempt was sent (its start, before any attempt is listed, or
 * from a server older than the attempts list, whose `attempts` is a count).
 */
export function sentAt(step: StepView): string | undefined {
  const attempts: unknown = step.attempts;
  return (
    (Array.isArray(attempts) ? (attempts as StepView['attempts']).at(-1)?.sentAt : undefined) ??
    step.startedAt
  );
}

/** A definition as `GET /api/workflow/{name}/definition` answers it. */
export type DefinitionAnswer = WorkflowDefinitionDocument;

export function stepKind(step: StepDefinition): StepInfo {
  const kind = stepKindOf(step);
  if (kind === 'fanout') return { kind, task: step.task as string };
  if (kind === 'worker') return { kind, queue: sentQueueOf(step) as string };
  return { kind };
}

/** The job's steps (a child's: its task's) by name, from the version it runs; undefined when it cannot be read. */
export async function stepsOf(api: ApiClient, job: JobDocument): Promise<Map<string, StepInfo> | undefined> {
  try {
    const { definition } = await api.get<DefinitionAnswer>(
      `/api/workflow/${encodeURIComponent(job.workflow)}/definition?version=${job.version}`,
    );
    const steps = job.task
      ? (definition.tasks?.find((task) => task.name === job.task)?.steps ?? [])
      : definition.steps;
    return new Map(steps.map((step) => [step.name, stepKind(step)]));
  } catch {
    return undefined;
  }
}

/** How long a step runs before `status` and `watch` look at its queue. */
export const QUEUE_CHECK_AFTER_MS = 5_000;

/** Running steps sent at least `QUEUE_CHECK_AFTER_MS` ago, with the queues their requests wait in. */
function suspectQueues(
  job: JobDocument,
  steps: ReadonlyMap<string, StepInfo>,
  now: number,
): { queues: Set<string>; tasks: Set<string> } {
  const queues = new Set<string>();
  const tasks = new Set<string>();
  for (const [name, view] of Object.entries(job.steps)) {
    if (view.status !== 'running') continue;
    const since = sentAt(view);
    if (!since || now - Date.parse(since) < QUEUE_CHECK_AFTER_MS) continue;
    const info = steps.get(name);
    if (info?.kind === 'worker' && info.queue) queues.add(info.queue);
    if (info?.kind === 'fanout' && info.task && (view.childrenDone ?? 0) < (view.children ?? 0))
      tasks.add(info.task);
  }
  return { queues, tasks };
}

/**
 * Says, for each step running for more than a few seconds whose queue no consumer listens to, what
 * the broker holds: `queue pricing: 5 ready, 0 consumers — is a worker listening on "pricing"?`.
 * A fan-out's children's queues count for it. Nothing when all is well or the API cannot tell.
 */
export async function queueHints(
  api: ApiClient,
  job: JobDocument,
  steps: ReadonlyMap<string, StepInfo> | undefined,
  now = Date.now(),
): Promise<string[]> {
  if (!steps || (job.status !== 'running' && job.status !== 'waiting')) return [];
  const { queues, tasks } = suspectQueues(job, steps, now);
  if (!queues.size && !tasks.size) return [];
  let reports: QueueReport[];
  try {
    ({ queues: reports } = await api.get<{ queues: QueueReport[] }>(
      `/api/queues?workflow=${encodeURIComponent(job.workflow)}`,
    ));
  } catch {
    return [];
  }
  const hints: string[] = [];
  for (const report of reports) {
    const mine = report.steps.some(
      (step) =>
        step.workflow === job.workflow &&
        (tasks.has(step.task ?? '\u0000') ||
          (queues.has(report.queue) && (step.task ?? null) === (job.task ?? null))),
    );
    if (!mine) continue;
    const hint = queueHint(report);
    if (hint && !hints.includes(hint)) hints.push(hint);
  }
  return hints;
}

/** The warning a queue deserves, if any: none while it has a consumer or its consumers are unknown. */
export function queueHint(report: QueueReport): string | undefined {
  const where = report.vhost ? ` (vhost ${report.vhost})` : '';
  if (report.error) return undefined;
  if (!report.exists)
    return `queue ${report.queue}${where} does not exist — is a worker listening on "${report.queue}"?`;
  if (report.consumers !== 0) return undefined;
  return `queue ${report.queue}${where}: ${report.ready ?? 0} ready, 0 consumers — is a worker listening on "${report.queue}"?`;
}

/** Children done over time, per fan-out step, as `watch` sees them: the rate and the time left. */
export class FanOutRates {
  private readonly first = new Map<string, { at: number; done: number }>();

  /** `7/12 children, 3.1/s, ETA 2s` for a running fan-out; the rate once two samples differ. */
  describe(step: string, done: number, total: number, now = Date.now()): string {
    const base = `${done}/${total} children`;
    const first = this.first.get(step);
    if (!first) {
      this.first.set(step, { at: now, done });
      return base;
    }
    const elapsed = (now - first.at) / 1000;
    const rate = elapsed > 0 ? (done - first.done) / elapsed : 0;
    if (rate <= 0) return base;
    const left = ((total - done) / rate) * 1000;
    return `${base}, ${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s, ETA ${humanDuration(left)}`;
  }
}

/**
 * `running: section-counts (7/12 children, 3.1/s, ETA 2s), store-title (in queue or running for 3.0s)`.
 * A step that waits for someone is not running: `waitingSteps` says it.
 */
export function currentSteps(
  job: JobDocument,
  rates: FanOutRates,
  steps?: ReadonlyMap<string, StepInfo>,
  now = Date.now(),
): string | undefined {
  const waiting = new Set((job.waitingFor ?? []).map((wait) => wait.step));
  const running = Object.entries(job.steps).filter(
    ([name, view]) => view.status === 'running' && !waiting.has(name),
  );
  if (!running.length) return undefined;
  const parts = running.map(([name, view]) => {
    if (view.children !== undefined)
      return `${name} (${rates.describe(name, view.childrenDone ?? 0, view.children, now)})`;
    const since = sentAt(view);
    const kind = steps?.get(name)?.kind;
    if (!since) return name;
    const ms = humanDuration(now - Date.parse(since));
    if (kind === 'worker') return `${name} (in queue or running for ${ms})`;
    if (kind === 'signal') return `${name} (waiting for its signal for ${ms})`;
    return `${name} (${ms})`;
  });
  return `running: ${parts.join(', ')}`;
}

/** `waiting: approve (waiting for its signal 3.0s) → switchyard signal ID approve --input '{}'`, one per step. */
export function waitingSteps(job: JobDocument, namespace?: string, now = Date.now()): string[] {
  return (job.waitingFor ?? []).map(
    (wait) =>
      `waiting: ${wait.step} (${describeWait(wait, now)}) → ${unblockCommand(job.uuid, wait, namespace)}`,
  );
}
