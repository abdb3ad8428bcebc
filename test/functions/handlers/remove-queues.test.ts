import { randomUUID } from 'node:crypto';
import { ListQueuesCommand, TagQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRemoveQueuesHandler,
  type RemoveQueuesEvent,
  type RemoveQueuesProperties,
} from '../../../functions/handlers/remove-queues.js';
import { ACCOUNT, REGION } from '../../support/aws-events.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';

const STACK_TAG = 'switchyard:stack';

function anEvent(
  requestType: 'Create' | 'Delete',
  properties: Omit<RemoveQueuesProperties, 'ServiceToken'>,
): RemoveQueuesEvent {
  const ResourceProperties: RemoveQueuesProperties = {
    ServiceToken: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:provider`,
    ...properties,
  };
  const common = {
    ServiceToken: ResourceProperties.ServiceToken,
    ResponseURL: 'https://cloudformation-custom-resource-response.example/response',
    StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/Switchyard/${randomUUID()}`,
    RequestId: randomUUID(),
    LogicalResourceId: 'RunTimeQueueRemovalQueues',
    ResourceType: 'Custom::SwitchyardRunTimeQueues',
    ResourceProperties,
  };
  return requestType === 'Create'
    ? { ...common, RequestType: 'Create' }
    : { ...common, RequestType: 'Delete', PhysicalResourceId: `run-time-queues:${properties.QueuePrefix}` };
}

describe('Custom resource: remove-queues (on the SQS emulator)', () => {
  let sqs: Fauxqs;

  beforeAll(async () => {
    sqs = await startSqsEmulator();
  }, 60_000);

  afterAll(async () => {
    await sqs?.stop();
  });

  async function tagged(name: string, stack?: string): Promise<void> {
    const { url } = await createQueue(sqs.client, name);
    if (stack) {
      await sqs.client.send(new TagQueueCommand({ QueueUrl: url, Tags: { [STACK_TAG]: stack } }));
    }
  }

  async function queueNames(): Promise<string[]> {
    const { QueueUrls } = await sqs.client.send(new ListQueuesCommand({}));
    return (QueueUrls ?? []).map((url) => url.slice(url.lastIndexOf('/') + 1)).sort();
  }

  it('on Delete removes only the queues under the prefix tagged with the stack, not those it declares', async () => {
    // Prepare: two run-time queues of the stack, one it declares, and four that are not its own
    const prefix = uniqueQueuePrefix('rm');
    const other = uniqueQueuePrefix('other');
    await tagged(`${prefix}resize`, 'Switchyard');
    await tagged(`${prefix}thumbnail`, 'Switchyard');
    await tagged(`${prefix}switchyard-timers`, 'Switchyard');
    await tagged(`${prefix}staging-step`, 'Switchyard-Staging');
    await tagged(`${prefix}untagged`);
    await tagged(`${other}resize`, 'Switchyard');
    const handler = createRemoveQueuesHandler({ sqs: sqs.newClient(), logger: recordingTelemetry().logger });
    const properties = {
      QueuePrefix: prefix,
      TagKey: STACK_TAG,
      TagValue: 'Switchyard',
      DeclaredQueues: [`${prefix}switchyard-timers`],
    };

    // Act
    const created = await handler(anEvent('Create', properties));
    const afterCreate = await queueNames();
    const deleted = await handler(anEvent('Delete', properties));
    const again = await handler(anEvent('Delete', properties));

    // Assess
    expect(created).toEqual({ PhysicalResourceId: `run-time-queues:${prefix}` });
    expect(afterCreate).toContain(`${prefix}resize`);
    expect(deleted).toEqual({ PhysicalResourceId: `run-time-queues:${prefix}`, Data: { Removed: '2' } });
    expect(again.Data).toEqual({ Removed: '0' });
    const left = await queueNames();
    expect(left).not.toContain(`${prefix}resize`);
    expect(left).not.toContain(`${prefix}thumbnail`);
    expect(left).toEqual(
      expect.arrayContaining([
        `${prefix}switchyard-timers`,
        `${prefix}staging-step`,
        `${prefix}untagged`,
        `${other}resize`,
      ]),
    );
  }, 60_000);

  it('keeps a queue whose tags IAM refuses to read (the role reads only queues tagged with its stack)', async () => {
    // Prepare
    const prefix = uniqueQueuePrefix('deny');
    await tagged(`${prefix}ours`, 'Switchyard');
    await tagged(`${prefix}theirs`, 'Switchyard');
    const client = sqs.newClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { QueueUrl?: string };
        if (context.commandName === 'ListQueueTagsCommand' && input.QueueUrl?.endsWith('theirs')) {
          throw Object.assign(new Error('not authorized to perform: sqs:listqueuetags'), {
            name: 'AccessDenied',
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'denyTheirs' },
    );
    const handler = createRemoveQueuesHandler({ sqs: client, logger: recordingTelemetry().logger });

    // Act
    const deleted = await handler(
      anEvent('Delete', {
        QueuePrefix: prefix,
        TagKey: STACK_TAG,
        TagValue: 'Switchyard',
        DeclaredQueues: [],
      }),
    );

    // Assess
    expect(deleted.Data).toEqual({ Removed: '1' });
    const left = await queueNames();
    expect(left).toContain(`${prefix}theirs`);
    expect(left).not.toContain(`${prefix}ours`);
  }, 60_000);
});
