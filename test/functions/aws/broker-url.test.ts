import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { brokerUrl, readBrokerUrl } from '../../../functions/aws/broker-url.js';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:broker-AbCdEf';
const ENDPOINT = 'amqps://b-1234.mq.us-east-1.amazonaws.com:5671';
const client = new SecretsManagerClient({ region: 'us-east-1' });
const secrets = mockClient(client);

afterEach(() => {
  secrets.reset();
});

describe('Function: readBrokerUrl', () => {
  it('puts the secret user and password into the AMQPS endpoint', async () => {
    // Prepare
    secrets
      .on(GetSecretValueCommand, { SecretId: SECRET_ARN })
      .resolves({ SecretString: JSON.stringify({ username: 'switchyard', password: 'p4ssW0rd' }) });

    // Act
    const url = await readBrokerUrl(client, SECRET_ARN, ENDPOINT);

    // Assess
    expect(url).toBe('amqps://switchyard:p4ssW0rd@b-1234.mq.us-east-1.amazonaws.com:5671');
  });

  it('fails with the ARN, never the secret, when the secret is unusable', async () => {
    // Prepare
    secrets
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: '{"username":"switchyard","pw":"hunter2"}' })
      .rejectsOnce(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));

    // Act
    const malformed = await readBrokerUrl(client, SECRET_ARN, ENDPOINT).catch(
      (error: Error) => error.message,
    );
    const denied = await readBrokerUrl(client, SECRET_ARN, ENDPOINT).catch((error: Error) => error.message);

    // Assess
    expect(malformed).toBe(`the secret ${SECRET_ARN} lacks "username" or "password"`);
    expect(malformed).not.toContain('hunter2');
    expect(denied).toBe(
      `cannot read the broker credentials from ${SECRET_ARN}: AccessDeniedException: denied`,
    );
  });
});

describe('Function: brokerUrl', () => {
  it('percent-encodes credentials so that any character survives', () => {
    expect(brokerUrl(ENDPOINT, { username: 'a@b', password: 'p:w/d%' })).toBe(
      'amqps://a%40b:p%3Aw%2Fd%25@b-1234.mq.us-east-1.amazonaws.com:5671',
    );
  });
});
