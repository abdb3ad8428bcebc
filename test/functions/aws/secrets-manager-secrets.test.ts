import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MISSING_SECRET_CACHE_MS,
  SECRET_CACHE_MS,
  secretsManagerSecrets,
} from '../../../functions/aws/secrets-manager-secrets.js';

/*
 * Deployed secrets from Secrets Manager, played by aws-sdk-client-mock. GetSecretValue takes the
 * secret's name (or ARN) as SecretId, answers SecretString for a text secret, and
 * ResourceNotFoundException when there is no such secret
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html).
 */

const secretsManager = mockClient(SecretsManagerClient);
const PREFIX = 'switchyard/';

function resolver(clock: () => number = Date.now) {
  return secretsManagerSecrets({
    client: new SecretsManagerClient({ region: 'us-east-1' }),
    prefix: PREFIX,
    clock,
  });
}

const notFound = () =>
  new ResourceNotFoundException({
    message: "Secrets Manager can't find the specified secret.",
    $metadata: {},
  });

const secretIds = () =>
  secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId);

beforeEach(() => {
  secretsManager.reset();
  secretsManager
    .on(GetSecretValueCommand, { SecretId: `${PREFIX}payments/api-key` })
    .resolves({ SecretString: 'sk-live-123' })
    .on(GetSecretValueCommand, { SecretId: `${PREFIX}absent` })
    .rejects(notFound());
});

describe('secretsManagerSecrets', () => {
  it('reads each name as the secret <prefix><name>; a missing secret is left out', async () => {
    const values = await resolver().resolve(['payments/api-key', 'absent']);

    expect([...values]).toEqual([['payments/api-key', 'sk-live-123']]);
    expect(secretIds().sort()).toEqual([`${PREFIX}absent`, `${PREFIX}payments/api-key`]);
  });

  it('keeps a value for SECRET_CACHE_MS and a missing secret for MISSING_SECRET_CACHE_MS, then reads again', async () => {
    let now = 1_000_000;
    const secrets = resolver(() => now);
    await secrets.resolve(['payments/api-key', 'absent']);
    await Promise.all([
      secrets.resolve(['payments/api-key']),
      secrets.resolve(['payments/api-key', 'absent']),
    ]);
    expect(secretIds()).toHaveLength(2);

    now += MISSING_SECRET_CACHE_MS + 1;
    await secrets.resolve(['payments/api-key', 'absent']);
    expect(secretIds().filter((id) => id === `${PREFIX}absent`)).toHaveLength(2);
    expect(secretIds().filter((id) => id === `${PREFIX}payments/api-key`)).toHaveLength(1);

    now += SECRET_CACHE_MS;
    secretsManager
      .on(GetSecretValueCommand, { SecretId: `${PREFIX}payments/api-key` })
      .resolves({ SecretString: 'rotated' });
    expect((await secrets.resolve(['payments/api-key'])).get('payments/api-key')).toBe('rotated');
  });

  it('concurrent sends naming the same secret share one read', async () => {
    const secrets = resolver();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => secrets.resolve(['payments/api-key'])),
    );

    expect(results.every((values) => values.get('payments/api-key') === 'sk-live-123')).toBe(true);
    expect(secretIds()).toHaveLength(1);
  });

  it('a read that fails otherwise fails the resolve (the send is retried), is not kept, and never names a value', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: `${PREFIX}payments/api-key` })
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
      .resolves({ SecretString: 'sk-live-123' });
    const secrets = resolver();

    await expect(secrets.resolve(['payments/api-key'])).rejects.toThrow('Rate exceeded');
    expect((await secrets.resolve(['payments/api-key'])).get('payments/api-key')).toBe('sk-live-123');
  });

  it('refuses a binary secret, naming it and not its bytes', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: `${PREFIX}binary` })
      .resolves({ SecretBinary: new Uint8Array([1, 2, 3]) });

    await expect(resolver().resolve(['binary'])).rejects.toThrow(
      'secret switchyard/binary holds no text (SecretString): binary secrets are not read',
    );
  });
});
