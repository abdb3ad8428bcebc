import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { contextOfPrincipal } from '../../engine/index.js';
import { DEFAULT_RETRY_POLICY } from '../adapters/dynamodb/retry.js';
import { DynamoDbTable } from '../adapters/dynamodb/table.js';
import { DynamoDbTokens } from '../adapters/dynamodb/tokens.js';
import { type BearerPrincipalDeps, principalOfBearer } from '../api/bearer-principal.js';
import { lowerCasedHeaders } from '../api/lower-cased-headers.js';
import { ScopedTokens } from '../api/scoped-tokens.js';
import { createLambdaTelemetry, type LambdaTelemetry } from '../aws/lambda-telemetry.js';
import { lazy } from '../aws/lazy.js';
import { AUTHORIZER_SDK_TIMEOUTS, sdkClientConfig } from '../aws/sdk-clients.js';

export type ApiAuthorizer = (
  event: APIGatewayRequestAuthorizerEvent,
  context?: Context,
) => Promise<APIGatewayAuthorizerResult>;

export interface ApiAuthorizerDeps extends BearerPrincipalDeps {
  telemetry: Pick<LambdaTelemetry, 'logger' | 'startInvocation'>;
}

/**
 * API Gateway's Lambda REQUEST authorizer with `-c auth=token`: the bearer secret of the
 * Authorization header is the stack's root secret (admin of `*`) or a scoped token, looked up by its
 * hash in the table on every call (API Gateway caches the answer per header for 30 s:
 * DEPLOYED_TOKEN_CACHE_MS). The policy allows the whole API, since one cached answer serves every
 * route; the context tells the API function who the request acts as. Anything else is denied
 * (401 through the stack's gateway response). No secret is ever logged.
 */
export function createApiAuthorizer(deps: ApiAuthorizerDeps): ApiAuthorizer {
  return async (event, context) => {
    deps.telemetry.startInvocation(context);
    const principal = await principalOfBearer(lowerCasedHeaders(event.headers).authorization, deps);
    if (!principal) {
      deps.telemetry.logger.info('request refused: no valid token', {
        sourceIp: event.requestContext?.identity?.sourceIp,
      });
      // A Deny, not a thrown "Unauthorized": a refused token is no failure of this function (its
      // error alarm stays for real ones); the stack answers API Gateway's ACCESS_DENIED as a 401.
      return policy('refused', 'Deny', event.methodArn);
    }
    return {
      ...policy(principal.tokenId ?? 'root', 'Allow', event.methodArn),
      context: contextOfPrincipal(principal),
    };
  };
}

/** A policy on the whole stage: one cached answer serves every route (the cache key is the header). */
function policy(
  principalId: string,
  effect: 'Allow' | 'Deny',
  methodArn: string,
): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: wholeApiOf(methodArn) }],
    },
  };
}

/** `arn:…:execute-api:<region>:<account>:<api>/<stage>/<method>/<path>` to every method of the stage. */
function wholeApiOf(methodArn: string): string {
  const [api, stage] = methodArn.split('/');
  return `${api}/${stage}/*`;
}

/** A caller waits for the authorizer: fewer, shorter retries than the manager's. */
const AUTHORIZER_RETRIES = { ...DEFAULT_RETRY_POLICY, maxAttempts: 4, maxDelayMs: 1_000 };

/** A root secret rotated by hand (docs/deploying.md) holds within this long, plus the authorizer cache. */
const ROOT_SECRET_REFRESH_MS = 5 * 60_000;

const fromEnv = lazy(async () => {
  const tableName = required('TABLE_NAME');
  const secretArn = required('ROOT_TOKEN_SECRET_ARN');
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
  return createApiAuthorizer({
    // No cache of its own: API Gateway's cache is the only delay before a revocation holds.
    tokens: new ScopedTokens({ store, cacheMs: 0 }),
    rootSecret,
    telemetry: createLambdaTelemetry({ logLevel: 'info' }),
  });
});

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

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`the authorizer needs ${name} (infra/switchyard-stack.ts sets it)`);
  return value;
}

export const handler: ApiAuthorizer = async (event, context) => (await fromEnv())(event, context);
