import type { JobDocument, JobSummary, Json, JsonObject } from './api-types.js';

/**
 * The job list's search, pure: a job id (whole, looked up; or its first characters, matched among the
 * jobs loaded) and an input field (`customer.id=42`, matched against each loaded job's input).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ID_PREFIX = /^[0-9a-f-]{1,36}$/;

export type IdQuery =
  | { kind: 'none' }
  | { kind: 'exact'; id: string }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'invalid'; text: string };

/** What the id field asks for: a whole UUID is looked up, hex digits and dashes are a prefix. */
export function parseIdQuery(text: string): IdQuery {
  const trimmed = text.trim().toLowerCase();
  if (!trimmed) return { kind: 'none' };
  if (UUID.test(trimmed)) return { kind: 'exact', id: trimmed };
  if (ID_PREFIX.test(trimmed)) return { kind: 'prefix', prefix: trimmed };
  return { kind: 'invalid', text: text.trim() };
}

export interface InputFilter {
  /** The key's path: `customer.id` → ['customer', 'id']. */
  path: string[];
  /** Absent: the key only has to be there. */
  value?: string;
}

/**
 * `key=value`, `a.b=value` or `key` alone (present). The value matches a string equal to it, or a
 * number, boolean or null written the same (`n=3` matches 3 and "3"); a JSON value (`tags=["a"]`) matches
 * an equal value.
 */
export function parseInputFilter(text: string): InputFilter | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  const equals = trimmed.indexOf('=');
  const key = (equals < 0 ? trimmed : trimmed.slice(0, equals)).trim();
  const path = key.split('.').filter((part) => part !== '');
  if (!path.length) return undefined;
  return equals < 0 ? { path } : { path, value: trimmed.slice(equals + 1).trim() };
}

/** Whether a job's input has the filter's key (and value). */
export function matchesInput(input: JsonObject | undefined, filter: InputFilter): boolean {
  let current: Json | undefined = input;
  for (const part of filter.path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return false;
    if (!Object.hasOwn(current, part)) return false;
    current = (current as JsonObject)[part];
  }
  if (current === undefined) return false;
  if (filter.value === undefined) return true;
  if (current === null || typeof current !== 'object') {
    if (String(current) === filter.value) return true;
  }
  try {
    return sameJson(current, JSON.parse(filter.value) as Json);
  } catch {
    return false;
  }
}

function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => sameJson(item, b[i] as Json));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (key) =>
        Object.hasOwn(b, key) && sameJson((a as JsonObject)[key] as Json, (b as JsonObject)[key] as Json),
    )
  );
}

/** The jobs of a page that the id prefix and input filter keep (inputs by job id; unknown inputs do not match). */
export function filterJobs<T extends Pick<JobSummary, 'uuid'>>(
  jobs: readonly T[],
  id: IdQuery,
  input: InputFilter | undefined,
  inputs: ReadonlyMap<string, JsonObject>,
): T[] {
  return jobs.filter((job) => {
    if (id.kind === 'prefix' && !job.uuid.startsWith(id.prefix)) return false;
    if (id.kind === 'exact' && job.uuid !== id.id) return false;
    if (input && !matchesInput(inputs.get(job.uuid), input)) return false;
    return true;
  });
}

/**
 * A job's progress, counting each fan-out child as a unit of work: steps done plus children done,
 * out of steps plus children. A 400-child fan-out with 200 children done reads 201/404, not 1/4.
 */
export function progressOf(progress: JobSummary['progress']): { done: number; total: number; text: string } {
  const { steps, stepsDone, children, childrenDone } = progress;
  const text =
    children > 0
      ? `${stepsDone}/${steps} steps · ${childrenDone}/${children} children`
      : `${stepsDone}/${steps} steps`;
  return { done: stepsDone + childrenDone, total: steps + children, text };
}

/** The first line of an error message, at most `max` characters (an ellipsis says it was cut). */
export function cutMessage(message: string, max = 80): string {
  const line = message.trim().split('\n', 1)[0] ?? '';
  const cut = line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
  return cut !== message.trim() && !cut.endsWith('…') ? `${cut} …` : cut;
}

/** A job found by its id, as the list shows it: its summary built from its document. */
export function summaryFromDocument(job: JobDocument): JobSummary {
  const views = Object.values(job.steps);
  const summary: JobSummary = {
    uuid: job.uuid,
    workflow: job.workflow,
    version: job.version,
    status: job.status,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    progress: {
      steps: views.length,
      // Settled as the API counts it: completed, skipped, or failed with continueOnError.
      stepsDone: views.filter(
        (view) =>
          view.status === 'completed' ||
          view.status === 'skipped' ||
          (view.status === 'failed' && view.handled),
      ).length,
      children: views.reduce((sum, view) => sum + (view.children ?? 0), 0),
      childrenDone: views.reduce((sum, view) => sum + (view.childrenDone ?? 0), 0),
    },
  };
  if (job.error) summary.error = { step: job.error.step, message: job.error.message };
  // What a list shows of its clock, its waits and its retries.
  if (job.endedAt) summary.endedAt = job.endedAt;
  if (job.startAt) summary.startAt = job.startAt;
  if (job.startedAt) summary.startedAt = job.startedAt;
  if (job.pausedAt) summary.pausedAt = job.pausedAt;
  if (job.waitingFor) summary.waitingFor = job.waitingFor;
  if (job.retries) summary.retries = job.retries;
  return summary;
}
