import { compileExpression } from '../expressions/compile.js';
import type { ExpressionKind } from '../expressions/expression.js';
import { compileRegex, regexError } from '../expressions/regex.js';
import { DEFAULT_JOIN, JOIN_RULES } from '../job/join.js';
import { MAX_REPEAT } from '../job/repeat.js';
import { describeJsonType, isJsonObject, type Json, type JsonObject } from '../json.js';
import { closest } from './closest.js';
import { findCycles } from './cycles.js';
import { parseDuration } from './duration.js';
import { NAME_PATTERN } from './names.js';
import { namespaceProblem, queuePrefixProblem } from './namespace.js';
import type { Path } from './parse-source.js';
import { amqpNameProblem, MAX_VHOSTS, stepQueueProblem } from './queue-name.js';
import { readSchedules } from './schedules.js';
import { searchAttributeProblems } from './search-attributes.js';
import { secretProblems } from './secrets.js';
import { siblingsOf } from './siblings.js';
import { stepKindOf } from './step-kind.js';
import type { DefinitionError, StepDefinition, TaskDefinition, WorkflowDefinition } from './types.js';

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

interface Scope {
  workflow?: string;
  task?: string;
  step?: string;
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

type Report = (path: Path, scope: Scope, message: string, onKey?: boolean) => void;

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

/**
 * The keys of steps that need no worker (`sleep:`, `fail:`, a pass step's `output:`) and
 * `otherwise:`; what does not apply to them is refused.
 */
function readNoWorkerKeys(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
  const output = readExpression(raw, 'output', 'map', path, scope, report, true);
  if (output !== undefined) step.output = output;
  const sleep = raw.sleep;
  if (sleep !== undefined && sleep !== null) {
    if (typeof sleep === 'string') {
      const duration = readDuration(raw, 'sleep', path, scope, report);
      if (duration !== undefined) step.sleep = duration;
    } else if (isJsonObject(sleep) && Object.keys(sleep).length === 1 && 'until' in sleep) {
      const until = readExpression(sleep, 'until', 'time', [...path, 'sleep'], scope, report);
      if (until !== undefined) step.sleep = { until };
    } else {
      report(
        [...path, 'sleep'],
        scope,
        `"sleep" must be a duration such as "10m", or { until: CEL time }, got ${JSON.stringify(sleep)}`,
      );
    }
  }
  const fail = raw.fail;
  if (fail !== undefined && fail !== null) {
    if (isJsonObject(fail) && Object.keys(fail).length === 1 && 'message' in fail) {
      const message = readExpression(fail, 'message', 'string', [...path, 'fail'], scope, report);
      if (message !== undefined) step.fail = { message };
    } else {
      report(
        [...path, 'fail'],
        scope,
        `"fail" must be { message: CEL text }, e.g. { message: '"amount " + string(input.amount) + " is over the limit"' }, got ${JSON.stringify(fail)}`,
      );
    }
  }
  if (raw.otherwise !== undefined && raw.otherwise !== null) {
    if (raw.otherwise !== true) {
      report(
        [...path, 'otherwise'],
        scope,
        `"otherwise" must be true (or left out), got ${JSON.stringify(raw.otherwise)}`,
      );
    } else if (raw.when != null) {
      report(
        [...path, 'otherwise'],
        scope,
        '"otherwise" and "when" on one step: the default branch runs when no sibling\'s "when" held',
        true,
      );
    } else {
      step.otherwise = true;
    }
  }
  readRepeat(raw, step, path, scope, report);
  const noWorker = raw.sleep != null ? 'sleep' : raw.fail != null ? 'fail' : undefined;
  if (noWorker) {
    const others = [
      'sleep',
      'fail',
      'task',
      'workflow',
      'type',
      'queue',
      'retries',
      ...RETRY_POLICY_KEYS,
      'timeout',
    ].filter((key) => key !== noWorker && raw[key] != null);
    for (const key of others) {
      report(
        [...path, key],
        scope,
        `"${key}" does not apply to a "${noWorker}" step: it sends nothing to a worker`,
        true,
      );
    }
  } else if (step.output !== undefined && stepKindOf({ ...step, queue: readQueueKey(raw) }) === 'pass') {
    for (const key of ['retries', ...RETRY_POLICY_KEYS, 'timeout'].filter((key) => raw[key] != null)) {
      report(
        [...path, key],
        scope,
        `"${key}" does not apply to a pass step (one with "output:" and no queue): it sends nothing; to reshape a worker's reply, name the worker's "queue"`,
        true,
      );
    }
  }
}

/** `repeat: {until, max, delay}`: a do-until loop on a worker or `workflow:` step, `max` required and capped. */
function readRepeat(raw: JsonObject, step: StepDefinition, path: Path, scope: Scope, report: Report): void {
  const repeat = raw.repeat;
  if (repeat === undefined || repeat === null) return;
  const at = [...path, 'repeat'];
  if (!isJsonObject(repeat)) {
    report(
      at,
      scope,
      `"repeat" must be { until: CEL, max: N, delay?: duration }, got ${JSON.stringify(repeat)}`,
    );
    return;
  }
  checkKeys(repeat, at, ['until', 'max', 'delay'], scope, 'repeat', report);
  const until =
    repeat.until === undefined ? undefined : readExpression(repeat, 'until', 'bool', at, scope, report, true);
  if (repeat.until === undefined)
    report(
      at,
      scope,
      '"repeat" needs "until": the CEL condition that ends the loop, e.g. output.status == "done"',
    );
  const max = repeat.max;
  const maxOk = typeof max === 'number' && Number.isInteger(max) && max >= 1 && max <= MAX_REPEAT;
  if (!maxOk) {
    report(
      [...at, 'max'],
      scope,
      max === undefined
        ? `"repeat" needs "max": the most iterations (1 to ${MAX_REPEAT}), so that a loop always ends`
        : `"repeat.max" must be a whole number from 1 to ${MAX_REPEAT}, got ${JSON.stringify(max)}`,
    );
  }
  const delay = readDuration(repeat, 'delay', at, scope, report);
  const kind = stepKindOf(step);
  if (
    raw.task != null ||
    raw.type != null ||
    raw.sleep != null ||
    raw.fail != null ||
    (kind === 'pass' && raw.queue == null)
  ) {
    report(
      at,
      scope,
      '"repeat" applies to a step a worker or a called workflow does: it runs it again',
      true,
    );
    return;
  }
  if (until !== undefined && maxOk)
    step.repeat = delay === undefined ? { until, max: max as number } : { until, max: max as number, delay };
}

function readQueueKey(raw: JsonObject): string | undefined {
  return typeof raw.queue === 'string' ? raw.queue : undefined;
}

/** Every `otherwise: true` step has siblings (same `depends`) with `when:`, and is their only default. */
function checkOtherwise(
  steps: readonly StepDefinition[],
  lines: Map<StepDefinition, number>,
  path: Path,
  scope: Scope,
  report: Report,
): void {
  for (const step of steps) {
    if (!step.otherwise) continue;
    const siblings = siblingsOf(step, steps);
    const at = [...path, 'steps', lines.get(step) as number, 'otherwise'];
    if (!siblings.some((sibling) => sibling.when !== undefined)) {
      report(
        at,
        { ...scope, step: step.name },
        '"otherwise" needs siblings with "when:" (steps with the same "depends"): it runs when none of their conditions held',
        true,
      );
    } else if (
      siblings.some((sibling) => sibling.otherwise && steps.indexOf(sibling) < steps.indexOf(step))
    ) {
      report(
        at,
        { ...scope, step: step.name },
        'a second "otherwise" among the same siblings: there is one default branch',
        true,
      );
    }
  }
}

const RETRY_POLICY_KEYS = ['retryDelay', 'maxRetryDelay', 'backoffRate', 'jitter', 'retryOn'] as const;
const MAX_BACKOFF_RATE = 10;

/** `maxRetryDelay`, `backoffRate`, `jitter` (with `retryDelay`) and `retryOn` (with `retries`). */
function readRetryPolicy(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
  const needsDelay = (key: string) => {
    if (raw.retryDelay != null) return true;
    report([...path, key], scope, `"${key}" applies only with "retryDelay" (the first retry's delay)`, true);
    return false;
  };
  const maxRetryDelay = readDuration(raw, 'maxRetryDelay', path, scope, report);
  if (maxRetryDelay !== undefined && needsDelay('maxRetryDelay')) {
    const first = step.retryDelay === undefined ? undefined : parseDuration(step.retryDelay);
    if (first !== undefined && (parseDuration(maxRetryDelay) as number) < first) {
      report(
        [...path, 'maxRetryDelay'],
        scope,
        `"maxRetryDelay" (${maxRetryDelay}) is shorter than "retryDelay" (${step.retryDelay})`,
      );
    } else {
      step.maxRetryDelay = maxRetryDelay;
    }
  }
  const rate = raw.backoffRate;
  if (rate !== undefined && rate !== null && needsDelay('backoffRate')) {
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 1 || rate > MAX_BACKOFF_RATE) {
      report(
        [...path, 'backoffRate'],
        scope,
        `"backoffRate" must be a number from 1 (the same delay each time) to ${MAX_BACKOFF_RATE}, got ${JSON.stringify(rate)}`,
      );
    } else if (rate !== 2) {
      step.backoffRate = rate;
    }
  }
  const jitter = raw.jitter;
  if (jitter !== undefined && jitter !== null && needsDelay('jitter')) {
    if (jitter !== 'full' && jitter !== 'none') {
      report([...path, 'jitter'], scope, `"jitter" must be "full" or "none", got ${JSON.stringify(jitter)}`);
    } else if (jitter === 'full') {
      step.jitter = 'full';
    }
  }
  const retryOn = raw.retryOn;
  if (retryOn === undefined || retryOn === null) return;
  if (!step.retries) {
    report(
      [...path, 'retryOn'],
      scope,
      '"retryOn" applies only with "retries": it says which failures are retried',
      true,
    );
    return;
  }
  const shape =
    'a list of timeout, error or { errorMatches: RE2 pattern }, e.g. [ timeout, { errorMatches: "503|throttl" } ]';
  if (!Array.isArray(retryOn) || retryOn.length === 0) {
    report([...path, 'retryOn'], scope, `"retryOn" must be ${shape}; got ${JSON.stringify(retryOn)}`);
    return;
  }
  const conditions: NonNullable<StepDefinition['retryOn']> = [];
  for (const entry of retryOn) {
    if (entry === 'timeout' || entry === 'error') conditions.push(entry);
    else if (
      isJsonObject(entry) &&
      Object.keys(entry).length === 1 &&
      typeof entry.errorMatches === 'string'
    ) {
      const compiled = compileRegex(entry.errorMatches);
      if (compiled.ok) conditions.push({ errorMatches: entry.errorMatches });
      else
        report(
          [...path, 'retryOn'],
          scope,
          `"retryOn": ${regexError(entry.errorMatches, compiled.error).replace('matches(): ', '')}`,
        );
    } else {
      report(
        [...path, 'retryOn'],
        scope,
        `"retryOn" must be ${shape}; ${JSON.stringify(entry)} is none of them`,
      );
    }
  }
  if (conditions.length === retryOn.length) step.retryOn = conditions;
}

/** `join:`: one of the rules of engine/job/join.ts; the default is left out. */
function readJoin(raw: JsonObject, step: StepDefinition, path: Path, scope: Scope, report: Report): void {
  const join = raw.join;
  if (join === undefined || join === null) return;
  if (typeof join !== 'string' || !(JOIN_RULES as readonly string[]).includes(join)) {
    report(
      [...path, 'join'],
      scope,
      `"join" must be one of ${JOIN_RULES.join(', ')}, got ${JSON.stringify(join)}`,
    );
    return;
  }
  if (step.depends === undefined) {
    report(
      [...path, 'join'],
      scope,
      '"join" applies only to a step with "depends": it says which of them it waits for',
      true,
    );
    return;
  }
  if (join !== DEFAULT_JOIN) step.join = join as NonNullable<StepDefinition['join']>;
}

/** `workflow:` (and `version:`): a step that runs a job of another registered workflow. */
/** `signal: {schema: {...}}` on a signal step: the JSON Schema its signals' bodies must meet. */
function readSignalOptions(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
  const value = raw.signal;
  if (value === undefined || value === null) return;
  const at = [...path, 'signal'];
  if (raw.type !== 'signal') {
    report(at, scope, '"signal" applies to a signal step only (type: signal)', true);
    return;
  }
  if (!isJsonObject(value) || !isJsonObject(value.schema)) {
    report(at, scope, '"signal" must be { schema: <a JSON Schema of the signal\'s body> }');
    return;
  }
  const unknown = Object.keys(value).find((key) => key !== 'schema');
  if (unknown !== undefined)
    report([...at, unknown], scope, `unknown signal key "${unknown}" (known keys: schema)`, true);
  step.signal = { schema: value.schema };
}

function readCall(raw: JsonObject, step: StepDefinition, path: Path, scope: Scope, report: Report): void {
  const workflow = readString(raw, 'workflow', path, scope, report);
  if (raw.version !== undefined && raw.version !== null) {
    const version = raw.version;
    if (workflow === undefined) {
      report(
        [...path, 'version'],
        scope,
        '"version" applies only with "workflow": the version of the workflow to run',
        true,
      );
    } else if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
      report(
        [...path, 'version'],
        scope,
        `"version" must be a whole number of at least 1, got ${JSON.stringify(version)}`,
      );
    } else {
      step.version = version;
    }
  }
  if (workflow === undefined) return;
  if (!NAME_PATTERN.test(workflow)) {
    report(
      [...path, 'workflow'],
      scope,
      `"workflow" must name a registered workflow, got ${JSON.stringify(workflow)}`,
    );
    return;
  }
  step.workflow = workflow;
  const clash =
    raw.task !== undefined
      ? 'task'
      : raw.type === 'signal'
        ? 'type'
        : raw.queue !== undefined
          ? 'queue'
          : undefined;
  if (clash) {
    report(
      [...path, clash],
      scope,
      clash === 'task'
        ? '"workflow" and "task" on one step: a step either fans out over a task or runs another workflow'
        : `"${clash}" does not apply to a step that runs workflow "${workflow}"`,
      true,
    );
  }
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

function readName(
  raw: JsonObject,
  path: Path,
  scope: Scope,
  what: string,
  report: Report,
): string | undefined {
  const name = raw.name;
  if (name === undefined || name === null) {
    report(path, scope, `a ${what} needs a "name"`);
    return undefined;
  }
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    report(
      [...path, 'name'],
      scope,
      `${what} name ${JSON.stringify(name)} is not valid: use a letter, then letters, digits, "_" or "-"`,
    );
    return undefined;
  }
  return name;
}

function readString(
  raw: JsonObject,
  key: string,
  path: Path,
  scope: Scope,
  report: Report,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    report([...path, key], scope, `"${key}" must be text, got ${describeJsonType(value)}`);
    return undefined;
  }
  return value;
}

function readParams(raw: JsonObject, path: Path, scope: Scope, report: Report): JsonObject | undefined {
  const value = raw.params;
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) {
    report(
      [...path, 'params'],
      scope,
      `"params" must be a mapping of default values, e.g. { currency: EUR }; got ${describeJsonType(value)}`,
    );
    return undefined;
  }
  const problems = secretProblems(value);
  for (const problem of problems) report([...path, 'params'], scope, problem);
  if (problems.length) return undefined;
  return Object.keys(value).length ? value : undefined;
}

/** A CEL expression, parsed and checked now so that a mistake shows at validation, not in a job. */
function readExpression(
  raw: JsonObject,
  key: string,
  kind: ExpressionKind,
  path: Path,
  scope: Scope,
  report: Report,
  seesOutput = false,
): string | undefined {
  const value = raw[key];
  // `sleep.until`, `fail.message`: named with the key they are under.
  const under = path[path.length - 1];
  const label = typeof under === 'string' ? `${under}.${key}` : key;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean' && key === 'when') {
    report([...path, key], scope, `"when" must be a CEL expression; write it in quotes, e.g. "${value}"`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    report(
      [...path, key],
      scope,
      `"${label}" must be a CEL expression (text), got ${describeJsonType(value)}`,
    );
    return undefined;
  }
  const compiled = compileExpression(value, kind);
  if (compiled.ok && compiled.expression.uses.has('output') && !seesOutput) {
    report(
      [...path, key],
      scope,
      `"${label}" expression ${JSON.stringify(value)}: \`output\` is only seen by "output:" and "repeat.until"`,
    );
    return undefined;
  }
  if (compiled.ok) return value;
  const position = compiled.position;
  const at = !position
    ? ''
    : value.includes('\n')
      ? ` (line ${position.line}, column ${position.column} of the expression)`
      : ` (column ${position.column})`;
  report([...path, key], scope, `"${label}" expression ${JSON.stringify(value)}${at}: ${compiled.error}`);
  return undefined;
}

function readDuration(
  raw: JsonObject,
  key: string,
  path: Path,
  scope: Scope,
  report: Report,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms <= 0) {
    report(
      [...path, key],
      scope,
      `"${key}" must be a duration such as "30s", "5m" or "1h30m", got ${JSON.stringify(value)}`,
    );
    return undefined;
  }
  return (value as string).trim();
}

function checkKeys(
  raw: JsonObject,
  path: Path,
  known: readonly string[],
  scope: Scope,
  what: string,
  report: Report,
): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const suggestion = closest(key, known);
    report(
      [...path, key],
      scope,
      `unknown ${what} key "${key}"${suggestion ? `: did you mean "${suggestion}"?` : ` (known keys: ${known.join(', ')})`}`,
      true,
    );
  }
}

function definedOnly(scope: Scope): Scope {
  const result: Scope = {};
  if (scope.workflow !== undefined) result.workflow = scope.workflow;
  if (scope.task !== undefined) result.task = scope.task;
  if (scope.step !== undefined) result.step = scope.step;
  return result;
}
