import type { DynamoDbTable, Item } from './table.js';

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
    const next = heads[best] as Candidate<T>;
    (sources[best] as MergeSource<T>).shift();
    // The same value from two sources (a head that entered gsi3 while recovery read it) is taken once.
    if (page.at(-1)?.sort !== next.sort) page.push(next);
  }
  const rest = await Promise.all(sources.map((source) => source.peek()));
  return { page, more: rest.some(Boolean) };
}

/** One page of a `heldUntilRead` source: what its items hold, and the time of the last item's key. */
export interface HeldPage<T> {
  candidates: Candidate<T>[];
  /** The time (15 digits) at the start of the last item's sort key; absent when the page was empty. */
  lastTime?: string;
  next?: Item;
}

/**
 * A source read in key order whose items hold candidates no earlier than their keys' times, but
 * maybe later (a head holds entries made after it entered its index): it keeps what it has read and
 * hands a candidate on once no item still to read can hold an earlier one, that is once the
 * candidate's time is before the key of the last item read.
 */
export function heldUntilRead<T>(
  readPage: (start: Item | undefined) => Promise<HeldPage<T>>,
): MergeSource<T> {
  const held: Candidate<T>[] = [];
  let start: Item | undefined;
  let allRead = false;
  /** Every item still to read has a key from this time on. */
  let readUpTo = '';
  return new MergeSource<T>(async () => {
    if (!allRead) {
      const page = await readPage(start);
      start = page.next;
      allRead = page.next === undefined;
      readUpTo = page.lastTime ?? readUpTo;
      held.push(...page.candidates);
      held.sort((a, b) => (a.sort < b.sort ? -1 : 1));
    }
    let ready = held.length;
    if (!allRead) {
      const later = held.findIndex(({ sort }) => sort.slice(0, 15) >= readUpTo);
      if (later >= 0) ready = later;
    }
    const candidates = held.splice(0, ready);
    return allRead && !held.length ? { candidates } : { candidates, next: {} };
  });
}

/**
 * One page of an index query whose sort keys start with a time, cut at a whole time: reads on
 * while the page ends inside the time it started with, then leaves the last time's items for the
 * next page, so that a merge across sources never splits the entries of one millisecond.
 */
export async function queryWholeTimes(
  table: DynamoDbTable,
  query: {
    IndexName: string;
    KeyConditionExpression: string;
    ExpressionAttributeValues: Item;
    Limit: number;
  },
  start: Item | undefined,
  timeOf: (item: Item) => string,
): Promise<{ items: Item[]; next?: Item }> {
  const found: Item[] = [];
  let next = start;
  do {
    const result = await table.queryPage({ ...query, ExclusiveStartKey: next });
    found.push(...result.items);
    next = result.next;
  } while (next && found.length && timeOf(found[0] as Item) === timeOf(found.at(-1) as Item));
  if (!next) return { items: found };
  const lastTime = timeOf(found.at(-1) as Item);
  const whole = found.slice(
    0,
    found.findIndex((item) => timeOf(item) === lastTime),
  );
  return { items: whole, next: whole.at(-1) };
}
