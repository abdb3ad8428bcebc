import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/definition/load.js';
import { parseSource } from '../../../engine/definition/parse-source.js';
import { CATCH_UPS, SCHEDULE_KEYS } from '../../../engine/definition/schedules.js';
import { ROOT_KEYS, STEP_KEYS, TASK_KEYS, WORKFLOW_KEYS } from '../../../engine/definition/validate.js';
import { CORPUS_DIR } from '../../support/definition-corpus.js';

const ROOT = join(import.meta.dirname, '../../..');
const SCHEMA_FILE = 'schema/workflows.schema.json';
const THIS_TEST = 'npx vitest run -c vitest.unit.config.ts test/engine/definition/workflow-schema.test.ts';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  definitions?: Record<string, SchemaNode>;
  items?: SchemaNode;
  description?: string;
  enum?: unknown[];
  [keyword: string]: unknown;
}

const schema = JSON.parse(await readFile(join(ROOT, SCHEMA_FILE), 'utf8')) as SchemaNode;
const checkAgainstSchema = new Ajv({ allErrors: true, strict: false }).compile(schema);
const definitions = schema.definitions as Record<string, SchemaNode>;

/** What the schema and the validator each say of a document. */
function verdicts(document: unknown): { schema: boolean; validator: boolean; problems: string } {
  const text = JSON.stringify(document);
  const loaded = loadWorkflows(text);
  const schemaAccepts = checkAgainstSchema(document);
  return {
    schema: schemaAccepts,
    validator: loaded.errors.length === 0,
    problems: `${text}\nvalidator: ${loaded.errors.map((error) => error.message).join('; ') || 'accepts'}\nschema: ${
      schemaAccepts ? 'accepts' : JSON.stringify(checkAgainstSchema.errors)
    }`,
  };
}

/** A valid one-step workflow with `changes` applied to the step (or to the workflow, the task, the file). */
function documentWith(
  where: 'file' | 'workflow' | 'step' | 'task' | 'schedule',
  changes: Record<string, unknown>,
) {
  const step = { name: 'work', ...(where === 'step' ? changes : {}) };
  const task = {
    name: 'each',
    itemListKey: 'items',
    steps: [{ name: 'one' }],
    ...(where === 'task' ? changes : {}),
  };
  const schedule = { cron: '0 6 * * 1-5', ...(where === 'schedule' ? changes : {}) };
  const workflow = {
    name: 'flow',
    steps: [step, { name: 'fan', task: 'each' }],
    tasks: [task],
    schedules: [schedule],
    ...(where === 'workflow' ? changes : {}),
  };
  return { workflows: [workflow], ...(where === 'file' ? changes : {}) };
}

describe(`${SCHEMA_FILE}: the workflow format for editors, checked against the validator`, () => {
  it.each([
    [
      'the document',
      schema,
      ROOT_KEYS,
      'its top-level "properties"',
      'ROOT_KEYS in engine/definition/validate.ts',
    ],
    [
      'a workflow',
      definitions.workflow,
      WORKFLOW_KEYS,
      'definitions.workflow.properties',
      'WORKFLOW_KEYS in engine/definition/validate.ts',
    ],
    [
      'a step',
      definitions.step,
      STEP_KEYS,
      'definitions.step.properties',
      'STEP_KEYS in engine/definition/validate.ts',
    ],
    [
      'a task',
      definitions.task,
      TASK_KEYS,
      'definitions.task.properties',
      'TASK_KEYS in engine/definition/validate.ts',
    ],
    [
      'a schedule',
      definitions.schedule,
      SCHEDULE_KEYS,
      'definitions.schedule.properties',
      'SCHEDULE_KEYS in engine/definition/schedules.ts',
    ],
  ])(
    '%s: the schema has exactly the keys the validator accepts',
    (what, node, validatorKeys, where, list) => {
      const schemaKeys = Object.keys(node?.properties ?? {});
      const lacking = validatorKeys.filter((key) => !schemaKeys.includes(key));
      const extra = schemaKeys.filter((key) => !validatorKeys.includes(key));
      expect(
        lacking,
        `the validator (${list}) accepts keys of ${what} that ${SCHEMA_FILE} lacks: ${lacking.join(', ')}. Add each to ${where} ` +
          'with a "description" (what it does, its default) and its rules (type, pattern, enum, minimum…), then run ' +
          `${THIS_TEST}`,
      ).toEqual([]);
      expect(
        extra,
        `${SCHEMA_FILE} has keys of ${what} that the validator (${list}) refuses: ${extra.join(', ')}. Remove them from ${where}, or teach the validator them`,
      ).toEqual([]);
    },
  );

  it('describes every key, for the editor to show as the author types', () => {
    const undescribed: string[] = [];
    const walk = (node: SchemaNode, path: string) => {
      for (const [key, property] of Object.entries(node.properties ?? {})) {
        if (typeof property !== 'object') continue;
        if (!property.description) undescribed.push(`${path}.properties.${key}`);
      }
    };
    walk(schema, '(top)');
    for (const [name, node] of Object.entries(definitions)) walk(node, `definitions.${name}`);
    expect(undescribed, `give these a "description" in ${SCHEMA_FILE}`).toEqual([]);
  });

  it('names the same choices as the validator: step types and schedule catch-ups', () => {
    expect(definitions.schedule?.properties?.catchUp?.enum).toEqual(CATCH_UPS);
    for (const type of ['worker', 'signal', 'Signal', 'sleep']) {
      const verdict = verdicts(documentWith('step', { type }));
      expect(verdict.schema, verdict.problems).toBe(verdict.validator);
    }
  });

  const samples: [string, 'file' | 'workflow' | 'step' | 'task' | 'schedule', Record<string, unknown>][] = [
    ...['flow-2', 'a_b', 'A', '1st', '-x', 'has space', 'naïve', '__start__'].map(
      (name) => ['a workflow name', 'workflow', { name }] as [string, 'workflow', Record<string, unknown>],
    ),
    ...['b2', 'x-y', '9', 'stëp', ''].map(
      (name) => ['a step name', 'step', { name }] as [string, 'step', Record<string, unknown>],
    ),
    ...['30s', '5m', '1h30m', '0.5s', '250ms', '7d', ' 5m ', '0s', '5', '5 parsecs', '-3s', '1x', ''].flatMap(
      (duration) =>
        [
          ['a step timeout', 'step', { timeout: duration }],
          ['a retry delay', 'step', { retryDelay: duration }],
          ['a workflow timeout', 'workflow', { timeout: duration }],
        ] as [string, 'step' | 'workflow', Record<string, unknown>][],
    ),
    ...[-1, 0, 3, 100, 101, 1.5, 'three'].map(
      (retries) => ['retries', 'step', { retries }] as [string, 'step', Record<string, unknown>],
    ),
    ...[0, 1, 2.5].map(
      (maxRunning) =>
        ['maxRunning', 'workflow', { maxRunning }] as [string, 'workflow', Record<string, unknown>],
    ),
    ...[0, 1, -1].map(
      (concurrency) => ['concurrency', 'task', { concurrency }] as [string, 'task', Record<string, unknown>],
    ),
    ...['team-a', 'Team_2', '2team', 'a/b', 'x'.repeat(65)].map(
      (namespace) => ['a namespace', 'file', { namespace }] as [string, 'file', Record<string, unknown>],
    ),
    ...['team-a.', 'a_b-c.d', 'space here', '', 'x'.repeat(65), 'amq.x'].map(
      (queuePrefix) =>
        ['a queue prefix', 'file', { queuePrefix }] as [string, 'file', Record<string, unknown>],
    ),
    ['a step queue', 'step', { queue: 'orders' }],
    ['a step queue', 'step', { queue: 'amq.work' }],
    ['a step queue', 'step', { queue: 'switchyard-work' }],
    ['a step queue', 'step', { queue: 'switchyard.work' }],
    ['a step queue', 'step', { queue: 'workflow-manager.dead-letters' }],
    ['a step queue', 'step', { queue: 'switchyards' }],
    ['a step queue', 'step', { queue: 'x'.repeat(256) }],
    ['depends', 'step', { depends: ['__start__'] }],
    ['depends', 'step', { depends: 'work' }],
    ['a join without depends', 'step', { join: 'none_failed' }],
    [
      'a retry policy',
      'step',
      { retries: 3, retryDelay: '1s', backoffRate: 3, maxRetryDelay: '1m', jitter: 'full' },
    ],
    ['a retry policy', 'step', { retries: 3, retryDelay: '1s', backoffRate: 0.5 }],
    ['a retry policy', 'step', { retries: 3, backoffRate: 3 }],
    ['a retry policy', 'step', { retries: 3, retryDelay: '1s', jitter: 'some' }],
    ['a retry policy', 'step', { retries: 3, retryOn: ['timeout', { errorMatches: '503' }] }],
    ['a retry policy', 'step', { retries: 3, retryOn: ['crash'] }],
    ['a retry policy', 'step', { retryOn: ['timeout'] }],
    ['a retry policy', 'step', { type: 'signal', retryOn: ['timeout'] }],
    ['a loop', 'step', { repeat: { until: 'output.done', max: 10, delay: '5s' } }],
    ['a loop', 'step', { repeat: { until: 'output.done' } }],
    ['a loop', 'step', { repeat: { until: 'output.done', max: 1001 } }],
    ['a loop', 'step', { repeat: { until: 'output.done', max: 3, every: '1s' } }],
    ['a loop on a signal step', 'step', { type: 'signal', repeat: { until: 'output.done', max: 3 } }],
    ['a sleep', 'step', { sleep: '10m' }],
    ['a sleep', 'step', { sleep: 'soon' }],
    ['a sleep', 'step', { sleep: { until: 'input.at' } }],
    ['a sleep', 'step', { sleep: { at: 'input.at' } }],
    ['a sleep with retries', 'step', { sleep: '1m', retries: 2 }],
    ['a fail step', 'step', { fail: { message: 'input.reason' } }],
    ['a fail step', 'step', { fail: 'no' }],
    ['a fail step with a queue', 'step', { fail: { message: 'input.reason' }, queue: 'q' }],
    ['an output', 'step', { output: '{"a": input.b}' }],
    ['otherwise with when', 'step', { otherwise: true, when: 'true' }],
    ['a join', 'step', { join: 'sometimes', depends: ['fan'] }],
    ...['all_completed', 'none_failed', 'any_completed'].map(
      (join) => ['a join', 'step', { join, depends: ['fan'] }] as [string, 'step', Record<string, unknown>],
    ),
    ['continueOnError', 'step', { continueOnError: 'yes' }],
    ['params', 'step', { params: ['a'] }],
    ['a signal step', 'step', { type: 'signal', retries: 2 }],
    ['a signal step', 'step', { type: 'signal', queue: 'q' }],
    ['a step running a workflow', 'step', { workflow: 'other', queue: 'q' }],
    ['a step running a workflow', 'step', { workflow: 'other', version: 2 }],
    ['a step running a workflow', 'step', { workflow: 'other', version: 0 }],
    ['a version without a workflow', 'step', { version: 2 }],
    ['a fan-out step with a timeout', 'step', { task: 'each', timeout: '5m' }],
    ['an empty itemListKey', 'task', { itemListKey: '' }],
    ['an itemKey', 'task', { itemKey: 'item' }],
    ['a catch-up', 'schedule', { catchUp: 'latest' }],
    ['a catch-up', 'schedule', { catchUp: 'some' }],
    ['a schedule input', 'schedule', { input: 'x' }],
    ['a schedule without cron', 'schedule', { cron: undefined }],
    ['vhosts', 'workflow', { vhosts: ['/', 'billing'] }],
    ['vhosts', 'workflow', { vhosts: 'billing' }],
    ['an onFailure workflow', 'workflow', { onFailure: 'alert' }],
    ['an onFailure workflow', 'workflow', { onFailure: 'not a name' }],
    ['search attributes', 'workflow', { searchAttributes: { customer: 'input.customer' } }],
    ['search attributes', 'workflow', { searchAttributes: ['customer'] }],
    ['search attributes', 'workflow', { searchAttributes: { '1st': 'input.a' } }],
    ['search attributes', 'workflow', { searchAttributes: { customer: 3 } }],
    ['search attributes', 'workflow', { searchAttributes: { customer: '' } }],
    [
      'search attributes',
      'workflow',
      { searchAttributes: Object.fromEntries(Array.from({ length: 11 }, (_, n) => [`a${n}`, 'input.a'])) },
    ],
  ];
  it.each(samples)('accepts and refuses as the validator does: %s (in a %s) %j', (_what, where, changes) => {
    const verdict = verdicts(documentWith(where, changes));
    expect(verdict.schema, verdict.problems).toBe(verdict.validator);
  });

  it('accepts every example workflow file and the examples of docs/workflows.md, as the validator does', async () => {
    const files = [
      'examples/word-counts/workflows.yaml',
      'examples/order-pipeline/workflows.yaml',
      'examples/billing/billing.yaml',
      'examples/document-approval/workflows.yaml',
      'examples/seed-flows/tibet.yaml',
      'examples/seed-flows/windmill.yaml',
    ];
    const documents = await Promise.all(
      files.map(async (file) => ({ from: file, text: await readFile(join(ROOT, file), 'utf8') })),
    );
    const page = await readFile(join(ROOT, 'docs/workflows.md'), 'utf8');
    for (const match of page.matchAll(/```yaml\n(workflows:[\s\S]*?)```/g))
      documents.push({
        from: `docs/workflows.md:${page.slice(0, match.index).split('\n').length}`,
        text: match[1] as string,
      });
    expect(documents.length).toBeGreaterThan(5);
    for (const { from, text } of documents) {
      const verdict = verdicts(parseSource(text).value);
      expect(verdict.validator, `${from}\n${verdict.problems}`).toBe(true);
      expect(verdict.schema, `${from}\n${verdict.problems}`).toBe(true);
    }
  });

  it("refuses the corpus's broken files the validator refuses for their shape, and no file the validator accepts", async () => {
    const byShape = [
      'typo-in-key.yaml',
      'typo-in-root.yaml',
      'wrong-types.yaml',
      'bad-duration.yaml',
      'out-of-range.yaml',
      'signal-with-retries.yaml',
      'bad-names.yaml',
      'reserved-name.yaml',
      'item-list-key-wrong-type.yaml',
      'no-steps.yaml',
      'steps-not-a-list.yaml',
      'workflows-not-a-list.yaml',
      'task-without-item-list-key.yaml',
      'unicode-names.yaml',
      'scalar.yaml',
      'not-a-mapping.yaml',
    ];
    for (const file of (await readdir(CORPUS_DIR)).filter((name) => name.endsWith('.yaml'))) {
      const source = parseSource(await readFile(join(CORPUS_DIR, file), 'utf8'));
      if (source.errors.length) continue;
      const verdict = verdicts(source.value ?? null);
      if (verdict.validator) expect(verdict.schema, `${file}\n${verdict.problems}`).toBe(true);
      if (byShape.includes(file)) expect(verdict.schema, `${file}\n${verdict.problems}`).toBe(false);
    }
  });
});
