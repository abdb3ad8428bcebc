import type { LoadOptions } from '../../engine/definition/load.js';
import type { DefinitionError, StepDefinition, WorkflowDefinition } from '../../engine/definition/types.js';
import type { LoadResult } from '../../engine/definition/validate.js';
import { loadWorkflows } from '../../engine/index.js';
import { SQS_MAX_QUEUE_NAME, SQS_QUEUE_CHARACTERS } from '../transport/sqs/message.js';

/** What the deployment adds to the engine's queue-name rules (which know only RabbitMQ's). */
export interface QueueRules {
  /** The manager's reply queue (serve's `--reply-queue`, `REPLY_QUEUE`). @default 'workflow-manager' */
  replyQueue?: string;
  /** Deployed on SQS: step queue `q` is the SQS queue `<sqsPrefix>q`. */
  sqsPrefix?: string;
}

/** `loadWorkflows`, refusing too the step queues this deployment cannot have. */
export function loadForDeployment(text: string, options: LoadOptions, rules: QueueRules = {}): LoadResult {
  const result = loadWorkflows(text, {
    ...options,
    ...(rules.replyQueue ? { replyQueue: rules.replyQueue } : {}),
  });
  if (result.errors.length || rules.sqsPrefix === undefined) return result;
  const errors = result.workflows.flatMap((workflow) => sqsProblems(workflow, rules.sqsPrefix as string));
  for (const error of errors) if (options.file) error.file = options.file;
  return errors.length ? { workflows: [], errors } : result;
}

function sqsProblems(workflow: WorkflowDefinition, prefix: string): DefinitionError[] {
  const check = (steps: readonly StepDefinition[], task?: string): DefinitionError[] =>
    steps.flatMap((step) => {
      if (step.type === 'signal' || step.task !== undefined) return [];
      const queue = step.queue ?? step.name;
      const message = sqsQueueProblem(prefix, queue);
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
