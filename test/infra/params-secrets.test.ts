import { describe, expect, test } from 'vitest';
import { assetsOf, bundleText } from './function-assets.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { synthStack } from './synth-stack.js';
import { asList, identityStatements, renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };

/*
 * `-c secretsPrefix`: the manager functions read the secrets `params` name from Secrets Manager under
 * that prefix, and no other. A secret's ARN is its name and a random six-character suffix
 * (https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_iam-policies.html):
 * the grant names the prefix and a wildcard.
 */

const MANAGERS = ['ApiFunction', 'RepliesFunction', 'TimersFunction', 'DeadLettersFunction'];

function secretGrants(context: Record<string, string>) {
  const synthesized = synthStack(context, { bundle: true });
  const grants = identityStatements(synthesized.template)
    .filter((statement) => asList(statement.Action).includes('secretsmanager:GetSecretValue'))
    .map((statement) => ({
      holder: statement.holder.replace(/RoleDefaultPolicy[A-Z0-9]+$/, ''),
      resources: asList(statement.Resource).map(renderValue),
    }));
  return { synthesized, grants };
}

describe('-c secretsPrefix=switchyard/', CDK, () => {
  test('each manager function may read the secrets under the prefix, nothing else; SECRETSMANAGER_PREFIX set; cdk-nag clean', () => {
    const { synthesized, grants } = secretGrants({ secretsPrefix: 'switchyard/' });
    expect(grants.map((grant) => grant.holder).sort()).toEqual([...MANAGERS].sort());
    for (const grant of grants)
      expect(grant.resources).toEqual([
        'arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:switchyard/*',
      ]);
    const environments = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'))
      .map(
        (fn) => (fn.Properties?.Environment as { Variables?: Record<string, string> } | undefined)?.Variables,
      )
      .filter((variables) => variables?.TABLE_NAME !== undefined);
    expect(environments.map((variables) => variables?.SECRETSMANAGER_PREFIX)).toEqual(
      environments.map(() => 'switchyard/'),
    );
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
    // The client is bundled only where it can be used: the API function sends requests.
    expect(bundleText(assetsOf(synthesized).ApiFunction)).toContain('SecretsManagerClient');
  });
});

describe('without -c secretsPrefix', CDK, () => {
  test('no function may read a params secret, none has SECRETSMANAGER_PREFIX, and the SQS bundles carry no Secrets Manager client', () => {
    const { synthesized, grants } = secretGrants({});
    expect(grants).toEqual([]);
    expect(JSON.stringify(synthesized.template.toJSON())).not.toContain('SECRETSMANAGER_PREFIX');
    for (const [id, asset] of Object.entries(assetsOf(synthesized)))
      expect(bundleText(asset), id).not.toContain('SecretsManagerClient');
  });

  test('a prefix that is not a Secrets Manager name is refused, saying what one is', () => {
    expect(() => synthStack({ secretsPrefix: 'team a/*' })).toThrow(
      '-c secretsPrefix=team a/*: a Secrets Manager name prefix is 1 to 200 letters, digits or /_+=.@- (e.g. switchyard/)',
    );
  });
});
