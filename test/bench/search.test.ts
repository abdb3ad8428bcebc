import { describe, expect, it } from 'vitest';
import { benchSearch } from '../../bench/search.js';

/* Keeps `npm run bench:search` from rotting: the harness on a toy size (its times mean nothing here). */
describe('Benchmark harness: search (toy size)', () => {
  it('loads jobs into SQLite and finds each search its page', async () => {
    const figures = await benchSearch(4_000, 2);
    expect(figures.jobs).toBe(4_000);
    const found = Object.fromEntries(figures.searches.map((search) => [search.name, search.found]));
    // 4,000 jobs over 997 customers: c-42 has jobs 42, 1039, 2036 and 3033, none of them waiting.
    expect(found['customer = c-42 (any status)']).toBe(4);
    expect(found['waiting, customer = c-42']).toBe(0);
    expect(found['waiting (any customer)']).toBe(25);
    expect(found['failed, error holds "timeout"']).toBe(25);
    for (const search of figures.searches) expect(search.medianMs).toBeGreaterThanOrEqual(0);
  });
});
