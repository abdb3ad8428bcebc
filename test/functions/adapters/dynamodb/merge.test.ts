import { describe, expect, it } from 'vitest';
import { type Candidate, MergeSource, mergePage } from '../../../../functions/adapters/dynamodb/merge.js';

const source = (sorts: string[]) =>
  new MergeSource<string>(async () => ({
    candidates: sorts.map((sort): Candidate<string> => ({ sort, value: `value of ${sort}` })),
  }));

describe('Function: mergePage', () => {
  it('merges sorted sources in order, taking a value that two sources hold once', async () => {
    // Prepare: a head that entered gsi3 while recovery read it comes from its listing and from gsi3.
    const sources = [source(['a', 'c', 'e']), source(['b', 'c', 'f']), source(['d'])];

    // Act
    const { page, more } = await mergePage(sources, 5, 'ascending');

    // Assess
    expect(page.map((candidate) => candidate.sort)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(more).toBe(true);
  });
});
