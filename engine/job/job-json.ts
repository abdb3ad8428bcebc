import type { JobRecord } from './types.js';

/**
 * The JSON text of a step state or history entry, by the object: a record's states and entries are
 * immutable and shared from one revision of a job to the next (a transition copies what it changes),
 * so each is turned into text once, not at every write of its job.
 */
const fragments = new WeakMap<object, string>();

/** Below this many states and entries, caching their text costs more than it saves. */
const CACHE_FROM = 24;

function fragment(value: object | undefined): string {
  if (value === undefined) return 'null';
  let text = fragments.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    fragments.set(value, text);
  }
  return text;
}

/**
 * `JSON.stringify(job)`, byte for byte, for stores that write a job's whole record at each change.
 * A long job's steps and history are most of its record and most of them did not change since its
 * last write: their text is reused, so a step of a 100-step chain no longer costs the text of all
 * 100 states and 200 entries.
 */
export function jobRecordJson(job: JobRecord): string {
  const history = job.history;
  if (job.steps.length + (history?.length ?? 0) < CACHE_FROM) return JSON.stringify(job);
  const fields: string[] = [];
  for (const key of Object.keys(job)) {
    const value = job[key as keyof JobRecord];
    const json =
      key === 'steps'
        ? `[${job.steps.map(fragment).join(',')}]`
        : key === 'history' && history
          ? `[${history.map(fragment).join(',')}]`
          : JSON.stringify(value);
    // JSON.stringify leaves out a key whose value has no JSON (undefined, a function).
    if (json !== undefined) fields.push(`${JSON.stringify(key)}:${json}`);
  }
  return `{${fields.join(',')}}`;
}
