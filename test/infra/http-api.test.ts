import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, test } from 'vitest';
import { DEPLOYED_TOKEN_CACHE_MS } from '../../functions/api/scoped-tokens.js';
import { readSettings } from '../../infra/settings.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };
const OPEN_ROUTES = ['GET /', 'GET /openapi.json', 'GET /assets/{proxy+}'];
const POOL_ARN = 'arn:aws:cognito-idp:us-east-1:123456789012:userpool/us-east-1_AbCdEfGhI';

/** The HTTP API's routes by route key, with their authorization type and authorizer. */
function routesByKey(synthesized: SynthesizedStack): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((route) => [
      String(route.Properties?.RouteKey),
      route.Properties ?? {},
    ]),
  );
}

describe(
  'SwitchyardStack with -c api=http (an HTTP API: a third of the REST API price a request)',
  CDK,
  () => {
    let synthesized: SynthesizedStack;
    beforeAll(() => {
      synthesized = synthStack({ api: 'http' });
    });

    test('no REST API, no API key: one HTTP API whose credentialed route takes the token authorizer (the default with api=http)', () => {
      const { template } = synthesized;
      for (const rest of ['RestApi', 'ApiKey', 'UsagePlan', 'Authorizer', 'Method'])
        template.resourceCountIs(`AWS::ApiGateway::${rest}`, 0);
      template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
      template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });

      const [authorizerId, authorizer] = Object.entries(
        resourcesOfType(template, 'AWS::ApiGatewayV2::Authorizer'),
      )[0] ?? ['', {}];
      template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
      // Payload format 1.0 and an IAM policy answer: the REST API's REQUEST authorizer function, unchanged.
      expect(authorizer.Properties).toMatchObject({
        AuthorizerType: 'REQUEST',
        AuthorizerPayloadFormatVersion: '1.0',
        IdentitySource: ['$request.header.Authorization'],
        AuthorizerResultTtlInSeconds: DEPLOYED_TOKEN_CACHE_MS / 1000,
      });
      expect(authorizer.Properties?.EnableSimpleResponses).not.toBe(true);
      expect(renderValue(authorizer.Properties?.AuthorizerUri)).toContain('ApiAuthorizerFunction');

      const routes = routesByKey(synthesized);
      expect(Object.keys(routes).sort()).toEqual(['ANY /{proxy+}', ...OPEN_ROUTES].sort());
      expect(routes['ANY /{proxy+}']).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
      for (const open of OPEN_ROUTES) expect(routes[open]).toMatchObject({ AuthorizationType: 'NONE' });
    });

    test("every route reaches the API function in payload format 1.0 (the REST API's proxy event)", () => {
      const integrations = Object.values(
        resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Integration'),
      );
      expect(integrations).toHaveLength(1);
      expect(integrations[0]?.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '1.0',
      });
      expect(renderValue(integrations[0]?.Properties?.IntegrationUri)).toContain('ApiFunction');
    });

    test('the $default stage is throttled as the REST stage is, and writes JSON access logs with the request id', () => {
      const stages = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Stage'));
      expect(stages).toHaveLength(1);
      const stage = stages[0]?.Properties ?? {};
      expect(stage).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      });
      const access = stage.AccessLogSettings as { DestinationArn: unknown; Format: string };
      expect(renderValue(access.DestinationArn)).toMatch(/HttpApiAccessLogs/);
      expect(JSON.parse(access.Format)).toMatchObject({
        requestId: '$context.requestId',
        status: '$context.status',
      });
    });

    test('the API alarms read the HTTP API (5xx and p99 latency by ApiId and stage); the output is its URL', () => {
      const { template } = synthesized;
      const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm');
      const serverErrors = Object.entries(alarms).find(([id]) =>
        id.startsWith('MonitoringApiServerErrors'),
      )?.[1];
      expect(serverErrors?.Properties).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: '5xx' });
      const dimensions = ((serverErrors?.Properties?.Dimensions ?? []) as { Name: string }[])
        .map((d) => d.Name)
        .sort();
      expect(dimensions).toEqual(['ApiId', 'Stage']);
      const latency = Object.entries(alarms).find(([id]) => id.startsWith('MonitoringApiLatency'))?.[1];
      expect(latency?.Properties).toMatchObject({ MetricName: 'Latency', ExtendedStatistic: 'p99' });
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(renderValue(outputs.ApiUrl?.Value)).toMatch(/^<HttpApi[A-Za-z0-9]+\.ApiEndpoint>\/$/);
      expect(outputs.ApiKeyId).toBeUndefined();
      expect(outputs.RootTokenSecretArn).toBeDefined();
    });

    test('cdk-nag clean', () => {
      expect(unacknowledgedFindings(synthesized)).toEqual([]);
    });

    test('-c auth=iam: SigV4 on the credentialed route; -c auth=cognito: a JWT authorizer on the pool and its app clients', () => {
      const iam = synthStack({ api: 'http', auth: 'iam' });
      expect(routesByKey(iam)['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'AWS_IAM' });
      iam.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
      iam.template.resourceCountIs('AWS::SecretsManager::Secret', 0);

      const cognito = synthStack({
        api: 'http',
        auth: 'cognito',
        // A pool in another region than the stack's: the issuer is the pool's region's.
        cognitoUserPoolArn: 'arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_AbCdEfGhI',
        cognitoClientIds: 'clientone123,clienttwo456',
      });
      expect(routesByKey(cognito)['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'JWT' });
      cognito.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: {
          Audience: ['clientone123', 'clienttwo456'],
          Issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEfGhI',
        },
      });
      expect(unacknowledgedFindings(cognito)).toEqual([]);
    });

    test('-c auth=jwt: any OpenID Connect issuer, for the audiences given', () => {
      const oidc = synthStack({
        api: 'http',
        auth: 'jwt',
        jwtIssuer: 'https://example.eu.auth0.com/',
        jwtAudience: 'https://switchyard.example.com, ops-cli',
      });
      expect(routesByKey(oidc)['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'JWT' });
      oidc.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: {
          Audience: ['https://switchyard.example.com', 'ops-cli'],
          Issuer: 'https://example.eu.auth0.com/',
        },
      });
      oidc.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
      expect(unacknowledgedFindings(oidc)).toEqual([]);
    });
  },
);

describe('-c api=http: what an HTTP API cannot do is refused at synth, naming the setting', () => {
  const settingsOf = (context: Record<string, string>) => readSettings(new App({ context }).node);

  test('the default stays the REST API with an API key; api=http defaults to the token authorizer', () => {
    expect(settingsOf({}).api).toMatchObject({ kind: 'rest', auth: 'apiKey' });
    expect(settingsOf({ api: 'http' }).api).toMatchObject({ kind: 'http', auth: 'token' });
    expect(settingsOf({ api: 'http', profile: 'production' }).api).toMatchObject({
      kind: 'http',
      auth: 'token',
    });
  });

  test.each([
    [{ api: 'http', auth: 'apiKey' }, /-c api=http has no API keys/],
    [{ api: 'http', waf: 'true' }, /AWS WAF attaches to REST APIs, not HTTP APIs/],
    [{ api: 'http', apiDailyQuota: '1000' }, /needs a usage plan, which exists on REST APIs only/],
    [{ api: 'http', auth: 'cognito', cognitoUserPoolArn: POOL_ARN }, /needs -c cognitoClientIds=/],
    [{ api: 'graphql' }, /-c api=graphql: expected one of rest, http/],
    [{ auth: 'jwt', jwtIssuer: 'https://id.example.com', jwtAudience: 'a' }, /-c auth=jwt needs -c api=http/],
    [{ api: 'http', auth: 'jwt' }, /-c auth=jwt needs -c jwtIssuer=https/],
    [
      { api: 'http', auth: 'jwt', jwtIssuer: 'https://id.example.com' },
      /jwtIssuer and -c jwtAudience go together/,
    ],
    [
      { api: 'http', auth: 'jwt', jwtIssuer: 'http://id.example.com', jwtAudience: 'a' },
      /an OpenID Connect issuer is an https:\/\/ URL/,
    ],
    [
      { api: 'http', auth: 'jwt', jwtIssuer: 'https://id.example.com', jwtAudience: 'a,,b' },
      /a comma-separated list of audiences, none empty/,
    ],
    [
      { api: 'http', auth: 'cognito', cognitoUserPoolArn: POOL_ARN, cognitoClientIds: 'ok123,not ok' },
      /"not ok" is not a Cognito app client id/,
    ],
  ])('%j', (context, message) => {
    expect(() => settingsOf(context)).toThrow(message);
  });
});
