import { compileRegex, regexError } from '../expressions/regex.js';
import { DEFAULT_JOIN, JOIN_RULES } from '../job/join.js';
import { MAX_REPEAT } from '../job/repeat.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { parseDuration } from './duration.js';
import { NAME_PATTERN } from './names.js';
import type { Path } from './parse-source.js';
import { checkKeys, readDuration, readExpression, readString } from './read-values.js';
import { siblingsOf } from './siblings.js';
import { stepKindOf } from './step-kind.js';
import type { StepDefinition } from './types.js';
import type { Report, Scope } from './validation-report.js';

// The readers of a step's options (validate.ts): steps that need no worker, loops, retry policies,
// joins, signals and calls.

/**
 * The keys of steps that need no worker (`sleep:`, `fail:`, a pass step's `output:`) and
 * `otherwise:`; what does not apply to them is refused.
 */
export function readNoWorkerKeys(
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
export function readRepeat(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
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
  if (raw.task != null) {
    report(
      at,
      scope,
      '"repeat" does not apply to a fan-out (task:): its children keep one id per element (derived from the job, the step and the index, or the element\'s own) and their place under the step, so a second round would meet the first; to repeat a sub-flow, repeat a workflow: step that calls it (each iteration is a new called job), or put "repeat" on the task\'s steps',
      true,
    );
    return;
  }
  if (raw.type != null || raw.sleep != null || raw.fail != null || (kind === 'pass' && raw.queue == null)) {
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

export function readQueueKey(raw: JsonObject): string | undefined {
  return typeof raw.queue === 'string' ? raw.queue : undefined;
}

/** Every `otherwise: true` step has siblings (same `depends`) with `when:`, and is their only default. */
export function checkOtherwise(
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

export const RETRY_POLICY_KEYS = ['retryDelay', 'maxRetryDelay', 'backoffRate', 'jitter', 'retryOn'] as const;
const MAX_BACKOFF_RATE = 10;

/** `maxRetryDelay`, `backoffRate`, `jitter` (with `retryDelay`) and `retryOn` (with `retries`). */
export function readRetryPolicy(
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
export function readJoin(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
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

/** `signal: {schema: {...}}` on a signal step: the JSON Schema its signals' bodies must meet. */
export function readSignalOptions(
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

/** `workflow:` (and `version:`): a step that runs a job of another registered workflow. */
export function readCall(
  raw: JsonObject,
  step: StepDefinition,
  path: Path,
  scope: Scope,
  report: Report,
): void {
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
