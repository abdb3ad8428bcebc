import { useEffect, useState } from 'preact/hooks';
import { AuthRequiredError } from '../api-client.js';
import type { ChildrenPage } from '../api-types.js';
import { useApi } from '../hooks.js';
import { ProgressBar } from '../progress-bar.js';
import { routeHref } from '../route.js';
import { ErrorNote } from './notes.js';

const PAGE = 200;

interface ChildrenListProps {
  jobId: string;
  step: string;
  total: number;
  done: number;
  failed: number;
  /** Changes whenever the job does: the statuses are read again. */
  refreshKey: string;
}

/** A fan-out step's children, each a link to its own page, paged through `/children`. */
export function ChildrenList({ jobId, step, total, done, failed, refreshKey }: ChildrenListProps) {
  const client = useApi();
  const [pages, setPages] = useState<ChildrenPage[]>([]);
  const [wanted, setWanted] = useState(1);
  const [error, setError] = useState<Error>();

  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      const loaded: ChildrenPage[] = [];
      let cursor: string | undefined;
      try {
        do {
          const query = new URLSearchParams({ step, limit: String(PAGE) });
          if (cursor) query.set('cursor', cursor);
          const page = await client.request<ChildrenPage>(`api/job/${jobId}/children?${query}`, {
            signal: controller.signal,
          });
          loaded.push(page);
          cursor = page.cursor;
        } while (cursor && loaded.length < wanted);
        if (!controller.signal.aborted) {
          setPages(loaded);
          setError(undefined);
        }
      } catch (caught) {
        if (!controller.signal.aborted && !(caught instanceof AuthRequiredError)) setError(caught as Error);
      }
    })();
    return () => controller.abort();
  }, [client, jobId, step, wanted, refreshKey]);

  const children = pages.flatMap((page) => page.children);
  const more = pages[pages.length - 1]?.cursor;
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
      {error && <ErrorNote error={error} />}
      {total === 0 && <p class="muted">The list was empty: no children.</p>}
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
