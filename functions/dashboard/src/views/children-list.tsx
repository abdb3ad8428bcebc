import { useEffect, useState } from 'preact/hooks';
import { AuthRequiredError } from '../api-client.js';
import type { ChildrenPage } from '../api-types.js';
import { type ChildrenPager, failedChildren, firstFailedChild } from '../children.js';
import { useApi } from '../hooks.js';
import { ProgressBar } from '../progress-bar.js';
import { routeHref } from '../route.js';
import { ErrorNote } from './notes.js';

const PAGE = 200;
/** The largest page the API gives: searching for failures reads as few pages as it can. */
const SEARCH_PAGE = 1000;

type Child = ChildrenPage['children'][number];

interface ChildrenListProps {
  jobId: string;
  step: string;
  total: number;
  done: number;
  failed: number;
  /** Changes whenever the job does: the statuses are read again. */
  refreshKey: string;
}

/**
 * A fan-out step's children, each a link to its own page, paged through `/children`; with failures, a
 * link to the first failed child and a "failed only" view that reads every page for them.
 */
export function ChildrenList({ jobId, step, total, done, failed, refreshKey }: ChildrenListProps) {
  const client = useApi();
  const [pages, setPages] = useState<ChildrenPage[]>([]);
  const [wanted, setWanted] = useState(1);
  const [failedOnly, setFailedOnly] = useState(false);
  const [failures, setFailures] = useState<Child[]>();
  const [firstFailed, setFirstFailed] = useState<Child>();
  const [error, setError] = useState<Error>();

  const pager =
    (signal: AbortSignal, limit: number): ChildrenPager =>
    (cursor) => {
      const query = new URLSearchParams({ step, limit: String(limit) });
      if (cursor) query.set('cursor', cursor);
      return client.request<ChildrenPage>(`api/job/${jobId}/children?${query}`, { signal });
    };
  const fail = (signal: AbortSignal) => (caught: unknown) => {
    if (!signal.aborted && !(caught instanceof AuthRequiredError)) setError(caught as Error);
  };

  useEffect(() => {
    const controller = new AbortController();
    const read = pager(controller.signal, PAGE);
    void (async () => {
      const loaded: ChildrenPage[] = [];
      let cursor: string | undefined;
      do {
        const page = await read(cursor);
        loaded.push(page);
        cursor = page.cursor;
      } while (cursor && loaded.length < wanted);
      if (!controller.signal.aborted) {
        setPages(loaded);
        setError(undefined);
      }
    })().catch(fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, wanted, refreshKey]);

  // The first failed child: found again only when the count of failures changes.
  useEffect(() => {
    if (failed === 0) {
      setFirstFailed(undefined);
      return;
    }
    const controller = new AbortController();
    firstFailedChild(pager(controller.signal, SEARCH_PAGE)).then((child) => {
      if (!controller.signal.aborted) setFirstFailed(child);
    }, fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, failed]);

  useEffect(() => {
    if (!failedOnly) return;
    const controller = new AbortController();
    failedChildren(pager(controller.signal, SEARCH_PAGE)).then((children) => {
      if (!controller.signal.aborted) setFailures(children);
    }, fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, failedOnly, failed]);

  const children = failedOnly ? (failures ?? []) : pages.flatMap((page) => page.children);
  const more = !failedOnly && pages[pages.length - 1]?.cursor;
  return (
    <div class="children" data-children-of={step}>
      <div class="children-head">
        <h3>Children</h3>
        <span class="children-count" data-children-done={done} data-children-total={total}>
          <strong>{done}</strong> of {total} completed
          {failed > 0 && <span class="text-failed"> · {failed} failed</span>}
        </span>
        <ProgressBar done={done} total={total} failed={failed} />
      </div>
      {(failed > 0 || failedOnly) && (
        <div class="children-failures">
          {firstFailed && (
            <a
              class="first-failed"
              href={routeHref({ view: 'job', id: firstFailed.uuid })}
              data-first-failed={firstFailed.uuid}
            >
              First failed child: #{firstFailed.index} →
            </a>
          )}
          <label class="check">
            <input
              type="checkbox"
              name="failed-only"
              checked={failedOnly}
              onChange={(event) => setFailedOnly((event.target as HTMLInputElement).checked)}
            />
            Failed only
          </label>
        </div>
      )}
      {error && <ErrorNote error={error} />}
      {total === 0 && <p class="muted">The list was empty: no children.</p>}
      {failedOnly && failures?.length === 0 && <p class="muted">No child has failed.</p>}
      <ul class="child-grid">
        {children.map((child) => (
          <li key={child.uuid}>
            <a
              class={`child state-${child.status}`}
              href={routeHref({ view: 'job', id: child.uuid })}
              data-child-index={child.index}
              data-state={child.status}
              title={`child #${child.index}: ${child.status}\n${child.uuid}`}
            >
              #{child.index}
            </a>
          </li>
        ))}
      </ul>
      {more && (
        <button type="button" class="button-ghost" onClick={() => setWanted(pages.length + 1)}>
          Show {PAGE} more
        </button>
      )}
    </div>
  );
}
