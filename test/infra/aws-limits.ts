import type { CfnResource } from './template-queries.js';

/*
 * Documented AWS limits the stack depends on, checked on a synthesized template. Values that
 * CloudFormation fills in at deploy (a Ref, a GetAtt) count as UNRESOLVED_LENGTH characters: longer
 * than any ARN, queue URL or generated name the stack has, so a template that passes here passes there.
 */

/** Longer than any ARN or URL these references resolve to (an SQS queue URL: about 135 characters). */
export const UNRESOLVED_LENGTH = 160;

export const LIMITS = {
  /**
   * IAM and AWS STS quotas (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html):
   * "Role policy size: the total of all inline policies ... cannot exceed 10,240 characters" (IAM
   * does not count white space). CDK's AWS::IAM::Policy resources are inline policies of the role.
   */
  rolePolicyCharacters: 10_240,
  /** Same page: "Role trust policy length: 2,048 characters" (the default quota; it can be raised). */
  trustPolicyCharacters: 2_048,
  /**
   * Lambda quotas (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html):
   * "Function environment variables: 4 KB, for all environment variables associated with the
   * function, in aggregate".
   */
  environmentBytes: 4 * 1024,
} as const;

/** A CloudFormation value as the longest text it can become. */
export function resolvedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return JSON.stringify(value.map(resolvedText));
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map(resolvedText).join(separator);
    }
    if ('Ref' in object && object.Ref === 'AWS::AccountId') return '123456789012';
    if ('Ref' in object && object.Ref === 'AWS::Region') return 'ap-southeast-2';
    if ('Ref' in object && object.Ref === 'AWS::Partition') return 'aws-us-gov';
    if ('Ref' in object || 'Fn::GetAtt' in object || 'Fn::Select' in object || 'Fn::ImportValue' in object)
      return 'x'.repeat(UNRESOLVED_LENGTH);
    return JSON.stringify(
      Object.fromEntries(Object.entries(object).map(([key, v]) => [key, resolvedText(v)])),
    );
  }
  return '';
}

/** A policy document as IAM counts it: its JSON without white space, references resolved. */
function policyCharacters(document: unknown): number {
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      if (['Ref', 'Fn::GetAtt', 'Fn::Join', 'Fn::Select'].some((key) => key in object))
        return resolvedText(object);
      return Object.fromEntries(Object.entries(object).map(([key, v]) => [key, resolve(v)]));
    }
    return value;
  };
  return JSON.stringify(resolve(document)).length;
}

/** The logical ids of the roles a policy is attached to. */
function rolesOf(policy: CfnResource): string[] {
  return ((policy.Properties?.Roles ?? []) as unknown[]).flatMap((role) =>
    role && typeof role === 'object' && 'Ref' in role ? [String((role as { Ref: unknown }).Ref)] : [],
  );
}

/** Every documented limit the template breaks, as readable lines. */
export function limitFindings(resources: Record<string, CfnResource>): string[] {
  const findings: string[] = [];
  const entries = Object.entries(resources);
  for (const [id, role] of entries.filter(([, resource]) => resource.Type === 'AWS::IAM::Role')) {
    const inline = ((role.Properties?.Policies ?? []) as { PolicyDocument: unknown }[]).map((policy) =>
      policyCharacters(policy.PolicyDocument),
    );
    const attached = entries
      .filter(([, resource]) => resource.Type === 'AWS::IAM::Policy' && rolesOf(resource).includes(id))
      .map(([, policy]) => policyCharacters(policy.Properties?.PolicyDocument));
    const total = [...inline, ...attached].reduce((sum, size) => sum + size, 0);
    if (total > LIMITS.rolePolicyCharacters)
      findings.push(
        `${id}: inline policies of ${total} characters (IAM allows ${LIMITS.rolePolicyCharacters})`,
      );
    const trust = policyCharacters(role.Properties?.AssumeRolePolicyDocument);
    if (trust > LIMITS.trustPolicyCharacters)
      findings.push(
        `${id}: a trust policy of ${trust} characters (IAM allows ${LIMITS.trustPolicyCharacters})`,
      );
  }
  for (const [id, fn] of entries.filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')) {
    const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    const bytes = Object.entries(variables ?? {}).reduce(
      (sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(resolvedText(value)),
      0,
    );
    if (bytes > LIMITS.environmentBytes)
      findings.push(`${id}: an environment of ${bytes} bytes (Lambda allows ${LIMITS.environmentBytes})`);
  }
  return findings;
}

/** Condition operators that compare ARNs (IAM: "Amazon Resource Name (ARN) condition operators"), or text. */
const ARN_OPERATORS = new Set(['ArnEquals', 'ArnLike', 'StringEquals', 'StringLike']);

/**
 * Trust policies whose conditions AWS would never satisfy. IAM global condition context keys
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html):
 * aws:SourceArn is an ARN (ARN or string operators), aws:SourceAccount an account id (string
 * operators). EventBridge Scheduler, "Confused deputy prevention"
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html):
 * for scheduler.amazonaws.com, aws:SourceArn is a schedule group's ARN, "not a specific schedule or a
 * schedule name prefix".
 */
export function trustPolicyFindings(resources: Record<string, CfnResource>): string[] {
  const findings: string[] = [];
  for (const [id, role] of Object.entries(resources).filter(
    ([, resource]) => resource.Type === 'AWS::IAM::Role',
  )) {
    const document = role.Properties?.AssumeRolePolicyDocument as
      | { Statement?: Record<string, unknown>[] }
      | undefined;
    for (const statement of document?.Statement ?? []) {
      const service = JSON.stringify(
        (statement.Principal as { Service?: unknown } | undefined)?.Service ?? '',
      );
      for (const [operator, keys] of Object.entries(
        (statement.Condition ?? {}) as Record<string, Record<string, unknown>>,
      )) {
        for (const [key, value] of Object.entries(keys)) {
          const text = resolvedText(value);
          if (key === 'aws:SourceArn') {
            if (!ARN_OPERATORS.has(operator)) findings.push(`${id}: aws:SourceArn under ${operator}`);
            if (
              service.includes('scheduler.amazonaws.com') &&
              !/:schedule-group\/[0-9A-Za-z_.-]+$/.test(text)
            )
              findings.push(`${id}: Scheduler's aws:SourceArn is not a schedule group's ARN: ${text}`);
          }
          if (key === 'aws:SourceAccount' && !['StringEquals', 'StringLike'].includes(operator))
            findings.push(`${id}: aws:SourceAccount under ${operator}`);
        }
      }
    }
  }
  return findings;
}
