import { Ajv, type ValidateFunction } from 'ajv';
import type { CompiledWorkflow, JsonObject } from '../../engine/index.js';

/**
 * The JSON Schemas of signal steps (`signal: {schema: …}`), compiled once each by Ajv: a signal's body
 * is checked against its step's before it is taken or kept.
 */
export class SignalSchemas {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  /** By the schema object the cached definition holds: compiled once per registered version. */
  private readonly compiled = new WeakMap<JsonObject, ValidateFunction>();

  /** The step's schema, when it is a signal step with one (`task`: a fan-out child's task). */
  schemaOf(workflow: CompiledWorkflow, task: string | null, step: string): JsonObject | undefined {
    const { definition } = workflow;
    const steps = task === null ? definition.steps : definition.tasks?.find((t) => t.name === task)?.steps;
    return steps?.find((s) => s.name === step)?.signal?.schema;
  }

  /** Why `body` does not meet `schema` (each problem, with where in the body), or undefined. */
  problem(schema: JsonObject, body: JsonObject): string | undefined {
    const validate = this.compile(schema);
    if (validate(body)) return undefined;
    return (validate.errors ?? [])
      .map((error) => {
        const where = error.instancePath ? `${error.instancePath.slice(1).replaceAll('/', '.')} ` : '';
        const allowed =
          error.keyword === 'enum'
            ? ` (${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`
            : '';
        return `${where}${error.message ?? 'is not valid'}${allowed}`;
      })
      .join('; ');
  }

  /** Why `schema` is not a JSON Schema Ajv can compile, or undefined: checked when a workflow is registered. */
  schemaProblem(schema: JsonObject): string | undefined {
    try {
      this.compile(schema);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  private compile(schema: JsonObject): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** Every `signal.schema` of a workflow's steps and its tasks' steps, by step. */
export function signalSchemasOf(
  workflow: CompiledWorkflow['definition'],
): { step: string; schema: JsonObject }[] {
  const steps = [...workflow.steps, ...(workflow.tasks ?? []).flatMap((task) => task.steps)];
  return steps.flatMap((step) => (step.signal ? [{ step: step.name, schema: step.signal.schema }] : []));
}
