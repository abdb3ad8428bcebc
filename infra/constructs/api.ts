import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';
import { AUTHORIZER_CACHE_TTL, accessLogGroup, OPEN_ROUTES, type SwitchyardApiProps } from './api-common.js';

/**
 * The REST API (API keys and usage plans exist only on REST APIs) in front of the API function.
 * Everything requires credentials (an API key; IAM with `-c auth=iam`; a Cognito JWT with
 * `-c auth=cognito`; the root or a scoped token with `-c auth=token`) except the few open routes,
 * so a route added later is protected unless someone opens it here.
 */
export class SwitchyardApi extends Construct {
  readonly restApi: apigateway.RestApi;
  /** Only with API keys (the default). */
  readonly apiKey?: apigateway.ApiKey;
  /** With `-c waf=true`. */
  readonly webAcl?: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: SwitchyardApiProps) {
    super(scope, id);
    const { settings } = props;
    const accessLogs = accessLogGroup(this, settings);
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
    this.addJsonErrors(settings);

    const integration = new apigateway.LambdaIntegration(props.handler, {
      proxy: true,
      allowTestInvoke: false,
    });
    const credentials = this.credentials(settings, props.authorizer);
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
        description: 'Every Switchyard API key: throttling (and a daily quota with -c apiDailyQuota)',
        throttle: { rateLimit: settings.api.rateLimit, burstLimit: settings.api.burstLimit },
        // No quota by default: job starts, long polls and the dashboard all count against it.
        quota:
          settings.api.dailyQuota > 0
            ? { limit: settings.api.dailyQuota, period: apigateway.Period.DAY }
            : undefined,
        apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
      });
      plan.addApiKey(this.apiKey);
    }
    if (settings.api.waf) this.webAcl = this.addWebAcl(settings);
    this.acknowledgeApiRules(settings);
  }

  /**
   * What the credentialed routes require: an API key (default), IAM (SigV4), a Cognito JWT, or a
   * bearer token the Lambda authorizer accepts.
   */
  private credentials(settings: SwitchyardSettings, handler?: lambda.IFunction): apigateway.MethodOptions {
    if (settings.api.auth === 'iam') return { authorizationType: apigateway.AuthorizationType.IAM };
    if (settings.api.auth === 'token') {
      if (!handler) throw new Error('-c auth=token needs the authorizer function');
      const authorizer = new apigateway.RequestAuthorizer(this, 'TokenAuthorizer', {
        handler,
        identitySources: [apigateway.IdentitySource.header('Authorization')],
        resultsCacheTtl: AUTHORIZER_CACHE_TTL,
      });
      return { authorizationType: apigateway.AuthorizationType.CUSTOM, authorizer };
    }
    if (settings.api.auth === 'cognito') {
      const pool = cognito.UserPool.fromUserPoolArn(
        this,
        'UserPool',
        settings.api.cognitoUserPoolArn as string,
      );
      const authorizer = new apigateway.CognitoUserPoolsAuthorizer(this, 'JwtAuthorizer', {
        cognitoUserPools: [pool],
        identitySource: apigateway.IdentitySource.header('Authorization'),
      });
      return { authorizationType: apigateway.AuthorizationType.COGNITO, authorizer };
    }
    return { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: true };
  }

  /**
   * A regional web ACL on the stage: AWS managed rules (common, known bad inputs, IP reputation) and a
   * rate rule per source address. The common rule set's 8 KB body limit is only counted: job inputs
   * and signals may be up to the API's own body limit (256 KiB).
   */
  private addWebAcl(settings: SwitchyardSettings): wafv2.CfnWebACL {
    const visibility = (metricName: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const managed = (
      name: string,
      priority: number,
      excluded: string[] = [],
    ): wafv2.CfnWebACL.RuleProperty => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ruleActionOverrides: excluded.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
        },
      },
      visibilityConfig: visibility(name),
    });
    const acl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: `Switchyard API of ${settings.stackName} - AWS managed rules and a rate limit per address`,
      visibilityConfig: visibility(`${settings.stackName}-api`),
      rules: [
        {
          name: 'RatePerAddress',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: settings.api.wafRateLimit,
              aggregateKeyType: 'IP',
              evaluationWindowSec: 300,
            },
          },
          visibilityConfig: visibility('RatePerAddress'),
        },
        managed('AWSManagedRulesAmazonIpReputationList', 1),
        managed('AWSManagedRulesCommonRuleSet', 2, ['SizeRestrictions_BODY']),
        managed('AWSManagedRulesKnownBadInputsRuleSet', 3),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'WebAclAssociation', {
      resourceArn: this.restApi.deploymentStage.stageArn,
      webAclArn: acl.attrArn,
    });
    return acl;
  }

  get url(): string {
    return this.restApi.url;
  }

  /** API Gateway's own refusals (no key, throttled, no route) in the API's error shape (api.md, Errors). */
  private addJsonErrors(settings: SwitchyardSettings): void {
    const body = '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}';
    for (const [id, type] of [
      ['Default4xx', apigateway.ResponseType.DEFAULT_4XX],
      ['Default5xx', apigateway.ResponseType.DEFAULT_5XX],
    ] as const) {
      this.restApi.addGatewayResponse(id, { type, templates: { 'application/json': body } });
    }
    if (settings.api.auth === 'token') {
      // No Authorization header (UNAUTHORIZED), or the authorizer's Deny (ACCESS_DENIED): a 401 with
      // the API's own code, so the dashboard asks for a token, not a key.
      const body =
        '{"error":{"code":"unauthorized","message":"send Authorization: Bearer with the root token or a valid scoped token"}}';
      for (const [id, type] of [
        ['NoToken', apigateway.ResponseType.UNAUTHORIZED],
        ['TokenRefused', apigateway.ResponseType.ACCESS_DENIED],
      ] as const) {
        this.restApi.addGatewayResponse(id, {
          type,
          statusCode: '401',
          templates: { 'application/json': body },
        });
      }
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
    if (settings.api.auth !== 'cognito') {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-COG4',
        reason:
          'No user pool unless -c auth=cognito: callers are services and operators with an API key (IAM with -c auth=iam, a root or scoped token checked by a Lambda authorizer with -c auth=token), per api.md, Auth.',
      });
    }
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
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Lambda proxy integration: the API function validates every body, parameter and id itself and answers the JSON errors api.md specifies; API Gateway models would duplicate that with different error shapes.',
    });
    if (!settings.api.waf) {
      Validations.of(this.restApi).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'No WAF web ACL by default (a fixed monthly cost per API); every route except the static dashboard needs credentials and is throttled per stage and per key. -c waf=true adds one.',
      });
    }
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
