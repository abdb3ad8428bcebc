import {
  DEFAULT_NAMESPACE,
  type DefinitionError,
  definitionInNamespace,
  type LoadOptions,
  type LoadResult,
  loadWorkflows,
  type StepDefinition,
  stepQueueProblem,
  type WorkflowDefinition,
} from '../../engine/index.js';
import { SQS_MAX_QUEUE_NAME, SQS_QUEUE_CHARACTERS } from '../transport/sqs/message.js';

/** What the deployment adds to the engine's queue-name rules (which know only RabbitMQ's). */
export interface QueueRules {
  /** The manager's reply queue (serve's `--reply-queue`, `REPLY_QUEUE`). @default 'workflow-manager' */
  replyQueue?: string;
  /** Deployed on SQS: step queue `q` is the SQS queue `<sqsPrefix>q`. */
  sqsPrefix?: string;
}

/**
 * `loadWorkflows`, with the document's `queuePrefix:` (else `fallbackPrefix`, `serve --queue-prefix`)
 * written into the step queues, refusing too the step queues, prefixed, this deployment cannot have.
 */
export function loadForDeployment(
  text: string,
  options: LoadOptions,
  rules: QueueRules = {},
  fallbackPrefix?: string,
): LoadResult {
  const loaded = loadWorkflows(text, {
    ...options,
    ...(rules.replyQueue ? { replyQueue: rules.replyQueue } : {}),
  });
  if (loaded.errors.length) return loaded;
  const prefix = loaded.queuePrefix ?? fallbackPrefix;
  const result: LoadResult =
    prefix === undefined
      ? loaded
      : {
          ...loaded,
          workflows: loaded.workflows.map((workflow) =>
            definitionInNamespace(workflow, DEFAULT_NAMESPACE, prefix),
          ),
        };
  const errors = result.workflows.flatMap((workflow) => [
    // The engine checked the names as written; a prefix makes new ones.
    ...(prefix === undefined
      ? []
      : queueProblems(workflow, (queue) => stepQueueProblem(queue, rules.replyQueue))),
    ...(rules.sqsPrefix === undefined
      ? []
      : queueProblems(workflow, (queue) => sqsQueueProblem(rules.sqsPrefix as string, queue))),
  ]);
  for (const error of errors) if (options.file) error.file = options.file;
  return errors.length ? { workflows: [], errors } : result;
}

function queueProblems(
  workflow: WorkflowDefinition,
  problemOf: (queue: string) => string | undefined,
): DefinitionError[] {
  const check = (steps: readonly StepDefinition[], task?: string): DefinitionError[] =>
    steps.flatMap((step) => {
      if (step.type === 'signal' || step.task !== undefined || step.workflow !== undefined) return [];
      const queue = step.queue ?? step.name;
      const message = problemOf(queue);
      return message
        ? [{ workflow: workflow.name, ...(task ? { task } : {}), step: step.name, message }]
        : [];
    });
  return [
    ...check(workflow.steps),
    ...(workflow.tasks ?? []).flatMap((task) => check(task.steps, task.name)),
  ];
}

function sqsQueueProblem(prefix: string, queue: string): string | undefined {
  const full = `${prefix}${queue}`;
  const start = `queue "${queue}" cannot be an SQS queue`;
  if (!SQS_QUEUE_CHARACTERS.test(queue)) return `${start}: SQS takes only letters, digits, "-" and "_"`;
  if (full.length > SQS_MAX_QUEUE_NAME) {
    return `${start}: "${full}" has ${full.length} characters; SQS takes at most ${SQS_MAX_QUEUE_NAME}, the stack's prefix "${prefix}" included`;
  }
  return undefined;
}
