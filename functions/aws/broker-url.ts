import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * The AMQPS URL the RabbitMQ bus connects with: the broker's endpoint with the user and password of
 * its Secrets Manager secret (`{"username", "password"}`, the shape the Amazon MQ event source
 * mapping reads too). Neither the secret nor the URL is ever logged; errors name the secret's ARN only.
 */
export async function readBrokerUrl(
  client: SecretsManagerClient,
  secretArn: string,
  amqpsEndpoint: string,
): Promise<string> {
  let secretString: string | undefined;
  try {
    ({ SecretString: secretString } = await client.send(new GetSecretValueCommand({ SecretId: secretArn })));
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new Error(`cannot read the broker credentials from ${secretArn}: ${reason}`);
  }
  if (secretString === undefined) throw new Error(`the secret ${secretArn} holds no text`);
  return brokerUrl(amqpsEndpoint, parseCredentials(secretString, secretArn));
}

export interface BrokerCredentials {
  username: string;
  password: string;
}

/** The endpoint with the credentials in it, percent-encoded (amqplib decodes them). */
export function brokerUrl(amqpsEndpoint: string, credentials: BrokerCredentials): string {
  const url = new URL(amqpsEndpoint);
  url.username = encodeURIComponent(credentials.username);
  url.password = encodeURIComponent(credentials.password);
  return url.toString();
}

function parseCredentials(secretString: string, secretArn: string): BrokerCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    throw new Error(`the secret ${secretArn} is not JSON; expected {"username", "password"}`);
  }
  const { username, password } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') {
    throw new Error(`the secret ${secretArn} lacks "username" or "password"`);
  }
  return { username, password };
}
