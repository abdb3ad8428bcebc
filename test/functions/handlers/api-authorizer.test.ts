import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalOfContext } from '../../../engine/access/principal-context.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { ScopedTokens } from '../../../functions/api/scoped-tokens.js';
import { createApiAuthorizer } from '../../../functions/handlers/api-authorizer.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';

const ROOT_SECRET = 'rootSecretGeneratedBySecretsManager0123456789';
const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/api/ns/team-a/workflow/greet';

function anAuthorizerEvent(headers: Record<string, string>): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    resource: '/{proxy+}',
    path: '/api/ns/team-a/workflow/greet',
    httpMethod: 'POST',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    pathParameters: { proxy: 'api/ns/team-a/workflow/greet' },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: { identity: { sourceIp: '192.0.2.7' } } as never,
  };
}

describe('Handler: api-authorizer (DynamoDB Local)', () => {
  let dynamo: DynamoDbLocal;
  let tokens: ScopedTokens;
  const telemetry = recordingTelemetry();
  let authorize: ReturnType<typeof createApiAuthorizer>;

  beforeAll(async () => {
    dynamo = await startDynamoDbLocal();
    const tableName = uniqueTableName('authorizer');
    await createSwitchyardTable(dynamo.client, tableName);
    tokens = new ScopedTokens({ store: new DynamoDbStore({ client: dynamo.client, tableName }) });
    authorize = createApiAuthorizer({ tokens, rootSecret: async () => ROOT_SECRET, telemetry });
  }, 90_000);

  afterAll(async () => {
    await dynamo?.stop();
  });

  it('accepts the root secret as admin of every namespace, for every route of the stage', async () => {
    // Act
    const result = await authorize(anAuthorizerEvent({ Authorization: `Bearer ${ROOT_SECRET}` }));

    // Assess
    expect(result.principalId).toBe('root');
    expect(result.context).toEqual({ namespace: '*', role: 'admin' });
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*',
      },
    ]);
  });

  it('accepts a scoped token with its id, description, namespace and role as the context; a revoked one is denied', async () => {
    // Prepare
    const { token, secret } = await tokens.create({ namespace: 'team-a', role: 'run', description: 'ci' });

    // Act
    const accepted = await authorize(anAuthorizerEvent({ authorization: `Bearer ${secret}` }));
    await tokens.revoke(token.id);
    const afterRevoke = await authorize(anAuthorizerEvent({ authorization: `Bearer ${secret}` }));

    // Assess
    expect(accepted.principalId).toBe(token.id);
    expect(accepted.context).toEqual({
      tokenId: token.id,
      tokenDescription: 'ci',
      namespace: 'team-a',
      role: 'run',
    });
    // The job's history names the token by its description too (engine/access/actor.ts).
    expect(principalOfContext(accepted.context)).toEqual({
      tokenId: token.id,
      tokenDescription: 'ci',
      namespace: 'team-a',
      role: 'run',
    });
    expect(afterRevoke.policyDocument.Statement).toEqual([expect.objectContaining({ Effect: 'Deny' })]);
    expect(afterRevoke.context).toBeUndefined();
  });

  it('denies unknown tokens, a wrong root secret and malformed headers, and logs no secret', async () => {
    // Prepare
    telemetry.logs.length = 0;
    const { secret } = await tokens.create({ namespace: 'team-b', role: 'read', description: 'kept' });
    const unknown = `swy_${'A'.repeat(43)}`;
    const refused: Record<string, string>[] = [
      { Authorization: `Bearer ${unknown}` },
      // The right hash prefix is the id; the whole hash must match too.
      { Authorization: `Bearer ${secret}x` },
      { Authorization: `Bearer ${ROOT_SECRET}0` },
      { Authorization: ROOT_SECRET },
      { Authorization: `Basic ${Buffer.from(`u:${ROOT_SECRET}`).toString('base64')}` },
      { Authorization: 'Bearer' },
      {},
    ];

    // Act
    const results = await Promise.all(refused.map((headers) => authorize(anAuthorizerEvent(headers))));

    // Assess
    for (const result of results) {
      expect(result.principalId).toBe('refused');
      expect(result.policyDocument.Statement).toEqual([
        {
          Action: 'execute-api:Invoke',
          Effect: 'Deny',
          Resource: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*',
        },
      ]);
      expect(result.context).toBeUndefined();
    }
    const logged = JSON.stringify(telemetry.logs);
    expect(telemetry.logged('request refused: no valid token').length).toBe(refused.length);
    for (const leaked of [ROOT_SECRET, secret, unknown, 'swy_'])
      expect(logged, 'a secret in the logs').not.toContain(leaked);
  });
});
