import type { ChildrenPage } from './api-types.js';

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

/** Every child that failed, reading every page (a "failed only" list). */
export async function failedChildren(read: ChildrenPager, most = 1000): Promise<Child[]> {
  const failed: Child[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < most; pages++) {
    const page = await read(cursor);
    failed.push(...page.children.filter((child) => child.status === 'failed'));
    if (!page.cursor) break;
    cursor = page.cursor;
  }
  return failed;
}
