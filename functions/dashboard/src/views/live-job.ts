import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiRequestError, AuthRequiredError } from '../api-client.js';
import type { JobDocument } from '../api-types.js';
import { useApi } from '../hooks.js';

/** How long each long poll may wait on the server (api.md: at most 25 s). */
const WAIT_SECONDS = 20;

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'finished';

export interface LiveJob {
  job?: JobDocument;
  /** Set when the job cannot be read at all (unknown id, API unreachable before the first answer). */
  error?: Error;
  live: LiveState;
  /**
   * When the page saw the job move on (ms, this browser's clock): its version (ETag) changed, which a
   * fan-out's finishing children do without changing the job's own `updatedAt`. Undefined until then.
   */
  changedAt?: number;
  /** Shows a document an action answered with, and follows the job again from there. */
  replace(job: JobDocument): void;
}

/** A paused job has not ended: it is followed until it does. */
const isActive = (job: JobDocument) =>
  job.status === 'running' ||
  job.status === 'waiting' ||
  job.status === 'pending' ||
  job.status === 'queued' ||
  job.status === 'paused';

/** An answer faster than this did not wait on the server (deployed, `?wait` answers at once). */
const QUICK_ANSWER_MS = 1_000;

/**
 * Follows a job: reads it, then long-polls `GET api/job/{id}?wait=20` while it runs, so each change
 * (a step starting, a reply, a child finishing) shows within a moment. Deployed, the API does not
 * hold a request (it would hold a Lambda invocation): an unchanged answer (304) that came back at
 * once is asked again after a pause that grows from 1 s to 10 s, and starts over at each change.
 * Network trouble backs off and tries again; leaving the page stops it.
 */
export function useLiveJob(id: string): LiveJob {
  const client = useApi();
  const [job, setJob] = useState<JobDocument>();
  const [error, setError] = useState<Error>();
  const [live, setLive] = useState<LiveState>('connecting');
  const [generation, setGeneration] = useState(0);
  const [changedAt, setChangedAt] = useState<number>();

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    void (async () => {
      let current: JobDocument | undefined;
      // The version shown: the long poll's baseline, so that a change made between one answer and the
      // next request is answered at once instead of at the end of the next wait.
      let etag: string | undefined;
      let failures = 0;
      let idle = 0;
      while (!signal.aborted) {
        const wait = current && isActive(current) ? `?wait=${WAIT_SECONDS}` : '';
        try {
          const asked = Date.now();
          const changed = await client.requestIfChanged<JobDocument>(`api/job/${id}${wait}`, etag, {
            signal,
          });
          if (signal.aborted) return;
          idle = changed ? 0 : idle + 1;
          if (!changed && Date.now() - asked < QUICK_ANSWER_MS) {
            await pause(Math.min(10_000, 1_000 * 2 ** (idle - 1)), signal);
          }
          if (changed) {
            // A new version of a job already shown: it moved on now (the first answer only shows it).
            if (current && changed.etag !== etag) setChangedAt(Date.now());
            ({ body: current, etag } = changed);
          }
          if (!current) throw new Error('the API answered 304 to a request that named no version');
          failures = 0;
          setJob(current);
          setError(undefined);
          setLive(isActive(current) ? 'live' : 'finished');
          if (!isActive(current)) return;
        } catch (caught) {
          if (signal.aborted || caught instanceof AuthRequiredError) return;
          if (caught instanceof ApiRequestError && caught.status < 500) {
            setError(caught);
            return;
          }
          failures++;
          if (!current) setError(caught as Error);
          setLive('reconnecting');
          await pause(Math.min(10_000, 500 * 2 ** failures), signal);
        }
      }
    })();
    return () => controller.abort();
  }, [client, id, generation]);

  const replace = useCallback((next: JobDocument) => {
    setJob(next);
    setChangedAt(Date.now());
    setGeneration((n) => n + 1);
  }, []);
  return { job, error, live, changedAt, replace };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
