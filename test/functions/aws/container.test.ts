import { describe, expect, it } from 'vitest';
import { createContainer } from '../../../functions/aws/container.js';
import { readHandlerEnvironment } from '../../../functions/aws/environment.js';
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
});
