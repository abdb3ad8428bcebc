import { parseArgs } from 'node:util';
import { cdkCloud } from './cdk-cloud.js';
import { runSmoke, type SmokeBus } from './smoke.js';

// npm run smoke:aws -- --profile P [--bus sqs|rabbitmq] [--api rest|http] [--stack-prefix SwitchyardSmoke]
const { values } = parseArgs({
  options: {
    profile: { type: 'string' },
    bus: { type: 'string', multiple: true },
    'stack-prefix': { type: 'string', default: 'SwitchyardSmoke' },
    api: { type: 'string', default: 'rest' },
  },
});
if (!values.profile) {
  console.error(
    'usage: npm run smoke:aws -- --profile PROFILE [--bus sqs|rabbitmq]... [--api rest|http] [--stack-prefix NAME]',
  );
  process.exit(2);
}
const buses = (values.bus?.length ? values.bus : ['sqs', 'rabbitmq']) as SmokeBus[];
for (const bus of buses) {
  if (bus !== 'sqs' && bus !== 'rabbitmq') {
    console.error(`--bus ${bus}: expected sqs or rabbitmq`);
    process.exit(2);
  }
}
if (values.api !== 'rest' && values.api !== 'http') {
  console.error(`--api ${values.api}: expected rest or http`);
  process.exit(2);
}
const api = values.api;
const log = (line: string) => console.log(line);
const results = await runSmoke(
  cdkCloud({ profile: values.profile, stackPrefix: values['stack-prefix'], api, log }),
  {
    buses,
    log,
  },
);
for (const result of results) console.log(`${result.bus}: ${result.ok ? 'passed' : 'FAILED'}`);
process.exit(results.every((result) => result.ok) ? 0 : 1);
