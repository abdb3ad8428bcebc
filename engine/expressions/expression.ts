import type { Json, JsonObject } from '../json.js';

/** The variables an expression sees (workflows.md, "Expressions"). */
export interface ExpressionVariables {
  /** The step's input as the merge rules compute it (before `input:` mapping). */
  input: JsonObject;
  job: { id: string; workflow: string; version: number; input: JsonObject };
  /** Output of each step of this job that has completed so far. */
  steps: Record<string, JsonObject>;
  /** For a fan-out child only. */
  parent?: { id: string; step: string; index: number; input: JsonObject };
  /** In `output:` and `repeat.until` only: what the step completed with (a worker's reply). */
  output?: JsonObject;
}

export type VariableName = keyof ExpressionVariables;

/**
 * What an expression must give: a boolean (`when:`), a map with string keys (`input:`, `output:`),
 * text (`fail.message`) or a point in time (`sleep.until`: a timestamp, or text in RFC 3339), given
 * as milliseconds since the epoch.
 */
export type ExpressionKind = 'bool' | 'map' | 'string' | 'time';

type ValueOf<K extends ExpressionKind> = K extends 'bool'
  ? boolean
  : K extends 'string'
    ? string
    : K extends 'time'
      ? number
      : JsonObject;

export type EvaluationResult<K extends ExpressionKind> =
  | { ok: true; value: ValueOf<K> }
  /** `tooLarge`: an `input:` value larger, as JSON, than the request limit. */
  | { ok: false; error: string; tooLarge?: true };

/** An expression parsed and checked once per definition version, evaluated per step. */
export interface CompiledExpression<K extends ExpressionKind = ExpressionKind> {
  readonly source: string;
  readonly kind: K;
  /** The variables it reads: the engine builds only those (`steps` costs O(steps) to build). */
  readonly uses: ReadonlySet<VariableName>;
  /**
   * `maxBytes`: the most bytes of JSON an `input:` value may have (the request limit); the copy
   * out of CEL stops there. @default 1 MiB
   */
  evaluate(variables: ExpressionVariables, maxBytes?: number): EvaluationResult<K>;
}

/** Where in the expression a syntax or type error is (1-based). */
export interface ExpressionPosition {
  line: number;
  column: number;
}

export type CompileResult<K extends ExpressionKind> =
  | { ok: true; expression: CompiledExpression<K> }
  | { ok: false; error: string; position?: ExpressionPosition };

export type { Json };
