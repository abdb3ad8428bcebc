import {
  type DefinitionError,
  type LoadOptions,
  type LoadResult,
  loadWorkflows,
  type QueueNameRule,
  type StepDefinition,
  sentQueueOf,
  stepQueueProblem,
  type WorkflowDefinition,
} from '../../engine/index.js';

/** What the deployment adds to the engine's queue-name rules (which know only RabbitMQ's). */
export interface QueueRules {
  /** The manager's reply queue (serve's `--reply-queue`, `REPLY_QUEUE`). @default 'workflow-manager' */
  replyQueue?: string;
  /** The bus's own rule for queue names (deployed on SQS: `sqsQueueNameRule(prefix)`). */
  queueNames?: QueueNameRule;
}

/**
 * `loadWorkflows` with this deployment's rules: the reply queue it may not send to, and (on SQS)
 * step queue names SQS takes. The document's `queuePrefix:` is returned as stated, not applied: a
 * namespace's prefix is the operator's (NamespaceAuthority applies it, and checks the names again).
 */
export function loadForDeployment(text: string, options: LoadOptions, rules: QueueRules = {}): LoadResult {
  const loaded = loadWorkflows(text, {
    ...options,
    ...(rules.replyQueue ? { replyQueue: rules.replyQueue } : {}),
  });
  if (loaded.errors.length) return loaded;
  const errors = loaded.workflows.flatMap((workflow) => deploymentQueueProblems(workflow, rules));
  for (const error of errors) if (options.file) error.file = options.file;
  return errors.length ? { workflows: [], errors } : loaded;
}

/** Why a definition's step queues (as they will be sent to) cannot be this deployment's queues. */
export function deploymentQueueProblems(workflow: WorkflowDefinition, rules: QueueRules): DefinitionError[] {
  return [
    ...queueProblems(workflow, (queue) => stepQueueProblem(queue, rules.replyQueue)),
    ...(rules.queueNames === undefined
      ? []
      : queueProblems(workflow, (queue) => rules.queueNames?.queueProblem(queue))),
  ];
}

function queueProblems(
  workflow: WorkflowDefinition,
  problemOf: (queue: string) => string | undefined,
): DefinitionError[] {
  const check = (steps: readonly StepDefinition[], task?: string): DefinitionError[] =>
    steps.flatMap((step) => {
      const queue = sentQueueOf(step);
      const message = queue === undefined ? undefined : problemOf(queue);
      return message
        ? [{ workflow: workflow.name, ...(task ? { task } : {}), step: step.name, message }]
        : [];
    });
  return [
    ...check(workflow.steps),
    ...(workflow.tasks ?? []).flatMap((task) => check(task.steps, task.name)),
  ];
}

/** Why `prefix` cannot prefix a namespace's step queues in this deployment, or undefined. */
export function deploymentPrefixProblem(prefix: string, rules: QueueRules): string | undefined {
  return rules.queueNames?.prefixProblem(prefix);
}
