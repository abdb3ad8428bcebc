import { GetScheduleCommand, ResourceNotFoundException, SchedulerClient } from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { createContainer } from '../../../functions/aws/container.js';
import { readHandlerEnvironment } from '../../../functions/aws/environment.js';
import { scheduleName } from '../../../functions/aws/eventbridge-schedules.js';
import { sqsBusFactory } from '../../../functions/aws/sqs-bus-factory.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';

describe('Function: createContainer', () => {
  it('refuses a bus the function was not bundled for, saying which it runs with', async () => {
    // Prepare
    const env = readHandlerEnvironment({
      TABLE_NAME: 'table',
      BUS: 'rabbitmq',
      TIMER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/timers',
      MQ_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:broker',
      MQ_AMQPS_ENDPOINT: 'amqps://b-1.mq.us-east-1.amazonaws.com:5671',
    });

    // Act
    const container = createContainer(env, {
      buses: { sqs: sqsBusFactory },
      telemetry: recordingTelemetry(),
    });

    // Assess
    await expect(container).rejects.toThrow(
      'this function does not run with BUS=rabbitmq (it runs with sqs)',
    );
  });

  it('builds the Scheduler client on the first schedule write, not at cold start, and traces it then', async () => {
    // Prepare: a function of a stack with a schedule group, every SDK client it creates recorded.
    const env = readHandlerEnvironment({
      TABLE_NAME: 'table',
      BUS: 'sqs',
      TIMER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/timers',
      QUEUE_PREFIX: 'switchyard-',
      REPLY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/switchyard-replies',
      STEP_QUEUE_DLQ_ARN: 'arn:aws:sqs:us-east-1:123456789012:switchyard-steps-dlq',
      SCHEDULE_GROUP: 'Switchyard-workflows',
      SCHEDULE_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    });
    const scheduler = mockClient(SchedulerClient);
    scheduler
      .on(GetScheduleCommand)
      .rejects(new ResourceNotFoundException({ message: 'no', Message: 'no', $metadata: {} }));
    const captured: object[] = [];
    const client = new SchedulerClient({ region: 'us-east-1' });

    try {
      // Act
      const container = await createContainer(env, {
        buses: { sqs: sqsBusFactory },
        telemetry: recordingTelemetry(),
        clients: { scheduler: client },
        captureClient: (sdkClient) => {
          captured.push(sdkClient);
          return sdkClient;
        },
      });
      const beforeUse = captured.includes(client);
      const rearm = container.schedules?.rearm('team-a/report', '0123456789abcdef', Date.now());

      // Assess
      expect(beforeUse).toBe(false);
      await expect(rearm).rejects.toThrow('register the workflow again');
      expect(captured).toContain(client);
      expect(scheduler.commandCalls(GetScheduleCommand)[0]?.args[0].input).toEqual({
        Name: scheduleName('team-a/report', '0123456789abcdef'),
        GroupName: 'Switchyard-workflows',
      });
    } finally {
      scheduler.restore();
    }
  });
});
