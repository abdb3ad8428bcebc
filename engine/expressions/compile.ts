import { Environment } from '@marcbachmann/cel-js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../job/message-size.js';
import { COST_LIMIT, CostLimitExceeded, overBudget, resetBudget } from './budget.js';
import type {
  CompiledExpression,
  CompileResult,
  EvaluationResult,
  ExpressionKind,
  ExpressionPosition,
  ExpressionVariables,
  VariableName,
} from './expression.js';
import { instrument, type Node, patternLiteral } from './instrument.js';
import { compileRegex, regexError, regexMatches, resetRegexCharges } from './regex.js';
import { describe, isMap, OutputTooLarge, toJson } from './to-json.js';

export { COST_LIMIT };

// docs/expressions.md explains each choice below; bench/cel-libraries.ts measures them.

const VARIABLES: readonly VariableName[] = ['input', 'job', 'steps', 'parent', 'output'];

/** Structural limits checked at parse (the cel-js parser enforces all but the last two). */
export const EXPRESSION_LIMITS = {
  maxAstNodes: 2_000,
  maxDepth: 50,
  maxListElements: 1_000,
  maxMapEntries: 1_000,
  maxCallArguments: 32,
  /** Characters of source. */
  maxSourceLength: 10_000,
  /** Comprehensions inside comprehensions: 3 allows `a.all(x, b.exists(y, c.exists(z, …)))`. */
  maxComprehensionNesting: 3,
} as const;

const environment = (() => {
  const { maxSourceLength: _s, maxComprehensionNesting: _c, ...limits } = EXPRESSION_LIMITS;
  const env = new Environment({ homogeneousAggregateLiterals: false, limits });
  for (const name of VARIABLES) env.registerVariable(name, 'map');
  // JSON numbers are doubles; CEL has no int/double arithmetic. Mixed operators give a double, so
  // `input.count + 1` works (CEL comparisons and equality are already heterogeneous).
  env.registerOperator('double + int: double', (a: number, b: bigint) => a + Number(b));
  env.registerOperator('int + double: double', (a: bigint, b: number) => Number(a) + b);
  env.registerOperator('double - int: double', (a: number, b: bigint) => a - Number(b));
  env.registerOperator('int - double: double', (a: bigint, b: number) => Number(a) - b);
  env.registerOperator('double * int: double', (a: number, b: bigint) => a * Number(b));
  env.registerOperator('int * double: double', (a: bigint, b: number) => Number(a) * b);
  env.registerOperator('double / int: double', (a: number, b: bigint) => a / Number(b));
  env.registerOperator('int / double: double', (a: bigint, b: number) => Number(a) / b);
  // `input.n % 2 == 0` on a JSON number; a zero divisor is an error, as for ints.
  env.registerOperator('double % int: double', (a: number, b: bigint) => {
    if (b === 0n) throw new Error('modulus by zero');
    return a % Number(b);
  });
  // CEL's function form; the method form is cel-js's own, whose handler instrument() replaces.
  env.registerFunction('matches(string, string): bool', (text: string, pattern: string) =>
    regexMatches(text, pattern),
  );
  return env;
})();

// ---------------------------------------------------------------------------------------------------
// The AST walk: the variables used, comprehension nesting, and the nodes to instrument.

interface Walk {
  uses: Set<VariableName>;
  unknown?: Node;
  nesting: number;
  deepest?: Node;
  nodes: Node[];
}

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && 'op' in value && 'args' in value;
}

/** `bound`: the comprehension variables in scope, which shadow ours (`list.exists(input, …)`). */
function walk(node: Node, depth: number, bound: ReadonlySet<string>, into: Walk): void {
  const alternate = node.meta?.alternate;
  if (alternate) return walk(alternate, depth, bound, into);
  into.nodes.push(node);
  if (node.op === 'id') {
    const name = node.args as string;
    if (!bound.has(name) && (VARIABLES as readonly string[]).includes(name))
      into.uses.add(name as VariableName);
    return;
  }
  if (node.op === ('comprehension' as string)) {
    const args = node.args as unknown as { iterable: Node; init: Node; step: Node; iterVarName: string };
    const inner = depth + 1;
    if (inner > into.nesting) {
      into.nesting = inner;
      into.deepest = node;
    }
    walk(args.iterable, depth, bound, into);
    walk(args.init, inner, bound, into);
    walk(args.step, inner, new Set([...bound, args.iterVarName]), into);
    return;
  }
  const macroArgs = node.meta?.macro?.args;
  visit(macroArgs ?? node.args, depth, bound, into);
}

function visit(value: unknown, depth: number, bound: ReadonlySet<string>, into: Walk): void {
  if (isNode(value)) walk(value, depth, bound, into);
  else if (Array.isArray(value)) for (const item of value) visit(item, depth, bound, into);
}

// ---------------------------------------------------------------------------------------------------

/** Parses and checks an expression; the result evaluates it as many times as needed. */
export function compileExpression<K extends ExpressionKind>(source: string, kind: K): CompileResult<K> {
  if (source.length > EXPRESSION_LIMITS.maxSourceLength) {
    return { ok: false, error: `is longer than ${EXPRESSION_LIMITS.maxSourceLength} characters` };
  }
  let program: ReturnType<typeof environment.parse>;
  try {
    program = environment.parse(source);
  } catch (error) {
    return compileError(source, error);
  }
  const found: Walk = { uses: new Set(), nesting: 0, nodes: [] };
  walk(program.ast as Node, 0, new Set(), found);
  if (found.nesting > EXPRESSION_LIMITS.maxComprehensionNesting) {
    return {
      ok: false,
      error: `nests comprehensions ${found.nesting} deep, more than the ${EXPRESSION_LIMITS.maxComprehensionNesting} allowed`,
      position: positionOf(source, found.deepest?.start),
    };
  }
  const checked = program.check();
  if (!checked.valid) return compileError(source, checked.error);
  const typeError = kindError(kind, checked.type ?? 'dyn');
  if (typeError) return { ok: false, error: typeError };
  const patternError = literalPatternError(source, found.nodes);
  if (patternError) return patternError;
  // The checker set the handlers the evaluation calls: wrap them now, once.
  for (const node of found.nodes) instrument(node);

  const evaluateBool = (variables: ExpressionVariables): EvaluationResult<'bool'> => {
    const value = run(program, source, variables);
    if (typeof value === 'boolean') return { ok: true, value };
    if (value instanceof Failure) return { ok: false, error: value.message };
    return { ok: false, error: `\`${source}\`: gave ${describe(value)}; \`when:\` must give a boolean` };
  };
  const evaluateMap = (
    variables: ExpressionVariables,
    maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ): EvaluationResult<'map'> => {
    const value = run(program, source, variables);
    if (value instanceof Failure) return { ok: false, error: value.message };
    if (!isMap(value)) {
      return { ok: false, error: `\`${source}\`: gave ${describe(value)}; \`input:\` must give a map` };
    }
    try {
      return { ok: true, value: toJson(value, maxBytes) };
    } catch (error) {
      const message = `\`${source}\`: ${(error as Error).message}`;
      return error instanceof OutputTooLarge
        ? { ok: false, error: message, tooLarge: true }
        : { ok: false, error: message };
    }
  };
  const evaluateString = (variables: ExpressionVariables): EvaluationResult<'string'> => {
    const value = run(program, source, variables);
    if (value instanceof Failure) return { ok: false, error: value.message };
    if (typeof value !== 'string')
      return { ok: false, error: `\`${source}\`: gave ${describe(value)}; it must give text` };
    return { ok: true, value };
  };
  const evaluateTime = (variables: ExpressionVariables): EvaluationResult<'time'> => {
    const value = run(program, source, variables);
    if (value instanceof Failure) return { ok: false, error: value.message };
    const ms =
      value instanceof Date ? value.getTime() : typeof value === 'string' ? parseTime(value) : Number.NaN;
    if (Number.isNaN(ms)) {
      return {
        ok: false,
        error: `\`${source}\`: gave ${typeof value === 'string' ? JSON.stringify(value) : describe(value)}; it must give a timestamp or a time in RFC 3339 (e.g. "2026-03-01T09:00:00Z")`,
      };
    }
    return { ok: true, value: ms };
  };
  const evaluators = { bool: evaluateBool, map: evaluateMap, string: evaluateString, time: evaluateTime };
  const expression: CompiledExpression<K> = {
    source,
    kind,
    uses: found.uses,
    evaluate: evaluators[kind] as CompiledExpression<K>['evaluate'],
  };
  return { ok: true, expression };
}

class Failure {
  constructor(readonly message: string) {}
}

function run(
  program: ReturnType<typeof environment.parse>,
  source: string,
  variables: ExpressionVariables,
): unknown {
  resetBudget();
  resetRegexCharges();
  let value: unknown;
  try {
    value = program(variables as unknown as Record<string, unknown>);
  } catch (error) {
    return new Failure(`\`${source}\`: ${runtimeMessage(error)}`);
  }
  // `||`, `&&`, `exists` and `all` absorb errors in one branch when the other decides: the limit
  // holds all the same.
  if (overBudget()) return new Failure(`\`${source}\`: ${new CostLimitExceeded().message}`);
  return value;
}

function runtimeMessage(error: unknown): string {
  if (overBudget() || error instanceof CostLimitExceeded) return new CostLimitExceeded().message;
  const message = summary(error);
  if (message === 'Unknown variable: parent') return '`parent` is only set for a fan-out child';
  return message;
}

/** A `matches` pattern written out in the expression that RE2 refuses: refused with the expression. */
function literalPatternError(
  source: string,
  nodes: readonly Node[],
): { ok: false; error: string; position?: ExpressionPosition } | undefined {
  for (const node of nodes) {
    const literal = patternLiteral(node);
    if (!literal) continue;
    const pattern = literal.args as string;
    const compiled = compileRegex(pattern);
    if (compiled.ok) continue;
    const position = positionOf(source, literal.start);
    const error = regexError(pattern, compiled.error);
    return position ? { ok: false, error, position } : { ok: false, error };
  }
  return undefined;
}

/** RFC 3339 text (a date and a time with its offset) as milliseconds; NaN otherwise. */
function parseTime(text: string): number {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(text)) return Number.NaN;
  return Date.parse(text);
}

function kindError(kind: ExpressionKind, type: string): string | undefined {
  if (type === 'dyn') return undefined;
  if (kind === 'string') return type === 'string' ? undefined : `it must give text; this one gives ${type}`;
  if (kind === 'time') {
    return type === 'google.protobuf.Timestamp' || type === 'string'
      ? undefined
      : `it must give a timestamp (or RFC 3339 text); this one gives ${type}`;
  }
  if (kind === 'bool') {
    return type === 'bool' ? undefined : `\`when:\` must be a boolean expression; this one gives ${type}`;
  }
  if (type === 'map') return undefined;
  const key = /^map<([^,]+),/.exec(type)?.[1];
  if (key === 'string' || key === 'dyn') return undefined;
  return key
    ? `\`input:\` must give a map with string keys; this one gives ${type}`
    : `\`input:\` must be a map expression; this one gives ${type}`;
}

function compileError(
  source: string,
  error: unknown,
): { ok: false; error: string; position?: ExpressionPosition } {
  const e = error as { code?: string; range?: { start: number }; node?: { start?: number } };
  const position = positionOf(source, e.range?.start ?? e.node?.start);
  let message = summary(error);
  if (e.code === 'unknown_variable') {
    const name = message.replace(/^Unknown variable: /, '');
    // `output` is seen by `output:` and `repeat.until` only (the validator says so where it is read).
    const seen = VARIABLES.filter((variable) => variable !== 'output');
    message = `unknown variable \`${name}\` (expressions see ${seen.join(', ')})`;
  }
  return position ? { ok: false, error: message, position } : { ok: false, error: message };
}

function positionOf(source: string, offset: number | undefined): ExpressionPosition | undefined {
  if (offset === undefined || offset < 0) return undefined;
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

function summary(error: unknown): string {
  const e = error as { summary?: unknown; message?: unknown };
  const text =
    typeof e?.summary === 'string' ? e.summary : typeof e?.message === 'string' ? e.message : String(error);
  return text.split('\n')[0] as string;
}
