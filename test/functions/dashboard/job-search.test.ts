import { describe, expect, it } from 'vitest';
import type { JobDocument, JobSummary } from '../../../functions/dashboard/src/api-types.js';
import { parseJobInput } from '../../../functions/dashboard/src/job-input.js';
import {
  cutMessage,
  filterJobs,
  matchesInput,
  parseIdQuery,
  parseInputFilter,
  progressOf,
  summaryFromDocument,
} from '../../../functions/dashboard/src/job-search.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('Function: parseIdQuery', () => {
  it.each([
    ['', { kind: 'none' }],
    [`  ${ID.toUpperCase()} `, { kind: 'exact', id: ID }],
    ['0F8F', { kind: 'prefix', prefix: '0f8f' }],
    ['0f8fad5b-d9', { kind: 'prefix', prefix: '0f8fad5b-d9' }],
    ['order 12', { kind: 'invalid', text: 'order 12' }],
  ])('%j', (text, query) => {
    expect(parseIdQuery(text)).toEqual(query);
  });
});

describe('Function: parseInputFilter and matchesInput', () => {
  const input = {
    customer: { id: 42, name: 'Ada' },
    express: true,
    tags: ['a', 'b'],
    note: null,
    code: '007',
  };
  it('reads key=value, a dotted path, and a key alone', () => {
    expect(parseInputFilter(' customer.id = 42 ')).toEqual({ path: ['customer', 'id'], value: '42' });
    expect(parseInputFilter('express')).toEqual({ path: ['express'] });
    expect(parseInputFilter('  ')).toBeUndefined();
    expect(parseInputFilter('=3')).toBeUndefined();
  });

  it.each([
    ['customer.id=42', true],
    ['customer.id=43', false],
    ['customer.name=Ada', true],
    ['customer.name="Ada"', true],
    ['express=true', true],
    ['express', true],
    ['missing', false],
    ['customer.id.deeper=1', false],
    ['tags=["a","b"]', true],
    ['tags=["b","a"]', false],
    ['note=null', true],
    ['code=007', true],
    ['code=7', false],
    ['customer={"name":"Ada","id":42}', true],
  ])('%s → %s', (text, expected) => {
    expect(matchesInput(input, parseInputFilter(text) as never)).toBe(expected);
  });

  it('matches nothing for an input not known', () => {
    expect(matchesInput(undefined, { path: ['a'] })).toBe(false);
  });
});

describe('Function: filterJobs', () => {
  const jobs = [{ uuid: 'aaaa1111' }, { uuid: 'aaaa2222' }, { uuid: 'bbbb3333' }];
  const inputs = new Map([
    ['aaaa1111', { region: 'eu' }],
    ['bbbb3333', { region: 'eu' }],
  ]);
  it('keeps the jobs whose id starts with the prefix and whose input matches', () => {
    expect(
      filterJobs(jobs, { kind: 'prefix', prefix: 'aaaa' }, undefined, inputs).map((j) => j.uuid),
    ).toEqual(['aaaa1111', 'aaaa2222']);
    const eu = parseInputFilter('region=eu');
    expect(filterJobs(jobs, { kind: 'none' }, eu, inputs).map((j) => j.uuid)).toEqual([
      'aaaa1111',
      'bbbb3333',
    ]);
    expect(filterJobs(jobs, { kind: 'prefix', prefix: 'aaaa' }, eu, inputs).map((j) => j.uuid)).toEqual([
      'aaaa1111',
    ]);
    expect(filterJobs(jobs, { kind: 'none' }, undefined, inputs)).toHaveLength(3);
  });
});

describe('Function: progressOf', () => {
  it('counts fan-out children as work: a 400-child fan-out halfway through reads about half done', () => {
    const progress = progressOf({ steps: 4, stepsDone: 1, children: 400, childrenDone: 200 });
    expect(progress).toEqual({ done: 201, total: 404, text: '1/4 steps · 200/400 children' });
  });

  it('is steps alone without children', () => {
    expect(progressOf({ steps: 3, stepsDone: 2, children: 0, childrenDone: 0 })).toEqual({
      done: 2,
      total: 3,
      text: '2/3 steps',
    });
  });
});

describe('Function: cutMessage', () => {
  it('keeps a short message, cuts a long one and keeps the first line only', () => {
    expect(cutMessage('card declined')).toBe('card declined');
    expect(cutMessage('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(cutMessage('first line\nat stack', 80)).toBe('first line …');
  });
});

describe('Function: summaryFromDocument', () => {
  it('counts settled steps and children as the API does, and carries the error', () => {
    const document = {
      uuid: ID,
      workflow: 'w',
      version: 2,
      status: 'failed',
      createdAt: 'c',
      updatedAt: 'u',
      error: { step: 'b', attempt: 1, message: 'boom', at: 'x' },
      steps: {
        a: { status: 'completed', attempt: 1, attempts: [] },
        h: { status: 'failed', attempt: 1, attempts: [], handled: true },
        f: { status: 'completed', attempt: 1, attempts: [], children: 5, childrenDone: 5 },
        b: { status: 'failed', attempt: 1, attempts: [] },
      },
    } as unknown as JobDocument;
    expect(summaryFromDocument(document)).toEqual<JobSummary>({
      uuid: ID,
      workflow: 'w',
      version: 2,
      status: 'failed',
      createdAt: 'c',
      updatedAt: 'u',
      progress: { steps: 4, stepsDone: 3, children: 5, childrenDone: 5 },
      error: { step: 'b', message: 'boom' },
    });
  });
});

describe('Function: summaryFromDocument, for the list row of a job found by its id', () => {
  it('carries what the row shows beside its status: its waits, its retries and its clock', () => {
    const waitingFor = [{ step: 'review', kind: 'suspended' as const, since: 's', note: 'ask finance' }];
    const document = {
      uuid: ID,
      workflow: 'w',
      version: 1,
      status: 'paused',
      createdAt: 'c',
      updatedAt: 'u',
      startAt: 'a',
      startedAt: 'r',
      pausedAt: 'p',
      waitingFor,
      retries: 2,
      steps: { review: { status: 'suspended', attempt: 1, attempts: [], suspendNote: 'ask finance' } },
    } as unknown as JobDocument;
    expect(summaryFromDocument(document)).toMatchObject({
      startAt: 'a',
      startedAt: 'r',
      pausedAt: 'p',
      waitingFor,
      retries: 2,
    });
  });
});

describe('Function: parseJobInput', () => {
  it('sends an object, empty text as {}, and says why anything else is refused', () => {
    expect(parseJobInput('{"a": 1}')).toEqual({ input: { a: 1 } });
    expect(parseJobInput('  ')).toEqual({ input: {} });
    expect(parseJobInput('[1]')).toEqual({ error: expect.stringContaining('must be a JSON object') });
    expect(parseJobInput('{"a": }')).toEqual({ error: expect.stringMatching(/^Not JSON: /) });
  });
});
