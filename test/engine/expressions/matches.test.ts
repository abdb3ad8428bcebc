import { describe, expect, it } from 'vitest';
import { COST_LIMIT, compileExpression } from '../../../engine/expressions/compile.js';
import type { ExpressionVariables } from '../../../engine/expressions/expression.js';
import { MAX_REGEX_PROGRAM } from '../../../engine/expressions/regex.js';
import type { JsonObject } from '../../../engine/json.js';

function variables(input: JsonObject): ExpressionVariables {
  return { input, job: { id: 'job-1', workflow: 'orders', version: 1, input: {} }, steps: {} };
}

function when(source: string, input: JsonObject) {
  const result = compileExpression(source, 'bool');
  if (!result.ok) throw new Error(`${source}: ${result.error}`);
  return result.expression.evaluate(variables(input));
}

describe('Function: compileExpression, matches() on RE2', () => {
  // Issue 28: 33 bytes of input held the manager for 74 s on JavaScript's backtracking RegExp.
  it('answers a nested quantifier on 32 × "a" + "!" (exponential for a backtracking engine)', () => {
    const source = 'input.name.matches("^([a-zA-Z0-9]+\\\\s?)*$")';
    expect(when(source, { name: `${'a'.repeat(32)}!` })).toEqual({ ok: true, value: false });
    expect(when(source, { name: `${'a'.repeat(5_000)}!` })).toEqual({ ok: true, value: false });
    expect(when(source, { name: 'abc def' })).toEqual({ ok: true, value: true });
  });

  it.each([
    ['input.s.matches("b+")', 'abbbc', true],
    ['input.s.matches("^b+$")', 'abbbc', false],
    ['matches(input.s, "^a.*c$")', 'abbbc', true],
    ['matches(input.s, "(?i)ABB")', 'abbbc', true],
    ['input.s.matches("\\\\d{3}-\\\\d{4}")', 'call 555-1234', true],
    ['input.s.matches("^\\\\pL+$")', 'Grüße', true],
    ['input.s.matches(input.p)', 'abbbc', true],
  ])('%s on %j is %s (a search, as RE2 and CEL define it), in both forms', (source, s, expected) => {
    expect(when(source, { s, p: 'b{2}' })).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['a group left open', 'input.s.matches("(a")', 'missing closing ): `(a`'],
    ['a backreference', 'input.s.matches("(a)\\\\1")', 'invalid escape sequence: `\\1`'],
    ['a lookahead', 'matches(input.s, "a(?=b)")', 'invalid or unsupported Perl syntax'],
    ['a possessive quantifier', 'input.s.matches("a++")', 'invalid nested repetition operator: `++`'],
    [
      'a program too large',
      'input.s.matches("(?:[a-z]{1000}){6}")',
      `more than ${MAX_REGEX_PROGRAM} instructions`,
    ],
  ])('refuses at validation a pattern literal with %s, saying why and where', (_, source, reason) => {
    const result = compileExpression(source, 'bool');
    expect(result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^matches\(\): RE2 refuses the pattern "/),
      position: { line: 1, column: source.indexOf('"') + 1 },
    });
    expect((result as { error: string }).error).toContain(reason);
  });

  it('fails the evaluation for a pattern from the data that RE2 refuses, saying why', () => {
    expect(when('input.s.matches(input.p)', { s: 'aa', p: '(a)\\1' })).toEqual({
      ok: false,
      error:
        '`input.s.matches(input.p)`: matches(): RE2 refuses the pattern "(a)\\\\1": error parsing regexp: invalid escape sequence: `\\1`',
    });
    expect(when('input.s.matches(input.p)', { s: 'aa', p: '(?:a{1000}){1000}' })).toMatchObject({
      ok: false,
      error: expect.stringContaining(`it compiles to more than ${MAX_REGEX_PROGRAM} instructions`),
    });
  });

  it('charges a match for its program times its text, so a comprehension of large matches stops', () => {
    const texts = Array.from({ length: 200 }, (_, i) => `${'a'.repeat(2_000)}${i}`);
    expect(when('input.texts.all(t, t.matches("(.*a){20}b") == false)', { texts })).toEqual({
      ok: false,
      error: `\`input.texts.all(t, t.matches("(.*a){20}b") == false)\`: exceeds the cost limit (${COST_LIMIT} units)`,
    });
  });

  it('charges compiling patterns from the data, each once per evaluation', () => {
    const patterns = Array.from({ length: 200 }, (_, i) => `^(?:x{1000}y{1000})${i}$`);
    expect(when('input.p.exists(p, "x".matches(p))', { p: patterns })).toMatchObject({
      ok: false,
      error: expect.stringContaining('exceeds the cost limit'),
    });
    const same = Array.from({ length: 200 }, () => '^(?:x{1000}y{1000})$');
    expect(when('input.p.exists(p, "x".matches(p))', { p: same })).toEqual({ ok: true, value: false });
  });
});
