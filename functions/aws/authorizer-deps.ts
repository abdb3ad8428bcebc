import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DEFAULT_RETRY_POLICY } from '../adapters/dynamodb/retry.js';
import { DynamoDbTable } from '../adapters/dynamodb/table.js';
import { DynamoDbTokens } from '../adapters/dynamodb/tokens.js';
import type { BearerPrincipalDeps } from '../api/bearer-principal.js';
import { ScopedTokens } from '../api/scoped-tokens.js';
import { AUTHORIZER_SDK_TIMEOUTS, sdkClientConfig } from './sdk-clients.js';

/** A caller waits for the authorizer: fewer, shorter retries than the manager's. */
const AUTHORIZER_RETRIES = { ...DEFAULT_RETRY_POLICY, maxAttempts: 4, maxDelayMs: 1_000 };

/** A root secret rotated by hand (docs/deploying.md) holds within this long, plus the authorizer cache. */
const ROOT_SECRET_REFRESH_MS = 5 * 60_000;

/**
 * What the API authorizer checks a bearer against, built once per container from its environment:
 * the stack's root secret (Secrets Manager, read again every 5 minutes) and the scoped tokens in the
 * table (its TokenStore role only).
 */
export function authorizerDepsFromEnv(env: NodeJS.ProcessEnv = process.env): BearerPrincipalDeps {
  const tableName = required(env, 'TABLE_NAME');
  const secretArn = required(env, 'ROOT_TOKEN_SECRET_ARN');
  const secrets = new SecretsManagerClient(sdkClientConfig(AUTHORIZER_SDK_TIMEOUTS));
  const rootSecret = refreshing(ROOT_SECRET_REFRESH_MS, async () => {
    const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (!SecretString) throw new Error(`the secret ${secretArn} holds no string`);
    return SecretString;
  });
  const store = new DynamoDbTokens(
    new DynamoDbTable(
      new DynamoDBClient(sdkClientConfig(AUTHORIZER_SDK_TIMEOUTS)),
      tableName,
      AUTHORIZER_RETRIES,
    ),
  );
  // No cache of its own: API Gateway's cache is the only delay before a revocation holds.
  return { tokens: new ScopedTokens({ store, cacheMs: 0 }), rootSecret };
}

/** A value read again once it is `maxAgeMs` old; a failed read is not kept. */
function refreshing(maxAgeMs: number, read: () => Promise<string>): () => Promise<string> {
  let current: { value: Promise<string>; readAt: number } | undefined;
  return () => {
    const now = Date.now();
    if (!current || now - current.readAt >= maxAgeMs) {
      const value = read();
      current = { value, readAt: now };
      value.catch(() => {
        if (current?.value === value) current = undefined;
      });
    }
    return current.value;
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`the authorizer needs ${name} (infra/switchyard-stack.ts sets it)`);
  return value;
}
