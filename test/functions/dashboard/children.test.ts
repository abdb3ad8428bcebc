import { describe, expect, it } from 'vitest';
import type { ChildrenPage } from '../../../functions/dashboard/src/api-types.js';
import {
  childRanges,
  childrenWithStatus,
  failedFirst,
  firstFailedChild,
  statusCounts,
} from '../../../functions/dashboard/src/children.js';

/** Children in pages of `size`; those at `failed` indexes failed. */
function pages(total: number, size: number, failed: number[]) {
  const reads: (string | undefined)[] = [];
  const read = async (cursor: string | undefined): Promise<ChildrenPage> => {
    reads.push(cursor);
    const from = cursor ? Number(cursor) : 0;
    const to = Math.min(total, from + size);
    const children = Array.from({ length: to - from }, (_, i) => ({
      uuid: `child-${from + i}`,
      index: from + i,
      status: failed.includes(from + i) ? ('failed' as const) : ('completed' as const),
    }));
    return to < total ? { children, cursor: String(to) } : { children };
  };
  return { read, reads };
}

describe('Function: firstFailedChild', () => {
  it('pages until it finds a failed child, and reads no further', () => {
    const { read, reads } = pages(400, 100, [250, 390]);
    return firstFailedChild(read).then((child) => {
      expect(child).toEqual({ uuid: 'child-250', index: 250, status: 'failed' });
      expect(reads).toEqual([undefined, '100', '200']);
    });
  });

  it('is undefined when no child failed, after the last page', async () => {
    const { read, reads } = pages(250, 100, []);
    expect(await firstFailedChild(read)).toBeUndefined();
    expect(reads).toHaveLength(3);
  });
});

describe('Function: childrenWithStatus', () => {
  it('collects the children of one status from every page, keeping the first few and counting all', async () => {
    const { read, reads } = pages(2_500, 1_000, [3, 250, 1_399, 2_499]);
    const found = await childrenWithStatus(read, 'failed', { keep: 3 });
    expect(found.children.map((child) => child.index)).toEqual([3, 250, 1_399]);
    expect(found).toMatchObject({ count: 4, complete: true });
    expect(reads).toEqual([undefined, '1000', '2000']);
  });

  it('stops after the pages it may read, and says it did not see them all', async () => {
    const { read } = pages(2_500, 1_000, [2_400]);
    expect(await childrenWithStatus(read, 'failed', { most: 2 })).toEqual({
      children: [],
      count: 0,
      complete: false,
    });
  });
});

describe('Function: childRanges', () => {
  it('cuts 2,001 children into ranges of 500, the last one short', () => {
    expect(childRanges(2_001, 500)).toEqual([
      { from: 0, to: 499 },
      { from: 500, to: 999 },
      { from: 1_000, to: 1_499 },
      { from: 1_500, to: 1_999 },
      { from: 2_000, to: 2_000 },
    ]);
    expect(childRanges(0, 500)).toEqual([]);
  });
});

describe('Function: failedFirst and statusCounts', () => {
  const child = (index: number, status: 'completed' | 'failed' | 'running' | 'aborted') => ({
    uuid: `child-${index}`,
    index,
    status,
  });
  const children = [child(0, 'completed'), child(1, 'failed'), child(2, 'running'), child(3, 'aborted')];

  it('puts the failed and aborted children first, each group in index order', () => {
    expect(failedFirst(children).map((one) => one.index)).toEqual([1, 3, 0, 2]);
  });

  it('counts each status, in the order given, leaving out those with none', () => {
    expect(statusCounts(children, ['running', 'completed', 'failed', 'cancelled', 'aborted'])).toEqual([
      { status: 'running', count: 1 },
      { status: 'completed', count: 1 },
      { status: 'failed', count: 1 },
      { status: 'aborted', count: 1 },
    ]);
  });
});
