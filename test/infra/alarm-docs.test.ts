import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Monitoring } from '../../infra/constructs/monitoring.js';
import { REPO_ROOT } from '../../infra/paths.js';
import { synthStack } from './synth-stack.js';

const CDK = { timeout: 120_000 };

/** The alarm names docs/deploying.md's "Alarms" table explains, `<Function>` for any function, `<n>` for a number. */
function documentedAlarms(): string[] {
  const text = readFileSync(join(REPO_ROOT, 'docs', 'deploying.md'), 'utf8');
  const section = text.slice(text.indexOf('## Alarms'), text.indexOf('## Production checklist'));
  return [...section.matchAll(/`…([A-Za-z<>]+)`/g)].map((match) => match[1] as string);
}

function undocumented(context: Record<string, string>): string[] {
  const { stack } = synthStack(context);
  const monitoring = stack.node.children.find((child): child is Monitoring => child instanceof Monitoring);
  if (!monitoring) throw new Error('no monitoring');
  const documented = documentedAlarms().map(
    (name) => new RegExp(`^${name.replace('<Function>', '[A-Za-z]+Function').replace('<n>', '[0-9]*')}$`),
  );
  expect(monitoring.alarms.length).toBeGreaterThan(10);
  return monitoring.alarms
    .map((alarm) => alarm.node.id)
    .filter((id) => !documented.some((pattern) => pattern.test(id)));
}

describe('docs/deploying.md explains every alarm of the stack', CDK, () => {
  test('SQS bus', () => {
    expect(undocumented({})).toEqual([]);
  });

  test('RabbitMQ bus', () => {
    expect(undocumented({ bus: 'rabbitmq' })).toEqual([]);
  });

  test('-c auth=token (the authorizer function)', () => {
    expect(undocumented({ auth: 'token' })).toEqual([]);
  });

  test('-c archive=true (the archive function and its failures)', () => {
    expect(undocumented({ archive: 'true' })).toEqual([]);
  });
});
