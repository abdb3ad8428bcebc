import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';

export interface SwitchyardApiProps {
  handler: lambda.IFunction;
  settings: SwitchyardSettings;
}

/** Routes served without credentials: the dashboard page asks for the key itself (api.md, Auth). */
const OPEN_ROUTES = [
  { path: [], method: 'GET' },
  { path: ['openapi.json'], method: 'GET' },
  { path: ['assets', '{proxy+}'], method: 'GET' },
] as const;

/**
 * The REST API (API keys and usage plans exist only on REST APIs) in front of the API function.
 * Everything requires credentials (an API key, or IAM with `-c auth=iam`) except the few open routes,
 * so a route added later is protected unless someone opens it here.
 */
export class SwitchyardApi extends Construct {
  readonly restApi: apigateway.RestApi;
  /** Only with API keys (the default). */
  readonly apiKey?: apigateway.ApiKey;

  constructor(scope: Construct, id: string, props: SwitchyardApiProps) {
    super(scope, id);
    const { settings } = props;
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    this.restApi = new apigateway.RestApi(this, 'Api', {
      restApiName: settings.stackName,
      description: `Switchyard workflow manager (${settings.stackName})`,
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      binaryMediaTypes: ['image/*', 'font/*'],
      // Execution logging needs the region's API Gateway CloudWatch role; it serves every REST API of
      // the account in the region, so it outlives this stack.
      cloudWatchRole: settings.api.createCloudWatchRole,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        throttlingRateLimit: settings.api.rateLimit,
        throttlingBurstLimit: settings.api.burstLimit,
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: settings.tracing,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.jsonWithStandardFields(),
      },
    });
    // The stack's ApiUrl output replaces the default `Endpoint` output.
    this.restApi.node.tryRemoveChild('Endpoint');
    this.addJsonErrors();

    const integration = new apigateway.LambdaIntegration(props.handler, {
      proxy: true,
      allowTestInvoke: false,
    });
    const credentials: apigateway.MethodOptions =
      settings.api.auth === 'iam'
        ? { authorizationType: apigateway.AuthorizationType.IAM }
        : { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: true };
    const everythingElse = this.restApi.root
      .addResource('{proxy+}')
      .addMethod('ANY', integration, credentials);
    this.acknowledgeCredentials(everythingElse, settings);
    for (const route of OPEN_ROUTES) {
      const resource = route.path.reduce<apigateway.IResource>(
        (parent, part) => parent.getResource(part) ?? parent.addResource(part),
        this.restApi.root,
      );
      const method = resource.addMethod(route.method, integration, {
        authorizationType: apigateway.AuthorizationType.NONE,
        apiKeyRequired: false,
      });
      this.acknowledgeOpen(method);
    }

    if (settings.api.auth === 'apiKey') {
      this.apiKey = new apigateway.ApiKey(this, 'Key', {
        description: `Switchyard API key (${settings.stackName})`,
      });
      const plan = this.restApi.addUsagePlan('UsagePlan', {
        description: 'Every Switchyard API key: throttling and a daily quota',
        throttle: { rateLimit: settings.api.rateLimit, burstLimit: settings.api.burstLimit },
        quota: { limit: settings.api.dailyQuota, period: apigateway.Period.DAY },
        apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
      });
      plan.addApiKey(this.apiKey);
    }
    this.acknowledgeApiRules(settings);
  }

  get url(): string {
    return this.restApi.url;
  }

  /** API Gateway's own refusals (no key, throttled, no route) in the API's error shape (api.md, Errors). */
  private addJsonErrors(): void {
    const body = '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}';
    for (const [id, type] of [
      ['Default4xx', apigateway.ResponseType.DEFAULT_4XX],
      ['Default5xx', apigateway.ResponseType.DEFAULT_5XX],
    ] as const) {
      this.restApi.addGatewayResponse(id, { type, templates: { 'application/json': body } });
    }
  }

  private acknowledgeCredentials(method: apigateway.Method, settings: SwitchyardSettings): void {
    if (settings.api.auth === 'apiKey') {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Protected by a required API key with a usage plan (ApiKeyRequired), the credential api.md chooses by default; -c auth=iam switches to IAM authorization.',
      });
    }
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Switchyard has no user pool: callers are services and operators with an API key (or IAM with -c auth=iam), per api.md, Auth.',
    });
  }

  private acknowledgeOpen(method: apigateway.Method): void {
    Validations.of(method).acknowledge(
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The dashboard page, its static assets and the OpenAPI document load without credentials (api.md, Auth); they hold no data, and the page asks for the API key for its API calls.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Public static content (dashboard page, assets, OpenAPI document): no authorizer of any kind applies.',
      },
    );
  }

  private acknowledgeApiRules(settings: SwitchyardSettings): void {
    Validations.of(this.restApi).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Lambda proxy integration: the API function validates every body, parameter and id itself and answers the JSON errors api.md specifies; API Gateway models would duplicate that with different error shapes.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'No WAF web ACL by default (a fixed monthly cost per API); every route except the static dashboard needs credentials and is throttled per stage and per key. Attach a web ACL to the stage where required.',
      },
    );
    if (settings.api.createCloudWatchRole) {
      const role = this.restApi.node.tryFindChild('CloudWatchRole');
      if (role) {
        Validations.of(role).acknowledge({
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
          reason:
            "API Gateway's account-wide logging role serves every REST API in the region, so it cannot be scoped to this API's log groups; AWS maintains this policy for exactly that role.",
        });
      }
    }
  }
}
