import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression, EXPRESSION_LIMITS } from '../../../engine/expressions/compile.js';
import type { ExpressionVariables } from '../../../engine/expressions/expression.js';
import type { JsonObject } from '../../../engine/json.js';
import { scaled } from '../../support/soak.js';

/*
 * Issue 28: whatever the expression and the input, an evaluation ends (a value or an error), holds a
 * bounded amount of memory, and gives no more JSON than the request limit. The generated expressions
 * are built from what can multiply work or memory: comprehensions nested to the limit, `+` on lists
 * and strings, list and map literals, bindings, `matches` (literal and from the data, pathological
 * patterns included), `split`, `join` and the other string functions.
 */

const RUNS = scaled(150, 5_000, 'EXPRESSION_PROPERTY_RUNS');
/** A small request limit, so that the generated inputs reach it often. */
const MAX_BYTES = 64 * 1024;
/** What the evaluations may add to the heap, retained or not yet collected: generous, far under what the N × N copy took (1.1 GB). */
const HEAP_GROWTH_BOUND = 384 * 1024 * 1024;

const PATTERNS = [
  '"^([a-zA-Z0-9]+\\\\s?)*$"',
  '"(a+)+$"',
  '"(.*a){20}"',
  '"^[a-z]{2,8}$"',
  '"(?i)X"',
  '"(a|aa)*b"',
  'input.p',
];

type Gen = (depth: number, vars: readonly string[]) => fc.Arbitrary<string>;

const pick = <T>(items: readonly T[]) => fc.constantFrom(...items);
const deeper = (depth: number, vars: readonly string[]) => [depth - 1, vars] as const;

/** A comprehension over `list`, binding the next variable name: nesting is counted by the names. */
function comprehension(
  depth: number,
  vars: readonly string[],
  macro: string,
  body: Gen,
): fc.Arbitrary<string> {
  const name = `v${vars.length}`;
  return fc
    .tuple(list(depth - 1, vars), body(depth - 1, [...vars, name]))
    .map(([over, inner]) => `${over}.${macro}(${name}, ${inner})`);
}

const list: Gen = (depth, vars) => {
  const leaves = [pick(['input.l', 'input.ll', 'input.words', '[1, 2, 3]', '[]'])];
  if (depth <= 0) return fc.oneof(...leaves);
  return fc.oneof(
    ...leaves,
    fc.tuple(list(...deeper(depth, vars)), list(...deeper(depth, vars))).map(([a, b]) => `(${a} + ${b})`),
    // What the N × N finding did: a list copied into each element of another.
    fc
      .tuple(list(...deeper(depth, vars)), list(...deeper(depth, vars)))
      .map(([a, b]) => `${a}.map(n${vars.length}, ${b})`),
    fc
      .array(any(...deeper(depth, vars)), { minLength: 1, maxLength: 6 })
      .map((items) => `[${items.join(', ')}]`),
    comprehension(depth, vars, 'map', any),
    comprehension(depth, vars, 'filter', bool),
    str(...deeper(depth, vars)).map((s) => `${s}.split("")`),
    str(...deeper(depth, vars)).map((s) => `${s}.split(",")`),
    list(...deeper(depth, vars)).map(
      (l) => `cel.bind(b${vars.length}, ${l}, b${vars.length} + b${vars.length})`,
    ),
  );
};

const str: Gen = (depth, vars) => {
  const leaves = [pick(['input.s', 'input.p', '"abc"', '"a,b,c"'])];
  if (depth <= 0) return fc.oneof(...leaves);
  return fc.oneof(
    ...leaves,
    fc.tuple(str(...deeper(depth, vars)), str(...deeper(depth, vars))).map(([a, b]) => `(${a} + ${b})`),
    list(...deeper(depth, vars)).map((l) => `${l}.map(w, string(w)).join("-")`),
    str(...deeper(depth, vars)).map((s) => `${s}.upperAscii()`),
    str(...deeper(depth, vars)).map((s) => `${s}.trim()`),
    list(...deeper(depth, vars)).map((l) => `string(size(${l}))`),
  );
};

const bool: Gen = (depth, vars) => {
  const leaves = [pick(['true', 'has(input.m.a)', 'input.n > 3'])];
  if (depth <= 0) return fc.oneof(...leaves);
  return fc.oneof(
    ...leaves,
    fc.tuple(str(...deeper(depth, vars)), pick(PATTERNS)).map(([s, p]) => `${s}.matches(${p})`),
    fc.tuple(str(...deeper(depth, vars)), pick(PATTERNS)).map(([s, p]) => `matches(${s}, ${p})`),
    fc.tuple(any(...deeper(depth, vars)), any(...deeper(depth, vars))).map(([a, b]) => `(${a} == ${b})`),
    fc.tuple(any(...deeper(depth, vars)), list(...deeper(depth, vars))).map(([a, l]) => `(${a} in ${l})`),
    fc.tuple(str(...deeper(depth, vars)), str(...deeper(depth, vars))).map(([a, b]) => `${a}.contains(${b})`),
    comprehension(depth, vars, 'exists', bool),
    comprehension(depth, vars, 'all', bool),
    fc.tuple(bool(...deeper(depth, vars)), bool(...deeper(depth, vars))).map(([a, b]) => `(${a} || ${b})`),
  );
};

const map: Gen = (depth, vars) =>
  depth <= 0
    ? pick(['input.m', '{}'])
    : fc
        .array(any(...deeper(depth, vars)), { minLength: 1, maxLength: 4 })
        .map((values) => `{${values.map((value, i) => `"k${i}": ${value}`).join(', ')}}`);

const any: Gen = (depth, vars) =>
  fc.oneof(
    ...(vars.length ? [{ arbitrary: pick(vars), weight: 1 }] : []),
    { arbitrary: list(depth, vars), weight: 3 },
    { arbitrary: str(depth, vars), weight: 1 },
    { arbitrary: bool(depth, vars), weight: 1 },
    { arbitrary: map(depth, vars), weight: 2 },
  );

const DEPTH = 4;
/** The shapes of issue 28's findings, weighted so that every run meets some: they are what the search is for. */
const findings = fc.oneof(
  fc
    .tuple(list(1, []), list(1, []))
    .map(([over, copied]) => ({ source: `{"out": ${over}.map(v0, ${copied})}`, kind: 'map' as const })),
  fc.tuple(list(1, []), map(1, [])).map(([over, shared]) => ({
    source: `{"out": ${over}.map(v0, {"i": v0, "o": ${shared}})}`,
    kind: 'map' as const,
  })),
  fc
    .tuple(pick(['input.s', 'input.s + input.s', 'input.words.join("")']), pick(PATTERNS))
    .map(([text, pattern]) => ({ source: `${text}.matches(${pattern})`, kind: 'bool' as const })),
);
const expressions = fc.oneof(
  {
    arbitrary: any(DEPTH, []).map((value) => ({ source: `{"out": ${value}}`, kind: 'map' as const })),
    weight: 3,
  },
  { arbitrary: bool(DEPTH, []).map((source) => ({ source, kind: 'bool' as const })), weight: 3 },
  { arbitrary: findings, weight: 2 },
);

/** Inputs of at most a few KB: what can grow is what the expression makes of them. */
const inputs: fc.Arbitrary<JsonObject> = fc.record({
  l: fc.array(fc.integer({ min: -1_000, max: 1_000 }), { maxLength: 600, size: 'max' }),
  ll: fc.array(fc.array(fc.integer(), { maxLength: 40, size: 'max' }), { maxLength: 40, size: 'max' }),
  words: fc.array(fc.string({ maxLength: 12 }), { maxLength: 100, size: 'max' }),
  s: fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.constant(`${'a'.repeat(32)}!`),
    fc.constant('a,'.repeat(1_000)),
  ),
  p: fc.oneof(
    pick(['(a+)+$', '^(a|a)*$', '(', '(a)\\1', '(?:a{1000}){9}', '[a-z]+']),
    fc.string({ maxLength: 8 }),
  ),
  m: fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 8 }),
  n: fc.integer({ min: 0, max: 10 }),
});

function variables(input: JsonObject): ExpressionVariables {
  return { input, job: { id: 'job-1', workflow: 'w', version: 1, input }, steps: { load: input } };
}

describe('Property: any expression, over any bounded input', () => {
  it('ends with a value or an error, in bounded memory, and gives at most the request limit of JSON', () => {
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    let evaluated = 0;
    let tooLarge = 0;
    fc.assert(
      fc.property(expressions, inputs, ({ source, kind }, input) => {
        const compiled = compileExpression(source, kind);
        if (!compiled.ok) {
          expect(compiled.error).toEqual(expect.any(String));
          return;
        }
        const result = compiled.expression.evaluate(variables(input), MAX_BYTES);
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        evaluated++;
        if (!result.ok) {
          expect(result.error).toEqual(expect.any(String));
          if (result.tooLarge) tooLarge++;
          return;
        }
        if (kind === 'map') {
          expect(Buffer.byteLength(JSON.stringify(result.value))).toBeLessThanOrEqual(MAX_BYTES);
        } else {
          expect(typeof result.value).toBe('boolean');
        }
      }),
      { numRuns: RUNS },
    );
    expect(peak - baseline).toBeLessThan(HEAP_GROWTH_BOUND);
    // The generator reaches what it is meant to: compiled expressions, some of them over the limit.
    expect(evaluated).toBeGreaterThan(RUNS / 4);
    expect(EXPRESSION_LIMITS.maxComprehensionNesting).toBe(3);
    if (RUNS >= 100) expect(tooLarge).toBeGreaterThan(0);
  }, 120_000);
});
