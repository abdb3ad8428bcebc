import { join } from 'node:path';

export const CORPUS_DIR = join(import.meta.dirname, '../fixtures/definitions');

/**
 * What each broken definition of test/fixtures/definitions must be refused with: fragments of the
 * messages, as `switchyard validate` and `PUT /api/workflow/{name}` both give them.
 */
export const CORPUS: Record<string, string[]> = {
  'typo-in-key.yaml': ['unknown step key "depens": did you mean "depends"?'],
  'typo-in-root.yaml': ['unknown document key "workflow": did you mean "workflows"?'],
  'cycle.yaml': ['dependency cycle: a -> b -> c -> a'],
  'self-dependency.yaml': ['dependency cycle: a -> a'],
  'missing-dependency.yaml': ['depends on "nowhere", which is not a step of this workflow'],
  'duplicate-step.yaml': ['a step with this name is already defined in this workflow'],
  'duplicate-task.yaml': ['a task with this name is already defined in this workflow'],
  'unknown-task.yaml': ['uses task "nowhere", which is not defined in this workflow'],
  'task-uses-itself.yaml': ['tasks use each other in a cycle: outer -> inner -> outer'],
  'task-without-item-list-key.yaml': ['a task needs "itemListKey"'],
  'no-steps.yaml': ['a workflow needs at least one step'],
  'wrong-types.yaml': [
    '"description" must be text, got list',
    '"depends" must be a list of step names',
    '"timeout" must be a duration',
    '"retries" must be a whole number from 0 to 100, got "three"',
    '"queue" must be text, got object',
  ],
  'steps-not-a-list.yaml': ['a workflow needs at least one step'],
  'workflows-not-a-list.yaml': ['"workflows" must be a non-empty list, got object'],
  'item-list-key-wrong-type.yaml': ['"itemListKey" must be text, got list'],
  'bad-duration.yaml': ['got "5 parsecs"', 'got "-3s"', '"retryDelay" must be a duration'],
  'out-of-range.yaml': ['"concurrency" must be a whole number of at least 1, got -1', 'got 100000'],
  'signal-with-retries.yaml': ['"retries" does not apply to a signal step', '"queue" does not apply'],
  'bad-names.yaml': ['name "1starts-with-a-digit" is not valid', 'step name "has space" is not valid'],
  'reserved-name.yaml': ['step name "__start__" is not valid', 'step name "__end__" is not valid'],
  'long-name.yaml': ['depends on "missing"'],
  'bad-queues.yaml': [
    ':3: workflow "bad-queues": "vhosts" lists 20 virtual hosts; a workflow may run on at most 16',
    ':6: workflow "bad-queues", step "accented": queue "éééééééééééééééééééé…" has 400 bytes in UTF-8',
    ':8: workflow "bad-queues", step "reserved": queue "amq.work" starts with "amq."',
    ':9: workflow "bad-queues", step "workflow-manager": queue "workflow-manager" is the manager\'s reply queue',
  ],
  'yaml-syntax-error.yaml': ['not valid YAML or JSON'],
  'tab-indentation.yaml': ['not valid YAML or JSON: Tabs are not allowed as indentation'],
  'duplicate-keys.yaml': ['not valid YAML or JSON: Map keys must be unique'],
  'multiple-documents.yaml': ['not valid YAML or JSON: Source contains multiple documents'],
  'json-missing-colon.txt': ['not valid YAML or JSON'],
  'json-unclosed.txt': ['not valid YAML or JSON'],
  'empty.yaml': ['expected a document with a "workflows:" list, got missing'],
  'scalar.yaml': ['expected a document with a "workflows:" list, got number'],
  'not-a-mapping.yaml': ['expected a document with a "workflows:" list, got list'],
  'binary.bin': ['expected a document with a "workflows:" list'],
  'unicode-names.yaml': [
    'workflow name "naïve" is not valid',
    'step name "stëp" is not valid',
    'step name "zero\u200bwidth" is not valid',
    'step name "bidi\u202eevil" is not valid',
    'step name "🚂" is not valid',
  ],
  'bom-and-error.yaml': [':5: workflow "with-bom", step "a": depends on "missing"'],
  'proto-keys.yaml': [
    'unknown document key "__proto__"',
    'unknown workflow key "__proto__"',
    'unknown workflow key "constructor"',
    'unknown step key "prototype"',
    'unknown step key "__proto__"',
  ],
};

/** Inputs that attack the parser itself; each is checked in a child process that may crash or hang. */
export const PARSER_ATTACKS = {
  deepNesting: 'deep-nesting.yaml',
  aliasBomb: 'alias-bomb.yaml',
} as const;

/** A valid definition a little over the 1 MiB limit (generated: the repository does not store it). */
export function hugeDefinition(): string {
  const steps = Array.from(
    { length: 12_000 },
    (_, i) => `      - name: step-${i}\n        description: ${'x'.repeat(60)}`,
  );
  return `workflows:\n  - name: huge\n    steps:\n${steps.join('\n')}\n`;
}
