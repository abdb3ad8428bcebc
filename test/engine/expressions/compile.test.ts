import { describe, expect, it } from 'vitest';
import { COST_LIMIT, compileExpression, EXPRESSION_LIMITS } from '../../../engine/expressions/compile.js';
import type {
  CompiledExpression,
  ExpressionKind,
  ExpressionVariables,
} from '../../../engine/expressions/expression.js';
import type { JsonObject } from '../../../engine/json.js';

function variables(input: JsonObject = {}, more: Partial<ExpressionVariables> = {}): ExpressionVariables {
  return {
    input,
    job: { id: 'job-1', workflow: 'orders', version: 3, input: { orderId: 'o-1' } },
    steps: { 'load-order': { orderId: 'o-1', lines: 2 } },
    ...more,
  };
}

function compiled<K extends ExpressionKind>(source: string, kind: K): CompiledExpression<K> {
  const result = compileExpression(source, kind);
  if (!result.ok) throw new Error(`${source}: ${result.error}`);
  return result.expression;
}

const when = (source: string, input: JsonObject, more?: Partial<ExpressionVariables>) =>
  compiled(source, 'bool').evaluate(variables(input, more));
const map = (source: string, input: JsonObject = {}, more?: Partial<ExpressionVariables>) =>
  compiled(source, 'map').evaluate(variables(input, more));

describe('Function: compileExpression', () => {
  describe('JSON numbers against int and double literals', () => {
    it.each([
      ['input.total > 100', 150, true],
      ['input.total > 100', 150.5, true],
      ['input.total > 100', 100, false],
      ['input.total > 100.0', 150, true],
      ['input.total == 150', 150, true],
      ['input.total == 150.0', 150, true],
      ['input.total != 150', 150.5, true],
      ['!(input.total > 100)', 99.5, true],
      ['input.total >= 100 && input.total < 200', 100, true],
    ])('%s with total %s is %s', (source, total, expected) => {
      expect(when(source, { total })).toEqual({ ok: true, value: expected });
    });

    it('does mixed int/double arithmetic in double, so `input.count + 1` works', () => {
      expect(
        map('{"next": input.count + 1, "half": input.count / 2, "rest": input.count % 2}', { count: 7 }),
      ).toEqual({
        ok: true,
        value: { next: 8, half: 3.5, rest: 1 },
      });
      expect(
        when('1 + input.count == 8 && 10 - input.count == 3 && input.count * 2 == 14', { count: 7 }),
      ).toEqual({
        ok: true,
        value: true,
      });
      expect(when('input.list.map(x, x * 2) == [2, 4]', { list: [1, 2] })).toEqual({ ok: true, value: true });
    });

    it('keeps int arithmetic on int literals an int, and turns it back into a JSON number', () => {
      expect(map('{"n": 2 + 3, "c": int(input.count) + 1}', { count: 7 })).toEqual({
        ok: true,
        value: { n: 5, c: 8 },
      });
    });

    it('fails a modulus by zero', () => {
      expect(map('{"r": input.count % 0}', { count: 7 })).toMatchObject({
        ok: false,
        error: /modulus by zero/,
      });
    });
  });

  describe('has()', () => {
    it('tests a key', () => {
      expect(when('has(input.error)', { error: { message: 'boom' } })).toEqual({ ok: true, value: true });
      expect(when('has(input.error)', { total: 1 })).toEqual({ ok: true, value: false });
      expect(when('!has(input.error)', { total: 1 })).toEqual({ ok: true, value: true });
      expect(when('has(input.error.message)', { error: { message: null } })).toEqual({
        ok: true,
        value: true,
      });
    });

    it('a missing key read without has() fails with the expression and the library message', () => {
      expect(when('input.error.step == "a"', {})).toEqual({
        ok: false,
        error: '`input.error.step == "a"`: No such key: error',
      });
    });
  });

  describe('map output', () => {
    it('builds a JSON object from the variables', () => {
      const result = map('{"orderId": steps["load-order"].orderId, "total": input.total, "job": job.id}', {
        total: 150.5,
      });
      expect(result).toEqual({ ok: true, value: { orderId: 'o-1', total: 150.5, job: 'job-1' } });
    });

    it('copies what it passes through (nested lists and maps), so the result does not alias the input', () => {
      const input = { order: { lines: [{ sku: 'a' }] } };
      const result = map('{"order": input.order, "none": null, "flag": true}', input);
      expect(result).toEqual({
        ok: true,
        value: { order: { lines: [{ sku: 'a' }] }, none: null, flag: true },
      });
      if (result.ok) expect(result.value.order).not.toBe(input.order);
    });

    it('may give the input itself, or a step output', () => {
      expect(map('input', { a: 1 })).toEqual({ ok: true, value: { a: 1 } });
      expect(map('steps["load-order"]')).toEqual({ ok: true, value: { orderId: 'o-1', lines: 2 } });
    });

    it('refuses at run time a value that is not a map', () => {
      expect(map('input.list', { list: [1] })).toEqual({
        ok: false,
        error: '`input.list`: gave a list; `input:` must give a map',
      });
    });

    it('refuses values JSON cannot hold: NaN, infinities, timestamps, bytes', () => {
      expect(map('{"x": 1.0 / 0.0}')).toMatchObject({
        ok: false,
        error: /gave Infinity at x, which JSON cannot hold/,
      });
      expect(map('{"x": [0.0 / 0.0]}')).toMatchObject({ ok: false, error: /gave NaN at x\[0\]/ });
      expect(map('{"t": timestamp("2026-01-01T00:00:00Z")}')).toMatchObject({
        ok: false,
        error: /gave a timestamp at t, which is not JSON/,
      });
      expect(map('{"b": b"abc"}')).toMatchObject({ ok: false, error: /gave bytes at b, which is not JSON/ });
    });

    it('turns uints into numbers', () => {
      expect(map('{"u": 42u}')).toEqual({ ok: true, value: { u: 42 } });
    });
  });

  describe('unsafe integers', () => {
    it('refuses an int beyond ±2^53 rather than round it', () => {
      expect(map('{"id": 9007199254740993}')).toEqual({
        ok: false,
        error:
          '`{"id": 9007199254740993}`: gave the integer 9007199254740993 at id, beyond what a JSON number holds exactly (±2^53)',
      });
      expect(map('{"id": -9007199254740993}')).toMatchObject({ ok: false });
      expect(map('{"id": 9007199254740991}')).toEqual({ ok: true, value: { id: 9007199254740991 } });
    });
  });

  describe('compile errors', () => {
    it('refuses an unknown variable at compile time, with its position', () => {
      expect(compileExpression('input.a > 1 && order.total > 1', 'bool')).toEqual({
        ok: false,
        error: 'unknown variable `order` (expressions see input, job, steps, parent)',
        position: { line: 1, column: 16 },
      });
    });

    it('gives a syntax error as one line and a 1-based position', () => {
      expect(compileExpression('input.total >', 'bool')).toEqual({
        ok: false,
        error: 'Unexpected token: EOF',
        position: { line: 1, column: 14 },
      });
      expect(compileExpression('input.total > 1 &&\n  * 2', 'bool')).toEqual({
        ok: false,
        error: 'Unexpected token: MULTIPLY',
        position: { line: 2, column: 3 },
      });
    });

    it('refuses a type error the checker finds', () => {
      expect(compileExpression('1 + "a" == 2', 'bool')).toMatchObject({
        ok: false,
        error: 'no such overload: int + string',
        position: { line: 1, column: 1 },
      });
    });

    it('refuses a `when` that definitely is not a boolean, takes dyn', () => {
      expect(compileExpression('1 + 2', 'bool')).toEqual({
        ok: false,
        error: '`when:` must be a boolean expression; this one gives int',
      });
      expect(compileExpression('"yes"', 'bool')).toMatchObject({ ok: false, error: /this one gives string/ });
      expect(compileExpression('input.flag', 'bool')).toMatchObject({ ok: true });
    });

    it('fails at run time a dyn `when` that is not a boolean', () => {
      expect(when('input.flag', { flag: 'yes' })).toEqual({
        ok: false,
        error: '`input.flag`: gave a string; `when:` must give a boolean',
      });
      expect(when('input.flag', { flag: true })).toEqual({ ok: true, value: true });
    });

    it('refuses an `input:` that definitely is not a map with string keys', () => {
      expect(compileExpression('[1, 2]', 'map')).toEqual({
        ok: false,
        error: '`input:` must be a map expression; this one gives list<int>',
      });
      expect(compileExpression('{1: "a"}', 'map')).toEqual({
        ok: false,
        error: '`input:` must give a map with string keys; this one gives map<int, string>',
      });
      expect(compileExpression('{"a": 1, "b": "x"}', 'map')).toMatchObject({ ok: true });
    });

    it('has no wall clock: now() does not exist', () => {
      expect(compileExpression('now() > timestamp("2026-01-01T00:00:00Z")', 'bool')).toMatchObject({
        ok: false,
        error: "found no matching overload for 'now()'",
      });
    });
  });

  describe('uses', () => {
    it.each([
      ['input.total > 100', ['input']],
      ['has(input.error)', ['input']],
      ['{"orderId": steps["load-order"].orderId, "total": input.total}', ['input', 'steps']],
      ['job.input.orderId == "o" || parent.index == 0', ['job', 'parent']],
      ['[1, 2].exists(x, x == 2)', []],
      ['input.list.exists(steps, steps > 1)', ['input']],
      ['"input" == "steps"', []],
    ])('%s reads %j', (source, names) => {
      const result = compileExpression(source, source.startsWith('{') ? 'map' : 'bool');
      if (!result.ok) throw new Error(result.error);
      expect([...result.expression.uses].sort()).toEqual(names);
    });
  });

  describe('parent', () => {
    it('is there for a fan-out child, and says so when it is not', () => {
      const parent = { id: 'p', step: 'split', index: 2, input: {} };
      expect(when('parent.index == 2', {}, { parent })).toEqual({ ok: true, value: true });
      expect(when('parent.index == 2', {})).toEqual({
        ok: false,
        error: '`parent.index == 2`: `parent` is only set for a fan-out child',
      });
    });
  });

  describe('cost limit', () => {
    const list = Array.from({ length: 10_000 }, (_, i) => i);

    // Run to the end, these 10^12 iterations would outlast the test's timeout: the limit stops them.
    it('stops three nested comprehensions over 10,000 elements at the cost limit', () => {
      const expression = compiled('input.list.all(a, input.list.all(b, input.list.all(c, true)))', 'bool');
      const result = expression.evaluate(variables({ list }));
      expect(result).toEqual({
        ok: false,
        error: `\`input.list.all(a, input.list.all(b, input.list.all(c, true)))\`: exceeds the cost limit (${COST_LIMIT} units)`,
      });
    });

    it('lets one comprehension over 10,000 elements run, and limits each evaluation on its own', () => {
      const expression = compiled('input.list.exists(x, x == 9999)', 'bool');
      for (let i = 0; i < 20; i++)
        expect(expression.evaluate(variables({ list }))).toEqual({ ok: true, value: true });
    });

    it('holds when `||` would absorb the error', () => {
      expect(when('input.list.all(a, input.list.all(b, true)) || true', { list })).toMatchObject({
        ok: false,
        error: /exceeds the cost limit/,
      });
    });

    it('charges list concatenation and `in`, not only comprehensions', () => {
      expect(when('input.list.map(x, input.list + input.list).size() > 0', { list })).toMatchObject({
        ok: false,
        error: /exceeds the cost limit/,
      });
      expect(when('input.list.exists(x, x in input.list && false)', { list })).toMatchObject({
        ok: false,
        error: /exceeds the cost limit/,
      });
    });

    it('refuses at compile comprehensions nested deeper than the limit, and oversized sources', () => {
      expect(EXPRESSION_LIMITS.maxComprehensionNesting).toBe(3);
      expect(
        compileExpression('input.l.all(a, input.l.all(b, input.l.all(c, input.l.all(d, true))))', 'bool'),
      ).toEqual({
        ok: false,
        error: 'nests comprehensions 4 deep, more than the 3 allowed',
        position: { line: 1, column: 46 },
      });
      expect(compileExpression(`${'input.a == 1 || '.repeat(700)}true`, 'bool')).toMatchObject({
        ok: false,
        error: /longer than 10000 characters/,
      });
      expect(compileExpression(`${'('.repeat(60)}true${')'.repeat(60)}`, 'bool')).toMatchObject({
        ok: false,
      });
      expect(compileExpression(`[${'1,'.repeat(1_500)}1].size() > 0`, 'bool')).toMatchObject({ ok: false });
    });
  });

  describe('determinism', () => {
    it('gives the same value for the same variables, every time', () => {
      const expression = compiled(
        '{"keys": input.m.map(k, k), "any": input.m.exists(k, input.m[k] > 1), "y": timestamp("2026-01-01T00:00:00Z").getFullYear()}',
        'map',
      );
      const first = expression.evaluate(variables({ m: { b: 2, a: 1, c: 3 } }));
      expect(first).toEqual({ ok: true, value: { keys: ['b', 'a', 'c'], any: true, y: 2026 } });
      for (let i = 0; i < 10; i++)
        expect(expression.evaluate(variables({ m: { b: 2, a: 1, c: 3 } }))).toEqual(first);
    });
  });
});
