import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import {
  DEFAULT_NAMESPACE,
  definitionInNamespace,
  formatDefinitionError,
  namespaceProblem,
  type WorkflowDefinition,
} from '../../engine/index.js';
import { BUNDLED_BUSES } from '../aws/bus-factories.js';
import { fromEnvironment } from '../aws/from-env.js';
import { invocation } from '../aws/invocation.js';
import type { LambdaTelemetry } from '../aws/lambda-telemetry.js';
import { queueRulesOf } from '../aws/queue-rules.js';
import type { Manager } from '../manager/manager.js';
import { loadForDeployment, type QueueRules } from '../manager/queue-rules.js';

export interface RegisterWorkflowsDeps {
  manager: Manager;
  telemetry: LambdaTelemetry;
  /**
   * RabbitMQ: the reply queue, declared here because the Amazon MQ event source mapping consumes it
   * and does not declare it. SQS: absent (the stack creates the reply queue).
   */
  replyQueue?: string;
  /** The deployment's queue rules (reply queue, SQS prefix) the definitions must also satisfy. */
  queueRules?: QueueRules;
}

/** The custom resource's properties (infra/constructs/workflow-registration.ts). */
export interface RegisterWorkflowsProperties {
  ServiceToken: string;
  /** The definitions as JSON: CloudFormation would turn numbers in a nested value into strings. */
  Definitions: string;
  /** The namespace they are registered in (the workflows file's `namespace:`). @default 'default' */
  Namespace?: string;
  /**
   * The workflows file's `queuePrefix:`, already in the definitions' queues: the deployer is the
   * operator, so it becomes the namespace's setting (docs/workflows.md, "Namespaces").
   */
  QueuePrefix?: string;
}

export type RegisterWorkflowsEvent = CloudFormationCustomResourceEvent<RegisterWorkflowsProperties>;

export interface RegisterWorkflowsResponse {
  PhysicalResourceId: string;
  /** `Versions`: `name@version` of each definition, comma-separated (readable with Fn::GetAtt). */
  Data?: Record<string, string>;
}

export type RegisterWorkflowsHandler = (
  event: RegisterWorkflowsEvent,
  context?: Context,
) => Promise<RegisterWorkflowsResponse>;

export const WORKFLOWS_RESOURCE_ID = 'switchyard-workflows';

/**
 * The custom resource that registers the workflows deployed with the stack (the CDK provider
 * framework's onEvent handler: it returns, the framework answers CloudFormation). Create and Update
 * register every definition (an unchanged one keeps its version) and make sure its queues exist;
 * Delete leaves the store alone: jobs and definitions outlive the stack's resource.
 */
export function createRegisterWorkflowsHandler(deps: RegisterWorkflowsDeps): RegisterWorkflowsHandler {
  const { manager, telemetry } = deps;
  return (event, context) =>
    invocation(telemetry, context, async () => {
      const physicalResourceId =
        event.RequestType === 'Create' ? WORKFLOWS_RESOURCE_ID : event.PhysicalResourceId;
      if (event.RequestType === 'Delete') {
        telemetry.logger.info('workflows resource deleted; the store keeps its workflows and jobs');
        return { PhysicalResourceId: physicalResourceId };
      }
      const definitions = parseDefinitions(
        event.ResourceProperties.Definitions,
        deps.queueRules,
        event.ResourceProperties.Namespace,
      );
      if (deps.replyQueue) await manager.bus.ensureQueues([{ queue: deps.replyQueue, vhost: null }]);
      const queuePrefix = event.ResourceProperties.QueuePrefix;
      if (queuePrefix) {
        const namespace = event.ResourceProperties.Namespace ?? DEFAULT_NAMESPACE;
        const current = await manager.namespaces.settings(namespace);
        if (current?.queuePrefix !== queuePrefix) await manager.namespaces.change({ namespace, queuePrefix });
      }
      const versions: string[] = [];
      for (const definition of definitions) {
        const { version, created } = await manager.registerWorkflow(definition);
        telemetry.logger.info(created ? 'workflow registered' : 'workflow unchanged', {
          workflow: definition.name,
          version,
        });
        versions.push(`${definition.name}@${version}`);
      }
      return { PhysicalResourceId: physicalResourceId, Data: { Versions: versions.join(',') } };
    });
}

/**
 * The definitions, validated again by the engine's loader (the deploy fails with its messages), as
 * registered in `namespace` (their names qualified; the queue prefix is already in their queues).
 */
export function parseDefinitions(
  property: unknown,
  rules: QueueRules = {},
  namespace: string = DEFAULT_NAMESPACE,
): WorkflowDefinition[] {
  const problem = namespaceProblem(namespace);
  if (problem) throw new Error(`the Namespace property: ${problem}`);
  const text = typeof property === 'string' ? property : JSON.stringify(property ?? null);
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    throw new Error('the Definitions property is not JSON');
  }
  if (!Array.isArray(list)) throw new Error('the Definitions property is not a JSON list of workflows');
  const result = loadForDeployment(JSON.stringify({ workflows: list }), { file: 'Definitions' }, rules);
  if (result.errors.length > 0) {
    throw new Error(`invalid workflow definitions:\n${result.errors.map(formatDefinitionError).join('\n')}`);
  }
  return result.workflows.map((workflow) => definitionInNamespace(workflow, namespace));
}

const fromEnv = fromEnvironment(BUNDLED_BUSES, (container) =>
  createRegisterWorkflowsHandler({
    ...container,
    replyQueue: container.env.bus.kind === 'rabbitmq' ? container.env.replyQueue : undefined,
    queueRules: queueRulesOf(container.env),
  }),
);

export const handler: RegisterWorkflowsHandler = async (event, context) => (await fromEnv())(event, context);
