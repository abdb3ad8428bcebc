import {
  type CompiledWorkflow,
  graphOf,
  hopTarget,
  type JobStore,
  parseStepPath,
  resolveInCallerNamespace,
  type StepNode,
  type StepPathHop,
  type WorkflowRegistry,
} from '../../engine/index.js';
import { ManagerError } from './errors.js';
import type { WorkflowCache } from './workflow-cache.js';

/**
 * Where a signal goes: the job that takes or keeps it, under `step` (a step of that job, or a path
 * through a `workflow:` step of it that has not started its called job yet), and the step it is
 * for in the end (its workflow, task and name), whose `signal.schema` applies.
 */
export interface SignalTarget {
  jobId: string;
  step: string;
  for: { workflow: CompiledWorkflow; task: string | null; step: string };
}

/**
 * The job and step a signal's path names (`approve`, `publish/approve`, `review[2]/approve`): each hop
 * read from the store, the engine saying where it leads (engine/job/step-path.ts). A hop through a
 * `workflow:` step that has not started its called job stops there: that job keeps the signal under
 * the rest of the path, checked now against the called workflows' definitions.
 */
export async function signalTargetOf(
  store: JobStore & Pick<WorkflowRegistry, 'getWorkflow'>,
  workflows: WorkflowCache,
  id: string,
  path: string,
): Promise<SignalTarget> {
  const parsed = parseStepPath(path);
  if ('error' in parsed) throw new ManagerError('invalid', parsed.error);
  let jobId = id;
  for (const [n, hop] of parsed.hops.entries()) {
    const job = await store.getJob(jobId);
    const workflow = job && (await workflows.get(job.workflow, job.version));
    if (!job || !workflow) throw new ManagerError('not_found', `no job ${jobId}`);
    const node = graphOf(workflow, job.task).byName.get(hop.step);
    const target = hopTarget(job, hop, node, node && job.steps.get(node.index));
    if (target.kind === 'refuse') throw new ManagerError(target.code, target.reason);
    if (target.kind === 'keep') {
      const rest = parsed.hops.slice(n + 1);
      const end = await calledStepOf(store, workflows, workflow, node as StepNode, rest, parsed.step);
      return { jobId, step: [...parsed.hops.slice(n).map(hopText), parsed.step].join('/'), for: end };
    }
    if (target.kind === 'job') {
      jobId = target.id;
      continue;
    }
    const page = await store.listChildren(job.id, target.step, { fromIndex: target.index, limit: 1 });
    const child = page.children[0];
    if (!child || child.parent?.index !== target.index)
      throw new ManagerError(
        'conflict',
        `child ${target.index} of step "${target.step}" of job ${job.id} does not exist yet`,
      );
    jobId = child.id;
  }
  const job = await store.getJob(jobId);
  const workflow = job && (await workflows.get(job.workflow, job.version));
  if (!job || !workflow) throw new ManagerError('not_found', `no job ${jobId}`);
  return { jobId, step: parsed.step, for: { workflow, task: job.task, step: parsed.step } };
}

const hopText = (hop: StepPathHop) => (hop.index === undefined ? hop.step : `${hop.step}[${hop.index}]`);

/**
 * The step a path names through calls not started yet, read from the workflows they will run: each
 * hop a `workflow:` step (a fan-out has no children before its job starts), the last a step that
 * takes a signal. A path that can never lead anywhere is refused now rather than kept.
 */
async function calledStepOf(
  store: Pick<WorkflowRegistry, 'getWorkflow'>,
  workflows: WorkflowCache,
  caller: CompiledWorkflow,
  call: StepNode,
  hops: readonly StepPathHop[],
  step: string,
): Promise<SignalTarget['for']> {
  let workflow = await calledWorkflowOf(store, workflows, caller, call);
  for (const hop of hops) {
    const node = graphOf(workflow, null).byName.get(hop.step);
    if (!node) throw new ManagerError('invalid', `workflow "${workflow.name}" has no step "${hop.step}"`);
    if (node.kind === 'fanout')
      throw new ManagerError(
        'conflict',
        `step "${hop.step}" of workflow "${workflow.name}" is a fan-out: its children do not exist before the call that runs it starts`,
      );
    if (node.kind !== 'call' || hop.index !== undefined)
      throw new ManagerError(
        'invalid',
        `step "${hop.step}" of workflow "${workflow.name}" is not a workflow: step: a path goes through workflow: steps and fan-outs only`,
      );
    workflow = await calledWorkflowOf(store, workflows, workflow, node);
  }
  const node = graphOf(workflow, null).byName.get(step);
  if (!node) throw new ManagerError('invalid', `workflow "${workflow.name}" has no step "${step}"`);
  if (node.kind !== 'signal' && node.kind !== 'worker')
    throw new ManagerError(
      'invalid',
      `step "${step}" of workflow "${workflow.name}" is a ${node.kind} step: only a signal step or a worker step takes a signal`,
    );
  return { workflow, task: null, step };
}

/** The workflow a `workflow:` step will call: the version it names, else the latest. */
async function calledWorkflowOf(
  store: Pick<WorkflowRegistry, 'getWorkflow'>,
  workflows: WorkflowCache,
  caller: CompiledWorkflow,
  call: StepNode,
): Promise<CompiledWorkflow> {
  const named = call.call as NonNullable<StepNode['call']>;
  const name = resolveInCallerNamespace(caller.name, named.workflow);
  const stored = await store.getWorkflow(name, named.version);
  const workflow = stored && (await workflows.get(stored.name, stored.version));
  if (!workflow)
    throw new ManagerError('invalid', `step "${call.name}" calls workflow "${name}", which does not exist`);
  return workflow;
}
