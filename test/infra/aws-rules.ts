import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SchemaValidator, TemplateFile } from '@aws/cloudformation-validate';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { App } from 'aws-cdk-lib';
import { limitFindings, trustPolicyFindings } from './aws-limits.js';
import type { CfnResource } from './template-queries.js';

/*
 * AWS's own rules, offline: each synthesized template against the CloudFormation resource provider
 * schemas (types, required properties, patterns, lengths, enums, bounds: the schemas
 * @aws/cloudformation-validate bundles, AWS's own offline validator) and against the AWS Control
 * Tower Guard rules (@cdklabs/cdk-validator-cfnguard, which ships the cfn-guard binary: nothing is
 * downloaded), and against the documented limits the stack depends on (aws-limits.ts). `synthStack`
 * checks every configuration it synthesizes, once per test file.
 */

/** A Guard rule the stack does not follow, why, and (when not all) which resources it spares. */
interface GuardException {
  reason: string;
  /** Logical ids the exception covers; absent: every resource the rule names. */
  resources?: RegExp;
  /** A fact the template must show for the exception to hold (a false positive of the rule). */
  holds?: (resource: CfnResource) => boolean;
}

/** The Control Tower rules a Switchyard stack does not follow, each with its reason. */
export const GUARD_EXCEPTIONS: Record<string, GuardException> = {
  api_gw_xray_enabled_check: {
    reason:
      'X-Ray bills per trace: the stage is traced with -c tracing=true, off by default (docs/deploying.md)',
  },
  api_gw_v2_authorization_type_configured_check: {
    reason:
      "-c api=http: the dashboard page, its assets and the OpenAPI document load without credentials (api.md, Auth), as on the REST API; every other route takes the stack's authorizer",
    holds: (route) =>
      ['GET /', 'GET /openapi.json', 'GET /assets/{proxy+}'].includes(String(route.Properties?.RouteKey)) &&
      (route.Properties?.AuthorizationType ?? 'NONE') === 'NONE',
  },
  cloudwatch_log_group_retention_period_check: {
    reason:
      'retention is the logRetentionDays setting (30 days, 90 in production): a year of every log is the operator’s choice',
  },
  cloudwatch_log_group_encrypted_check: {
    reason:
      'CloudWatch Logs encrypts every log group at rest with its own keys; a customer managed key adds a key policy and KMS charges per call',
  },
  lambda_function_public_access_prohibited_check: {
    reason:
      'API Gateway’s invoke permissions carry aws:SourceArn, this API’s execute-api ARN built with Fn::Join, which the rule cannot read (it takes a string or a Ref/GetAtt)',
    holds: (permission) =>
      permission.Properties?.Principal === 'apigateway.amazonaws.com' &&
      JSON.stringify(permission.Properties?.SourceArn).includes(':execute-api:'),
  },
  lambda_inside_vpc_check: {
    reason:
      'a function is in a VPC only to reach the Amazon MQ broker; on the SQS bus, and for the custom resources, a VPC reaches nothing more and costs endpoints (infra/README.md)',
  },
  mq_rabbit_deployment_mode_check: {
    reason:
      'a single broker is the cheap default to try Switchyard on; -c profile=production makes it a three-node cluster and the synth warns about a single one',
    holds: (broker) => broker.Properties?.DeploymentMode === 'SINGLE_INSTANCE',
  },
  s3_bucket_logging_enabled_check: {
    reason:
      'the archive bucket (-c archive=true) is written by one function and read by operators: server access logs would need a bucket of their own (CloudTrail data events record access, if wanted)',
    resources: /^ArchiveBucket[A-Z0-9]+$/,
  },
  s3_event_notifications_enabled_check: {
    reason: 'nothing reacts to a new archive object: it is read when someone looks for an old job',
    resources: /^ArchiveBucket[A-Z0-9]+$/,
  },
  s3_bucket_object_lock_enabled_check: {
    reason:
      'the archive expires its objects after archiveDays (a lifecycle rule); Object Lock would keep them past it, and versioning already keeps an overwritten or deleted object',
    resources: /^ArchiveBucket[A-Z0-9]+$/,
  },
  sqs_dlq_check: {
    reason: 'these are the dead-letter queues (and the on-failure destination) themselves',
    resources: /(DeadLetters|Failures)[A-Z0-9]+$/,
  },
};

/** Readable lines for what the schemas say is wrong (anything above INFO). */
function schemaFindings(validator: SchemaValidator, file: string): string[] {
  return validator
    .validate(new TemplateFile(file), 'us-east-1')
    .filter((diagnostic) => diagnostic.severity !== 'INFO' && diagnostic.severity !== 'DEBUG')
    .map(
      (diagnostic) =>
        `${diagnostic.severity} ${diagnostic.ruleId} ${diagnostic.entity?.logicalId ?? ''} ${diagnostic.propertyPath ?? ''}: ${diagnostic.message}`,
    );
}

function resourcesIn(file: string): Record<string, CfnResource> {
  return (JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, CfnResource> }).Resources;
}

/** The Control Tower Guard rules the cdk-validator-cfnguard package ships. */
const CONTROL_TOWER_RULES = join(
  dirname(createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard/package.json')),
  'rules',
  'control-tower',
  'cfn-guard',
);

/**
 * The rule files that name a resource type these templates have: Guard parses every file it is
 * given, and the 60 of the 237 that can apply take a quarter of the time of all of them.
 */
function guardRulesFor(files: readonly string[]): string[] {
  const types = new Set(
    files.flatMap((file) => Object.values(resourcesIn(file)).map((resource) => resource.Type)),
  );
  return readdirSync(CONTROL_TOWER_RULES, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.guard'))
    .map((name) => join(CONTROL_TOWER_RULES, name))
    .filter((rule) =>
      [...readFileSync(rule, 'utf8').matchAll(/AWS::[A-Za-z0-9]+::[A-Za-z0-9]+/g)].some(([type]) =>
        types.has(type),
      ),
    );
}

/** Guard's violations that no exception covers, by template file, as readable lines. */
function guardFindings(files: readonly string[]): Map<string, string[]> {
  // The plugin reads only the template files (appConstruct is for plugins that walk the tree).
  const guard = new CfnGuardValidator({
    controlTowerRulesEnabled: false,
    rules: guardRulesFor(files),
    maxBuffer: 256 * 1024 * 1024,
  });
  const report = guard.validate({ templatePaths: [...files], appConstruct: new App() });
  const resources = new Map(files.map((file) => [file, resourcesIn(file)]));
  const findings = new Map<string, string[]>();
  for (const violation of report.violations) {
    const exception = GUARD_EXCEPTIONS[violation.ruleName];
    for (const { resourceLogicalId: id, templatePath } of violation.violatingResources) {
      const resource = resources.get(templatePath)?.[id];
      const excused =
        exception !== undefined &&
        (!exception.resources || exception.resources.test(id)) &&
        (!exception.holds || (resource !== undefined && exception.holds(resource)));
      if (excused) continue;
      const lines = findings.get(templatePath) ?? [];
      lines.push(`Guard ${violation.ruleName} at ${id}: ${violation.description ?? ''}`);
      findings.set(templatePath, lines);
    }
  }
  return findings;
}

let schemas: SchemaValidator | undefined;

/**
 * What AWS's own rules find in synthesized templates, by configuration (empty lists: nothing).
 * @param templates template files by configuration
 */
export function awsRuleFindings(templates: ReadonlyMap<string, string>): Record<string, string[]> {
  schemas ??= new SchemaValidator();
  const validator = schemas;
  const guard = guardFindings([...templates.values()]);
  return Object.fromEntries(
    [...templates].map(([name, file]) => {
      const resources = resourcesIn(file);
      return [
        name,
        [
          ...schemaFindings(validator, file),
          ...(guard.get(file) ?? []),
          ...limitFindings(resources),
          ...trustPolicyFindings(resources),
        ],
      ];
    }),
  );
}

/** Thrown by `synthStack` for a template AWS's own rules find fault with. */
export class AwsRulesError extends Error {
  constructor(configuration: string, findings: readonly string[]) {
    super(`AWS's own rules find fault with the template of ${configuration}:\n${findings.join('\n')}`);
    this.name = 'AwsRulesError';
  }
}

/**
 * Checks one synthesized template (synth-stack.ts calls it for every configuration it synthesizes)
 * against the CloudFormation schemas, the Guard rules and the documented limits.
 */
export function assertAwsRules(configuration: string, file: string): void {
  const findings = awsRuleFindings(new Map([[configuration, file]]))[configuration] ?? [];
  if (findings.length > 0) throw new AwsRulesError(configuration, findings);
}
