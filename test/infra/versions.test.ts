import { describe, expect, test } from 'vitest';
import { synthStack } from './synth-stack.js';
import { type CfnResource, resourcesOfType } from './template-queries.js';

/**
 * Safe upgrades (issue 31): every Lambda function of the stack is published as a version behind its
 * `live` alias, and whatever invokes it (event source mappings, permissions for services, custom
 * resource providers) names the alias, never `$LATEST`. The one exception is the CDK provider
 * framework's own function: its ARN is the custom resource's service token, which CloudFormation
 * does not let an update change ("Updates aren't supported",
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cfn-customresource.html).
 */

const CDK = { timeout: 120_000 };

const CONFIGURATIONS: Record<string, string>[] = [
  {},
  { bus: 'rabbitmq', archive: 'true' },
  {
    workers: 'lambda',
    workflows: 'examples/word-counts/workflows.yaml',
    workerTimeout: '4m',
  },
];

/** The provider framework's function: invoked by CloudFormation through the service token. */
const isProviderFramework = (id: string): boolean => /ProviderframeworkonEvent/.test(id);

/** The logical id a `Ref` or `Fn::GetAtt` names, wherever it sits in a value. */
function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (typeof object.Ref === 'string') return [object.Ref];
    const getAtt = object['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
    return Object.values(object).flatMap(referencedIds);
  }
  return [];
}

describe.each(CONFIGURATIONS)('Versions and aliases (-c %o)', (context) => {
  test(
    'every function has a version and a live alias, and every trigger invokes an alias',
    () => {
      // Prepare
      const { template } = synthStack(context);
      const functions = resourcesOfType(template, 'AWS::Lambda::Function');
      const versions = resourcesOfType(template, 'AWS::Lambda::Version');
      const aliases = resourcesOfType(template, 'AWS::Lambda::Alias');
      const aliasOf = (fnId: string): [string, CfnResource] | undefined =>
        Object.entries(aliases).find(([, alias]) => {
          const [fn] = referencedIds(alias.Properties?.FunctionName);
          const [version] = referencedIds(alias.Properties?.FunctionVersion);
          return fn === fnId && version !== undefined && versions[version] !== undefined;
        });

      // Act
      const unversioned = Object.keys(functions).filter((id) => !isProviderFramework(id) && !aliasOf(id));
      const invokedUnaliased = [
        ...Object.entries(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')),
        ...Object.entries(resourcesOfType(template, 'AWS::Lambda::Permission')),
      ]
        .filter(([, resource]) =>
          referencedIds(resource.Properties?.FunctionName).some((id) => id in functions),
        )
        .map(([id]) => id);
      const providersOnLatest = Object.entries(functions)
        .filter(([id]) => isProviderFramework(id))
        .filter(([, fn]) => {
          const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> })
            ?.Variables;
          return !referencedIds(variables?.USER_ON_EVENT_FUNCTION_ARN).every((id) => id in aliases);
        })
        .map(([id]) => id);

      // Assess
      expect(Object.keys(functions).length).toBeGreaterThan(2);
      expect(unversioned).toEqual([]);
      expect(invokedUnaliased).toEqual([]);
      expect(providersOnLatest).toEqual([]);
    },
    CDK.timeout,
  );
});
