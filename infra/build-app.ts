import { Annotations, type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { profileWarnings } from './profile-warnings.js';
import { readSettings } from './settings.js';
import { SwitchyardStack } from './switchyard-stack.js';
import { readDeployedWorkflows } from './workflow-queues.js';

/** The Switchyard stack in `app`, from its context, with cdk-nag's AWS Solutions checks on the app. */
export function buildApp(app: App): SwitchyardStack {
  const settings = readSettings(app.node);
  const workflows = readDeployedWorkflows(settings.workflows);
  const stack = new SwitchyardStack(app, settings.stackName, { settings, workflows });
  for (const { id, message } of profileWarnings(settings)) Annotations.of(stack).addWarningV2(id, message);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
