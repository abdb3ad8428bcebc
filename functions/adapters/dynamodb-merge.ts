import type { Item } from './dynamodb-table.js';

/** One candidate of a merged listing: `sort` orders it, `value` is what the listing returns. */
export interface Candidate<T> {
  sort: string;
  value: T;
}

export type PageFetch<T> = (start: Item | undefined) => Promise<{ candidates: Candidate<T>[]; next?: Item }>;

/** One partition (or index partition) of a sharded listing, read a page at a time as the merge needs. */
export class MergeSource<T> {
  private buffer: Candidate<T>[] = [];
  private start: Item | undefined;
  private done = false;

  constructor(private readonly fetch: PageFetch<T>) {}

  async peek(): Promise<Candidate<T> | undefined> {
    while (!this.buffer.length && !this.done) {
      const page = await this.fetch(this.start);
      this.buffer.push(...page.candidates);
      this.start = page.next;
      this.done = page.next === undefined;
    }
    return this.buffer[0];
  }

  shift(): void {
    this.buffer.shift();
  }
}

/**
 * How many items to ask each of `sources` partitions for at a time: about twice its share of the
 * page, so that a page reads little more than it returns (a source asks again when it runs dry).
 */
export function pageSizeFor(limit: number, sources: number): number {
  return Math.min(limit, Math.max(10, Math.ceil((2 * limit) / Math.max(1, sources))));
}

/**
 * Merges sorted sources into one page of `limit`: ascending or descending by `sort`. `more` tells
 * whether any source still has a candidate after the page.
 */
export async function mergePage<T>(
  sources: readonly MergeSource<T>[],
  limit: number,
  order: 'ascending' | 'descending',
): Promise<{ page: Candidate<T>[]; more: boolean }> {
  const page: Candidate<T>[] = [];
  const before = (a: string, b: string): boolean => (order === 'ascending' ? a < b : a > b);
  while (page.length < limit) {
    const heads = await Promise.all(sources.map((source) => source.peek()));
    let best = -1;
    heads.forEach((head, n) => {
      if (head && (best < 0 || before(head.sort, (heads[best] as Candidate<T>).sort))) best = n;
    });
    if (best < 0) return { page, more: false };
    page.push(heads[best] as Candidate<T>);
    (sources[best] as MergeSource<T>).shift();
  }
  const rest = await Promise.all(sources.map((source) => source.peek()));
  return { page, more: rest.some(Boolean) };
}
