import { compileExpression } from '../expressions/compile.js';
import type { CompiledExpression, ExpressionKind } from '../expressions/expression.js';
import { DEFAULT_JOIN, type JoinRule } from '../job/join.js';
import type { RetryPolicy } from '../job/retry-policy.js';
import type { JsonObject } from '../json.js';
import { parseDuration } from './duration.js';
import { defaultItemKey } from './item-key.js';
import type { NotifyTarget } from './notify.js';
import { type CompiledSearchAttribute, compileSearchAttributes } from './search-attributes.js';
import { type SecretRef, secretRefsOf } from './secrets.js';
import { siblingsOf } from './siblings.js';
import { type StepKind, stepKindOf } from './step-kind.js';
import type { StepDefinition, WorkflowDefinition } from './types.js';

/** A step as the engine runs it: defaults filled in, durations in milliseconds. */
export interface StepNode {
  name: string;
  /** Position in its workflow or task, for stable ordering. */
  index: number;
  queue: string;
  depends: readonly string[];
  /** The positions of `depends` in the graph, for cheap readiness checks. */
  dependsIndex: readonly number[];
  /** What the step waits for among its dependencies (engine/job/join.ts). */
  join: JoinRule;
  /** Steps that depend on this one, in declaration order. */
  dependents: readonly string[];
  kind: StepKind;
  task?: FanOutTask;
  /** `workflow:` steps: the workflow (and version) each attempt runs a job of. */
  call?: { workflow: string; version?: number };
  timeoutMs?: number;
  retries: number;
  retryDelayMs?: number;
  /** How failed attempts are retried: delays, backoff, jitter, which failures (engine/job/retry-policy.ts). */
  retryPolicy: RetryPolicy;
  /** `when:`: false skips the step. */
  when?: CompiledExpression<'bool'>;
  /** `input:`: the request body instead of the merged input. */
  inputMap?: CompiledExpression<'map'>;
  /** `output:`: what the step completes with, from its `output` and `input`. */
  outputMap?: CompiledExpression<'map'>;
  /** `repeat:`: run again until the condition holds, at most `max` times. */
  repeat?: { until: CompiledExpression<'bool'>; max: number; delayMs?: number };
  /** `sleep:` steps: how long, or until when. */
  sleep?: { ms: number } | { until: CompiledExpression<'time'> };
  /** `fail:` steps: the reason the step fails with. */
  failMessage?: CompiledExpression<'string'>;
  /** `otherwise: true`: the step's `when` is that none of its siblings' held. */
  otherwise?: true;
  /** The step's `params` over the workflow's: defaults under the input. */
  params?: JsonObject;
  /** The `{ secret: NAME }` values of `params`: resolved only as a request is sent. */
  secrets?: readonly SecretRef[];
  /** `continueOnError: true`: failing for good hands `{"error": …}` on instead of failing the job. */
  continueOnError: boolean;
}

export interface FanOutTask {
  name: string;
  itemListKey: string;
  itemKey: string;
  /** Children in flight at once; `Infinity` when the task sets no limit. */
  concurrency: number;
}

/** The steps of a workflow, or of one of its tasks: the DAG one job runs. */
export interface Graph {
  /** `null` for the workflow's own steps, else the task's name. */
  task: string | null;
  steps: readonly StepNode[];
  byName: ReadonlyMap<string, StepNode>;
  /** Steps nobody depends on, in declaration order: their outputs make the job's result. */
  terminals: readonly string[];
  /** Some step's expression reads `parent`: its children are created with their parent's input. */
  usesParent: boolean;
}

export interface CompiledWorkflow {
  name: string;
  version: number;
  definition: WorkflowDefinition;
  vhosts: readonly string[];
  timeoutMs?: number;
  onFailure?: string;
  main: Graph;
  tasks: ReadonlyMap<string, Graph>;
  /** `searchAttributes:`, evaluated at the start of each top-level job (engine/job/search-attributes.ts). */
  searchAttributes?: readonly CompiledSearchAttribute[];
  /** `notify:` (absent: the host's default applies; empty: none). */
  notify?: readonly NotifyTarget[];
}

/** Turns a validated definition into the graphs the engine runs. */
export function compileWorkflow(definition: WorkflowDefinition, version: number): CompiledWorkflow {
  const taskDefinitions = new Map((definition.tasks ?? []).map((task) => [task.name, task]));
  const fanOutTask = (name: string): FanOutTask => {
    const task = taskDefinitions.get(name);
    if (!task) throw new Error(`workflow ${definition.name}: unknown task ${name}`);
    return {
      name,
      itemListKey: task.itemListKey,
      itemKey: task.itemKey ?? defaultItemKey(task.itemListKey),
      concurrency: task.concurrency ?? Number.POSITIVE_INFINITY,
    };
  };
  const build = (task: string | null, steps: readonly StepDefinition[]): Graph => {
    const positions = new Map(steps.map((step, index) => [step.name, index]));
    const nodes: StepNode[] = steps.map((step, index) => {
      const node: StepNode = {
        name: step.name,
        index,
        queue: step.queue ?? step.name,
        depends: step.depends ?? [],
        dependsIndex: (step.depends ?? []).map((name) => positions.get(name) as number),
        join: step.join ?? DEFAULT_JOIN,
        dependents: steps.filter((other) => other.depends?.includes(step.name)).map((other) => other.name),
        kind: stepKindOf(step),
        retries: step.retries ?? 0,
        retryPolicy: retryPolicyOf(step),
        continueOnError: step.continueOnError === true,
      };
      if (step.when) node.when = expression(step.when, 'bool');
      if (step.otherwise) {
        const conditions = siblingsOf(step, steps).flatMap((sibling) =>
          sibling.when ? [`(${sibling.when})`] : [],
        );
        node.when = expression(`!(${conditions.join(' || ')})`, 'bool');
        node.otherwise = true;
      }
      if (step.output) node.outputMap = expression(step.output, 'map');
      if (typeof step.sleep === 'string') node.sleep = { ms: parseDuration(step.sleep) as number };
      else if (step.sleep) node.sleep = { until: expression(step.sleep.until, 'time') };
      if (step.fail) node.failMessage = expression(step.fail.message, 'string');
      if (step.repeat) {
        node.repeat = { until: expression(step.repeat.until, 'bool'), max: step.repeat.max };
        if (step.repeat.delay) node.repeat.delayMs = parseDuration(step.repeat.delay);
      }
      if (step.input) node.inputMap = expression(step.input, 'map');
      if (definition.params || step.params) node.params = { ...definition.params, ...step.params };
      const secrets = node.params && secretRefsOf(node.params);
      if (secrets?.length) node.secrets = secrets;
      if (step.task) node.task = fanOutTask(step.task);
      if (step.workflow)
        node.call = step.version
          ? { workflow: step.workflow, version: step.version }
          : { workflow: step.workflow };
      if (step.timeout) node.timeoutMs = parseDuration(step.timeout);
      if (step.retryDelay) node.retryDelayMs = parseDuration(step.retryDelay);
      return node;
    });
    return {
      task,
      steps: nodes,
      byName: new Map(nodes.map((node) => [node.name, node])),
      terminals: nodes.filter((node) => node.dependents.length === 0).map((node) => node.name),
      usesParent: nodes.some((node) =>
        [
          node.when,
          node.inputMap,
          node.outputMap,
          node.failMessage,
          node.sleep && 'until' in node.sleep ? node.sleep.until : undefined,
        ].some((compiled) => compiled?.uses.has('parent')),
      ),
    };
  };
  const compiled: CompiledWorkflow = {
    name: definition.name,
    version,
    definition,
    vhosts: definition.vhosts ?? [],
    main: build(null, definition.steps),
    tasks: new Map((definition.tasks ?? []).map((task) => [task.name, build(task.name, task.steps)])),
  };
  if (definition.timeout) compiled.timeoutMs = parseDuration(definition.timeout);
  if (definition.onFailure) compiled.onFailure = definition.onFailure;
  if (definition.searchAttributes)
    compiled.searchAttributes = compileSearchAttributes(definition.searchAttributes);
  if (definition.notify) compiled.notify = definition.notify;
  return compiled;
}

function expression<K extends ExpressionKind>(source: string, kind: K): CompiledExpression<K> {
  const compiled = compileExpression(source, kind);
  // Definitions are validated before they are compiled, expressions included.
  if (!compiled.ok) throw new Error(`expression ${JSON.stringify(source)}: ${compiled.error}`);
  return compiled.expression;
}

function retryPolicyOf(step: StepDefinition): RetryPolicy {
  const policy: RetryPolicy = { backoffRate: step.backoffRate ?? 2, jitter: step.jitter ?? 'none' };
  if (step.retryDelay) policy.delayMs = parseDuration(step.retryDelay);
  if (step.maxRetryDelay) policy.maxDelayMs = parseDuration(step.maxRetryDelay);
  if (step.retryOn) policy.retryOn = step.retryOn;
  return policy;
}

/** The graph a job runs: the workflow's own, or the task's for a fan-out child. */
export function graphOf(workflow: CompiledWorkflow, task: string | null): Graph {
  if (task === null) return workflow.main;
  const graph = workflow.tasks.get(task);
  if (!graph) throw new Error(`workflow ${workflow.name} v${workflow.version} has no task ${task}`);
  return graph;
}
