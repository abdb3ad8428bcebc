import { AwsSolutionsChecks } from 'cdk-nag';
import type { SynthesizedStack } from './synth-stack.js';

/** Findings cdk-nag still reports (errors and warnings), as readable lines. */
export function unacknowledgedFindings(synthesized: SynthesizedStack): string[] {
  const report = new AwsSolutionsChecks().validateScope(synthesized.app);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map(
      (resource) => `${violation.severity} ${violation.ruleName} at ${resource.constructPath}`,
    ),
  );
}
