import { beforeAll, describe, expect, test } from 'vitest';
import { assetsOf, bundleText } from './function-assets.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };

/** Text only each bus's code carries: amqplib and the Secrets Manager client; the SQS bus adapter. */
const MARKERS = {
  amqplib: 'Frame on channel != 0 during handshake',
  secretsManagerClient: 'SecretsManagerClient',
  sqsBusAdapter: 'CreateQueue returned no URL for',
};

describe('the synthesized functions bundle only their bus (SQS)', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({}, { bundle: true });
  });

  test('no function ships amqplib or the Secrets Manager client; no source maps', () => {
    const assets = assetsOf(synthesized);
    expect(Object.keys(assets).sort()).toEqual([
      'ApiFunction',
      'DeadLettersFunction',
      'JobEventsFunction',
      'RegisterWorkflowsFunction',
      'RemoveQueuesFunction',
      'RepliesFunction',
      'TimersFunction',
    ]);
    for (const [id, asset] of Object.entries(assets)) {
      expect({ id, files: asset.files }).toEqual({ id, files: ['index.mjs'] });
      const text = bundleText(asset);
      expect(text, id).not.toContain(MARKERS.amqplib);
      expect(text, id).not.toContain(MARKERS.secretsManagerClient);
      expect(text, id).not.toContain('sourceMappingURL');
    }
    for (const fn of Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'))) {
      expect(JSON.stringify(fn.Properties?.Environment ?? {})).not.toContain('NODE_OPTIONS');
    }
    expect(bundleText(assets.ApiFunction)).toContain(MARKERS.sqsBusAdapter);
  });
});

describe('the synthesized functions bundle only their bus (RabbitMQ)', CDK, () => {
  test('no function ships the SQS bus adapter; the API function carries amqplib', () => {
    const assets = assetsOf(synthStack({ bus: 'rabbitmq' }, { bundle: true }));
    expect(Object.keys(assets).sort()).toEqual([
      'ApiFunction',
      'JobEventsFunction',
      'RegisterWorkflowsFunction',
      'RepliesFunction',
      'TimersFunction',
    ]);
    for (const [id, asset] of Object.entries(assets)) {
      expect(bundleText(asset), id).not.toContain(MARKERS.sqsBusAdapter);
    }
    expect(bundleText(assets.ApiFunction)).toContain(MARKERS.amqplib);
  });
});

describe('-c sourceMaps=true', CDK, () => {
  test('ships each bundle with its source map and has Node read it', () => {
    const synthesized = synthStack({ sourceMaps: 'true' }, { bundle: true });
    for (const [id, asset] of Object.entries(assetsOf(synthesized))) {
      expect({ id, files: asset.files }).toEqual({ id, files: ['index.mjs', 'index.mjs.map'] });
    }
    const handlerEnvironments = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'))
      .map(
        (fn) => (fn.Properties?.Environment as { Variables?: Record<string, string> } | undefined)?.Variables,
      )
      .filter((variables) => variables?.TABLE_NAME !== undefined);
    expect(handlerEnvironments).toHaveLength(5);
    for (const variables of handlerEnvironments) expect(variables?.NODE_OPTIONS).toBe('--enable-source-maps');
  });
});
