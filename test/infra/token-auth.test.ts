import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { DEPLOYED_TOKEN_CACHE_MS } from '../../functions/api/scoped-tokens.js';
import { AUTHORIZER_CACHE_TTL } from '../../infra/constructs/api-common.js';
import { REPO_ROOT } from '../../infra/paths.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import {
  asList,
  identityStatements,
  methodsByRoute,
  renderValue,
  resourcesOfType,
} from './template-queries.js';

const CDK = { timeout: 120_000 };
const OPEN_ROUTES = ['GET /', 'GET /openapi.json', 'GET /assets/{proxy+}'];

describe('SwitchyardStack with -c auth=token (Lambda authorizer: root token or scoped tokens)', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({ auth: 'token' });
  });

  test('every credentialed method uses the REQUEST authorizer on the Authorization header, cached 30 s; no API key', () => {
    const { template } = synthesized;
    const [authorizerId, authorizer] = Object.entries(
      resourcesOfType(template, 'AWS::ApiGateway::Authorizer'),
    )[0] ?? ['', {}];
    expect(authorizer.Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: DEPLOYED_TOKEN_CACHE_MS / 1000,
    });
    expect(renderValue(authorizer.Properties?.AuthorizerUri)).toContain('ApiAuthorizerFunction');
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    const routes = methodsByRoute(template);
    const credentialed = Object.entries(routes).filter(([route]) => !OPEN_ROUTES.includes(route));
    expect(credentialed.map(([route]) => route)).toEqual(['ANY /{proxy+}']);
    for (const [, method] of credentialed) {
      expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
      expect(method.ApiKeyRequired).toBeUndefined();
    }
    for (const open of OPEN_ROUTES)
      expect(routes[open]).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    template.resourceCountIs('AWS::ApiGateway::UsagePlan', 0);
    // No header, or the authorizer's Deny: a 401 with the API's own code (the dashboard then asks for a token).
    for (const type of ['UNAUTHORIZED', 'ACCESS_DENIED'])
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        StatusCode: '401',
        ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthorized"') },
      });
  });

  test('the root token is generated in Secrets Manager; the outputs give its ARN and the command that reads it', () => {
    const { template } = synthesized;
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 48, ExcludePunctuation: true }),
    });
    const outputs = template.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['RootTokenSecretArn', 'RootTokenCommand']));
    expect(Object.keys(outputs)).not.toContain('ApiKeyId');
    expect(renderValue(outputs.RootTokenCommand?.Value)).toMatch(
      /^aws secretsmanager get-secret-value --secret-id <RootToken[A-Z0-9]+> --query SecretString --output text$/,
    );
  });

  test('the API function trusts the authorizer (API_AUTHORIZER=true); the authorizer has its log retention and alarms', () => {
    const { template } = synthesized;
    const functions = Object.values(resourcesOfType(template, 'AWS::Lambda::Function'));
    const variables = (description: string): Record<string, unknown> => {
      const fn = functions.find((candidate) =>
        String(candidate.Properties?.Description).startsWith(description),
      );
      return (
        (fn?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}
      );
    };
    expect(variables('Switchyard HTTP API').API_AUTHORIZER).toBe('true');
    expect(Object.keys(variables('Switchyard API authorizer')).sort()).toEqual([
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_SERVICE_NAME',
      'ROOT_TOKEN_SECRET_ARN',
      'TABLE_NAME',
    ]);
    const groups = Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup'));
    expect(groups.find(([id]) => id.startsWith('ApiAuthorizerFunctionLogs'))?.[1].Properties).toMatchObject({
      RetentionInDays: expect.any(Number),
    });
    const alarms = Object.keys(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    expect(alarms.filter((id) => /ApiAuthorizerFunction(Errors|Throttles)/.test(id))).toHaveLength(2);
  });

  test('the authorizer role reads the token items (GetItem, TOKENS partition) and the root secret, nothing more', () => {
    const statements = identityStatements(synthesized.template)
      .filter((statement) => statement.holder.startsWith('ApiAuthorizerFunctionRole'))
      .map((statement) => ({
        actions: asList(statement.Action),
        resources: asList(statement.Resource).map(renderValue),
        condition: (statement as { Condition?: unknown }).Condition,
      }));
    expect(statements).toEqual([
      {
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [expect.stringMatching(/^<ApiAuthorizerFunctionLogs[A-Z0-9]+\.Arn>$/)],
        condition: undefined,
      },
      {
        actions: ['dynamodb:GetItem'],
        resources: [expect.stringMatching(/^<StoreTable[A-Z0-9]+\.Arn>$/)],
        condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['TOKENS'] } },
      },
      {
        actions: ['secretsmanager:GetSecretValue'],
        resources: [expect.stringMatching(/^<RootToken[A-Z0-9]+>$/)],
        condition: undefined,
      },
    ]);
    // No other role may read the root token.
    const readers = identityStatements(synthesized.template).filter((statement) =>
      asList(statement.Resource)
        .map(renderValue)
        .some((resource) => /^<RootToken[A-Z0-9]+>$/.test(resource)),
    );
    expect(readers.map((statement) => statement.holder.replace(/[A-Z0-9]{8}$/, ''))).toEqual([
      expect.stringMatching(/^ApiAuthorizerFunctionRoleDefaultPolicy/),
    ]);
  });

  test('cdk-nag clean', () => {
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });

  test('the other modes are unchanged: no authorizer function, no root secret, the API key by default', () => {
    const byDefault = synthStack({});
    byDefault.template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    byDefault.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(methodsByRoute(byDefault.template)['ANY /{proxy+}']).toMatchObject({
      ApiKeyRequired: true,
      AuthorizationType: 'NONE',
    });
    const functions = Object.values(resourcesOfType(byDefault.template, 'AWS::Lambda::Function'));
    for (const fn of functions) {
      expect(String(fn.Properties?.Description)).not.toMatch(/authorizer/);
      const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      expect(variables?.API_AUTHORIZER).toBeUndefined();
    }
    const iam = synthStack({ auth: 'iam' });
    iam.template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    expect(methodsByRoute(iam.template)['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'AWS_IAM' });
  });
});

describe('the revocation delay docs/deploying.md states is the stack authorizer cache', () => {
  test('the cache TTL is DEPLOYED_TOKEN_CACHE_MS, and the docs state that many seconds', () => {
    expect(AUTHORIZER_CACHE_TTL.toMilliseconds()).toBe(DEPLOYED_TOKEN_CACHE_MS);
    const deploying = readFileSync(join(REPO_ROOT, 'docs', 'deploying.md'), 'utf8');
    const start = deploying.indexOf('## Scoped tokens');
    const section = deploying.slice(start, deploying.indexOf('\n## ', start + 1));
    expect(section).toContain(`within ${DEPLOYED_TOKEN_CACHE_MS / 1000} seconds`);
  });
});
