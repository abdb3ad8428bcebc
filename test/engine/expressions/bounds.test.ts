import { describe, expect, it } from 'vitest';
import { COST_LIMIT, compileExpression } from '../../../engine/expressions/compile.js';
import type {
  CompiledExpression,
  ExpressionKind,
  ExpressionVariables,
} from '../../../engine/expressions/expression.js';
import type { JsonObject } from '../../../engine/json.js';

const MiB = 1024 * 1024;

function variables(input: JsonObject): ExpressionVariables {
  return { input, job: { id: 'job-1', workflow: 'orders', version: 1, input: {} }, steps: {} };
}

function compiled<K extends ExpressionKind>(source: string, kind: K): CompiledExpression<K> {
  const result = compileExpression(source, kind);
  if (!result.ok) throw new Error(`${source}: ${result.error}`);
  return result.expression;
}

const map = (source: string, input: JsonObject, maxBytes?: number) =>
  compiled(source, 'map').evaluate(variables(input), maxBytes);
const when = (source: string, input: JsonObject) => compiled(source, 'bool').evaluate(variables(input));

const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);
/** `cel.bind(x1, x0 + x0, cel.bind(x2, x1 + x1, … xn))`: a list 2^n times as long, without a comprehension. */
const doublings = (n: number): string =>
  n === 0
    ? 'x0'
    : `${Array.from({ length: n }, (_, i) => `cel.bind(x${i + 1}, x${i} + x${i}, `).join('')}x${n}${')'.repeat(n)}`;
const overCost = {
  ok: false,
  error: expect.stringContaining(`exceeds the cost limit (${COST_LIMIT} units)`),
};

describe('Function: compileExpression, what an `input:` expression gives', () => {
  describe('the copy to JSON stops at the request limit', () => {
    // Issue 28: 20,000 numbers (60 KB) copied 20,000 times took serve to 1.1 GB and out of memory.
    it('refuses a list copied into each of its own elements (N × N), which costs N units to evaluate', () => {
      expect(map('{"x": input.l.map(e, input.l)}', { l: numbers(20_000) })).toEqual({
        ok: false,
        error:
          '`{"x": input.l.map(e, input.l)}`: gives more than 1048576 bytes of JSON, the most a request may have',
        tooLarge: true,
      });
    });

    // Issue 28: the natural fan-out mapping, with a 120 KB input.
    it('refuses a mapping that gives every item the same large options', () => {
      const input = { items: numbers(10_000), opts: { values: numbers(10_000) } };
      expect(JSON.stringify(input).length).toBeLessThan(120_000);
      expect(map('{"jobs": input.items.map(i, {"item": i, "opts": input.opts})}', input)).toMatchObject({
        ok: false,
        error: expect.stringContaining('gives more than 1048576 bytes of JSON'),
        tooLarge: true,
      });
    });

    it('gives the same mapping on a small input, copied into fresh JSON', () => {
      const opts = { retries: 2 };
      const result = map('{"jobs": input.items.map(i, {"item": i, "opts": input.opts})}', {
        items: [1, 2],
        opts,
      });
      expect(result).toEqual({
        ok: true,
        value: {
          jobs: [
            { item: 1, opts },
            { item: 2, opts },
          ],
        },
      });
      if (!result.ok) throw new Error(result.error);
      expect((result.value.jobs as JsonObject[])[0]?.opts).not.toBe(opts);
    });

    it('counts JSON bytes exactly: escapes and multi-byte characters, up to the last byte', () => {
      // {"s":"…"} is 8 bytes around the string's own.
      const s = 'é"\n\u0001😀a'; // 2 + 2 + 2 + 6 + 4 + 1 bytes
      expect(Buffer.byteLength(JSON.stringify({ s }))).toBe(25);
      expect(map('{"s": input.s}', { s }, 25)).toEqual({ ok: true, value: { s } });
      expect(map('{"s": input.s}', { s }, 24)).toMatchObject({ ok: false, tooLarge: true });
    });

    it('refuses a value nested deeper than a body may be (64 levels), and takes one 64 deep', () => {
      let deep: JsonObject = {};
      for (let level = 1; level < 63; level++) deep = { d: deep };
      // {"x": deep}: 63 levels of `deep` under the top one.
      expect(map('{"x": input.deep}', { deep })).toMatchObject({ ok: true });
      expect(map('{"x": [input.deep]}', { deep })).toEqual({
        ok: false,
        error: expect.stringMatching(
          /gave JSON nested more than 64 levels deep \(objects and lists\) at x\[0\]\.d\.d/,
        ),
      });
    });

    it('takes a value of about the limit that a step may send', () => {
      const text = 'x'.repeat(MiB - 100);
      expect(map('{"text": input.text}', { text })).toEqual({ ok: true, value: { text } });
    });
  });

  describe('what an evaluation builds is charged, not only what it ranges over', () => {
    it.each([
      [
        'a list literal built per element',
        '{"p": input.l.map(e, [e, e, e, e, e, e, e, e])}',
        { l: numbers(20_000) },
      ],
      [
        'a map literal built per element',
        '{"p": input.l.map(e, {"a": e, "b": e, "c": e, "d": e})}',
        { l: numbers(30_000) },
      ],
      [
        'strings joined per element',
        '{"p": input.l.map(e, input.s + input.s)}',
        { l: numbers(1_000), s: 'x'.repeat(10_000) },
      ],
      [
        'lists joined per element',
        '{"p": input.l.map(e, input.m + input.m)}',
        { l: numbers(100), m: numbers(1_000) },
      ],
      ['a string cut into its characters', '{"p": input.s.split("")}', { s: 'x'.repeat(1_000_000) }],
      [
        'a string cut per element',
        '{"p": input.l.map(e, input.s.split(","))}',
        { l: numbers(100), s: 'a,'.repeat(5_000) },
      ],
      [
        'a list of strings joined per element',
        '{"p": input.l.map(e, input.w.join(""))}',
        { l: numbers(100), w: Array(2_000).fill('word') },
      ],
      [
        'a long string copied per element',
        '{"p": input.l.map(e, input.s.lowerAscii())}',
        { l: numbers(100), s: 'X'.repeat(100_000) },
      ],
      ['a list doubled by binding', `{"p": cel.bind(x0, input.l, ${doublings(8)})}`, { l: numbers(1_000) }],
    ])('stops %s at the cost limit', (_, source, input) => {
      expect(map(source, input)).toEqual(overCost);
    });

    it.each([
      [
        'long strings compared per element',
        'input.l.all(e, input.a == input.b)',
        { l: numbers(100), a: 'x'.repeat(200_000), b: 'x'.repeat(200_000) },
      ],
      [
        'long strings ordered per element',
        'input.l.all(e, input.a <= input.b)',
        { l: numbers(100), a: 'x'.repeat(200_000), b: 'x'.repeat(200_000) },
      ],
      [
        'nested lists compared per element',
        'input.l.all(e, input.a == input.b)',
        { l: numbers(100), a: [numbers(5_000)], b: [numbers(5_000)] },
      ],
      [
        'a long string measured per element',
        'input.l.all(e, size(input.s) > 0)',
        { l: numbers(100), s: 'x'.repeat(200_000) },
      ],
      [
        'a long string searched per element',
        'input.l.all(e, input.s.contains("y") == false)',
        { l: numbers(100), s: 'x'.repeat(200_000) },
      ],
      [
        'the hour in a time zone read per element',
        'input.l.all(e, timestamp(1700000000).getHours("Europe/Paris") >= 0)',
        { l: numbers(5_000) },
      ],
    ])('stops %s at the cost limit', (_, source, input) => {
      expect(when(source, input)).toEqual(overCost);
    });

    it("charges CEL's own values (types, durations, timestamps) as one, not by their fields", () => {
      const source =
        'input.l.all(e, type(e) == double && duration("1s") == duration("1s") && timestamp(1) != timestamp(2))';
      expect(when(source, { l: numbers(30_000) })).toEqual({ ok: true, value: true });
    });

    it('leaves the everyday expressions well inside the limit', () => {
      const items = numbers(10_000).map((i) => ({ sku: `sku-${i}`, qty: i % 5 }));
      expect(when('input.items.exists(i, i.sku == "sku-9999" && i.qty > 1.0)', { items })).toEqual({
        ok: true,
        value: true,
      });
      expect(map('{"skus": input.items.map(i, i.sku).join(",").split(",")}', { items })).toMatchObject({
        ok: true,
      });
      expect(
        map('{"lines": input.items.filter(i, i.qty > 3.0).map(i, {"sku": i.sku})}', { items }),
      ).toMatchObject({
        ok: true,
      });
    });
  });
});
