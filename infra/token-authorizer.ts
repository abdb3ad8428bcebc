import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { keys } from '../functions/adapters/dynamodb/items.js';
import { HandlerFunction } from './constructs/handler-function.js';
import { METRICS_NAMESPACE, SERVICE_NAME } from './constructs/monitoring.js';
import type { SwitchyardTable } from './constructs/table.js';
import type { SwitchyardSettings } from './settings.js';

export interface TokenAuthorizer {
  function: HandlerFunction;
  /** The root secret: admin of every namespace, the one credential the deploy hands out. */
  rootSecret: secretsmanager.Secret;
}

/**
 * `-c auth=token`: the root secret, generated at deploy in Secrets Manager, and the Lambda authorizer
 * that checks it, or a scoped token's hash in the table, for every credentialed request. Its role
 * reads the root secret and the table's token items only (the `TOKENS` partition), nothing else.
 */
export function addTokenAuthorizer(
  scope: Construct,
  settings: SwitchyardSettings,
  store: SwitchyardTable,
): TokenAuthorizer {
  const rootSecret = new secretsmanager.Secret(scope, 'RootToken', {
    description: `Switchyard root token of ${settings.stackName}: admin of every namespace (-c auth=token)`,
    // Letters and digits only: never the `swy_` prefix of a scoped token, and safe in a header.
    generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
    removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
  });
  Validations.of(rootSecret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The root token is handed to operators, not to a client that could follow an automatic rotation; it is rotated by hand (docs/deploying.md, Scoped tokens), and the authorizer reads it again within 5 minutes.',
  });
  const fn = new HandlerFunction(scope, 'ApiAuthorizerFunction', {
    handler: 'api-authorizer',
    description: 'Switchyard API authorizer: the root token or a scoped token (-c auth=token)',
    memorySize: 512,
    timeout: Duration.seconds(10),
    environment: {
      TABLE_NAME: store.table.tableName,
      ROOT_TOKEN_SECRET_ARN: rootSecret.secretArn,
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    },
    settings,
  });
  fn.allow('ReadTokens', ['dynamodb:GetItem'], [store.table.tableArn], {
    'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keys.tokensPk()] },
  });
  fn.allow('ReadRootToken', ['secretsmanager:GetSecretValue'], [rootSecret.secretArn]);
  return { function: fn, rootSecret };
}
