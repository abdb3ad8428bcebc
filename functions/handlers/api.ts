import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Bus } from '../../engine/index.js';
import { handleApiGatewayEvent } from '../api/api-handler.js';
import { ApiService, type ApiStore } from '../api/api-service.js';
import type { ApiDeps } from '../api/router.js';
import { DEPLOYED_TOKEN_CACHE_MS } from '../api/scoped-tokens.js';
import { BUNDLED_BUSES } from '../aws/bus-factories.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import { queueRulesOf } from '../aws/queue-rules.js';
import { loadDashboard } from '../dashboard/load-dashboard.js';
import type { QueueRules } from '../manager/queue-rules.js';

export interface ApiHandlerDeps extends ManagerHandlerDeps {
  store: ApiStore;
  bus: Pick<Bus, 'ping' | 'inspectQueues'>;
  maxBodyBytes: number;
  dashboard?: ApiDeps['dashboard'];
  /** The deployment's queue rules a PUT definition must also satisfy. */
  queueRules?: QueueRules;
  /** `-c auth=token`: the Lambda authorizer's context is each request's principal (ApiDeps.authorizer). */
  authorizer?: boolean;
}

/** While the bus is down, a caller waits this long at most for the answer (the sweep sends later). */
const API_DRAIN_MAX_MS = 10_000;
/**
 * `?wait` deployed: none. A held request holds a 1 GB invocation and one of the API's reserved
 * concurrency for as long as it waits (50 open dashboard tabs took all 50); callers poll with
 * `If-None-Match` and back off instead, each unchanged answer a short 304 (docs/deploying.md).
 */
export const DEPLOYED_MAX_WAIT_SECONDS = 0;

export type ApiHandler = (event: APIGatewayProxyEvent, context?: Context) => Promise<APIGatewayProxyResult>;

/**
 * The HTTP API behind API Gateway (REST API, v1 proxy events). API Gateway checks the stack's
 * credentials (API key or IAM: the root); a request that also carries `Authorization: Bearer <scoped
 * token>` acts as that token, checked against the table's hashed tokens. With `-c auth=token`, API
 * Gateway's Lambda authorizer checks the bearer token and its context is who the request acts as;
 * the answer waits until the requests the call produced are sent, as Lambda freezes the container
 * once it returns.
 */
export function createApiHandler(deps: ApiHandlerDeps): ApiHandler {
  const apiDeps: ApiDeps = {
    service: new ApiService({
      manager: deps.manager,
      store: deps.store,
      bus: deps.bus,
      queueRules: deps.queueRules,
      // Scoped tokens found stay trusted this long: a revocation through another instance holds
      // within this delay (docs/deploying.md).
      tokenCacheMs: DEPLOYED_TOKEN_CACHE_MS,
    }),
    logger: deps.telemetry.logger,
    maxBodyBytes: deps.maxBodyBytes,
    dashboard: deps.dashboard,
    authorizer: deps.authorizer,
    maxWaitSeconds: DEPLOYED_MAX_WAIT_SECONDS,
  };
  return (event, context) =>
    drainingInvocation(deps, context, () => handleApiGatewayEvent(event, apiDeps), API_DRAIN_MAX_MS);
}

const fromEnv = fromEnvironment(BUNDLED_BUSES, async (container) =>
  createApiHandler({
    ...container,
    maxBodyBytes: container.env.maxBodyBytes,
    dashboard: await loadDashboard(),
    queueRules: queueRulesOf(container.env),
    authorizer: container.env.apiAuthorizer,
  }),
);

export const handler: ApiHandler = async (event, context) => (await fromEnv())(event, context);
