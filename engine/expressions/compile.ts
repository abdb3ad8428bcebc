import { Environment } from '@marcbachmann/cel-js';
import { isJsonObject, type Json, type JsonObject } from '../json.js';
import type {
  CompiledExpression,
  CompileResult,
  EvaluationResult,
  ExpressionKind,
  ExpressionVariables,
  VariableName,
} from './expression.js';

const VARIABLES: readonly VariableName[] = ['input', 'job', 'steps', 'parent'];

const environment = (() => {
  const env = new Environment({ homogeneousAggregateLiterals: false });
  for (const name of VARIABLES) env.registerVariable(name, 'map');
  return env;
})();

/** Parses and checks an expression; the result evaluates it as many times as needed. */
export function compileExpression<K extends ExpressionKind>(source: string, kind: K): CompileResult<K> {
  let program: ReturnType<typeof environment.parse>;
  try {
    program = environment.parse(source);
  } catch (error) {
    return { ok: false, error: firstLine(error) };
  }
  const uses = new Set(VARIABLES.filter((name) => new RegExp(`\\b${name}\\b`).test(source)));
  const expression: CompiledExpression<K> = {
    source,
    kind,
    uses,
    evaluate(variables: ExpressionVariables): EvaluationResult<K> {
      let value: unknown;
      try {
        value = program(variables as unknown as Record<string, unknown>);
      } catch (error) {
        return { ok: false, error: firstLine(error) };
      }
      const json = toJson(value);
      if (kind === 'bool') {
        if (typeof json !== 'boolean') return { ok: false, error: `gave ${typeof json}, not a boolean` };
        return { ok: true, value: json } as EvaluationResult<K>;
      }
      if (!isJsonObject(json)) return { ok: false, error: 'gave a value that is not a map' };
      return { ok: true, value: json as JsonObject } as EvaluationResult<K>;
    },
  };
  return { ok: true, expression };
}

function toJson(value: unknown): Json {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  }
  return value as Json;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;
}
