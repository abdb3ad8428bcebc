import type { Metrics as PowertoolsMetricsClient } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { PowertoolsMetrics, STEP_DIMENSION_VALUES } from '../../../functions/aws/powertools-metrics.js';

/** A Powertools client that keeps what it is given: the aggregate metrics, and each single metric with its dimensions. */
function recordingClient() {
  const aggregate: { name: string; value: number }[] = [];
  const singles: { name: string; value: number; dimensions: Record<string, string> }[] = [];
  const client = {
    addMetric: (name: string, _unit: string, value: number) => aggregate.push({ name, value }),
    singleMetric: () => {
      let dimensions: Record<string, string> = {};
      return {
        addDimensions: (added: Record<string, string>) => {
          dimensions = { ...dimensions, ...added };
        },
        addMetric: (name: string, _unit: string, value: number) => singles.push({ name, value, dimensions }),
      };
    },
    hasStoredMetrics: () => false,
    publishStoredMetrics: () => {},
  };
  return { client: client as unknown as PowertoolsMetricsClient, aggregate, singles };
}

describe('Deployed metrics: the failing step as CloudWatch dimensions', () => {
  it('writes failed attempts, retries and timeouts per step (Namespace, Workflow, Step, Queue) beside the aggregate the alarms watch', () => {
    const { client, aggregate, singles } = recordingClient();
    const metrics = new PowertoolsMetrics(client);
    const charge = { namespace: 'default', workflow: 'checkout', step: 'charge', queue: 'payments' };
    for (let n = 0; n < 3; n++) metrics.count('step_attempts_failed_total', charge);
    metrics.count('retries_total', charge, 2);
    metrics.count('step_attempts_failed_total', { ...charge, step: 'approve', queue: '' });
    metrics.count('steps_dispatched_total', charge);
    metrics.flush();

    expect(aggregate).toEqual(
      expect.arrayContaining([
        { name: 'StepAttemptsFailed', value: 4 },
        { name: 'Retries', value: 2 },
        { name: 'StepsDispatched', value: 1 },
      ]),
    );
    const dimensions = { Namespace: 'default', Workflow: 'checkout', Step: 'charge', Queue: 'payments' };
    expect(singles).toEqual([
      { name: 'StepAttemptsFailed', value: 3, dimensions },
      { name: 'Retries', value: 2, dimensions },
      { name: 'StepAttemptsFailed', value: 1, dimensions: { ...dimensions, Step: 'approve', Queue: '-' } },
    ]);
  });

  it('keeps the first values of each dimension, and counts the rest as other', () => {
    const { client, singles } = recordingClient();
    const metrics = new PowertoolsMetrics(client);
    for (let n = 0; n < STEP_DIMENSION_VALUES + 5; n++)
      metrics.count('timeouts_total', { namespace: 'default', workflow: `w${n}`, step: 's', queue: 'q' });
    metrics.flush();
    const workflows = singles.map((single) => single.dimensions.Workflow);
    expect(new Set(workflows).size).toBe(STEP_DIMENSION_VALUES + 1);
    expect(singles.find((single) => single.dimensions.Workflow === 'other')?.value).toBe(5);
  });
});
