import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { contextOfPrincipal } from '../../engine/index.js';
import { type BearerPrincipalDeps, principalOfBearer } from '../api/bearer-principal.js';
import { lowerCasedHeaders } from '../api/lower-cased-headers.js';
import { authorizerDepsFromEnv } from '../aws/authorizer-deps.js';
import { createLambdaTelemetry, type LambdaTelemetry } from '../aws/lambda-telemetry.js';
import { lazy } from '../aws/lazy.js';

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

const fromEnv = lazy(async () =>
  createApiAuthorizer({
    ...authorizerDepsFromEnv(),
    telemetry: createLambdaTelemetry({ logLevel: 'info' }),
  }),
);

export const handler: ApiAuthorizer = async (event, context) => (await fromEnv())(event, context);
