import { describe, expect, it } from 'vitest';
import type { ChildrenPage } from '../../../functions/dashboard/src/api-types.js';
import { failedChildren, firstFailedChild } from '../../../functions/dashboard/src/children.js';

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

describe('Function: failedChildren', () => {
  it('collects the failures of every page', async () => {
    const { read } = pages(400, 100, [3, 250, 399]);
    expect((await failedChildren(read)).map((child) => child.index)).toEqual([3, 250, 399]);
  });
});
