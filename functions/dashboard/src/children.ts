import type { ChildrenPage, JobStatus } from './api-types.js';

type Child = ChildrenPage['children'][number];

/** Reads one page of a fan-out step's children, from `cursor` (the first page without one). */
export type ChildrenPager = (cursor: string | undefined) => Promise<ChildrenPage>;

/**
 * The fan-out step's first failed child (lowest index), paging through the children in index order
 * until one is found (the API does not filter children by status); undefined when none has failed.
 * `most` bounds the pages read.
 */
export async function firstFailedChild(read: ChildrenPager, most = 1000): Promise<Child | undefined> {
  let cursor: string | undefined;
  for (let pages = 0; pages < most; pages++) {
    const page = await read(cursor);
    const failed = page.children.find((child) => child.status === 'failed');
    if (failed) return failed;
    if (!page.cursor) return undefined;
    cursor = page.cursor;
  }
  return undefined;
}

/** What a scan of every child found: the first `keep` of those of the status, and how many there are. */
export interface ChildScan {
  children: Child[];
  count: number;
  /** Every page was read (false: `most` pages were, and there were more). */
  complete: boolean;
}

/**
 * The children of one status, reading every page in index order (the API does not filter them by
 * status): the first `keep` of them and their count. `most` bounds the pages read.
 */
export async function childrenWithStatus(
  read: ChildrenPager,
  status: JobStatus,
  { keep = 500, most = 1000 }: { keep?: number; most?: number } = {},
): Promise<ChildScan> {
  const children: Child[] = [];
  let count = 0;
  let cursor: string | undefined;
  for (let pages = 0; pages < most; pages++) {
    const page = await read(cursor);
    for (const child of page.children) {
      if (child.status !== status) continue;
      count++;
      if (children.length < keep) children.push(child);
    }
    if (!page.cursor) return { children, count, complete: true };
    cursor = page.cursor;
  }
  return { children, count, complete: false };
}

/** The ranges of indexes a fan-out of `total` children is shown in, `size` at a time: `#0–499`, `#500–999`, … */
export function childRanges(total: number, size: number): { from: number; to: number }[] {
  const ranges: { from: number; to: number }[] = [];
  for (let from = 0; from < total; from += size) ranges.push({ from, to: Math.min(total, from + size) - 1 });
  return ranges;
}

/** The children as shown: the failed ones first (what people look for), then the others by index. */
export function failedFirst(children: readonly Child[]): Child[] {
  const failed: Child[] = [];
  const others: Child[] = [];
  for (const child of children)
    (child.status === 'failed' || child.status === 'aborted' ? failed : others).push(child);
  return [...failed, ...others];
}

/** How many children of each status, in the order of `statuses`, leaving out those with none. */
export function statusCounts(
  children: readonly Child[],
  statuses: readonly JobStatus[],
): { status: JobStatus; count: number }[] {
  const counts = new Map<JobStatus, number>();
  for (const child of children) counts.set(child.status, (counts.get(child.status) ?? 0) + 1);
  return statuses.flatMap((status) => {
    const count = counts.get(status) ?? 0;
    return count ? [{ status, count }] : [];
  });
}
