import { Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import {
  HttpIamAuthorizer,
  HttpJwtAuthorizer,
  HttpLambdaAuthorizer,
  HttpLambdaResponseType,
  HttpUserPoolAuthorizer,
} from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';
import { AUTHORIZER_CACHE_TTL, accessLogGroup, OPEN_ROUTES, type SwitchyardApiProps } from './api-common.js';

/**
 * What an access log line holds: HTTP APIs have their own `$context` variables
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-logging-variables.html).
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  integrationLatency: '$context.integrationLatency',
  authorizerError: '$context.authorizer.error',
  integrationError: '$context.integrationErrorMessage',
};

/**
 * `-c api=http`: an HTTP API in front of the API function, at $1.00 a million requests against the
 * REST API's $3.50 (https://aws.amazon.com/api-gateway/pricing/), with what that costs: no API keys or
 * usage plans (credentials are a token through the Lambda authorizer, the default here; IAM; a
 * Cognito JWT; or any OpenID Connect issuer's JWT), no AWS WAF, and API Gateway's own refusals in
 * its own shape (`{"message":…}`).
 * The integration sends payload format 1.0, the REST API's proxy event, so the API function and the
 * authorizer serve both. The routes and their credentials are the REST API's: everything needs them
 * but the open routes.
 */
export class SwitchyardHttpApi extends Construct {
  readonly httpApi: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;

  constructor(scope: Construct, id: string, props: SwitchyardApiProps) {
    super(scope, id);
    const { settings } = props;
    const accessLogs = accessLogGroup(this, settings);
    this.httpApi = new apigwv2.HttpApi(this, 'Api', {
      apiName: settings.stackName,
      description: `Switchyard workflow manager (${settings.stackName})`,
      createDefaultStage: false,
    });
    this.stage = this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.api.rateLimit, burstLimit: settings.api.burstLimit },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        format: apigateway.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    const integration = new HttpLambdaIntegration('ApiFunction', props.handler, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_1_0,
    });
    this.httpApi.addRoutes({
      path: '/{proxy+}',
      methods: [apigwv2.HttpMethod.ANY],
      integration,
      authorizer: this.authorizer(settings, props.authorizer),
    });
    for (const route of OPEN_ROUTES) {
      const [open] = this.httpApi.addRoutes({
        path: `/${route.path.join('/')}`,
        methods: [apigwv2.HttpMethod.GET],
        integration,
        authorizer: new apigwv2.HttpNoneAuthorizer(),
      });
      if (open) acknowledgeOpen(open);
    }
  }

  /** The $default stage serves the API at the root of its endpoint; the REST API's URL ends with `/` too. */
  get url(): string {
    return `${this.httpApi.apiEndpoint}/`;
  }

  /** The credentialed routes' authorizer: the token authorizer (default), IAM, a Cognito or any OIDC issuer's JWT. */
  private authorizer(settings: SwitchyardSettings, handler: SwitchyardApiProps['authorizer']) {
    if (settings.api.auth === 'iam') return new HttpIamAuthorizer();
    if (settings.api.auth === 'jwt') {
      const jwt = settings.api.jwt as NonNullable<SwitchyardSettings['api']['jwt']>;
      return new HttpJwtAuthorizer('JwtAuthorizer', jwt.issuer, { jwtAudience: jwt.audience });
    }
    if (settings.api.auth === 'cognito') {
      const pool = cognito.UserPool.fromUserPoolArn(
        this,
        'UserPool',
        settings.api.cognitoUserPoolArn as string,
      );
      // The issuer is the pool's region's, which need not be the stack's.
      const poolRegion = (settings.api.cognitoUserPoolArn as string).split(':')[3];
      return new HttpUserPoolAuthorizer('JwtAuthorizer', pool, {
        userPoolRegion: poolRegion,
        userPoolClients: (settings.api.cognitoClientIds ?? []).map((clientId, n) =>
          cognito.UserPoolClient.fromUserPoolClientId(this, `UserPoolClient${n}`, clientId),
        ),
      });
    }
    if (!handler) throw new Error('-c api=http -c auth=token needs the authorizer function');
    // Payload format 1.0 and an IAM policy answer: the REST API's REQUEST authorizer, unchanged.
    return new HttpLambdaAuthorizer('TokenAuthorizer', handler, {
      responseTypes: [HttpLambdaResponseType.IAM],
      identitySource: ['$request.header.Authorization'],
      resultsCacheTtl: AUTHORIZER_CACHE_TTL,
    });
  }
}

function acknowledgeOpen(route: apigwv2.HttpRoute): void {
  Validations.of(route).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      'The dashboard page, its static assets and the OpenAPI document load without credentials (api.md, Auth); they hold no data, and the page asks for the token for its API calls.',
  });
}
