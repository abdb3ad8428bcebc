import { describe, expect, test } from 'vitest';
import { assetsOf, bundleText } from './function-assets.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { asList, identityStatements, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };
/** Text of Powertools Tracer's own code (its disabled mode's segment name). */
const TRACER_MARKER = '## Dummy segment';

function tracingModes(synthesized: SynthesizedStack): unknown[] {
  return Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'))
    .filter(
      (fn) =>
        (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
          ?.TABLE_NAME,
    )
    .map((fn) => fn.Properties?.TracingConfig);
}

function xrayStatements(synthesized: SynthesizedStack): string[] {
  return identityStatements(synthesized.template)
    .filter((statement) => asList(statement.Action).some((action) => action.startsWith('xray:')))
    .map((statement) => statement.holder);
}

function interfaceEndpoints(synthesized: SynthesizedStack): string[] {
  return Object.values(resourcesOfType(synthesized.template, 'AWS::EC2::VPCEndpoint'))
    .map((endpoint) => JSON.stringify(endpoint.Properties?.ServiceName))
    .filter((name) => name.includes('xray'));
}

describe('X-Ray tracing (-c tracing)', CDK, () => {
  test('off by default: no active tracing, no X-Ray permission, no tracer in any bundle', () => {
    const synthesized = synthStack({}, { bundle: true });
    expect(tracingModes(synthesized).length).toBeGreaterThanOrEqual(5);
    for (const mode of tracingModes(synthesized)) expect(mode).toBeUndefined();
    expect(xrayStatements(synthesized)).toEqual([]);
    for (const [id, asset] of Object.entries(assetsOf(synthesized))) {
      expect(bundleText(asset), id).not.toContain(TRACER_MARKER);
    }
  });

  test('on: active tracing and X-Ray permission on every handler function, the tracer in every manager bundle', () => {
    const synthesized = synthStack({ tracing: 'true' }, { bundle: true });
    const handlers = Object.keys(assetsOf(synthesized));
    for (const mode of tracingModes(synthesized)) expect(mode).toEqual({ Mode: 'Active' });
    expect(xrayStatements(synthesized)).toHaveLength(handlers.length);
    // The queue removal runs once, at cdk destroy, and the job-events function makes one PutEvents
    // call a batch: Lambda's own segment is enough, no tracer in their code.
    const untraced = ['RemoveQueuesFunction', 'JobEventsFunction'];
    const managers = Object.entries(assetsOf(synthesized)).filter(([id]) => !untraced.includes(id));
    expect(managers.length).toBe(handlers.length - untraced.length);
    for (const [id, asset] of managers) expect(bundleText(asset), id).toContain(TRACER_MARKER);
  });

  test('RabbitMQ: the VPC gets an X-Ray endpoint only with tracing on; cdk-nag clean', () => {
    expect(interfaceEndpoints(synthStack({ bus: 'rabbitmq' }))).toEqual([]);
    const traced = synthStack({ bus: 'rabbitmq', tracing: 'true' });
    expect(interfaceEndpoints(traced)).toHaveLength(1);
    expect(unacknowledgedFindings(traced)).toEqual([]);
  });
});
