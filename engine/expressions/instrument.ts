import type { ASTNode } from '@marcbachmann/cel-js';
import type { RE2JS } from 're2js';
import { CHARS_PER_UNIT, charge, chargeDeep, chargeString, remainingBudget, sizeOf } from './budget.js';
import { compileRegex, regexMatches } from './regex.js';

type Handle = (first: unknown, second: unknown, third: unknown, fourth?: unknown) => unknown;
type Evaluate = (evaluator: unknown, ast: unknown, context: unknown) => unknown;

/** The cel-js AST node with the fields its type checker adds (not in its .d.ts). */
export type Node = ASTNode & {
  handle?: Handle;
  /** The type the checker gave the node (`dyn` when it depends on the data). */
  checkedType?: { name: string };
  evaluate?: Evaluate;
  meta?: { alternate?: Node; macro?: { args?: unknown }; evaluate?: Evaluate };
};

/**
 * Wraps the handlers the type checker left on a node so that what they read and build is charged
 * to the budget (budget.ts) before they do it; `matches` runs on RE2 instead of JavaScript's RegExp.
 */
export function instrument(node: Node): void {
  switch (node.op as string) {
    case 'comprehension':
      return wrapHandle(node, (original) => (items, args, evaluator, context) => {
        charge(sizeOf(items));
        return original(items, args, evaluator, context);
      });
    case '==':
    case '!=':
      if (provenScalar(node)) return;
      return wrapHandle(node, (original) => (left, right, ast, evaluator) => {
        chargeOperand(left);
        chargeOperand(right);
        return original(left, right, ast, evaluator);
      });
    case 'in':
      return wrapHandle(node, (original) => (left, right, ast, evaluator) => {
        chargeOperand(left);
        // A list is searched element by element; a map's keys are looked up, but charged as read.
        if (Array.isArray(right)) chargeDeep(right);
        else charge(sizeOf(right));
        return original(left, right, ast, evaluator);
      });
    case '+':
      if (provenScalar(node)) return;
      return wrapHandle(node, (original) => (left, right, ast, evaluator) => {
        if (typeof left === 'object' || typeof left === 'string') {
          const text = textLength(left) + textLength(right);
          charge(sizeOf(left) + sizeOf(right) + Math.ceil(text / CHARS_PER_UNIT));
        }
        return original(left, right, ast, evaluator);
      });
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (provenScalar(node)) return;
      return wrapHandle(node, (original) => (left, right, ast, evaluator) => {
        if (typeof left === 'string') chargeString(left);
        if (typeof right === 'string') chargeString(right);
        return original(left, right, ast, evaluator);
      });
    case 'list':
    case 'map':
      return chargeLiteral(node);
    case 'call':
    case 'rcall':
      return instrumentCall(node);
  }
}

/** Types the checker can prove that hold nothing long: a comparison with one reads nothing long either. */
const SCALAR_TYPES = new Set(['int', 'uint', 'double', 'bool', 'null']);

/**
 * Whether the checker proved one operand of a comparison a number, a bool or null (`input.total >
 * 100`): the other is then compared in constant time, or refused as another type, so the operator is
 * left unwrapped, as fast as cel-js makes it.
 */
function provenScalar(node: Node): boolean {
  return (node.args as Node[]).some((operand) => SCALAR_TYPES.has(operand.checkedType?.name ?? 'dyn'));
}

function wrapHandle(node: Node, wrap: (original: Handle) => Handle): void {
  if (node.handle) node.handle = wrap(node.handle);
}

/** Characters of a string, bytes of bytes; 0 for anything else. */
function textLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  return value instanceof Uint8Array ? value.length : 0;
}

/** What `==` may read of an operand: all of it, nested values and strings included. */
function chargeOperand(value: unknown): void {
  if (typeof value === 'object' && value !== null) chargeDeep(value);
  else if (typeof value === 'string') chargeString(value);
}

/** A list or map literal: one unit per element it builds. */
function chargeLiteral(node: Node): void {
  const size = (node.args as unknown[]).length;
  const evaluate = node.meta?.evaluate;
  if (size === 0 || !evaluate) return;
  node.evaluate = (evaluator, ast, context) => {
    charge(size);
    return evaluate(evaluator, ast, context);
  };
}

/**
 * A function call (`size(x)`) or method call (`x.size()`); the handler takes the arguments, receiver
 * first, as one array. Strings and bytes are charged as read (most functions walk them), a list only
 * where it is walked (`join`), and what the call returns as built.
 */
function instrumentCall(node: Node): void {
  const name = (node.args as unknown[])[0] as string;
  if (name === 'matches') return useRe2(node);
  if (name === 'split' && node.op === 'rcall') return boundSplit(node);
  wrapHandle(node, (original) => (args, second, third) => {
    for (const arg of args as unknown[]) chargeArgument(arg, name);
    if (inTimeZone(args as unknown[])) charge(TIME_ZONE_UNITS);
    const result = original(args, second, third);
    chargeResult(result, args as unknown[]);
    return result;
  });
}

/**
 * A timestamp accessor given a time zone (`t.getHours("Europe/Paris")`) formats the date with ICU to
 * read it there: 30 to 300 µs a call, measured, where a comprehension step takes 1.5.
 */
const TIME_ZONE_UNITS = 100;

const inTimeZone = (args: readonly unknown[]): boolean =>
  args.length === 2 && args[0] instanceof Date && typeof args[1] === 'string';

function chargeArgument(arg: unknown, name: string): void {
  if (typeof arg === 'string') chargeString(arg);
  else if (arg instanceof Uint8Array) charge(Math.floor(arg.length / CHARS_PER_UNIT));
  else if (name === 'join' && Array.isArray(arg)) chargeDeep(arg);
}

/** What a function built; a value it passed through (`dyn(x)`) was paid for already. */
function chargeResult(result: unknown, args: readonly unknown[]): void {
  if (args.includes(result)) return;
  if (typeof result === 'string') chargeString(result);
  else if (Array.isArray(result)) charge(result.length);
  else if (result instanceof Uint8Array) charge(Math.floor(result.length / CHARS_PER_UNIT));
  else charge(sizeOf(result));
}

/**
 * `text.split(sep)` can cut a string into as many pieces as it has characters: JavaScript is asked
 * for one more piece than the budget has left, so no split builds more than it can pay for.
 */
function boundSplit(node: Node): void {
  wrapHandle(node, (original) => (args, second, third) => {
    const [text, separator, limit] = args as unknown[];
    if (typeof text !== 'string' || typeof separator !== 'string') return original(args, second, third);
    chargeString(text);
    const pieces = text.split(separator, remainingBudget() + 1);
    charge(pieces.length);
    return limit === undefined ? pieces : original(args, second, third);
  });
}

/**
 * `matches`, as a function (`matches(text, pattern)`) or a method (`text.matches(pattern)`), on RE2:
 * a pattern written out in the expression was compiled at validation (compile.ts refuses one RE2
 * does not accept); one from the data is compiled here, and an error if RE2 refuses it.
 */
function useRe2(node: Node): void {
  const pattern = patternLiteral(node)?.args as string | undefined;
  const compiled = pattern === undefined ? undefined : compileRegex(pattern);
  const literal: RE2JS | undefined = compiled?.ok ? compiled.regex : undefined;
  wrapHandle(node, (original) => (args, second, third) => {
    const [text, source] = args as unknown[];
    if (typeof text !== 'string' || typeof source !== 'string') return original(args, second, third);
    chargeString(text);
    chargeString(source);
    return regexMatches(text, source, literal);
  });
}

/** The pattern argument of a `matches` call when the expression writes it as a string literal. */
export function patternLiteral(node: Node): Node | undefined {
  if ((node.op !== 'call' && node.op !== 'rcall') || (node.args as unknown[])[0] !== 'matches') return;
  const args = node.args as unknown[];
  const pattern = (node.op === 'rcall' ? (args[2] as Node[])[0] : (args[1] as Node[])[1]) as Node | undefined;
  return pattern?.op === 'value' && typeof pattern.args === 'string' ? pattern : undefined;
}
