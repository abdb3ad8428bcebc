import { describe, expect, it } from 'vitest';
import { rawQueryOf } from '../../../functions/api/query.js';
import { pathAndQuery } from '../../../functions/local/request-target.js';

/** What WHATWG URL makes of a request target's query: what serve gave the API before it split targets itself. */
const urlQuery = (target: string) => rawQueryOf(new URL(target, 'http://localhost').searchParams);

describe("a request target's path and query", () => {
  it('keeps the path as the client sent it, dot segments and escapes included', () => {
    expect(pathAndQuery('/api/ns/%2E%2E/workflow/x?id=1').path).toBe('/api/ns/%2E%2E/workflow/x');
    expect(pathAndQuery('/api/../workflow/x').path).toBe('/api/../workflow/x');
    expect(pathAndQuery('/api/jobs').path).toBe('/api/jobs');
  });

  it.each([
    '/api/jobs',
    '/api/jobs?',
    '/api/jobs?status=running&limit=10',
    '/api/job/x?id=A&id=B&id=',
    '/api/jobs?q=a+b&r=%20c%2Bd&s=%zz&t=%E2%82%AC&u=%',
    '/api/jobs?a=1#b=2',
    '/api/jobs#frag?a=1',
    '/api/jobs?a=1?b=2&&c&=d&e==f',
    '/api/jobs??a=1',
    '/api/jobs?a=é&b="<>\'`{}|^',
    '/api/jobs?%61=1&a=2',
    '/api/jobs?__proto__=1&constructor=2',
  ])('gives %s the query URL gives it', (target) => {
    expect(pathAndQuery(target).query).toEqual(urlQuery(target));
  });

  it('gives the query URL gives for every target of random characters', () => {
    const alphabet = [...'ab=&?#+%20F;/.\\\'"<>`{}|^~', 'é', '€', ' ', '\t', '\n', '\u0000'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed;
    };
    for (let n = 0; n < 5_000; n++) {
      let target = '/x';
      const length = next() % 24;
      for (let i = 0; i < length; i++) target += alphabet[next() % alphabet.length];
      expect([target, pathAndQuery(target).query]).toEqual([target, urlQuery(target)]);
    }
  });

  it('takes an absolute-form target as URL does', () => {
    expect(pathAndQuery('http://localhost:8080/api/jobs?a=1')).toEqual({
      path: '/api/jobs',
      query: { a: ['1'] },
    });
  });
});
