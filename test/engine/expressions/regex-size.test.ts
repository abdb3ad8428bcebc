import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { MAX_REGEX_PROGRAM } from '../../../engine/expressions/regex.js';
import { estimateProgramSize } from '../../../engine/expressions/regex-size.js';

describe('Function: estimateProgramSize', () => {
  it.each([
    '^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,63}$',
    '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    '^([a-zA-Z0-9]+\\s?)*$',
    '(?i)^(?:red|green|blue)$',
    '\\pL{100}',
    '((a{10}){10}){10}',
    '(?:a{1000})(?:b{1000})',
    '(.*a){1000}',
    '[^a]{999}b',
    '\\Qa.b*c\\E{50}',
  ])('reads %s as at least half the program RE2 compiles it to', (pattern) => {
    expect(estimateProgramSize(pattern)).toBeGreaterThanOrEqual(RE2JS.compile(pattern).programSize() / 2);
  });

  it('puts repeated repetitions over the limit before anything is compiled', () => {
    expect(estimateProgramSize('(?:[a-z]{1000}){6}')).toBeGreaterThan(MAX_REGEX_PROGRAM);
    expect(estimateProgramSize(`${'\\w{1000}'.repeat(6)}`)).toBeGreaterThan(MAX_REGEX_PROGRAM);
    expect(estimateProgramSize('((x{100}){100}){100}')).toBeGreaterThan(MAX_REGEX_PROGRAM);
  });
});
