import { describeJsonType, isJsonObject, type Json, type JsonObject } from '../json.js';
import { closest } from './closest.js';
import { findCycles } from './cycles.js';
import { NAME_PATTERN } from './names.js';
import { namespaceProblem, queuePrefixProblem } from './namespace.js';
import { readNotify } from './notify.js';
import type { Path } from './parse-source.js';
import { amqpNameProblem, MAX_VHOSTS, stepQueueProblem } from './queue-name.js';
import {
  checkOtherwise,
  RETRY_POLICY_KEYS,
  readCall,
  readJoin,
  readNoWorkerKeys,
  readRetryPolicy,
  readSignalOptions,
} from './read-step-options.js';
import { checkKeys, readDuration, readExpression, readName, readParams, readString } from './read-values.js';
import { readSchedules } from './schedules.js';
import { searchAttributeProblems } from './search-attributes.js';
import { stepKindOf } from './step-kind.js';
import type { DefinitionError, StepDefinition, TaskDefinition, WorkflowDefinition } from './types.js';
import { definedOnly, type Report, type Scope } from './validation-report.js';

export const START = '__start__';
export const END = '__end__';

// The keys of each level. schema/workflows.schema.json describes each of them for editors (the YAML
// language server); test/engine/definition/workflow-schema.test.ts fails, saying where, until a key
// added here (or in schedules.ts) is described there too.
export const ROOT_KEYS = ['workflows', 'namespace', 'queuePrefix'];
export const WORKFLOW_KEYS = [
  'name',
  'description',
  'vhosts',
  'timeout',
  'params',
  'onFailure',
  'maxRunning',
  'steps',
  'tasks',
  'schedules',
  'searchAttributes',
  'notify',
];
export const STEP_KEYS = [
  'name',
  'description',
  'queue',
  'depends',
  'join',
  'task',
  'type',
  'timeout',
  'retries',
  'retryDelay',
  'maxRetryDelay',
  'backoffRate',
  'jitter',
  'retryOn',
  'when',
  'input',
  'params',
  'continueOnError',
  'workflow',
  'version',
  'signal',
  'output',
  'sleep',
  'fail',
  'otherwise',
  'repeat',
];
export const TASK_KEYS = ['name', 'description', 'itemListKey', 'itemKey', 'concurrency', 'steps'];
const MAX_RETRIES = 100;

export interface ValidateOptions {
  file?: string;
  lineOf?: (path: Path, key?: boolean) => number | undefined;
  /** Accept a single workflow without the `workflows:` list around it (the API's PUT does). */
  allowBare?: boolean;
  /** The manager's reply queue, which no step may use. @default 'workflow-manager' */
  replyQueue?: string;
}

export interface LoadResult {
  workflows: WorkflowDefinition[];
  errors: DefinitionError[];
  /** The file's top-level `namespace:`: where its workflows go (`default` when absent). */
  namespace?: string;
  /** The file's top-level `queuePrefix:`: put before each step queue name when registering. */
  queuePrefix?: string;
}

/** Every validation rule of the workflow format; the definitions come back normalised. */
export function validateDocument(document: Json | undefined, options: ValidateOptions = {}): LoadResult {
  const errors: DefinitionError[] = [];
  const report = (path: Path, scope: Scope, message: string, onKey = false): void => {
    errors.push({ file: options.file, line: options.lineOf?.(path, onKey), ...definedOnly(scope), message });
  };

  let root = document;
  let rootPath: Path = ['workflows'];
  if (isJsonObject(root) && !('workflows' in root) && options.allowBare && 'name' in root) {
    root = { workflows: [root] };
    rootPath = [];
  }
  if (!isJsonObject(root)) {
    report([], {}, `expected a document with a "workflows:" list, got ${describeJsonType(root)}`);
    return { workflows: [], errors };
  }
  if (!('workflows' in root) && ('name' in root || 'steps' in root)) {
    report(
      [],
      {},
      'expected a "workflows:" list; this looks like a single workflow: put it under "workflows:" as "- name: …"',
    );
    return { workflows: [], errors };
  }
  checkKeys(root, [], ROOT_KEYS, {}, 'document', report);
  const fileKeys = readFileKeys(root, report);
  const list = root.workflows;
  if (!Array.isArray(list) || list.length === 0) {
    report(['workflows'], {}, `"workflows" must be a non-empty list, got ${describeJsonType(list)}`);
    return { workflows: [], errors };
  }

  const workflows: WorkflowDefinition[] = [];
  const names = new Set<string>();
  list.forEach((raw, index) => {
    const path = rootPath.length ? [...rootPath, index] : [];
    const workflow = readWorkflow(raw, path, report, options.replyQueue);
    if (!workflow) return;
    if (names.has(workflow.name)) {
      report(
        [...path, 'name'],
        { workflow: workflow.name },
        'a workflow with this name is already defined in this file',
      );
    }
    names.add(workflow.name);
    workflows.push(workflow);
  });
  return errors.length ? { workflows: [], errors } : { workflows, errors, ...fileKeys };
}

/** A file's top-level `namespace:` and `queuePrefix:` (see namespace.ts). */
function readFileKeys(root: JsonObject, report: Report): { namespace?: string; queuePrefix?: string } {
  const keys: { namespace?: string; queuePrefix?: string } = {};
  if (root.namespace !== undefined) {
    const problem = namespaceProblem(root.namespace);
    if (problem) report(['namespace'], {}, `"namespace": ${problem}`);
    else keys.namespace = root.namespace as string;
  }
  if (root.queuePrefix !== undefined) {
    const problem = queuePrefixProblem(root.queuePrefix);
    if (problem) report(['queuePrefix'], {}, `"queuePrefix": ${problem}`);
    else keys.queuePrefix = root.queuePrefix as string;
  }
  return keys;
}

function readWorkflow(
  raw: Json,
  path: Path,
  report: Report,
  replyQueue: string | undefined,
): WorkflowDefinition | undefined {
  if (!isJsonObject(raw)) {
    report(path, {}, `a workflow must be a mapping, got ${describeJsonType(raw)}`);
    return undefined;
  }
  const name = readName(raw, path, {}, 'workflow', report);
  const scope: Scope = { workflow: name ?? '?' };
  checkKeys(raw, path, WORKFLOW_KEYS, scope, 'workflow', report);

  const workflow: WorkflowDefinition = { name: name ?? '?', steps: [] };
  const description = readString(raw, 'description', path, scope, report);
  if (description !== undefined) workflow.description = description;
  if (raw.vhosts !== undefined && raw.vhosts !== null) {
    if (!Array.isArray(raw.vhosts) || raw.vhosts.some((v) => typeof v !== 'string' || v === '')) {
      report([...path, 'vhosts'], scope, '"vhosts" must be a list of virtual host names, e.g. [ "/" ]');
    } else if (raw.vhosts.length) {
      const vhosts = [...new Set(raw.vhosts as string[])];
      const problems = vhosts.map((vhost) => amqpNameProblem('vhost', vhost)).filter((p) => p !== undefined);
      for (const problem of problems) report([...path, 'vhosts'], scope, problem);
      if (vhosts.length > MAX_VHOSTS) {
        report(
          [...path, 'vhosts'],
          scope,
          `"vhosts" lists ${vhosts.length} virtual hosts; a workflow may run on at most ${MAX_VHOSTS}`,
        );
      }
      workflow.vhosts = vhosts;
    }
  }
  const timeout = readDuration(raw, 'timeout', path, scope, report);
  if (timeout !== undefined) workflow.timeout = timeout;
  const params = readParams(raw, path, scope, report);
  if (params !== undefined) workflow.params = params;
  const onFailure = readString(raw, 'onFailure', path, scope, report);
  if (onFailure !== undefined) {
    if (!NAME_PATTERN.test(onFailure)) {
      report(
        [...path, 'onFailure'],
        scope,
        `"onFailure" must name a workflow, got ${JSON.stringify(onFailure)}`,
      );
    } else if (onFailure === name) {
      report(
        [...path, 'onFailure'],
        scope,
        '"onFailure" names the workflow itself: a failing handler would start itself again and again',
      );
    } else {
      workflow.onFailure = onFailure;
    }
  }
  if (raw.maxRunning !== undefined && raw.maxRunning !== null) {
    const maxRunning = raw.maxRunning;
    if (typeof maxRunning !== 'number' || !Number.isInteger(maxRunning) || maxRunning < 1) {
      report(
        [...path, 'maxRunning'],
        scope,
        `"maxRunning" must be a whole number of at least 1 (the most jobs running at once), got ${JSON.stringify(maxRunning)}`,
      );
    } else {
      workflow.maxRunning = maxRunning;
    }
  }
  if (raw.searchAttributes !== undefined && raw.searchAttributes !== null) {
    const problems = searchAttributeProblems(raw.searchAttributes);
    for (const problem of problems) {
      const at = problem.key === undefined ? [] : [problem.key];
      report([...path, 'searchAttributes', ...at], scope, problem.message);
    }
    if (!problems.length) workflow.searchAttributes = raw.searchAttributes as Record<string, string>;
  }
  if (raw.notify !== undefined && raw.notify !== null) {
    const notify = readNotify(raw.notify);
    if (notify.ok) workflow.notify = notify.targets;
    else
      for (const problem of notify.problems)
        report([...path, 'notify', ...problem.at], scope, problem.message);
  }

  const tasksRaw = raw.tasks;
  const tasks: TaskDefinition[] = [];
  if (tasksRaw !== undefined && tasksRaw !== null) {
    if (!Array.isArray(tasksRaw)) {
      report([...path, 'tasks'], scope, `"tasks" must be a list, got ${describeJsonType(tasksRaw)}`);
    } else {
      const taskNames = new Set<string>();
      tasksRaw.forEach((taskRaw, index) => {
        const task = readTask(taskRaw, [...path, 'tasks', index], scope, report, replyQueue);
        if (!task) return;
        if (taskNames.has(task.name)) {
          report(
            [...path, 'tasks', index, 'name'],
            { ...scope, task: task.name },
            'a task with this name is already defined in this workflow',
          );
        }
        taskNames.add(task.name);
        tasks.push(task);
      });
    }
  }
  if (tasks.length) workflow.tasks = tasks;

  const steps = readSteps(raw, path, scope, report, 'workflow', replyQueue);
  if (steps) workflow.steps = steps;
  const schedules = readSchedules(raw.schedules, [...path, 'schedules'], (at, message, onKey) =>
    report(at, scope, message, onKey),
  );
  if (schedules?.length) workflow.schedules = schedules;

  checkTaskReferences(workflow, path, report);
  return name === undefined ? undefined : workflow;
}

function readTask(
  raw: Json,
  path: Path,
  outer: Scope,
  report: Report,
  replyQueue: string | undefined,
): TaskDefinition | undefined {
  if (!isJsonObject(raw)) {
    report(path, outer, `a task must be a mapping, got ${describeJsonType(raw)}`);
    return undefined;
  }
  const name = readName(raw, path, outer, 'task', report);
  const scope: Scope = { ...outer, task: name ?? '?' };
  checkKeys(raw, path, TASK_KEYS, scope, 'task', report);
  const task: TaskDefinition = { name: name ?? '?', itemListKey: '', steps: [] };
  const description = readString(raw, 'description', path, scope, report);
  if (description !== undefined) task.description = description;
  const itemListKey = readString(raw, 'itemListKey', path, scope, report);
  if (itemListKey === undefined || itemListKey === '') {
    if (raw.itemListKey === undefined) {
      report(path, scope, 'a task needs "itemListKey": the input key holding the list to fan out over');
    } else if (itemListKey === '') {
      report([...path, 'itemListKey'], scope, '"itemListKey" must not be empty');
    }
  } else {
    task.itemListKey = itemListKey;
  }
  const itemKey = readString(raw, 'itemKey', path, scope, report);
  if (itemKey === '') report([...path, 'itemKey'], scope, '"itemKey" must not be empty');
  else if (itemKey !== undefined) task.itemKey = itemKey;
  if (raw.concurrency !== undefined && raw.concurrency !== null) {
    const concurrency = raw.concurrency;
    if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1) {
      report(
        [...path, 'concurrency'],
        scope,
        `"concurrency" must be a whole number of at least 1, got ${JSON.stringify(concurrency)}`,
      );
    } else {
      task.concurrency = concurrency;
    }
  }
  const steps = readSteps(raw, path, scope, report, 'task', replyQueue);
  if (steps) task.steps = steps;
  return name === undefined ? undefined : task;
}

function readSteps(
  raw: JsonObject,
  path: Path,
  scope: Scope,
  report: Report,
  owner: string,
  replyQueue: string | undefined,
): StepDefinition[] | undefined {
  const stepsRaw = raw.steps;
  if (!Array.isArray(stepsRaw) || stepsRaw.length === 0) {
    report(
      stepsRaw === undefined ? path : [...path, 'steps'],
      scope,
      `a ${owner} needs at least one step ("steps:" list)`,
    );
    return undefined;
  }
  const steps: StepDefinition[] = [];
  const lines = new Map<StepDefinition, number>();
  const seen = new Set<string>();
  stepsRaw.forEach((stepRaw, index) => {
    const stepPath = [...path, 'steps', index];
    const step = readStep(stepRaw, stepPath, scope, report, replyQueue);
    if (!step) return;
    if (seen.has(step.name)) {
      report(
        [...stepPath, 'name'],
        { ...scope, step: step.name },
        `a step with this name is already defined in this ${owner}`,
      );
    }
    seen.add(step.name);
    lines.set(step, index);
    steps.push(step);
  });

  for (const step of steps) {
    const stepPath = [...path, 'steps', lines.get(step) as number];
    for (const dependency of step.depends ?? []) {
      if (!seen.has(dependency)) {
        const suggestion = closest(dependency, [...seen]);
        report(
          [...stepPath, 'depends'],
          { ...scope, step: step.name },
          `depends on "${dependency}", which is not a step of this ${owner}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
        );
      }
    }
  }
  checkOtherwise(steps, lines, path, scope, report);
  const byName = new Map(steps.map((step) => [step.name, step]));
  for (const cycle of findCycles(
    steps.map((step) => step.name),
    (name) => byName.get(name)?.depends ?? [],
  )) {
    const first = byName.get(cycle[0] as string) as StepDefinition;
    report(
      [...path, 'steps', lines.get(first) as number, 'depends'],
      { ...scope, step: first.name },
      `dependency cycle: ${[...cycle].reverse().join(' -> ')}`,
    );
  }
  return steps;
}

function readStep(
  raw: Json,
  path: Path,
  outer: Scope,
  report: Report,
  replyQueue: string | undefined,
): StepDefinition | undefined {
  if (!isJsonObject(raw)) {
    report(path, outer, `a step must be a mapping with at least a "name", got ${describeJsonType(raw)}`);
    return undefined;
  }
  const name = readName(raw, path, outer, 'step', report);
  const scope: Scope = { ...outer, step: name ?? '?' };
  checkKeys(raw, path, STEP_KEYS, scope, 'step', report);
  if (name === START || name === END) {
    report([...path, 'name'], scope, `"${name}" is reserved: pick another step name`);
  }
  const step: StepDefinition = { name: name ?? '?' };
  const description = readString(raw, 'description', path, scope, report);
  if (description !== undefined) step.description = description;

  const queue = readString(raw, 'queue', path, scope, report);
  // A worker step with `output:` keeps its queue: without one, `output:` makes a pass step.
  if (queue !== undefined && (queue !== step.name || raw.output != null)) step.queue = queue;

  if (raw.depends !== undefined && raw.depends !== null) {
    if (!Array.isArray(raw.depends) || raw.depends.some((entry) => typeof entry !== 'string')) {
      report(
        [...path, 'depends'],
        scope,
        `"depends" must be a list of step names, e.g. [ a, b ]; got ${describeJsonType(raw.depends)}`,
      );
    } else {
      const listed = [...new Set(raw.depends as string[])];
      const depends = listed.filter((entry) => entry !== START);
      if (depends.includes(END)) report([...path, 'depends'], scope, `"${END}" cannot be depended on`);
      if (listed.includes(START) && depends.length) {
        report(
          [...path, 'depends'],
          scope,
          `"${START}" with other dependencies: a step either starts with the job ([ ${START} ], or no "depends") or waits for its dependencies; to run even when they are skipped, use "join: none_failed"`,
        );
      }
      const real = depends.filter((entry) => entry !== END);
      if (real.length) step.depends = real;
    }
  }

  readJoin(raw, step, path, scope, report);
  const task = readString(raw, 'task', path, scope, report);
  if (task !== undefined) step.task = task;
  readCall(raw, step, path, scope, report);

  if (raw.type !== undefined && raw.type !== null) {
    if (raw.type === 'signal') step.type = 'signal';
    else if (raw.type !== 'worker') {
      report(
        [...path, 'type'],
        scope,
        `"type" must be "signal" (or "worker", the default), got ${JSON.stringify(raw.type)}`,
      );
    }
  }

  readSignalOptions(raw, step, path, scope, report);

  const timeout = readDuration(raw, 'timeout', path, scope, report);
  if (timeout !== undefined) step.timeout = timeout;
  const retryDelay = readDuration(raw, 'retryDelay', path, scope, report);
  if (retryDelay !== undefined) step.retryDelay = retryDelay;
  if (raw.retries !== undefined && raw.retries !== null) {
    const retries = raw.retries;
    if (typeof retries !== 'number' || !Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) {
      report(
        [...path, 'retries'],
        scope,
        `"retries" must be a whole number from 0 to ${MAX_RETRIES}, got ${JSON.stringify(retries)}`,
      );
    } else if (retries > 0) {
      step.retries = retries;
    }
  }

  readRetryPolicy(raw, step, path, scope, report);
  const when = readExpression(raw, 'when', 'bool', path, scope, report);
  if (when !== undefined) step.when = when;
  const input = readExpression(raw, 'input', 'map', path, scope, report);
  if (input !== undefined) step.input = input;
  readNoWorkerKeys(raw, step, path, scope, report);
  const params = readParams(raw, path, scope, report);
  if (params !== undefined) step.params = params;
  if (raw.continueOnError !== undefined && raw.continueOnError !== null) {
    if (typeof raw.continueOnError !== 'boolean') {
      report(
        [...path, 'continueOnError'],
        scope,
        `"continueOnError" must be true or false, got ${JSON.stringify(raw.continueOnError)}`,
      );
    } else if (raw.continueOnError) {
      step.continueOnError = true;
    }
  }

  if (step.type === 'signal') {
    for (const key of ['retries', ...RETRY_POLICY_KEYS, 'queue', 'task'] as const) {
      if (raw[key] !== undefined) {
        report(
          [...path, key],
          scope,
          `"${key}" does not apply to a signal step: it is completed through the API, not by a worker`,
          true,
        );
      }
    }
  }
  if (name !== undefined && stepKindOf(step) === 'worker') {
    // Without "queue", the step name is the queue (then checked here as a queue too).
    const problem = stepQueueProblem(queue ?? name, replyQueue);
    if (problem) report(queue === undefined ? [...path, 'name'] : [...path, 'queue'], scope, problem);
  }
  if (step.task !== undefined) {
    for (const key of ['timeout', 'retries', ...RETRY_POLICY_KEYS, 'queue'] as const) {
      if (raw[key] !== undefined) {
        report(
          [...path, key],
          scope,
          `"${key}" does not apply to a fan-out step (task "${step.task}"): set it on the task's steps instead`,
          true,
        );
      }
    }
  }
  return name === undefined ? undefined : step;
}

/** Every `task` names a defined task, and no task uses itself, directly or through nesting. */
function checkTaskReferences(workflow: WorkflowDefinition, path: Path, report: Report): void {
  const tasks = workflow.tasks ?? [];
  const taskNames = tasks.map((task) => task.name);
  const checkSteps = (steps: StepDefinition[], stepsPath: Path, scope: Scope): void => {
    steps.forEach((step, index) => {
      if (step.task !== undefined && !taskNames.includes(step.task)) {
        const suggestion = closest(step.task, taskNames);
        report(
          [...stepsPath, index, 'task'],
          { ...scope, step: step.name },
          `uses task "${step.task}", which is not defined in this workflow${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
        );
      }
    });
  };
  checkSteps(workflow.steps, [...path, 'steps'], { workflow: workflow.name });
  const checkCalls = (steps: StepDefinition[], stepsPath: Path, scope: Scope): void => {
    steps.forEach((step, index) => {
      if (step.workflow === workflow.name) {
        report(
          [...stepsPath, index, 'workflow'],
          { ...scope, step: step.name },
          `runs workflow "${workflow.name}", the workflow it belongs to: a workflow may not call itself`,
        );
      }
    });
  };
  checkCalls(workflow.steps, [...path, 'steps'], { workflow: workflow.name });
  tasks.forEach((task, index) => {
    checkCalls(task.steps, [...path, 'tasks', index, 'steps'], { workflow: workflow.name, task: task.name });
  });
  tasks.forEach((task, index) => {
    checkSteps(task.steps, [...path, 'tasks', index, 'steps'], { workflow: workflow.name, task: task.name });
  });
  const uses = (name: string): string[] =>
    (tasks.find((task) => task.name === name)?.steps ?? []).flatMap((step) => (step.task ? [step.task] : []));
  for (const cycle of findCycles(taskNames, uses)) {
    const index = taskNames.indexOf(cycle[0] as string);
    report(
      [...path, 'tasks', index],
      { workflow: workflow.name, task: cycle[0] },
      cycle.length === 2 ? 'the task uses itself' : `tasks use each other in a cycle: ${cycle.join(' -> ')}`,
    );
  }
}
