import type { StepNode } from '../definition/compile.js';
import type {
  CompiledExpression,
  EvaluationResult,
  ExpressionKind,
  ExpressionVariables,
} from '../expressions/expression.js';
import { isJsonObject, type JsonObject, setOwn } from '../json.js';
import type { Draft } from './draft.js';
import { stepInput } from './inputs.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './message-size.js';

export type Evaluated<T> = { ok: true; value: T } | { ok: false; error: string };

/** A step's input could not be computed; `tooLarge`: it is over the request limit. */
export type InputError = { ok: false; error: string; tooLarge?: true };

/** Evaluates a step's `when:`; the merged input is what the expression sees as `input`. */
export function evaluateWhen(
  d: Draft,
  when: CompiledExpression<'bool'>,
  merged: JsonObject,
): Evaluated<boolean> {
  const result = when.evaluate(variablesFor(d, when, merged));
  return result.ok ? result : { ok: false, error: expressionError('when', when, result.error) };
}

/**
 * What a step is given: its `input:` mapping's value (else the merged input), over its `params`.
 * `recorded` when that differs from the merged input, so that the job keeps what was sent. A
 * mapping's value is copied out of CEL only up to the request limit: one over it is an error that
 * names the step and the limit.
 */
export function effectiveInput(
  d: Draft,
  node: StepNode,
  merged: JsonObject,
): { ok: true; value: JsonObject; recorded: boolean } | InputError {
  let value = merged;
  if (node.inputMap) {
    const maxBytes = d.context.maxRequestBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const mapped = node.inputMap.evaluate(variablesFor(d, node.inputMap, merged), maxBytes);
    if (!mapped.ok) {
      const error = expressionError('input', node.inputMap, mapped.error);
      return mapped.tooLarge
        ? { ok: false, error: `step "${node.name}": ${error} (the manager's maxReplyBytes)`, tooLarge: true }
        : { ok: false, error };
    }
    value = mapped.value;
  }
  if (node.params) value = withDefaults(node.params, value);
  return { ok: true, value, recorded: value !== merged };
}

/** The input a step started with: recorded when it differs from the merged input. */
export function startedInput(d: Draft, node: StepNode): JsonObject {
  return d.step(node.name).input ?? stepInput(d.job, node, d.graph);
}

function withDefaults(defaults: JsonObject, input: JsonObject): JsonObject {
  const body: JsonObject = {};
  for (const key of Object.keys(defaults)) setOwn(body, key, defaults[key] as JsonObject[string]);
  for (const key of Object.keys(input)) setOwn(body, key, input[key] as JsonObject[string]);
  return body;
}

/**
 * Evaluates one of a step's expressions other than `when:` and `input:` (`output:`, `fail.message`,
 * `sleep.until`, `repeat.until`) over the step's input and, where it has one, its output. The error
 * names the key.
 */
export function evaluateStepExpression<K extends ExpressionKind>(
  d: Draft,
  key: string,
  expression: CompiledExpression<K>,
  input: JsonObject,
  output?: JsonObject,
): { ok: true; value: EvaluationValue<K> } | { ok: false; error: string } {
  const variables = variablesFor(d, expression, input);
  if (output !== undefined) variables.output = output;
  const maxBytes = d.context.maxRequestBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const result = expression.evaluate(variables, maxBytes);
  if (!result.ok) return { ok: false, error: expressionError(key, expression, result.error) };
  return { ok: true, value: result.value as EvaluationValue<K> };
}

type EvaluationValue<K extends ExpressionKind> = Extract<EvaluationResult<K>, { ok: true }>['value'];

/** Builds only the variables the expression reads: `steps` costs a pass over the job's steps. */
function variablesFor(d: Draft, expression: CompiledExpression, input: JsonObject): ExpressionVariables {
  const variables = { input } as ExpressionVariables;
  const { uses } = expression;
  if (uses.has('job')) {
    const { id, workflow, version } = d.job;
    variables.job = { id, workflow, version, input: d.job.input };
  }
  if (uses.has('steps')) {
    const steps: Record<string, JsonObject> = {};
    for (const state of d.job.steps) {
      if (isJsonObject(state.output)) setOwn(steps, state.name, state.output);
    }
    variables.steps = steps;
  }
  const parent = d.job.parent;
  if (uses.has('parent') && parent) {
    variables.parent = {
      id: parent.id,
      step: parent.step,
      index: parent.index,
      input: d.job.parentInput ?? {},
    };
  }
  return variables;
}

function expressionError(key: string, expression: CompiledExpression, error: string): string {
  return `"${key}" expression ${JSON.stringify(expression.source)}: ${error}`;
}
