import { App } from 'aws-cdk-lib';
import { buildApp } from './build-app.js';

// `npx cdk synth|deploy [-c bus=rabbitmq] [-c workflows=FILE] [-c stackName=NAME] ...`: the context
// keys are described in infra/README.md; cdk-nag's AWS Solutions checks run on every synth.
const app = new App();
buildApp(app);
app.synth();
