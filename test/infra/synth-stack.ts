import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/build-app.js';
import { REPO_ROOT } from '../../infra/paths.js';
import type { SwitchyardStack } from '../../infra/switchyard-stack.js';
import { assertAwsRules } from './aws-rules.js';

export const FIXTURE_WORKFLOWS = 'test/infra/fixtures/workflows.yaml';

/** cdk.json's context: the tests synthesize with the feature flags and defaults the CLI uses. */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
}

export interface SynthesizedStack {
  app: App;
  stack: SwitchyardStack;
  template: Template;
}

/** The configurations this test file synthesized and checked against AWS's own rules, by their `-c` values. */
const checked = new Set<string>();

/**
 * The app as `npx cdk synth -c key=value ...` builds it (the fixture workflows unless told otherwise),
 * its template checked against AWS's own rules (aws-rules.ts): a finding throws `AwsRulesError`.
 * Its functions are bundled only when asked (`bundle`: a test that reads their code): the template is
 * the same but for the assets' hashes, and esbuild's ten bundles take most of a synth's time.
 */
export function synthStack(
  context: Record<string, string> = {},
  options: { bundle?: boolean } = {},
): SynthesizedStack {
  const app = new App({
    context: {
      ...cdkJsonContext(),
      workflows: FIXTURE_WORKFLOWS,
      // What the CDK CLI sets to bundle only the stacks it deploys: here none (CDK stages the source).
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...context,
    },
  });
  const stack = buildApp(app);
  const template = Template.fromStack(stack);
  // Every configuration a test synthesizes meets AWS's own rules, or the synth throws saying why.
  const name =
    Object.entries(context)
      .map(([key, value]) => `-c ${key}=${value}`)
      .join(' ') || 'the defaults';
  if (!checked.has(name)) {
    assertAwsRules(name, join(app.outdir, stack.templateFile));
    checked.add(name);
  }
  return { app, stack, template };
}
