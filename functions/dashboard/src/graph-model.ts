import { type StepKind, stepKindOf } from '../../../engine/index.js';
import type {
  JobDocument,
  StepDefinition,
  StepStatus,
  TaskDefinition,
  WorkflowDefinition,
} from './api-types.js';

/** `call`: a `workflow:` step, which runs a job of another workflow. */
export type NodeKind = 'step' | 'fan-out' | 'signal' | 'call';

/** A box of the drawing: one step of the workflow or of one of its tasks. */
export interface GraphNode {
  /** Unique in the drawing: `step:<name>`, or `task:<task>:<name>` for a task's step. */
  id: string;
  /** The step's name. */
  step: string;
  kind: NodeKind;
  /** Short facts for the second line: its queue, its task, retries, timeout. */
  notes: string[];
  /** The cluster (a task) the node is drawn in. */
  cluster?: string;
  /** In a job's drawing: the step's state. */
  state?: StepStatus;
  attempts?: number;
  /** A fan-out step's children, once it has fanned out. */
  children?: { done: number; total: number; failed: number };
  /** The step's `when:` condition. */
  when?: string;
  /** `continueOnError: true`: its failure is handed on to its dependents. */
  continueOnError?: true;
  /** In a job's drawing: it failed, and its dependents went on with the error. */
  handled?: true;
  /** In a job's drawing, a `workflow:` step: the job its latest attempt runs. */
  job?: string;
  /**
   * In a job's drawing: it waits for someone (the job document's `waitingFor`): a signal step for
   * its signal, a step its worker suspended, a call whose job is paused. Drawn in the suspended colours.
   */
  awaiting?: 'signal' | 'suspended' | 'paused-call';
}

export interface GraphEdge {
  from: string;
  to: string;
  /**
   * `fan-out`: from a step to the first steps of the task it runs once per item (dashed); `error`: from a
   * `continueOnError` step to a dependent whose `when` tests for its error (the handler branch).
   */
  kind: 'depends' | 'fan-out' | 'error';
}

/** A task drawn as a box around its steps. */
export interface GraphCluster {
  id: string;
  label: string;
}

export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
  clusters: GraphCluster[];
}

const stepId = (name: string) => `step:${name}`;
const taskStepId = (task: string, name: string) => `task:${task}:${name}`;
const clusterId = (task: string) => `cluster:${task}`;

/** The drawing's names for the engine's step kinds (engine/definition/step-kind.ts decides the kind). */
const NODE_KINDS: Record<StepKind, NodeKind> = {
  worker: 'step',
  fanout: 'fan-out',
  call: 'call',
  signal: 'signal',
  // Steps that need no worker are drawn as steps; their notes say what they do.
  sleep: 'step',
  fail: 'step',
  pass: 'step',
};

function kindOf(step: StepDefinition): NodeKind {
  return NODE_KINDS[stepKindOf(step)];
}

/** "calls payment v3", or "calls payment (latest)" for a `workflow:` step that names no version. */
export function callLabel(step: Pick<StepDefinition, 'workflow' | 'version'>): string | undefined {
  if (!step.workflow) return undefined;
  return `calls ${step.workflow} ${step.version ? `v${step.version}` : '(latest)'}`;
}

/** A `when` that tests for a handed-on error (`has(input.error)`, not negated): a handler branch. */
export function handlesError(step: Pick<StepDefinition, 'when'>): boolean {
  return step.when !== undefined && /(?<!!\s*)\bhas\(\s*input\.error\s*\)/.test(step.when);
}

/** The facts worth a glance, shortest first. */
export function stepNotes(step: StepDefinition, tasks: readonly TaskDefinition[] = []): string[] {
  const notes: string[] = [];
  if (step.task) {
    const task = tasks.find((candidate) => candidate.name === step.task);
    notes.push(task ? `each of ${task.itemListKey} → ${task.name}` : `task ${step.task}`);
  }
  const kind = stepKindOf(step);
  if (kind === 'signal') notes.push('waits for a signal');
  else if (kind === 'call') notes.push(callLabel(step) as string);
  else if (kind === 'sleep')
    notes.push(typeof step.sleep === 'string' ? `sleeps ${step.sleep}` : `sleeps until ${step.sleep?.until}`);
  else if (kind === 'fail') notes.push('fails the job');
  else if (kind === 'pass') notes.push('passes its input on, reshaped');
  else if (kind === 'worker') notes.push(`queue ${step.queue ?? step.name}`);
  if (step.repeat) notes.push(`repeats until ${step.repeat.until} (at most ${step.repeat.max})`);
  if (step.otherwise) notes.push('otherwise');
  if (step.retries) notes.push(`retries ${step.retries}`);
  if (step.timeout) notes.push(`timeout ${step.timeout}`);
  if (step.join) notes.push(`join ${step.join}`);
  if (step.continueOnError) notes.push('continues on error');
  if (step.when) notes.push(`when ${step.when}`);
  return notes;
}

function scopeNodes(
  steps: readonly StepDefinition[],
  id: (name: string) => string,
  tasks: readonly TaskDefinition[],
  cluster?: string,
): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const names = new Set(steps.map((step) => step.name));
  const nodes = steps.map((step) => {
    const node: GraphNode = {
      id: id(step.name),
      step: step.name,
      kind: kindOf(step),
      notes: stepNotes(step, tasks),
      ...(cluster ? { cluster } : {}),
    };
    if (step.when) node.when = step.when;
    if (step.continueOnError) node.continueOnError = true;
    return node;
  });
  const continuing = new Set(steps.filter((step) => step.continueOnError).map((step) => step.name));
  const edges: GraphEdge[] = [];
  for (const step of steps) {
    for (const dependency of step.depends ?? []) {
      if (!names.has(dependency)) continue;
      const kind = continuing.has(dependency) && handlesError(step) ? 'error' : 'depends';
      edges.push({ from: id(dependency), to: id(step.name), kind });
    }
  }
  return { nodes, edges };
}

/** A workflow's DAG with its tasks: each task a cluster, reached from its fan-out steps by dashed edges. */
export function workflowGraph(workflow: WorkflowDefinition): GraphModel {
  const tasks = workflow.tasks ?? [];
  const top = scopeNodes(workflow.steps, stepId, tasks);
  const model: GraphModel = { nodes: [...top.nodes], edges: [...top.edges], clusters: [] };
  for (const task of tasks) {
    const cluster = clusterId(task.name);
    const concurrency = task.concurrency ? `, ${task.concurrency} at a time` : '';
    model.clusters.push({
      id: cluster,
      label: `task ${task.name}: once per ${task.itemKey ?? itemKeyOf(task)}${concurrency}`,
    });
    const inner = scopeNodes(task.steps, (name) => taskStepId(task.name, name), tasks, cluster);
    model.nodes.push(...inner.nodes);
    model.edges.push(...inner.edges);
  }
  const owners = [
    { steps: workflow.steps, id: stepId },
    ...tasks.map((task) => ({ steps: task.steps, id: (name: string) => taskStepId(task.name, name) })),
  ];
  for (const owner of owners) {
    for (const step of owner.steps) {
      const task = tasks.find((candidate) => candidate.name === step.task);
      if (!task) continue;
      for (const first of task.steps.filter((inner) => !inner.depends?.length)) {
        model.edges.push({
          from: owner.id(step.name),
          to: taskStepId(task.name, first.name),
          kind: 'fan-out',
        });
      }
    }
  }
  return model;
}

/** workflows.md: the item key defaults to the list key minus one trailing `s`. */
function itemKeyOf(task: TaskDefinition): string {
  return task.itemListKey.endsWith('s') ? task.itemListKey.slice(0, -1) : task.itemListKey;
}

/** The steps a job runs: the workflow's, or for a fan-out child its task's (the job document names it). */
export function jobSteps(
  workflow: WorkflowDefinition,
  job: Pick<JobDocument, 'parent' | 'steps'> & { task?: string | null },
): { steps: StepDefinition[]; task?: TaskDefinition } {
  const named = job.task
    ? (workflow.tasks ?? []).find((candidate) => candidate.name === job.task)
    : undefined;
  if (named) return { steps: named.steps, task: named };
  // Documents without a task field: find the task by the step names.
  const names = Object.keys(job.steps);
  const same = (steps: readonly StepDefinition[]) =>
    steps.length === names.length && steps.every((step) => names.includes(step.name));
  if (job.parent === null && same(workflow.steps)) return { steps: workflow.steps };
  const task = (workflow.tasks ?? []).find((candidate) => same(candidate.steps));
  if (task) return { steps: task.steps, task };
  if (same(workflow.steps)) return { steps: workflow.steps };
  // The definition does not match (it should): draw the steps the job has, without edges.
  return { steps: names.map((name) => ({ name })) };
}

/** A job's DAG: its own steps (a child job: its task's), each with its state and fan-out counts. */
export function jobGraph(
  workflow: WorkflowDefinition,
  job: Pick<JobDocument, 'parent' | 'steps' | 'waitingFor'> & { task?: string | null },
): GraphModel {
  const { steps } = jobSteps(workflow, job);
  const { nodes, edges } = scopeNodes(steps, stepId, workflow.tasks ?? []);
  for (const node of nodes) {
    const view = job.steps[node.step];
    if (!view) continue;
    node.state = view.status;
    node.attempts = view.attempt;
    const wait = job.waitingFor?.find((candidate) => candidate.step === node.step);
    if (wait) node.awaiting = wait.kind;
    if (view.handled) node.handled = true;
    if (view.job) node.job = view.job;
    if (view.children !== undefined) {
      node.children = {
        done: view.childrenDone ?? 0,
        total: view.children,
        failed: view.childrenFailed ?? 0,
      };
    }
  }
  return { nodes, edges, clusters: [] };
}
