import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEPLOYED_TOKEN_CACHE_MS } from '../../functions/api/scoped-tokens.js';
import type { SwitchyardSettings } from '../settings.js';

// What the REST API (api.ts) and the HTTP API (http-api.ts, `-c api=http`) share.

export interface SwitchyardApiProps {
  handler: lambda.IFunction;
  /** With `-c auth=token`: the Lambda REQUEST authorizer (functions/handlers/api-authorizer.ts). */
  authorizer?: lambda.IFunction;
  settings: SwitchyardSettings;
}

/**
 * How long API Gateway keeps an authorizer's answer per Authorization header: the most a revoked
 * scoped token still works (docs/deploying.md, "Scoped tokens").
 */
export const AUTHORIZER_CACHE_TTL = Duration.millis(DEPLOYED_TOKEN_CACHE_MS);

/** Routes served without credentials: the dashboard page asks for the key itself (api.md, Auth). */
export const OPEN_ROUTES = [
  { path: [], method: 'GET' },
  { path: ['openapi.json'], method: 'GET' },
  { path: ['assets', '{proxy+}'], method: 'GET' },
] as const;

/** The stage's access logs, kept as long as every other log of the stack. */
export function accessLogGroup(scope: Construct, settings: SwitchyardSettings): logs.LogGroup {
  return new logs.LogGroup(scope, 'AccessLogs', {
    retention: settings.logRetentionDays as logs.RetentionDays,
    removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
  });
}
