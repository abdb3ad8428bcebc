import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readSettings } from './settings.js';
import { SwitchyardStack } from './switchyard-stack.js';
import { readDeployedWorkflows } from './workflow-queues.js';

/** The Switchyard stack in `app`, from its context, with cdk-nag's AWS Solutions checks on the app. */
export function buildApp(app: App): SwitchyardStack {
  const settings = readSettings(app.node);
  const workflows = readDeployedWorkflows(settings.workflows);
  const stack = new SwitchyardStack(app, settings.stackName, { settings, workflows });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
