import { describe, expect, test } from 'vitest';
import { QUEUE_REMOVAL_RESOURCE_TYPE } from '../../infra/constructs/run-time-queue-removal.js';
import { synthStack } from './synth-stack.js';
import { asList, identityStatements, renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };

describe('queues created at run time are removed on cdk destroy', CDK, () => {
  test('SQS: a custom resource that knows the prefix, the tag and the queues the stack declares', () => {
    const { template } = synthStack({ queuePrefix: 'wm_' });
    const removals = Object.entries(resourcesOfType(template, QUEUE_REMOVAL_RESOURCE_TYPE));
    expect(removals).toHaveLength(1);
    const [removalId, removal] = removals[0] as [string, { Properties?: Record<string, unknown> }];
    expect(removal.Properties).toMatchObject({
      QueuePrefix: 'wm_',
      TagKey: 'switchyard:stack',
      TagValue: 'Switchyard',
    });
    expect(removal.Properties?.DeclaredQueues).toEqual(
      expect.arrayContaining(['wm_workflow-manager', 'wm_switchyard-timers', 'wm_summing']),
    );
    // The functions that create queues are deleted first: nothing creates one after the removal.
    const creators = Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).filter((fn) =>
      /HTTP API|registers the workflows/.test(String(fn.Properties?.Description)),
    );
    expect(creators).toHaveLength(2);
    for (const creator of creators) expect(creator.DependsOn).toContain(removalId);
  });

  test('SQS: only the removal function may delete queues, and only those tagged with the stack', () => {
    const { template } = synthStack();
    const deleters = identityStatements(template).filter((statement) =>
      asList(statement.Action).includes('sqs:DeleteQueue'),
    );
    expect(asList(deleters[0]?.Action).sort()).toEqual(['sqs:DeleteQueue', 'sqs:ListQueueTags']);
    expect(deleters).toHaveLength(1);
    expect(deleters[0]?.holder).toMatch(/^RemoveQueuesFunctionRole/);
    expect(asList(deleters[0]?.Resource).map(renderValue)).toEqual([
      'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:Switchyard_*',
    ]);
    expect(deleters[0]).toMatchObject({
      Condition: { StringEquals: { 'aws:ResourceTag/switchyard:stack': 'Switchyard' } },
    });
  });

  test('RabbitMQ: no queue is created at run time, so no removal', () => {
    synthStack({ bus: 'rabbitmq' }).template.resourceCountIs(QUEUE_REMOVAL_RESOURCE_TYPE, 0);
  });
});
