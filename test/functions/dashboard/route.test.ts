import { describe, expect, it } from 'vitest';
import { parseRoute, type Route, routeHref } from '../../../functions/dashboard/src/route.js';

const JOB = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('Function: parseRoute', () => {
  it.each<[string, Route]>([
    ['', { view: 'workflows' }],
    ['#/', { view: 'workflows' }],
    ['#/workflows', { view: 'workflows' }],
    ['#/jobs', { view: 'jobs', status: 'all' }],
    [
      '#/jobs?status=failed&workflow=book%20counts',
      { view: 'jobs', status: 'failed', workflow: 'book counts' },
    ],
    ['#/jobs?status=bogus', { view: 'jobs', status: 'all' }],
    [`#/job/${JOB.toUpperCase()}`, { view: 'job', id: JOB }],
    [`#/job/${JOB}?step=sum-splits`, { view: 'job', id: JOB, step: 'sum-splits' }],
    ['#/job/not-a-uuid', { view: 'not-found', hash: '/job/not-a-uuid' }],
    ['#/elsewhere', { view: 'not-found', hash: '/elsewhere' }],
    ['#/workflow/book%20counts', { view: 'workflow', name: 'book counts' }],
    ['#/workflow', { view: 'not-found', hash: '/workflow' }],
    [
      '#/jobs?id=0f8f&input=customer.id%3D42',
      { view: 'jobs', status: 'all', id: '0f8f', input: 'customer.id=42' },
    ],
  ])('%s', (hash, expected) => {
    expect(parseRoute(hash)).toEqual(expected);
  });
});

describe('Function: routeHref', () => {
  it.each<Route>([
    { view: 'workflows' },
    { view: 'jobs', status: 'all' },
    { view: 'jobs', status: 'running', workflow: 'a/b c' },
    { view: 'job', id: JOB },
    { view: 'job', id: JOB, step: 'fan out' },
    { view: 'workflow', name: 'a/b c' },
    { view: 'jobs', status: 'failed', workflow: 'w', id: '0f8f', input: 'a.b=1 2' },
  ])('round-trips %j', (route) => {
    expect(parseRoute(routeHref(route))).toEqual(route);
  });

  it('leaves the default status out of the URL', () => {
    expect(routeHref({ view: 'jobs', status: 'all' })).toBe('#/jobs');
  });
});
