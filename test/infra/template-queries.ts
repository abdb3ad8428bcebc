import type { Template } from 'aws-cdk-lib/assertions';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
  UpdatePolicy?: Record<string, unknown>;
}

export interface PolicyStatement {
  /** Logical id of the policy or role that holds the statement. */
  holder: string;
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export function resourcesOfType(template: Template, type: string): Record<string, CfnResource> {
  return template.findResources(type) as Record<string, CfnResource>;
}

/** A CloudFormation value as text, intrinsics as `<LogicalId>` or `<LogicalId.Attr>`: what cdk-nag prints. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('Ref' in object) return `<${String(object.Ref)}>`;
    if ('Fn::GetAtt' in object) return `<${(object['Fn::GetAtt'] as string[]).join('.')}>`;
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map(renderValue).join(separator);
    }
  }
  return JSON.stringify(value);
}

export function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Every statement of every identity policy: AWS::IAM::Policy resources and roles' inline policies. */
export function identityStatements(template: Template): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  for (const [id, policy] of Object.entries(resourcesOfType(template, 'AWS::IAM::Policy'))) {
    const document = policy.Properties?.PolicyDocument as { Statement: Omit<PolicyStatement, 'holder'>[] };
    statements.push(...document.Statement.map((statement) => ({ ...statement, holder: id })));
  }
  for (const [id, role] of Object.entries(resourcesOfType(template, 'AWS::IAM::Role'))) {
    const inline = (role.Properties?.Policies ?? []) as {
      PolicyDocument: { Statement: Omit<PolicyStatement, 'holder'>[] };
    }[];
    for (const policy of inline)
      statements.push(...policy.PolicyDocument.Statement.map((statement) => ({ ...statement, holder: id })));
  }
  return statements;
}

/** API Gateway methods by `METHOD /path`, the path rebuilt from the resources' PathParts. */
export function methodsByRoute(template: Template): Record<string, Record<string, unknown>> {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const pathOf = (resourceId: unknown): string => {
    const ref = (resourceId as { Ref?: string }).Ref;
    if (ref === undefined) return '';
    const resource = resources[ref];
    if (!resource?.Properties) throw new Error(`no API resource ${ref}`);
    return `${pathOf(resource.Properties.ParentId)}/${String(resource.Properties.PathPart)}`;
  };
  const routes: Record<string, Record<string, unknown>> = {};
  for (const method of Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))) {
    const properties = method.Properties ?? {};
    routes[`${String(properties.HttpMethod)} ${pathOf(properties.ResourceId) || '/'}`] = properties;
  }
  return routes;
}
