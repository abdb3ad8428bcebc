import { useEffect, useState } from 'preact/hooks';
import { LISTED_STATUSES } from '../../../../engine/index.js';
import { AuthRequiredError } from '../api-client.js';
import type { ChildrenPage, JobStatus } from '../api-types.js';
import {
  type ChildrenPager,
  type ChildScan,
  childRanges,
  childrenWithStatus,
  failedFirst,
  firstFailedChild,
  statusCounts,
} from '../children.js';
import { plural } from '../format.js';
import { useApi } from '../hooks.js';
import { ProgressBar } from '../progress-bar.js';
import { routeHref } from '../route.js';
import { jobStateClass } from '../status-badge.js';
import { ErrorNote } from './notes.js';

/** Children shown at a time: one range of indexes, one request. */
export const RANGE = 500;
/** The largest page the API gives: a scan for a status reads as few pages as it can. */
const SCAN_PAGE = 1000;
/** Children of one status listed; the count says how many there are in all. */
const SHOWN = 500;
/** A scan for a status is done again at most this many times over the fan-out's progress. */
const RESCANS = 20;

type Child = ChildrenPage['children'][number];
type Filter = JobStatus | 'all';

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
 * A fan-out step's children, each a link to its own page, for fan-outs of any size: one range of 500
 * indexes at a time (one request), failed children first; or, filtered by status, the children of
 * that status across all ranges (read page by page: the API does not filter children), with their
 * count. A link goes to the first failed child.
 */
export function ChildrenList({ jobId, step, total, done, failed, refreshKey }: ChildrenListProps) {
  const client = useApi();
  const ranges = childRanges(total, RANGE);
  const [range, setRange] = useState(0);
  const [filter, setFilter] = useState<Filter>('all');
  // The range read last: its first index and its children (the range picked may still be loading).
  const [loaded, setLoaded] = useState<{ from: number; children: Child[] }>({ from: 0, children: [] });
  const [scan, setScan] = useState<ChildScan>();
  const [firstFailed, setFirstFailed] = useState<Child>();
  const [error, setError] = useState<Error>();
  const from = ranges[range]?.from ?? 0;

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

  // The range shown: one page, from its first index.
  useEffect(() => {
    if (filter !== 'all' || total === 0) return;
    const controller = new AbortController();
    pager(
      controller.signal,
      RANGE,
    )(from ? String(from) : undefined).then((page) => {
      if (controller.signal.aborted) return;
      setLoaded({ from, children: page.children });
      setError(undefined);
    }, fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, from, filter, refreshKey]);

  // A status across all ranges: read again as the fan-out moves on, at most RESCANS times.
  const progressStep = Math.floor((done * RESCANS) / Math.max(1, total));
  useEffect(() => {
    if (filter === 'all') return;
    const controller = new AbortController();
    setScan(undefined);
    childrenWithStatus(pager(controller.signal, SCAN_PAGE), filter, { keep: SHOWN }).then((found) => {
      if (controller.signal.aborted) return;
      setScan(found);
      setError(undefined);
    }, fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, filter, failed, progressStep]);

  // The first failed child: found again only when the count of failures changes.
  useEffect(() => {
    if (failed === 0) {
      setFirstFailed(undefined);
      return;
    }
    const controller = new AbortController();
    firstFailedChild(pager(controller.signal, SCAN_PAGE)).then((child) => {
      if (!controller.signal.aborted) setFirstFailed(child);
    }, fail(controller.signal));
    return () => controller.abort();
  }, [client, jobId, step, failed]);

  const { children } = loaded;
  const shown = filter === 'all' ? failedFirst(children) : (scan?.children ?? []);
  return (
    <div class="children" data-children-of={step}>
      <div class="children-head">
        <h3>Children</h3>
        <span class="children-count" data-children-done={done} data-children-total={total}>
          <strong>{done.toLocaleString('en-US')}</strong> of {total.toLocaleString('en-US')} completed
          {failed > 0 && <span class="text-failed"> · {failed.toLocaleString('en-US')} failed</span>}
        </span>
        <ProgressBar done={done} total={total} failed={failed} />
      </div>
      {total > 0 && (
        <div class="children-tools">
          <label class="check">
            Status
            <select
              name="child-status"
              value={filter}
              onChange={(event) => setFilter((event.target as HTMLSelectElement).value as Filter)}
            >
              <option value="all">All, failed first</option>
              {LISTED_STATUSES.map((status) => (
                <option key={status} value={status}>
                  {status}
                </option>
              ))}
            </select>
          </label>
          {filter === 'all' && ranges.length > 1 && (
            <label class="check">
              Children
              <select
                name="child-range"
                value={String(range)}
                onChange={(event) => setRange(Number((event.target as HTMLSelectElement).value))}
              >
                {ranges.map((candidate, index) => (
                  <option key={candidate.from} value={String(index)}>
                    #{candidate.from}–{candidate.to}
                  </option>
                ))}
              </select>
            </label>
          )}
          {firstFailed && (
            <a
              class="first-failed"
              href={routeHref({ view: 'job', id: firstFailed.uuid })}
              data-first-failed={firstFailed.uuid}
            >
              First failed child: #{firstFailed.index} →
            </a>
          )}
        </div>
      )}
      {error && <ErrorNote error={error} />}
      {total === 0 && <p class="muted">The list was empty: no children.</p>}
      {filter === 'all' && children.length > 0 && (
        <p
          class="muted small children-summary"
          data-children-range={`${loaded.from}-${loaded.from + children.length - 1}`}
        >
          #{loaded.from}–{loaded.from + children.length - 1}:{' '}
          {statusCounts(children, LISTED_STATUSES)
            .map(({ status, count }) => `${count} ${status}`)
            .join(', ')}
        </p>
      )}
      {filter !== 'all' && (
        <p class="muted small children-summary" data-children-matching={scan?.count}>
          {scan === undefined
            ? `Looking through ${plural(total, 'child', 'children')}…`
            : `${plural(scan.count, `${filter} child`, `${filter} children`)}${scan.complete ? '' : ' among the first ones read'}${scan.count > scan.children.length ? `: the first ${scan.children.length} shown` : ''}.`}
        </p>
      )}
      <ul class="child-grid">
        {shown.map((child) => (
          <li key={child.uuid}>
            <a
              class={`child ${jobStateClass(child.status)}`}
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
    </div>
  );
}
