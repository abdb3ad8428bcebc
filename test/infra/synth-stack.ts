import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/build-app.js';
import { REPO_ROOT } from '../../infra/paths.js';
import type { SwitchyardStack } from '../../infra/switchyard-stack.js';

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

/**
 * The template file of every configuration this test file synthesized, by its `-c` values: the
 * last describe of the file checks each against AWS's own rules (aws-rules.ts).
 */
export const synthesizedTemplates = new Map<string, string>();

/** The app as `npx cdk synth -c key=value ...` builds it (the fixture workflows unless told otherwise). */
export function synthStack(context: Record<string, string> = {}): SynthesizedStack {
  const app = new App({ context: { ...cdkJsonContext(), workflows: FIXTURE_WORKFLOWS, ...context } });
  const stack = buildApp(app);
  const template = Template.fromStack(stack);
  const name =
    Object.entries(context)
      .map(([key, value]) => `-c ${key}=${value}`)
      .join(' ') || 'defaults';
  synthesizedTemplates.set(name, join(app.outdir, stack.templateFile));
  return { app, stack, template };
}
