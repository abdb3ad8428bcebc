import { type ASTNode, Environment } from '@marcbachmann/cel-js';
import type { Json, JsonObject } from '../json.js';
import type {
  CompiledExpression,
  CompileResult,
  EvaluationResult,
  ExpressionKind,
  ExpressionPosition,
  ExpressionVariables,
  VariableName,
} from './expression.js';

// docs/expressions.md explains each choice below; bench/cel-libraries.ts measures them.

const VARIABLES: readonly VariableName[] = ['input', 'job', 'steps', 'parent'];

/**
 * The runtime budget of one evaluation, in units: one per element of a list or map a comprehension
 * (`all`, `exists`, `exists_one`, `map`, `filter`) ranges over, charged when it starts (so nesting
 * multiplies), one per element of a list or map an operator (`==`, `!=`, `in`, `+`) reads, and one per 64
 * characters of a string `+` joins. cel-js runs a comprehension step in about 1.5 µs, so 100,000
 * units is 0.1 to 0.2 s of work at worst (the engine evaluates inside a transition), and lets a
 * comprehension range over 100,000 elements, or 300 × 300 nested. Deterministic: it depends on the
 * data, never on time.
 */
export const COST_LIMIT = 100_000;

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
  return env;
})();

/** The cel-js AST node with the fields its type checker adds (not in its .d.ts). */
type Node = ASTNode & {
  handle?: (...args: unknown[]) => unknown;
  meta?: { alternate?: Node; macro?: { args?: unknown } };
};

// ---------------------------------------------------------------------------------------------------
// The runtime cost budget: evaluation is synchronous, so one counter serves every expression.

let budget = 0;

class CostLimitExceeded extends Error {}

function charge(units: number): void {
  budget -= units;
  if (budget < 0) throw new CostLimitExceeded(`exceeds the cost limit (${COST_LIMIT} units)`);
}

function sizeOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  if (typeof value === 'string') return 0;
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value))
    return Object.keys(value).length;
  return 0;
}

/** Wraps the checked AST's handlers so that the work they do is charged to the budget. */
function instrument(node: Node): void {
  const original = node.handle;
  if (!original) return;
  if (node.op === ('comprehension' as string)) {
    // Fixed arity (the library's): a rest parameter would allocate on every call.
    node.handle = (items: unknown, args: unknown, evaluator: unknown, context: unknown) => {
      charge(sizeOf(items));
      return original(items, args, evaluator, context);
    };
  } else if (node.op === '+' || node.op === 'in' || node.op === '==' || node.op === '!=') {
    const strings = node.op === '+';
    node.handle = (left: unknown, right: unknown, ast: unknown, evaluator: unknown) => {
      if (typeof left === 'object' && left !== null) charge(sizeOf(left));
      if (typeof right === 'object' && right !== null) charge(sizeOf(right));
      if (strings && typeof left === 'string' && typeof right === 'string') {
        charge(Math.ceil((left.length + right.length) / 64));
      }
      return original(left, right, ast, evaluator);
    };
  }
}

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
  // The checker set the handlers the evaluation calls: wrap them now, once.
  for (const node of found.nodes) instrument(node);

  const evaluateBool = (variables: ExpressionVariables): EvaluationResult<'bool'> => {
    const value = run(program, source, variables);
    if (typeof value === 'boolean') return { ok: true, value };
    if (value instanceof Failure) return { ok: false, error: value.message };
    return { ok: false, error: `\`${source}\`: gave ${describe(value)}; \`when:\` must give a boolean` };
  };
  const evaluateMap = (variables: ExpressionVariables): EvaluationResult<'map'> => {
    const value = run(program, source, variables);
    if (value instanceof Failure) return { ok: false, error: value.message };
    if (!isMap(value)) {
      return { ok: false, error: `\`${source}\`: gave ${describe(value)}; \`input:\` must give a map` };
    }
    try {
      return { ok: true, value: toJson(value, '') as JsonObject };
    } catch (error) {
      return { ok: false, error: `\`${source}\`: ${(error as Error).message}` };
    }
  };
  const expression: CompiledExpression<K> = {
    source,
    kind,
    uses: found.uses,
    evaluate: (kind === 'bool' ? evaluateBool : evaluateMap) as CompiledExpression<K>['evaluate'],
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
  budget = COST_LIMIT;
  let value: unknown;
  try {
    value = program(variables as unknown as Record<string, unknown>);
  } catch (error) {
    return new Failure(`\`${source}\`: ${runtimeMessage(error)}`);
  }
  // `||`, `&&`, `exists` and `all` absorb errors in one branch when the other decides: the limit
  // holds all the same.
  if (budget < 0) return new Failure(`\`${source}\`: exceeds the cost limit (${COST_LIMIT} units)`);
  return value;
}

function runtimeMessage(error: unknown): string {
  if (budget < 0 || error instanceof CostLimitExceeded) return `exceeds the cost limit (${COST_LIMIT} units)`;
  const message = summary(error);
  if (message === 'Unknown variable: parent') return '`parent` is only set for a fan-out child';
  return message;
}

function kindError(kind: ExpressionKind, type: string): string | undefined {
  if (type === 'dyn') return undefined;
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
    message = `unknown variable \`${name}\` (expressions see ${VARIABLES.join(', ')})`;
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

// ---------------------------------------------------------------------------------------------------
// Values back to JSON

function isMap(value: unknown): value is Map<unknown, unknown> | Record<string, unknown> {
  return value instanceof Map || isPlainObject(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a bool';
  if (Array.isArray(value)) return 'a list';
  if (isMap(value)) return 'a map';
  if (value instanceof Uint8Array) return 'bytes';
  if (value instanceof Date) return 'a timestamp';
  return `a ${(value as object).constructor?.name ?? 'value'}`;
}

const at = (path: string) => (path ? ` at ${path}` : '');

function toJson(value: unknown, path: string): Json {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`gave ${value}${at(path)}, which JSON cannot hold`);
      return value;
    case 'bigint':
      return safeInteger(value, path);
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((item, i) => toJson(item, `${path}[${i}]`));
      if (value instanceof Map) {
        const out: JsonObject = {};
        for (const [key, item] of value) {
          if (typeof key !== 'string')
            throw new Error(`gave a map key ${String(key)}${at(path)}; keys must be strings`);
          out[key] = toJson(item, `${path}.${key}`);
        }
        return out;
      }
      if (isPlainObject(value)) {
        const out: JsonObject = {};
        for (const key of Object.keys(value)) out[key] = toJson(value[key], path ? `${path}.${key}` : key);
        return out;
      }
      // cel-js's uint: a class holding a bigint.
      const primitive = (value as { valueOf(): unknown }).valueOf();
      if (typeof primitive === 'bigint' && (value as object).constructor?.name === 'UnsignedInt') {
        return safeInteger(primitive, path);
      }
      throw new Error(`gave ${describe(value)}${at(path)}, which is not JSON`);
    }
    default:
      throw new Error(`gave ${describe(value)}${at(path)}, which is not JSON`);
  }
}

function safeInteger(value: bigint, path: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new Error(`gave the integer ${value}${at(path)}, beyond what a JSON number holds exactly (±2^53)`);
  }
  return Number(value);
}
