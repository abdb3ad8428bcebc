import { describe, expect, it } from 'vitest';
import { formatDefinitionError, loadWorkflows } from '../../../engine/index.js';

const errorsOf = (yaml: string, replyQueue?: string) =>
  loadWorkflows(yaml, { file: 'flows.yaml', ...(replyQueue ? { replyQueue } : {}) }).errors.map(
    formatDefinitionError,
  );

const withQueue = (queue: string) =>
  `workflows:\n  - name: w\n    steps:\n      - name: a\n        queue: ${JSON.stringify(queue)}\n`;

describe('Queue names in definitions (RabbitMQ: 255 bytes, no "amq.", not the reply queue)', () => {
  it('counts bytes, not characters: 200 × "é" is 400 bytes', () => {
    expect(errorsOf(withQueue('é'.repeat(200)))).toEqual([
      'flows.yaml:5: workflow "w", step "a": queue "éééééééééééééééééééé…" has 400 bytes in UTF-8; RabbitMQ takes at most 255',
    ]);
  });

  it('accepts 127 × "é" (254 bytes) and 255 ASCII characters', () => {
    expect(errorsOf(withQueue('é'.repeat(127)))).toEqual([]);
    expect(errorsOf(withQueue('q'.repeat(255)))).toEqual([]);
  });

  it('refuses the "amq." prefix RabbitMQ reserves for itself', () => {
    expect(errorsOf(withQueue('amq.work'))).toEqual([
      'flows.yaml:5: workflow "w", step "a": queue "amq.work" starts with "amq.", which RabbitMQ reserves for its own queues',
    ]);
  });

  it('refuses control characters and blank names', () => {
    expect(errorsOf(withQueue('a\u0000b'))).toEqual([
      'flows.yaml:5: workflow "w", step "a": queue "a\\u0000b" holds a control character',
    ]);
    expect(errorsOf(withQueue('  '))).toEqual([
      'flows.yaml:5: workflow "w", step "a": "queue" must be a queue name, got a blank one',
    ]);
  });

  it('refuses the default reply queue, set or as the step name', () => {
    const message = (step: string) =>
      `workflow "w", step "${step}": queue "workflow-manager" is the manager's reply queue: a request sent there would come back as its own reply`;
    expect(errorsOf(withQueue('workflow-manager'))).toEqual([`flows.yaml:5: ${message('a')}`]);
    expect(errorsOf('workflows:\n  - name: w\n    steps:\n      - name: workflow-manager\n')).toEqual([
      `flows.yaml:4: ${message('workflow-manager')}`,
    ]);
  });

  it("refuses a configured reply queue, and still the original's (another manager on the broker may consume it)", () => {
    expect(errorsOf(withQueue('replies'), 'replies')).toEqual([
      `flows.yaml:5: workflow "w", step "a": queue "replies" is the manager's reply queue: a request sent there would come back as its own reply`,
    ]);
    expect(errorsOf(withQueue('workflow-manager'), 'replies')).toEqual([
      `flows.yaml:5: workflow "w", step "a": queue "workflow-manager" is named like the manager's own queues ("workflow-manager…"): a request sent there would reach the manager, not a worker`,
    ]);
  });

  it("refuses every queue named like the manager's own: dead letters, switchyard's exchanges and deployed queues", () => {
    for (const queue of [
      'workflow-manager.dead-letters',
      'workflow-manager-dlq',
      'replies.dead-letters',
      'switchyard.dead-letters',
      'switchyard-timers',
    ]) {
      expect(errorsOf(withQueue(queue), 'replies'), queue).toEqual([
        expect.stringContaining(`queue "${queue}" is named like the manager's own queues`),
      ]);
    }
    expect(errorsOf(withQueue('switchyards'), 'replies')).toEqual([]);
  });

  it("checks the steps of tasks, and a step name longer than RabbitMQ's limit", () => {
    const long = `s${'x'.repeat(255)}`;
    const yaml = `workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n        steps:\n          - name: ${long}\n`;
    expect(errorsOf(yaml)).toEqual([
      `flows.yaml:10: workflow "w", task "t", step "${long}": queue "${long.slice(0, 20)}…" has 256 bytes in UTF-8; RabbitMQ takes at most 255`,
    ]);
  });
});

describe('vhosts per workflow', () => {
  it('takes at most 16 (each is a connection of its own, two with replies)', () => {
    const vhosts = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `v${i}`));
    const yaml = (n: number) =>
      `workflows:\n  - name: w\n    vhosts: ${vhosts(n)}\n    steps:\n      - name: a\n`;
    expect(errorsOf(yaml(16))).toEqual([]);
    expect(errorsOf(yaml(300))).toEqual([
      'flows.yaml:3: workflow "w": "vhosts" lists 300 virtual hosts; a workflow may run on at most 16',
    ]);
  });

  it('refuses a vhost name longer than 255 bytes', () => {
    const yaml = `workflows:\n  - name: w\n    vhosts: [ "${'é'.repeat(128)}" ]\n    steps:\n      - name: a\n`;
    expect(errorsOf(yaml)).toEqual([
      `flows.yaml:3: workflow "w": vhost "${'é'.repeat(20)}…" has 256 bytes in UTF-8; RabbitMQ takes at most 255`,
    ]);
  });
});
